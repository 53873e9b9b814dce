// The AppSpec's disk limit: run.resources.disk and diskPolicy, read, written back as JSON, and
// every way they can be wrong, each error naming the field and the line.
#include "core/spec/appspec.h"

#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;

namespace {

QByteArray spec(const QByteArray &resources)
{
    return "name: hello\n"
           "source:\n  repo: https://git.example/hello.git\n"
           "run:\n  port: 8080\n  resources:\n" +
           resources;
}

} // namespace

class TestAppSpecDisk : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aLimitAndItsPolicyAreRead()
    {
        auto parsed = parseAppSpec(spec("    disk: 1Gi\n    diskPolicy: warn\n"));
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        QCOMPARE(parsed->run.diskBytes, 1024LL * 1024 * 1024);
        QCOMPARE(parsed->run.diskPolicy, AppSpec::Run::DiskPolicy::Warn);
        QVERIFY(validateAppSpec(*parsed));

        // The JSON form reads back to the same limit.
        const QJsonObject resources = parsed->toJson().value(u"run"_s).toObject().value(u"resources"_s).toObject();
        QCOMPARE(resources.value(u"disk"_s).toString(), u"1Gi"_s);
        QCOMPARE(resources.value(u"diskPolicy"_s).toString(), u"warn"_s);
        auto again = parseAppSpecJson(QJsonDocument(parsed->toJson()).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->run.diskBytes, parsed->run.diskBytes);
        QCOMPARE(again->run.diskPolicy, AppSpec::Run::DiskPolicy::Warn);
    }

    void stopIsTheDefaultAndNoLimitIsNoLimit()
    {
        auto limited = parseAppSpec(spec("    disk: 500Mi\n"));
        QVERIFY(limited);
        QCOMPARE(limited->run.diskBytes, 500LL * 1024 * 1024);
        QCOMPARE(limited->run.diskPolicy, AppSpec::Run::DiskPolicy::Stop);
        auto open = parseAppSpec(spec("    memory: 64Mi\n"));
        QVERIFY(open);
        QCOMPARE(open->run.diskBytes, 0);
        QVERIFY(!open->toJson().value(u"run"_s).toObject().value(u"resources"_s).toObject().contains(u"disk"_s));
    }

    void badInputNamesTheFieldAndLine_data()
    {
        QTest::addColumn<QByteArray>("resources");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("not an amount")
            << QByteArray("    disk: lots\n") << u"run.resources.disk"_s
            << u"expected an amount like \"1Gi\", \"500Mi\" or bytes, got \"lots\" (line 7"_s;
        QTest::newRow("a list") << QByteArray("    disk: [1Gi]\n") << u"run.resources.disk"_s
                                << u"got a list (line 7"_s;
        QTest::newRow("too small") << QByteArray("    disk: 100Ki\n") << u"run.resources.disk"_s
                                   << u"100Ki is below the minimum of 1Mi (line 7"_s;
        QTest::newRow("unknown policy") << QByteArray("    disk: 1Gi\n    diskPolicy: kill\n")
                                        << u"run.resources.diskPolicy"_s
                                        << u"expected \"stop\" or \"warn\", got \"kill\" (line 8"_s;
        QTest::newRow("policy without a limit")
            << QByteArray("    diskPolicy: stop\n") << u"run.resources.diskPolicy"_s << u"but there is none (line 7"_s;
        QTest::newRow("bytes that disagree") << QByteArray("    disk: 1Gi\n    diskBytes: 1000\n")
                                             << u"run.resources.diskBytes"_s << u"does not match disk"_s;
        QTest::newRow("a typo") << QByteArray("    disks: 1Gi\n") << u"run.resources.disks"_s << u"unknown field"_s;
    }

    void badInputNamesTheFieldAndLine()
    {
        QFETCH(QByteArray, resources);
        QFETCH(QString, where);
        QFETCH(QString, says);
        auto parsed = parseAppSpec(spec(resources));
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, pando::ErrorCode::Invalid);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().message.contains(says), qPrintable(parsed.error().text()));
    }

    void aSpecBuiltInCodeIsChecked()
    {
        auto parsed = parseAppSpec(spec("    memory: 64Mi\n"));
        QVERIFY(parsed);
        AppSpec s = *parsed;
        s.run.diskBytes = 1000;
        auto checked = validateAppSpec(s);
        QVERIFY(!checked);
        QCOMPARE(checked.error().where, u"run.resources.disk"_s);
    }
};

QTEST_GUILESS_MAIN(TestAppSpecDisk)
#include "tst_appspecdisk.moc"
