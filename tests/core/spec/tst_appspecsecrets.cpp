// The AppSpec's secrets section: which secrets become files, and every way the section can be
// wrong, each error naming the field and the line.
#include "core/spec/appspec.h"

#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;

namespace {

QByteArray spec(const QByteArray &secrets)
{
    return "name: hello\n"
           "source:\n  repo: https://git.example/hello.git\n"
           "run:\n  port: 8080\n" +
           secrets;
}

} // namespace

class TestAppSpecSecrets : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void filesAreRead()
    {
        auto parsed = parseAppSpec(spec("secrets:\n"
                                        "  TLS_KEY: { file: /run/secrets/tls.key }\n"
                                        "  DB_PASSWORD:\n"
                                        "    file: /etc/app/db-password\n"
                                        "    mode: \"0440\"\n"
                                        "    uid: 1000\n"
                                        "    gid: 1000\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QCOMPARE(parsed->secrets.size(), 2);
        QCOMPARE(parsed->secrets.value(u"TLS_KEY"_s).path, u"/run/secrets/tls.key"_s);
        QCOMPARE(parsed->secrets.value(u"TLS_KEY"_s).mode, 0400);
        QCOMPARE(parsed->secrets.value(u"TLS_KEY"_s).uid, 0);
        const AppSpec::SecretFile db = parsed->secrets.value(u"DB_PASSWORD"_s);
        QCOMPARE(db.mode, 0440);
        QCOMPARE(db.uid, 1000);
        QCOMPARE(db.gid, 1000);
        QVERIFY(validateAppSpec(*parsed));

        // The JSON form reads back to the same spec.
        const QJsonObject json = parsed->toJson();
        QCOMPARE(json.value(u"secrets"_s).toObject().value(u"DB_PASSWORD"_s).toObject().value(u"mode"_s).toString(),
                 u"0440"_s);
        auto again = parseAppSpecJson(QJsonDocument(json).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->secrets, parsed->secrets);
    }

    void noSectionMeansEnvOnly()
    {
        auto parsed = parseAppSpec(spec("secrets:\n"));
        QVERIFY(parsed);
        QVERIFY(parsed->secrets.isEmpty());
        QVERIFY(parseAppSpec(spec(""))->secrets.isEmpty());
    }

    void errors_data()
    {
        QTest::addColumn<QByteArray>("section");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("not a mapping") << QByteArray("secrets: [TLS_KEY]\n") << u"secrets"_s << u"line 6"_s;
        QTest::newRow("bad name") << QByteArray("secrets:\n  TLS-KEY: { file: /run/secrets/k }\n")
                                  << u"secrets.TLS-KEY"_s << u"not a valid variable name"_s;
        QTest::newRow("name too long") << QByteArray("secrets:\n  " + QByteArray(129, 'A') + ": { file: /a }\n")
                                       << u"secrets."_s + QString(129, u'A') << u"at most 128"_s;
        QTest::newRow("bare name") << QByteArray("secrets:\n  TLS_KEY:\n") << u"secrets.TLS_KEY"_s
                                   << u"environment variable"_s;
        QTest::newRow("no file") << QByteArray("secrets:\n  TLS_KEY: { mode: \"0400\" }\n") << u"secrets.TLS_KEY.file"_s
                                 << u"missing required field"_s;
        QTest::newRow("unknown field") << QByteArray("secrets:\n  TLS_KEY: { fille: /run/secrets/k }\n")
                                       << u"secrets.TLS_KEY.fille"_s << u"did you mean \"file\""_s;
        QTest::newRow("relative") << QByteArray("secrets:\n  TLS_KEY: { file: run/secrets/k }\n")
                                  << u"secrets.TLS_KEY.file"_s << u"line 7, column 20"_s;
        QTest::newRow("dot dot") << QByteArray("secrets:\n  TLS_KEY: { file: /run/../etc/passwd }\n")
                                 << u"secrets.TLS_KEY.file"_s << u"\"..\""_s;
        QTest::newRow("directory") << QByteArray("secrets:\n  TLS_KEY: { file: /run/secrets/ }\n")
                                   << u"secrets.TLS_KEY.file"_s << u"absolute path"_s;
        QTest::newRow("root") << QByteArray("secrets:\n  TLS_KEY: { file: / }\n") << u"secrets.TLS_KEY.file"_s
                              << u"absolute path"_s;
        QTest::newRow("proc") << QByteArray("secrets:\n  TLS_KEY: { file: /proc/self/key }\n")
                              << u"secrets.TLS_KEY.file"_s << u"under /proc"_s;
        QTest::newRow("same path") << QByteArray("secrets:\n  A: { file: /run/s/a }\n  B: { file: /run/s/a }\n")
                                   << u"secrets.B.file"_s << u"collides with secret A"_s;
        QTest::newRow("nested path") << QByteArray("secrets:\n  A: { file: /run/s }\n  B: { file: /run/s/b }\n")
                                     << u"secrets.B.file"_s << u"collides"_s;
        QTest::newRow("mode not octal") << QByteArray("secrets:\n  A: { file: /run/s/a, mode: \"0899\" }\n")
                                        << u"secrets.A.mode"_s << u"octal"_s;
        QTest::newRow("mode unreadable") << QByteArray("secrets:\n  A: { file: /run/s/a, mode: \"0200\" }\n")
                                         << u"secrets.A.mode"_s << u"can read"_s;
        QTest::newRow("uid negative") << QByteArray("secrets:\n  A: { file: /run/s/a, uid: -1 }\n")
                                      << u"secrets.A.uid"_s << u"numeric id"_s;
        QTest::newRow("gid huge") << QByteArray("secrets:\n  A: { file: /run/s/a, gid: 4294967296 }\n")
                                  << u"secrets.A.gid"_s << u"numeric id"_s;
    }
    void errors()
    {
        QFETCH(QByteArray, section);
        QFETCH(QString, where);
        QFETCH(QString, says);
        auto parsed = parseAppSpec(spec(section));
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, pando::ErrorCode::Invalid);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().text().contains(says) || parsed.error().hint.contains(says),
                 qPrintable(parsed.error().text() + u" / "_s + parsed.error().hint));
        // Every error says which line.
        QVERIFY2(parsed.error().message.contains(u"(line "_s), qPrintable(parsed.error().text()));
    }

    void validateCatchesSpecsBuiltInCode()
    {
        auto parsed = parseAppSpec(spec(""));
        QVERIFY(parsed);
        AppSpec built = *parsed;
        built.secrets.insert(u"A"_s, AppSpec::SecretFile{u"relative"_s, 0400, 0, 0});
        QCOMPARE(validateAppSpec(built).error().where, u"secrets.A.file"_s);
        built.secrets[u"A"_s].path = u"/run/a"_s;
        built.secrets[u"A"_s].mode = 01000;
        QCOMPARE(validateAppSpec(built).error().where, u"secrets.A.mode"_s);
        built.secrets[u"A"_s].mode = 0400;
        QVERIFY(validateAppSpec(built));
    }
};

QTEST_GUILESS_MAIN(TestAppSpecSecrets)
#include "tst_appspecsecrets.moc"
