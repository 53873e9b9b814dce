// Preview deployments, the parts below the engine: the spec's preview section (short and long
// forms, every refusal naming its field and line, written back as JSON that reads the same), what
// a pull request delivery means for an app (core/autodeploy/previews.h), and the preview's spec
// made from the app's.
#include "core/autodeploy/previews.h"

#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using Action = autodeploy::PreviewDecision::Action;
using PullAction = autodeploy::PullRequestEvent::Action;

Q_DECLARE_METATYPE(pando::core::autodeploy::PreviewDecision::Action)

namespace {

const QString Repo = u"https://github.com/acme/shop.git"_s;

QByteArray spec(const QByteArray &preview, const QByteArray &more = {})
{
    return "name: shop\nsource:\n  repo: https://github.com/acme/shop.git\n  ref: main\n"
           "run:\n  port: 8080\n  env:\n    MODE: production\n" +
           more + (preview.isEmpty() ? QByteArray() : "preview:" + preview + "\n");
}

autodeploy::HookEvent pull(PullAction action, int number = 7)
{
    autodeploy::HookEvent event;
    event.kind = autodeploy::HookEvent::Kind::PullRequest;
    event.eventName = u"pull_request"_s;
    event.repoUrls = {Repo, u"git@github.com:acme/shop.git"_s};
    event.pullRequest.action = action;
    event.pullRequest.actionName = u"opened"_s;
    event.pullRequest.number = number;
    event.pullRequest.headBranch = u"feature-x"_s;
    event.pullRequest.headCommit = QString(40, u'a');
    event.pullRequest.headRepoUrls = {Repo};
    event.pullRequest.baseBranch = u"main"_s;
    return event;
}

} // namespace

class TestPreviews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void shortAndLongForms();
    void refusals_data();
    void refusals();
    void decisions_data();
    void decisions();
    void thePreviewsSpec();
    void namesThatDoNotFit();
};

void TestPreviews::shortAndLongForms()
{
    auto off = parseAppSpec(spec({}));
    QVERIFY(off);
    QVERIFY(!off->preview.enabled);
    QVERIFY(!off->toJson().contains(u"preview"_s));
    auto on = parseAppSpec(spec(" true"));
    QVERIFY(on);
    QVERIFY(on->preview.enabled);
    QCOMPARE(on->preview.ttlMs, 7LL * 24 * 3600 * 1000);
    QVERIFY(on->preview.copySecrets);
    auto yes = parseAppSpec(spec(" on"));
    QVERIFY(yes && yes->preview.enabled);

    auto full =
        parseAppSpec(spec("\n  ttl: 3d\n  env:\n    MODE: preview\n    EMPTY:\n  resources:\n    memory: 256Mi\n"
                          "    cpus: 0.5\n  secrets: none"));
    QVERIFY2(full, qPrintable(full ? QString() : full.error().text()));
    QVERIFY(full->preview.enabled);
    QCOMPARE(full->preview.ttlMs, 3LL * 24 * 3600 * 1000);
    QCOMPARE(full->preview.env.value(u"MODE"_s), u"preview"_s);
    QVERIFY(full->preview.env.contains(u"EMPTY"_s));
    QCOMPARE(full->preview.memoryBytes, 256LL * 1024 * 1024);
    QCOMPARE(full->preview.cpus, 0.5);
    QVERIFY(!full->preview.copySecrets);
    // Written back as JSON, it reads the same.
    auto again = parseAppSpecJson(QJsonDocument(full->toJson()).toJson());
    QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
    QCOMPARE(again->preview, full->preview);

    auto disabled = parseAppSpec(spec("\n  enabled: false\n  ttl: 2h"));
    QVERIFY(disabled);
    QVERIFY(!disabled->preview.enabled);
    QCOMPARE(disabled->preview.ttlMs, 2LL * 3600 * 1000);
}

void TestPreviews::refusals_data()
{
    QTest::addColumn<QByteArray>("preview");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("says");
    QTest::newRow("word") << QByteArray(" sometimes") << u"preview"_s << u"true, false or a mapping"_s;
    QTest::newRow("list") << QByteArray("\n  - a") << u"preview"_s << u"a list"_s;
    QTest::newRow("unknown field") << QByteArray("\n  tll: 2h") << u"preview.tll"_s << u"did you mean \"ttl\""_s;
    QTest::newRow("short ttl") << QByteArray("\n  ttl: 5m") << u"preview.ttl"_s << u"from 1h to 90d"_s;
    QTest::newRow("long ttl") << QByteArray("\n  ttl: 100d") << u"preview.ttl"_s << u"from 1h to 90d"_s;
    QTest::newRow("enabled word") << QByteArray("\n  enabled: maybe") << u"preview.enabled"_s << u"true or false"_s;
    QTest::newRow("env name") << QByteArray("\n  env:\n    1BAD: x") << u"preview.env.1BAD"_s << QString();
    QTest::newRow("env list") << QByteArray("\n  env: [A]") << u"preview.env"_s << u"mapping of variables"_s;
    QTest::newRow("memory") << QByteArray("\n  resources:\n    memory: lots") << u"preview.resources.memory"_s
                            << u"an amount"_s;
    QTest::newRow("cpus") << QByteArray("\n  resources:\n    cpus: -1") << u"preview.resources.cpus"_s
                          << u"greater than 0"_s;
    QTest::newRow("disk") << QByteArray("\n  resources:\n    disk: 1Gi") << u"preview.resources.disk"_s
                          << u"unknown field"_s;
    QTest::newRow("secrets") << QByteArray("\n  secrets: all") << u"preview.secrets"_s << u"\"copy\" or \"none\""_s;
}

void TestPreviews::refusals()
{
    QFETCH(QByteArray, preview);
    QFETCH(QString, where);
    QFETCH(QString, says);
    auto parsed = parseAppSpec(spec(preview));
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().code, ErrorCode::Invalid);
    QCOMPARE(parsed.error().where, where);
    QVERIFY2(parsed.error().message.contains(says), qPrintable(parsed.error().message));
    if (where != u"preview")
        QVERIFY2(parsed.error().message.contains(u"line "_s), qPrintable(parsed.error().message));
}

void TestPreviews::decisions_data()
{
    QTest::addColumn<QByteArray>("preview");
    QTest::addColumn<int>("action");
    QTest::addColumn<QString>("change");
    QTest::addColumn<bool>("forksAllowed");
    QTest::addColumn<Action>("expected");
    QTest::addColumn<QString>("says");
    const int opened = int(PullAction::Opened);
    QTest::newRow("opened") << QByteArray(" true") << opened << QString() << false << Action::Deploy << u"#7"_s;
    QTest::newRow("updated") << QByteArray(" true") << int(PullAction::Updated) << QString() << false << Action::Deploy
                             << u"aaaaaaaaaaaa"_s;
    QTest::newRow("closed") << QByteArray(" true") << int(PullAction::Closed) << QString() << false << Action::Remove
                            << u"closed"_s;
    QTest::newRow("merged") << QByteArray(" true") << int(PullAction::Closed) << u"merged"_s << false << Action::Remove
                            << u"merged"_s;
    // Closing removes even when previews were turned off since: nothing is left behind.
    QTest::newRow("closed, previews off")
        << QByteArray() << int(PullAction::Closed) << QString() << false << Action::Remove << u"closed"_s;
    QTest::newRow("previews off") << QByteArray() << opened << QString() << false << Action::Ignore
                                  << u"previews are off"_s;
    QTest::newRow("labelled") << QByteArray(" true") << int(PullAction::Other) << QString() << false << Action::Ignore
                              << u"changes no code"_s;
    QTest::newRow("other base") << QByteArray(" true") << opened << u"base"_s << false << Action::Ignore
                                << u"asks to merge into release; shop follows main"_s;
    QTest::newRow("fork") << QByteArray(" true") << opened << u"fork"_s << false << Action::Ignore << u"fork"_s;
    QTest::newRow("fork allowed") << QByteArray(" true") << opened << u"fork"_s << true << Action::Deploy << u"#7"_s;
    QTest::newRow("other repository") << QByteArray(" true") << opened << u"repo"_s << false << Action::Refuse
                                      << u"acme/other"_s;
}

void TestPreviews::decisions()
{
    QFETCH(QByteArray, preview);
    QFETCH(int, action);
    QFETCH(QString, change);
    QFETCH(bool, forksAllowed);
    QFETCH(Action, expected);
    QFETCH(QString, says);
    auto app = parseAppSpec(spec(preview));
    QVERIFY(app);
    autodeploy::HookEvent event = pull(PullAction(action));
    if (change == u"merged")
        event.pullRequest.merged = true;
    else if (change == u"base")
        event.pullRequest.baseBranch = u"release"_s;
    else if (change == u"fork")
        event.pullRequest.fork = true;
    else if (change == u"repo")
        event.repoUrls = {u"https://github.com/acme/other.git"_s};
    const autodeploy::PreviewDecision decision = autodeploy::decidePreview(*app, event, forksAllowed);
    QCOMPARE(decision.action, expected);
    QVERIFY2(decision.reason.contains(says), qPrintable(decision.reason));
}

void TestPreviews::thePreviewsSpec()
{
    auto app = parseAppSpec(spec("\n  env:\n    MODE: preview\n  resources:\n    memory: 128Mi",
                                 "  resources:\n    memory: 1Gi\nroute:\n  port: 24000\n  domains: [shop.example.com]\n"
                                 "  paths: [/app]\nsecrets:\n  TLS_KEY:\n    file: /run/tls.key\n"
                                 "labels:\n  team: web\n"));
    QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
    app->route.domains << u"*.shop.example.com"_s; // a wildcard is left out: pr-12.*.… names nothing
    const autodeploy::HookEvent event = pull(PullAction::Opened, 12);
    auto made = autodeploy::previewSpec(*app, event.pullRequest, true);
    QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
    QCOMPARE(made->name, u"shop-pr-12"_s);
    QCOMPARE(made->source.repo, Repo);
    QCOMPARE(made->source.ref, u"feature-x"_s);
    QCOMPARE(made->run.env.value(u"MODE"_s), u"preview"_s);
    QCOMPARE(made->run.memoryBytes, 128LL * 1024 * 1024);
    QCOMPARE(made->route.port, 0);
    QCOMPARE(made->route.domains, QStringList{u"pr-12.shop.example.com"_s});
    QCOMPARE(made->route.paths, QStringList{u"/app"_s});
    QCOMPARE(made->labels.value(u"team"_s), u"web"_s);
    QCOMPARE(made->labels.value(u"preview-of"_s), u"shop"_s);
    QCOMPARE(made->labels.value(u"pull-request"_s), u"12"_s);
    QVERIFY(made->secrets.contains(u"TLS_KEY"_s));
    QCOMPARE(made->preview, AppSpec::Preview{});
    // What the engine stores reads back as the same spec.
    auto stored = parseAppSpec(QJsonDocument(made->toJson()).toJson());
    QVERIFY2(stored, qPrintable(stored ? QString() : stored.error().text()));
    QCOMPARE(stored->name, made->name);
    QCOMPARE(stored->route.domains, made->route.domains);

    // A fork's: read from the fork, through no connection; without secrets, no secret files.
    autodeploy::PullRequestEvent fork = event.pullRequest;
    fork.fork = true;
    fork.headRepoUrls = {u"git@github.com:mallory/shop.git"_s, u"https://github.com/mallory/shop.git"_s,
                         u"https://github.com/mallory/shop"_s};
    auto forked = autodeploy::previewSpec(*app, fork, false);
    QVERIFY(forked);
    QCOMPARE(forked->source.repo, u"https://github.com/mallory/shop.git"_s);
    QVERIFY(forked->source.connection.isEmpty());
    QVERIFY(forked->secrets.isEmpty());
}

void TestPreviews::namesThatDoNotFit()
{
    QCOMPARE(*autodeploy::previewName(u"shop"_s, 7), u"shop-pr-7"_s);
    const QString long56 = QString(56, u'a');
    QVERIFY(autodeploy::previewName(long56, 99));         // 56 + 6 = 62
    auto tooLong = autodeploy::previewName(long56, 1000); // 63 + 1
    QVERIFY(!tooLong);
    QCOMPARE(tooLong.error().where, u"name"_s);
    QVERIFY2(tooLong.error().hint.contains(u"shorter name"_s), qPrintable(tooLong.error().hint));
    QVERIFY(!autodeploy::previewName(u"shop"_s, 0));
}

QTEST_APPLESS_MAIN(TestPreviews)
#include "tst_previews.moc"
