// An app's backing services over the real API (fake services adapter, real engine and store):
// listing without passwords, a backup streamed as the body and audited, removal with its
// required data parameter and the refusal of a slot the spec still declares.

#include "fakes.h"
#include "tests/app/server/apicall.h"
#include "tests/support/vocabtesting.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

using namespace pando;

namespace {

using Answer = test::ApiAnswer;

QString errorWhere(const Answer &a)
{
    return a.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("where")).toString();
}

QString errorText(const Answer &a)
{
    const QJsonObject e = a.json.value(QStringLiteral("error")).toObject();
    return e.value(QStringLiteral("message")).toString() + QStringLiteral(" / ") +
           e.value(QStringLiteral("hint")).toString();
}

} // namespace

class TestServicesApi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void listsWithoutPasswords();
    void unknownAppIs404();
    void backupStreamsTheDump();
    void backupRefusals();
    void removeNeedsData();
    void removeRefusesADeclaredSlot();
    void removeKeepsThenDeletes();
    void theAppsOwnCredentials();

private:
    Answer call(const QByteArray &method, const QString &path, const QByteArray &body = {},
                const QByteArray &contentType = {});
    QByteArray spec(bool withCache) const;
    QStringList passwords();

    test::TestInstall m_install;
    QNetworkAccessManager m_network;
};

QByteArray TestServicesApi::spec(bool withCache) const
{
    // The fake runtime's containers answer on 127.0.0.1:<run.port>: this API's health route.
    return QStringLiteral("name: shop\n"
                          "source:\n  repo: https://git.example/shop.git\n"
                          "run:\n  port: %1\n"
                          "health:\n  path: /api/v1/health\n"
                          "services:\n"
                          "  db: { kind: postgres, version: \"15\" }\n"
                          "%2")
        .arg(m_install.port)
        .arg(withCache ? QStringLiteral("  cache: { kind: redis }\n") : QString())
        .toUtf8();
}

Answer TestServicesApi::call(const QByteArray &method, const QString &path, const QByteArray &body,
                             const QByteArray &contentType)
{
    // A backup streams a service's dump: longer than the default wait.
    return test::callApi(m_network, m_install.baseUrl(), method, path, body, contentType,
                         "Bearer " + m_install.token.toUtf8(), {.timeoutMs = 20000});
}

// The service passwords the app's container was given.
QStringList TestServicesApi::passwords()
{
    QStringList out;
    for (const QString &name : m_install.runtime->containerNames()) {
        const QMap<QString, QString> env = m_install.runtime->env(name);
        for (auto it = env.cbegin(); it != env.cend(); ++it)
            if (it.key().endsWith(QLatin1String("_PASSWORD")))
                out << it.value();
    }
    return out;
}

void TestServicesApi::initTestCase()
{
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    Answer a = call("POST", QStringLiteral("/api/v1/apps"), spec(true), "application/yaml");
    QVERIFY2(a.status == 201, a.body.constData());
    a = call("POST", QStringLiteral("/api/v1/apps/shop/deploys"));
    QCOMPARE(a.status, 202);
    const QString deploy = a.json.value(QStringLiteral("id")).toString();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_install.engine->deployView(deploy);
            return view && view->record.status == core::DeployStatus::Succeeded;
        }(),
        15000);
}

void TestServicesApi::listsWithoutPasswords()
{
    const QStringList secrets = passwords();
    QCOMPARE(secrets.size(), 2); // DB_PASSWORD, CACHE_PASSWORD
    for (const QString &path : {QStringLiteral("/api/v1/services"), QStringLiteral("/api/v1/apps/shop/services")}) {
        const Answer a = call("GET", path);
        QVERIFY2(a.status == 200, a.body.constData());
        const QJsonArray list = a.json.value(QStringLiteral("services")).toArray();
        QCOMPARE(list.size(), 2);
        QMap<QString, QJsonObject> bySlot;
        for (const QJsonValue &v : list)
            bySlot.insert(v.toObject().value(QStringLiteral("slot")).toString(), v.toObject());
        QCOMPARE(bySlot.keys(), (QStringList{QStringLiteral("cache"), QStringLiteral("db")}));
        const QJsonObject db = bySlot.value(QStringLiteral("db"));
        QCOMPARE(db.value(QStringLiteral("app")).toString(), QStringLiteral("shop"));
        QCOMPARE(db.value(QStringLiteral("kind")).toString(), QStringLiteral("postgres"));
        QCOMPARE(db.value(QStringLiteral("version")).toString(), QStringLiteral("15"));
        QCOMPARE(db.value(QStringLiteral("status")).toString(), QStringLiteral("running"));
        QCOMPARE(db.value(QStringLiteral("volume")).toString(), QStringLiteral("pando-shop-db-data"));
        QVERIFY(db.value(QStringLiteral("created_ms")).toInteger() > 0);
        QCOMPARE(bySlot.value(QStringLiteral("cache")).value(QStringLiteral("kind")).toString(),
                 QStringLiteral("redis"));
        QVERIFY(!db.contains(QStringLiteral("password")));
        for (const QString &secret : secrets)
            QVERIFY2(!a.body.contains(secret.toUtf8()), "a service password is in the listing");
    }
}

void TestServicesApi::unknownAppIs404()
{
    const Answer a = call("GET", QStringLiteral("/api/v1/apps/nosuch/services"));
    QCOMPARE(a.status, 404);
}

void TestServicesApi::backupStreamsTheDump()
{
    const int before = m_install.services->backups;
    const Answer a = call("POST", QStringLiteral("/api/v1/apps/shop/services/db/backup"));
    QVERIFY2(a.status == 200, a.body.left(500).constData());
    QCOMPARE(a.contentType, QByteArray("application/octet-stream"));
    static const QRegularExpression name(QStringLiteral(R"(^attachment; filename="shop-db-\d{8}-\d{6}\.sql"$)"));
    QVERIFY2(name.match(QString::fromLatin1(a.disposition)).hasMatch(), a.disposition.constData());
    const QByteArray expected =
        test::FakeServiceProvisioner::dump(QStringLiteral("shop"), QStringLiteral("db"), m_install.services->dumpSize);
    QCOMPARE(a.body.size(), expected.size());
    QVERIFY(a.body == expected);
    QCOMPARE(int(m_install.services->backups), before + 1);

    // A redis dump is an RDB file.
    const Answer rdb = call("POST", QStringLiteral("/api/v1/apps/shop/services/cache/backup"));
    QCOMPARE(rdb.status, 200);
    QVERIFY2(rdb.disposition.endsWith(".rdb\""), rdb.disposition.constData());

    // Audited: who backed up what, and how much.
    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("service.backup");
    filter.object = QStringLiteral("app/shop/service/db");
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);
    QCOMPARE(lines->first().outcome, QStringLiteral("success"));
    QVERIFY2(lines->first().actor.startsWith(QLatin1String("user:admin/")), qPrintable(lines->first().actor));
    QVERIFY2(lines->first().detail.contains(QString::number(expected.size())), qPrintable(lines->first().detail));

    // The file the dump went through is gone once it was sent.
    QTRY_COMPARE(QDir(m_install.dir.path()).entryList({QStringLiteral("service-backup-*")}, QDir::Files),
                 QStringList());
}

void TestServicesApi::backupRefusals()
{
    Answer a = call("POST", QStringLiteral("/api/v1/apps/shop/services/nosuch/backup"));
    QCOMPARE(a.status, 404);
    QCOMPARE(errorWhere(a), QStringLiteral("services.nosuch"));
    a = call("POST", QStringLiteral("/api/v1/apps/nosuch/services/db/backup"));
    QCOMPARE(a.status, 404);
    // A service that does not run cannot be dumped; nothing is left behind.
    m_install.services->stop(QStringLiteral("shop"), QStringLiteral("cache"));
    a = call("POST", QStringLiteral("/api/v1/apps/shop/services/cache/backup"));
    QCOMPARE(a.status, 409);
    QVERIFY2(errorText(a).contains(QLatin1String("stopped")), qPrintable(errorText(a)));
    QCOMPARE(QDir(m_install.dir.path()).entryList({QStringLiteral("service-backup-*")}, QDir::Files), QStringList());
    // A dump that breaks off: an error, and its part on disk is gone. One a killed pandod left
    // a day ago goes with the next backup.
    const QString stale = QDir(m_install.dir.path()).filePath(QStringLiteral("service-backup-old.partial"));
    {
        QFile old(stale);
        QVERIFY(old.open(QIODevice::WriteOnly) && old.write("half a dump") > 0 && old.flush());
        QVERIFY(old.setFileTime(QDateTime::currentDateTimeUtc().addDays(-2), QFileDevice::FileModificationTime));
    }
    m_install.services->failAfter = 65536;
    a = call("POST", QStringLiteral("/api/v1/apps/shop/services/db/backup"));
    m_install.services->failAfter = -1;
    QCOMPARE(a.status, 422);
    QVERIFY2(errorText(a).contains(QLatin1String("broke off")), qPrintable(errorText(a)));
    QCOMPARE(QDir(m_install.dir.path()).entryList({QStringLiteral("service-backup-*")}, QDir::Files), QStringList());
    // A listing says so.
    a = call("GET", QStringLiteral("/api/v1/apps/shop/services"));
    for (const QJsonValue &v : a.json.value(QStringLiteral("services")).toArray())
        if (v.toObject().value(QStringLiteral("slot")).toString() == QLatin1String("cache"))
            QCOMPARE(v.toObject().value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
}

void TestServicesApi::removeNeedsData()
{
    for (const QString &query : {QString(), QStringLiteral("?data=maybe")}) {
        const Answer a = call("DELETE", QStringLiteral("/api/v1/apps/shop/services/cache") + query);
        QCOMPARE(a.status, 400);
        QCOMPARE(errorWhere(a), QStringLiteral("query.data"));
        QVERIFY2(errorText(a).contains(QLatin1String("?data=keep")) &&
                     errorText(a).contains(QLatin1String("?data=delete")),
                 qPrintable(errorText(a)));
    }
}

void TestServicesApi::removeRefusesADeclaredSlot()
{
    const Answer a = call("DELETE", QStringLiteral("/api/v1/apps/shop/services/cache?data=delete"));
    QCOMPARE(a.status, 409);
    QVERIFY2(errorText(a).contains(QLatin1String("next deploy would provision it again")), qPrintable(errorText(a)));
    QCOMPARE(errorWhere(a), QStringLiteral("services.cache"));
    // Nothing was removed.
    const Answer list = call("GET", QStringLiteral("/api/v1/apps/shop/services"));
    QCOMPARE(list.json.value(QStringLiteral("services")).toArray().size(), 2);
}

void TestServicesApi::removeKeepsThenDeletes()
{
    // The spec no longer declares cache: its service may go.
    Answer a = call("PUT", QStringLiteral("/api/v1/apps/shop"), spec(false), "application/yaml");
    QVERIFY2(a.status == 200, a.body.constData());
    a = call("DELETE", QStringLiteral("/api/v1/apps/shop/services/cache?data=keep"));
    QVERIFY2(a.status == 200, a.body.constData());
    QCOMPARE(a.json.value(QStringLiteral("data")).toString(), QStringLiteral("kept"));
    a = call("GET", QStringLiteral("/api/v1/apps/shop/services"));
    QJsonObject cache;
    for (const QJsonValue &v : a.json.value(QStringLiteral("services")).toArray())
        if (v.toObject().value(QStringLiteral("slot")).toString() == QLatin1String("cache"))
            cache = v.toObject();
    QCOMPARE(cache.value(QStringLiteral("status")).toString(), QStringLiteral("missing"));
    QCOMPARE(cache.value(QStringLiteral("volume")).toString(), QStringLiteral("pando-shop-cache-data"));

    a = call("DELETE", QStringLiteral("/api/v1/apps/shop/services/cache?data=delete"));
    QVERIFY2(a.status == 200, a.body.constData());
    QCOMPARE(a.json.value(QStringLiteral("data")).toString(), QStringLiteral("deleted"));
    a = call("GET", QStringLiteral("/api/v1/apps/shop/services"));
    const QJsonArray left = a.json.value(QStringLiteral("services")).toArray();
    QCOMPARE(left.size(), 1);
    QCOMPARE(left.first().toObject().value(QStringLiteral("slot")).toString(), QStringLiteral("db"));
    a = call("DELETE", QStringLiteral("/api/v1/apps/shop/services/cache?data=delete"));
    QCOMPARE(a.status, 404);

    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("service.remove");
    filter.object = QStringLiteral("app/shop/service/cache");
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 2);
    for (const core::AuditRecord &line : *lines)
        QCOMPARE(line.outcome, QStringLiteral("success"));
}

// An app that hard-codes postgres:postgres@db/postgres and reads DATABASE_URL deploys as it is;
// its service's credentials cannot change under its data.
void TestServicesApi::theAppsOwnCredentials()
{
    const QByteArray legacy =
        "name: legacy\nsource: { repo: \"https://example.org/legacy.git\" }\nrun: { port: 8080 }\n"
        "health: { timeout: 1s }\n"
        "services:\n  db:\n    kind: postgres\n    user: postgres\n    database: postgres\n"
        "    password: postgres\n    env: { url: DATABASE_URL }\n";
    Answer a = call("POST", QStringLiteral("/api/v1/apps"), legacy, "application/yaml");
    QVERIFY2(a.status == 201, a.body.constData());
    a = call("POST", QStringLiteral("/api/v1/apps/legacy/deploys"));
    QCOMPARE(a.status, 202);
    const QString deploy = a.json.value(QStringLiteral("id")).toString();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_install.engine->deployView(deploy);
            return view && view->record.status != core::DeployStatus::Queued &&
                   view->record.status != core::DeployStatus::Running;
        }(),
        15000);
    QMap<QString, QString> env;
    for (const QString &name : m_install.runtime->containerNames())
        if (name.contains(QStringLiteral("legacy")))
            env = m_install.runtime->env(name);
    QCOMPARE(env.value(QStringLiteral("DATABASE_URL")),
             QStringLiteral("postgres://postgres:postgres@db:5432/postgres"));
    QVERIFY(!env.contains(QStringLiteral("DB_URL")));
    QCOMPARE(env.value(QStringLiteral("DB_USER")), QStringLiteral("postgres"));
    QCOMPARE(env.value(QStringLiteral("DB_NAME")), QStringLiteral("postgres"));
    a = call("GET", QStringLiteral("/api/v1/apps/legacy/services"));
    QCOMPARE(a.status, 200);
    const QJsonArray names =
        a.json.value(QStringLiteral("services")).toArray().at(0).toObject().value(QStringLiteral("env")).toArray();
    QVERIFY2(names.contains(QStringLiteral("DATABASE_URL")), a.body.constData());

    // Another user under the same data: the next deploy says it cannot be.
    QByteArray changed = legacy;
    changed.replace("user: postgres", "user: shop");
    a = call("PUT", QStringLiteral("/api/v1/apps/legacy"), changed, "application/yaml");
    QVERIFY2(a.status == 200, a.body.constData());
    a = call("POST", QStringLiteral("/api/v1/apps/legacy/deploys"));
    QCOMPARE(a.status, 202);
    const QString second = a.json.value(QStringLiteral("id")).toString();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_install.engine->deployView(second);
            return view && view->record.status == core::DeployStatus::Failed;
        }(),
        15000);
    const QString error = m_install.engine->deployView(second)->record.error;
    QVERIFY2(error.contains(QStringLiteral("was made with user postgres")), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestServicesApi)
#include "tst_servicesapi.moc"
