// The AppSpec's services section: slots read with their defaults, every bad slot refused with
// the field and the line it is on, the same rules for a spec built in code, and the JSON form
// reading back to the same slots.

#include "core/spec/appspec.h"

#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

QByteArray specWith(const QByteArray &services)
{
    return "name: shop\n"
           "source: { repo: \"https://example.org/shop.git\" }\n"
           "run: { port: 8080 }\n" +
           services;
}

} // namespace

class TestAppSpecServices : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void slotsAndDefaults()
    {
        auto spec = parseAppSpec(specWith("services:\n"
                                          "  db: { kind: postgres, version: \"15\" }\n"
                                          "  cache: { kind: redis }\n"
                                          "  legacy:\n"
                                          "    kind: mysql\n"
                                          "    version: 10.11\n"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
        QCOMPARE(spec->services.size(), 3);
        QCOMPARE(spec->services.value(u"db"_s).kind, u"postgres"_s);
        QCOMPARE(spec->services.value(u"db"_s).version, u"15"_s);
        QCOMPARE(spec->services.value(u"cache"_s).kind, u"redis"_s);
        QCOMPARE(spec->services.value(u"cache"_s).version, u"7"_s); // the kind's default
        QCOMPARE(spec->services.value(u"legacy"_s).version, u"10.11"_s);

        // The JSON form reads back to the same slots.
        auto again = parseAppSpecJson(QJsonDocument(spec->toJson()).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->services, spec->services);
    }

    void theAppsOwnCredentialsAndNames()
    {
        // An app that hard-codes postgres:postgres@db/postgres and reads DATABASE_URL.
        auto spec = parseAppSpec(specWith("services:\n"
                                          "  db:\n"
                                          "    kind: postgres\n"
                                          "    user: postgres\n"
                                          "    database: postgres\n"
                                          "    password: postgres\n"
                                          "    env: { url: DATABASE_URL, host: PGHOST }\n"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
        const AppSpec::Service db = spec->services.value(u"db"_s);
        QCOMPARE(db.user, u"postgres"_s);
        QCOMPARE(db.database, u"postgres"_s);
        QCOMPARE(db.password, u"postgres"_s);
        QCOMPARE(db.env.value(u"url"_s), u"DATABASE_URL"_s);
        auto again = parseAppSpecJson(QJsonDocument(spec->toJson()).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->services, spec->services);
    }

    // A seed file for a slot, and one for previews of it: both kept as written.
    void seeds()
    {
        auto spec = parseAppSpec(specWith("services:\n"
                                          "  db:\n"
                                          "    kind: postgres\n"
                                          "    seed: db/seed.sql\n"
                                          "preview:\n"
                                          "  seed: { db: db/preview.sql }\n"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
        QCOMPARE(spec->services.value(u"db"_s).seed, u"db/seed.sql"_s);
        QCOMPARE(spec->preview.seeds.value(u"db"_s), u"db/preview.sql"_s);
        auto again = parseAppSpecJson(QJsonDocument(spec->toJson()).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->services, spec->services);
        QCOMPARE(again->preview, spec->preview);
    }

    void noServices()
    {
        auto spec = parseAppSpec(specWith("services:\n"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
        QVERIFY(spec->services.isEmpty());
    }

    void refused_data()
    {
        QTest::addColumn<QByteArray>("services");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("message"); // a part of the message
        QTest::addColumn<int>("line");        // the line the message names; 0: none

        QTest::newRow("unknown kind") << QByteArray("services:\n  db: { kind: postgress }\n") << u"services.db.kind"_s
                                      << u"unknown service kind \"postgress\"; did you mean \"postgres\"?"_s << 5;
        QTest::newRow("no image for the version")
            << QByteArray("services:\n  db:\n    kind: postgres\n    version: \"9.6\"\n") << u"services.db.version"_s
            << u"there is no postgres image for version \"9.6\""_s << 7;
        QTest::newRow("slot name upper case") << QByteArray("services:\n  DB: { kind: postgres }\n") << u"services.DB"_s
                                              << u"\"DB\" is not a valid slot name"_s << 5;
        QTest::newRow("slot name with a dash") << QByteArray("services:\n  my-db: { kind: postgres }\n")
                                               << u"services.my-db"_s << u"is not a valid slot name"_s << 5;
        QTest::newRow("slot name starting with a digit") << QByteArray("services:\n  1db: { kind: redis }\n")
                                                         << u"services.1db"_s << u"is not a valid slot name"_s << 5;
        QTest::newRow("missing kind") << QByteArray("services:\n  db: { version: \"15\" }\n") << u"services.db.kind"_s
                                      << u"missing required field"_s << 5;
        QTest::newRow("unknown field") << QByteArray("services:\n  db: { kind: redis, verison: \"7\" }\n")
                                       << u"services.db.verison"_s << u"did you mean \"version\"?"_s << 5;
        QTest::newRow("slot not a mapping")
            << QByteArray("services:\n  db: postgres\n") << u"services.db"_s << u"expected a mapping"_s << 5;
        QTest::newRow("services a list") << QByteArray("services:\n  - db\n") << u"services"_s
                                         << u"expected a mapping of slot names"_s << 5;
        QTest::newRow("a redis user") << QByteArray("services:\n  cache: { kind: redis, user: admin }\n")
                                      << u"services.cache.user"_s << u"redis has no users here"_s << 5;
        QTest::newRow("a bad user") << QByteArray("services:\n  db: { kind: postgres, user: \"a b\" }\n")
                                    << u"services.db.user"_s << u"is not a user name"_s << 5;
        QTest::newRow("a bad database") << QByteArray("services:\n  db: { kind: mysql, database: 1st }\n")
                                        << u"services.db.database"_s << u"is not a database name"_s << 5;
        QTest::newRow("a password with a space")
            << QByteArray("services:\n  db: { kind: postgres, password: \"pass word\" }\n") << u"services.db.password"_s
            << u"visible ASCII characters and no spaces"_s << 5;
        QTest::newRow("an unknown part") << QByteArray("services:\n  db: { kind: redis, env: { name: REDIS_DB } }\n")
                                         << u"services.db.env.name"_s << u"redis gives no \"name\""_s << 5;
        QTest::newRow("a bad variable") << QByteArray("services:\n  db: { kind: postgres, env: { url: 9URL } }\n")
                                        << u"services.db.env.url"_s << QString() << 5;
        QTest::newRow("one name twice") << QByteArray(
                                               "services:\n  db: { kind: postgres, env: { url: DB, host: DB } }\n")
                                        << u"services.db.env.url"_s << u"DB names two parts"_s << 5;
        QTest::newRow("a redis seed") << QByteArray("services:\n  cache: { kind: redis, seed: seed.txt }\n")
                                      << u"services.cache.seed"_s << u"redis takes no seed file"_s << 5;
        QTest::newRow("a seed outside the repository")
            << QByteArray("services:\n  db: { kind: postgres, seed: ../../etc/passwd }\n") << u"services.db.seed"_s
            << QString() << 5;
        QTest::newRow("an absolute seed") << QByteArray("services:\n  db: { kind: mysql, seed: /root/dump.sql }\n")
                                          << u"services.db.seed"_s << QString() << 5;
        QTest::newRow("a preview seed of no slot")
            << QByteArray("services:\n  db: { kind: postgres }\npreview:\n  seed: { cache: a.sql }\n")
            << u"preview.seed.cache"_s << u"no service in slot \"cache\""_s << 0;
        QTest::newRow("a preview seed for redis")
            << QByteArray("services:\n  cache: { kind: redis }\npreview:\n  seed: { cache: a.rdb }\n")
            << u"preview.seed.cache"_s << u"redis takes no seed file"_s << 0;
        QByteArray many("services:\n");
        for (int i = 0; i <= MaxServiceSlots; ++i)
            many += "  s" + QByteArray::number(i) + ": { kind: redis }\n";
        QTest::newRow("too many slots") << many << u"services"_s << u"9 slots; an app may have at most 8"_s << 5;
    }

    void refused()
    {
        QFETCH(QByteArray, services);
        QFETCH(QString, where);
        QFETCH(QString, message);
        QFETCH(int, line);
        auto spec = parseAppSpec(specWith(services));
        QVERIFY(!spec);
        QCOMPARE(spec.error().code, ErrorCode::Invalid);
        QCOMPARE(spec.error().where, where);
        QVERIFY2(spec.error().message.contains(message), qPrintable(spec.error().message));
        if (line > 0)
            QVERIFY2(spec.error().message.contains(u"line %1,"_s.arg(line)), qPrintable(spec.error().message));
    }

    void aSlotsVariablesAreNotRunEnvs()
    {
        // Refused when the spec is written, not at the deploy after.
        const auto withEnv = [](const QByteArray &env, const QByteArray &slot) -> QByteArray {
            return "name: shop\nsource: { repo: \"https://example.org/shop.git\" }\nrun: { port: 8080, env: { " + env +
                   " } }\nservices:\n  db: " + slot + "\n";
        };
        auto spec = parseAppSpec(withEnv("DB_URL: x", "{ kind: postgres }"));
        QVERIFY(!spec);
        QCOMPARE(spec.error().where, u"run.env.DB_URL"_s);
        QVERIFY2(spec.error().message.contains(u"DB_URL is set by the service in slot db"_s),
                 qPrintable(spec.error().message));
        // A part named otherwise frees its default name and takes the new one.
        QVERIFY(parseAppSpec(withEnv("DB_URL: x", "{ kind: postgres, env: { url: DATABASE_URL } }")));
        spec = parseAppSpec(withEnv("DATABASE_URL: x", "{ kind: postgres, env: { url: DATABASE_URL } }"));
        QVERIFY(!spec);
        QCOMPARE(spec.error().where, u"run.env.DATABASE_URL"_s);
        // Redis has no database name: DB_NAME is the app's own.
        QVERIFY(parseAppSpec(withEnv("DB_NAME: x", "{ kind: redis }")));
    }

    void validateBuiltInCode()
    {
        auto spec = parseAppSpec(specWith({}));
        QVERIFY(spec);
        AppSpec built = *spec;
        built.services.insert(u"db"_s, {u"postgres"_s, u"15"_s});
        QVERIFY(validateAppSpec(built));
        built.services.insert(u"cache"_s, {u"memcached"_s, u"1"_s});
        auto refused = validateAppSpec(built);
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"services.cache.kind"_s);
        built.services.insert(u"cache"_s, {u"redis"_s, u"6"_s});
        refused = validateAppSpec(built);
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"services.cache.version"_s);
        QVERIFY(refused.error().hint.contains(u"7"_s));
    }
};

QTEST_GUILESS_MAIN(TestAppSpecServices)
#include "tst_appspecservices.moc"
