// The AppSpec's source.autodeploy: the short and long forms, written back as JSON, which pushed
// refs an app follows, and every way it can be wrong, each error naming the field and the line.
#include "core/spec/appspec.h"
#include "core/spec/specautodeploy.h"

#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;
using Mode = AppSpec::Source::AutoDeploy::Mode;

namespace {

QByteArray spec(const QByteArray &autodeploy, const QByteArray &ref = "main")
{
    return "name: shop\n"
           "source:\n  repo: https://git.example/acme/shop.git\n  ref: " +
           ref + "\n  autodeploy:" + autodeploy + "\nrun:\n  port: 8080\n";
}

} // namespace

class TestAppSpecAutoDeploy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shortAndLongForms()
    {
        auto push = parseAppSpec(spec(" push"));
        QVERIFY2(push, qPrintable(push ? QString() : push.error().text()));
        QCOMPARE(push->source.autodeploy.mode, Mode::Push);
        auto off = parseAppSpec(spec(" off"));
        QVERIFY(off);
        QCOMPARE(off->source.autodeploy.mode, Mode::Off);
        auto none = parseAppSpec(spec(""));
        QVERIFY(none);
        QCOMPARE(none->source.autodeploy.mode, Mode::Off);
        QVERIFY(!none->toJson().value(u"source"_s).toObject().contains(u"autodeploy"_s));

        auto poll = parseAppSpec(spec("\n    on: poll\n    every: 5m"));
        QVERIFY2(poll, qPrintable(poll ? QString() : poll.error().text()));
        QCOMPARE(poll->source.autodeploy.mode, Mode::Poll);
        QCOMPARE(poll->source.autodeploy.everyMs, 5 * 60 * 1000);
        auto tags = parseAppSpec(spec("\n    on: push\n    tags: \"v*\""));
        QVERIFY(tags);
        QCOMPARE(tags->source.autodeploy.tags, u"v*"_s);

        // The JSON form reads back to the same thing.
        for (const AppSpec &written : {*poll, *tags}) {
            const QJsonObject source = written.toJson().value(u"source"_s).toObject();
            QVERIFY(source.contains(u"autodeploy"_s));
            auto again = parseAppSpecJson(QJsonDocument(written.toJson()).toJson());
            QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
            QCOMPARE(again->source.autodeploy, written.source.autodeploy);
        }
    }

    void whatIsFollowed()
    {
        auto branch = parseAppSpec(spec(" push"));
        QVERIFY(branch);
        QCOMPARE(followedRef(branch->source, u"refs/heads/main"_s), u"main"_s);
        QCOMPARE(followedRef(branch->source, u"refs/heads/main-old"_s), QString());
        QCOMPARE(followedRef(branch->source, u"refs/tags/main"_s), QString());
        auto full = parseAppSpec(spec(" push", "refs/heads/release/2.x"));
        QVERIFY2(full, qPrintable(full ? QString() : full.error().text()));
        QCOMPARE(followedRef(full->source, u"refs/heads/release/2.x"_s), u"release/2.x"_s);
        auto tags = parseAppSpec(spec("\n    on: push\n    tags: \"v*\""));
        QVERIFY(tags);
        QCOMPARE(followedRef(tags->source, u"refs/tags/v1.2.0"_s), u"v1.2.0"_s);
        QCOMPARE(followedRef(tags->source, u"refs/tags/nightly"_s), QString());
        QCOMPARE(followedRef(tags->source, u"refs/heads/main"_s), QString());
        // A glob's * does not cross a /.
        QCOMPARE(followedRef(tags->source, u"refs/tags/v1/beta"_s), QString());
    }

    void badInputNamesTheFieldAndLine_data()
    {
        QTest::addColumn<QByteArray>("autodeploy");
        QTest::addColumn<QByteArray>("ref");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("a typo") << QByteArray(" puhs") << QByteArray("main") << u"source.autodeploy"_s
                                << u"expected \"push\", \"poll\" or \"off\", got \"puhs\" (line 5"_s;
        QTest::newRow("a list") << QByteArray(" [push]") << QByteArray("main") << u"source.autodeploy"_s
                                << u"got a list"_s;
        QTest::newRow("no on") << QByteArray("\n    tags: \"v*\"") << QByteArray("main") << u"source.autodeploy.on"_s
                               << u"missing required field"_s;
        QTest::newRow("unknown field") << QByteArray("\n    on: push\n    branch: main") << QByteArray("main")
                                       << u"source.autodeploy.branch"_s << u"unknown field"_s;
        QTest::newRow("too often") << QByteArray("\n    on: poll\n    every: 5s") << QByteArray("main")
                                   << u"source.autodeploy.every"_s << u"from 30s to 24h"_s;
        QTest::newRow("every without poll") << QByteArray("\n    on: push\n    every: 5m") << QByteArray("main")
                                            << u"source.autodeploy.every"_s << u"not on poll"_s;
        QTest::newRow("tags with poll") << QByteArray("\n    on: poll\n    tags: \"v*\"") << QByteArray("main")
                                        << u"source.autodeploy.tags"_s << u"polling follows a branch"_s;
        QTest::newRow("not a pattern") << QByteArray("\n    on: push\n    tags: \"v 1\"") << QByteArray("main")
                                       << u"source.autodeploy.tags"_s << u"is not a tag pattern"_s;
        QTest::newRow("a commit does not move")
            << QByteArray(" push") << QByteArray("0123456789abcdef0123456789abcdef01234567") << u"source.autodeploy"_s
            << u"does not move"_s;
        QTest::newRow("a tag ref does not move")
            << QByteArray(" poll") << QByteArray("refs/tags/v1") << u"source.autodeploy"_s << u"does not move"_s;
    }

    void badInputNamesTheFieldAndLine()
    {
        QFETCH(QByteArray, autodeploy);
        QFETCH(QByteArray, ref);
        QFETCH(QString, where);
        QFETCH(QString, says);
        auto parsed = parseAppSpec(spec(autodeploy, ref));
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().code, pando::ErrorCode::Invalid);
        QCOMPARE(parsed.error().where, where);
        QVERIFY2(parsed.error().message.contains(says), qPrintable(parsed.error().message));
    }

    void aSpecBuiltInCodeIsHeldToTheSameRules()
    {
        auto parsed = parseAppSpec(spec(" push"));
        QVERIFY(parsed);
        AppSpec built = *parsed;
        built.source.autodeploy.mode = Mode::Poll;
        built.source.autodeploy.everyMs = 1000;
        auto checked = validateAppSpec(built);
        QVERIFY(!checked);
        QCOMPARE(checked.error().where, u"source.autodeploy.every"_s);
    }
};

QTEST_GUILESS_MAIN(TestAppSpecAutoDeploy)
#include "tst_appspecautodeploy.moc"
