// App secrets on both drivers: the name and value rules, the sealed store (values bound to app
// and name, gone with their app, never in a listing) and the seal key rotation, including one
// cut off before and one cut off after its database transaction.
#include "core/pipelines/sealbox/sealbox.h"
#include "core/secrets/appsecrets.h"
#include "core/secrets/sealrotation.h"
#include "core/services/servicestore.h"
#include "core/state/database.h"
#include "core/state/pipelinerepositories.h"
#include "core/state/repositories.h"
#include "core/state/sql.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using pipelines::SealBox;
using pipelines::SealKey;

namespace {

QByteArray fileBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestAppSecrets : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<QTemporaryDir> m_data;
    std::unique_ptr<Database> m_db;
    ManualClock m_clock;

    QString dataDir() const { return m_data->path(); }

    // Every sealed value in the database: "table/owner/name" → envelope.
    QMap<QString, QString> sealedValues()
    {
        QMap<QString, QString> out;
        auto db = m_db->connection();
        for (const auto &[table, owner] : {std::pair{u"secrets"_s, u"scope"_s}, {u"app_secrets"_s, u"app"_s}}) {
            auto q = detail::run(*db, m_db->isPostgres(), u"SELECT %1, name, sealed FROM %2"_s.arg(owner, table), {},
                                 u"read"_s);
            while (q && q->next())
                out.insert(table + u'/' + q->value(0).toString() + u'/' + q->value(1).toString(),
                           q->value(2).toString());
        }
        return out;
    }

    // Opens every value with the key ring; the count that opened.
    int openable(const SealBox &box)
    {
        int n = 0;
        for (auto [key, sealed] : sealedValues().asKeyValueRange()) {
            const QStringList parts = key.split(u'/');
            const QByteArray context = parts[0] == u"secrets" ? SealBox::context({u"secret"_s, parts[1], parts[2]})
                                                              : secrets::sealContext(parts[1], parts[2]);
            if (box.open(sealed, context))
                ++n;
        }
        return n;
    }

    void seed(const SealBox &box)
    {
        secrets::AppSecretStore store(*m_db, box, m_clock);
        QVERIFY(store.set(u"hello"_s, u"API_KEY"_s, "k-123"));
        QVERIFY(store.set(u"hello"_s, u"TLS_KEY"_s, "-----BEGIN-----\nabc\n-----END-----\n"));
        QVERIFY(store.set(u"other"_s, u"API_KEY"_s, "k-456"));
        const qint64 now = m_clock.nowMs();
        for (const auto &[scope, name] : {std::pair{QString(), u"token"_s}, {u"ci"_s, u"deploy-key"_s}}) {
            auto sealed = box.seal("pipeline-value", SealBox::context({u"secret"_s, scope, name}));
            QVERIFY(sealed);
            QVERIFY(SecretRepository(*m_db).put(SecretRecord{scope, name, *sealed, now, now}));
        }
    }

private Q_SLOTS:
    void initTestCase_data() { test::addDriverRows(); }
    void initTestCase() { m_pgStarted = m_pg.start(); }

    void init()
    {
        PANDO_FRESH_DATABASE(url, m_pg, m_pgStarted, m_tmp);
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(url).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_data = std::make_unique<QTemporaryDir>();
        for (const QString &name : {u"hello"_s, u"other"_s}) {
            AppRecord app;
            app.name = name;
            QVERIFY(AppRepository(*m_db).create(app));
        }
        QVERIFY(PipelineRepository(*m_db).set(u"ci"_s, u"jobs: []\n"_s, {}, 1000));
    }

    void cleanup()
    {
        m_db.reset();
        m_tmp.reset();
        m_data.reset();
    }

    void names_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("ok");
        QTest::newRow("upper") << u"API_KEY"_s << true;
        QTest::newRow("lower") << u"token"_s << true;
        QTest::newRow("underscore first") << u"_X1"_s << true;
        QTest::newRow("128 chars") << QString(128, u'A') << true;
        QTest::newRow("129 chars") << QString(129, u'A') << false;
        QTest::newRow("digit first") << u"1KEY"_s << false;
        QTest::newRow("dash") << u"API-KEY"_s << false;
        QTest::newRow("dot") << u"a.b"_s << false;
        QTest::newRow("equals") << u"A=B"_s << false;
        QTest::newRow("space") << u"A B"_s << false;
        QTest::newRow("empty") << QString() << false;
    }
    void names()
    {
        QFETCH(QString, name);
        QFETCH(bool, ok);
        const Status checked = secrets::checkSecretName(name);
        QCOMPARE(bool(checked), ok);
        if (!ok)
            QVERIFY2(checked.error().message.contains(u"environment variable"_s), qPrintable(checked.error().text()));
    }

    void values()
    {
        QVERIFY(secrets::checkSecretValue(u"A"_s, "plain"));
        QVERIFY(secrets::checkSecretValue(u"A"_s, "multi\nline"));
        QVERIFY(secrets::checkSecretValue(u"A"_s, QByteArray(secrets::MaxSecretBytes, 'x')));
        const Status tooBig = secrets::checkSecretValue(u"A"_s, QByteArray(secrets::MaxSecretBytes + 1, 'x'));
        QCOMPARE(tooBig.error().code, ErrorCode::TooLarge);
        const QByteArray withNul("hunter2\0tail", 12);
        const Status nul = secrets::checkSecretValue(u"PASSWORD"_s, withNul);
        QCOMPARE(nul.error().code, ErrorCode::Invalid);
        QVERIFY(nul.error().message.contains(u"NUL"_s));
        QVERIFY(!nul.error().text().contains(u"hunter2"_s));
        QCOMPARE(secrets::checkSecretValue(u"A"_s, "\xff\xfe").error().code, ErrorCode::Invalid);
        QCOMPARE(secrets::checkSecretValue(u"A"_s, "").error().code, ErrorCode::Invalid);

        QVERIFY(secrets::checkEnvInjectable(u"A"_s, "one line"));
        for (const QByteArray &broken : {QByteArray("sec\nret"), QByteArray("sec\rret")}) {
            const Status env = secrets::checkEnvInjectable(u"TLS_KEY"_s, broken);
            QVERIFY(!env);
            QVERIFY(env.error().message.contains(u"line break"_s));
            QVERIFY(env.error().hint.contains(u"file: /run/secrets/TLS_KEY"_s));
            QVERIFY(!env.error().text().contains(u"sec"_s + QChar(u'\n')));
        }
    }

    void storeSetsListsAndRemoves()
    {
        auto key = pipelines::keyfile::create(dataDir() + u"/seal.key"_s);
        QVERIFY(key);
        const SealBox box({*key});
        secrets::AppSecretStore store(*m_db, box, m_clock);

        auto first = store.set(u"hello"_s, u"API_KEY"_s, "s3cr3t-value");
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        QVERIFY(first->created);
        const qint64 createdAt = m_clock.nowMs();
        m_clock.advance(5000);
        auto second = store.set(u"hello"_s, u"API_KEY"_s, "n3w-value");
        QVERIFY(second);
        QVERIFY(!second->created);
        QCOMPARE(second->createdMs, createdAt);
        QCOMPARE(second->updatedMs, createdAt + 5000);

        auto listed = store.list(u"hello"_s);
        QVERIFY(listed);
        QCOMPARE(listed->size(), 1);
        QCOMPARE(listed->first().name, u"API_KEY"_s);
        QCOMPARE(listed->first().updatedMs, createdAt + 5000);

        // At rest the value is an envelope, not the text.
        const QString sealed = sealedValues().value(u"app_secrets/hello/API_KEY"_s);
        QVERIFY(SealBox::isSealed(sealed));
        QVERIFY(!sealed.contains(u"n3w-value"_s));
        auto opened = store.open(u"hello"_s);
        QVERIFY(opened);
        QCOMPARE(opened->value(u"API_KEY"_s), QByteArray("n3w-value"));

        // Unknown apps and secrets are named.
        auto unknown = store.set(u"nope"_s, u"A"_s, "x");
        QCOMPARE(unknown.error().code, ErrorCode::NotFound);
        QVERIFY(unknown.error().message.contains(u"\"nope\""_s));
        QCOMPARE(store.list(u"nope"_s).error().code, ErrorCode::NotFound);
        const Status missing = store.remove(u"hello"_s, u"NOT_SET"_s);
        QCOMPARE(missing.error().code, ErrorCode::NotFound);
        QVERIFY(missing.error().message.contains(u"NOT_SET"_s));
        QCOMPARE(store.set(u"hello"_s, u"BAD-NAME"_s, "x").error().code, ErrorCode::Invalid);
        QCOMPARE(store.set(u"hello"_s, u"A"_s, QByteArray("a\0b", 3)).error().code, ErrorCode::Invalid);

        QVERIFY(store.remove(u"hello"_s, u"API_KEY"_s));
        QCOMPARE(store.list(u"hello"_s)->size(), 0);
    }

    void valuesAreBoundToAppAndName()
    {
        auto key = pipelines::keyfile::create(dataDir() + u"/seal.key"_s);
        const SealBox box({*key});
        secrets::AppSecretStore store(*m_db, box, m_clock);
        QVERIFY(store.set(u"hello"_s, u"API_KEY"_s, "for-hello"));
        QVERIFY(store.set(u"other"_s, u"API_KEY"_s, "for-other"));
        // Someone with the database copies hello's envelope into other's row: it does not open.
        const QString hellos = sealedValues().value(u"app_secrets/hello/API_KEY"_s);
        auto db = m_db->connection();
        QVERIFY(detail::run(*db, m_db->isPostgres(), u"UPDATE app_secrets SET sealed = ? WHERE app = 'other'"_s,
                            {hellos}, u"copy"_s));
        auto opened = store.open(u"other"_s);
        QVERIFY(!opened);
        QVERIFY(opened.error().message.contains(u"API_KEY"_s));
        QVERIFY(!opened.error().text().contains(u"for-hello"_s));
    }

    void secretsGoWithTheirApp()
    {
        auto key = pipelines::keyfile::create(dataDir() + u"/seal.key"_s);
        const SealBox box({*key});
        secrets::AppSecretStore store(*m_db, box, m_clock);
        QVERIFY(store.set(u"hello"_s, u"API_KEY"_s, "x"));
        QVERIFY(AppRepository(*m_db).remove(u"hello"_s));
        QCOMPARE(sealedValues().count(), 0);
        // A new app of the same name starts without them.
        AppRecord app;
        app.name = u"hello"_s;
        QVERIFY(AppRepository(*m_db).create(app));
        QCOMPARE(store.list(u"hello"_s)->size(), 0);
    }

    void rotationResealsEverything()
    {
        auto oldKey = secrets::loadSealKey(dataDir());
        QVERIFY(oldKey);
        const QByteArray oldBytes = fileBytes(secrets::sealKeyPath(dataDir()));
        const SealBox oldBox({*oldKey});
        seed(oldBox);
        QCOMPARE(openable(oldBox), 5);
        const QMap<QString, QString> before = sealedValues();

        auto report = secrets::rotateSealKey(*m_db, dataDir());
        QVERIFY2(report, qPrintable(report ? QString() : report.error().text()));
        QCOMPARE(report->appSecrets, 3);
        QCOMPARE(report->pipelineSecrets, 2);
        QVERIFY(report->unopenable.isEmpty());
        QVERIFY(!report->resumed);
        QCOMPARE(report->oldKeyId, oldKey->id());

        // The key file holds the new key; no copy of the old one or of the next one is left.
        QVERIFY(!QFile::exists(secrets::nextSealKeyPath(dataDir())));
        const QByteArray newBytes = fileBytes(secrets::sealKeyPath(dataDir()));
        QCOMPARE(newBytes.size(), SealKey::kSize);
        QVERIFY(newBytes != oldBytes);
        QCOMPARE(QFile(secrets::sealKeyPath(dataDir())).permissions() &
                     (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
                 QFileDevice::Permissions());
        auto newKey = secrets::loadSealKey(dataDir());
        QVERIFY(newKey);
        QCOMPARE(newKey->id(), report->newKeyId);

        // Every value opens with the new key, to what it was; none with the old key.
        const SealBox newBox({*newKey});
        QCOMPARE(openable(newBox), 5);
        QCOMPARE(openable(oldBox), 0);
        const QMap<QString, QString> after = sealedValues();
        for (auto [k, v] : after.asKeyValueRange())
            QVERIFY2(v != before.value(k), qPrintable(k));
        auto opened = secrets::AppSecretStore(*m_db, newBox, m_clock).open(u"hello"_s);
        QVERIFY(opened);
        QCOMPARE(opened->value(u"TLS_KEY"_s), QByteArray("-----BEGIN-----\nabc\n-----END-----\n"));
    }

    void rotationCutOffBeforeCommitIsFinished()
    {
        auto oldKey = secrets::loadSealKey(dataDir());
        const SealBox oldBox({*oldKey});
        seed(oldBox);
        // A run died after writing the new key and before its transaction committed.
        auto next = pipelines::keyfile::create(secrets::nextSealKeyPath(dataDir()));
        QVERIFY(next);
        // The engine refuses to load a key then...
        QCOMPARE(secrets::loadSealKey(dataDir()).error().code, ErrorCode::Conflict);
        // ...and finishes the rotation with the key it started.
        auto finished = secrets::finishInterruptedRotation(*m_db, dataDir());
        QVERIFY2(finished, qPrintable(finished ? QString() : finished.error().text()));
        QVERIFY(finished->has_value());
        QVERIFY((*finished)->resumed);
        QCOMPARE((*finished)->newKeyId, next->id());
        QCOMPARE(secrets::loadSealKey(dataDir())->id(), next->id());
        QCOMPARE(openable(SealBox({*next})), 5);
        QCOMPARE(openable(oldBox), 0);
        // Nothing left to finish.
        auto again = secrets::finishInterruptedRotation(*m_db, dataDir());
        QVERIFY(again);
        QVERIFY(!again->has_value());
    }

    void rotationCutOffBeforeRenameIsFinished()
    {
        auto oldKey = secrets::loadSealKey(dataDir());
        const SealBox oldBox({*oldKey});
        seed(oldBox);
        // A run died after its transaction committed and before the key file was replaced:
        // half the story is in the database already.
        auto next = pipelines::keyfile::create(secrets::nextSealKeyPath(dataDir()));
        QVERIFY(next);
        const SealBox both({*oldKey, *next});
        auto db = m_db->connection();
        for (auto [k, v] : sealedValues().asKeyValueRange()) {
            const QStringList parts = k.split(u'/');
            if (parts[0] != u"app_secrets")
                continue;
            auto resealed = both.reseal(v, secrets::sealContext(parts[1], parts[2]));
            QVERIFY(resealed);
            QVERIFY(detail::run(*db, m_db->isPostgres(),
                                u"UPDATE app_secrets SET sealed = ? WHERE app = ? AND name = ?"_s,
                                {*resealed, parts[1], parts[2]}, u"reseal"_s));
        }
        auto report = secrets::rotateSealKey(*m_db, dataDir());
        QVERIFY2(report, qPrintable(report ? QString() : report.error().text()));
        QVERIFY(report->resumed);
        QCOMPARE(report->appSecrets, 0); // already on the new key
        QCOMPARE(report->pipelineSecrets, 2);
        QCOMPARE(openable(SealBox({*next})), 5);
        QCOMPARE(openable(oldBox), 0);
        QVERIFY(!QFile::exists(secrets::nextSealKeyPath(dataDir())));
    }

    // Service credentials are sealed under the same key, bound to their app and slot: after a
    // rotation they open to the same password, so the service's data (initialised with it) is
    // still reachable, and provisioning the slot again reuses them.
    void rotationResealsServiceCredentials()
    {
        auto oldKey = secrets::loadSealKey(dataDir());
        QVERIFY(oldKey);
        const SealBox oldBox({*oldKey});
        auto made = ServiceStore(*m_db, oldBox, m_clock).obtain(u"hello"_s, u"db"_s, u"postgres"_s, u"15"_s);
        QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
        QCOMPARE(made->password.size(), 32);
        const QString password = made->password;

        auto report = secrets::rotateSealKey(*m_db, dataDir());
        QVERIFY2(report, qPrintable(report ? QString() : report.error().text()));
        QCOMPARE(report->serviceCredentials, 1);
        QVERIFY(report->unopenable.isEmpty());

        auto newKey = secrets::loadSealKey(dataDir());
        QVERIFY(newKey);
        const SealBox newBox({*newKey});
        ServiceStore store(*m_db, newBox, m_clock);
        auto opened = store.find(u"hello"_s, u"db"_s);
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        QCOMPARE(opened->password, password);
        QCOMPARE(opened->user, made->user);
        QCOMPARE(opened->database, made->database);
        // What a deploy does for an existing slot: the same credentials, not new ones.
        auto again = store.obtain(u"hello"_s, u"db"_s, u"postgres"_s, u"15"_s);
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->password, password);
        // The old key opens nothing any more.
        auto stale = ServiceStore(*m_db, oldBox, m_clock).find(u"hello"_s, u"db"_s);
        QVERIFY(!stale);
        QVERIFY2(!stale.error().text().contains(password), "a password in an error text");
    }

    void rotationLeavesWhatNoKeyOpens()
    {
        auto oldKey = secrets::loadSealKey(dataDir());
        const SealBox oldBox({*oldKey});
        seed(oldBox);
        // A value sealed by a key this install never had.
        auto stranger = SealKey::generate();
        auto sealed = SealBox({*stranger}).seal("x", secrets::sealContext(u"other"_s, u"LOST"_s));
        QVERIFY(secrets::AppSecretStore(*m_db, oldBox, m_clock).set(u"other"_s, u"LOST"_s, "placeholder"));
        auto db = m_db->connection();
        QVERIFY(detail::run(*db, m_db->isPostgres(), u"UPDATE app_secrets SET sealed = ? WHERE name = 'LOST'"_s,
                            {*sealed}, u"plant"_s));
        auto report = secrets::rotateSealKey(*m_db, dataDir());
        QVERIFY(report);
        QCOMPARE(report->unopenable, QStringList{u"app/other/LOST"_s});
        QCOMPARE(report->appSecrets, 3);
        QCOMPARE(sealedValues().value(u"app_secrets/other/LOST"_s), *sealed);
    }
};

QTEST_GUILESS_MAIN(TestAppSecrets)
#include "tst_appsecrets.moc"
