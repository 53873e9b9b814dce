// Deploy on push and by polling (issue 15, "Deploy on push"): deliveries signed as each forge
// signs them reach a real engine (SQLite in a temporary directory, the real GitSource reading
// real git repositories); the runtime and router are fakes. What a user relies on: the pushed
// commit deploys (not whatever the branch points at later), each delivery once, a wrong
// signature or an unknown app deploys nothing and looks the same, pushes the app does not follow
// are answered with why, an app under approval waits for sign-off, and polling deploys a moved
// branch once.

#include "adapters/source/generic/gitsource.h"
#include "app/wiring/install.h"
#include "core/policy/policy.h"
#include "enginepeople.h"
#include "tests/app/server/fakes.h"
#include "tests/support/gitfixture.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>
#include <QTest>
#include <QUuid>

using namespace Qt::StringLiterals;
using namespace pando;
using core::autodeploy::HookRequest;

namespace {

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

QByteArray hmacHex(const QByteArray &secret, const QByteArray &body)
{
    return QMessageAuthenticationCode::hash(body, secret, QCryptographicHash::Sha256).toHex();
}

QString newId()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

// A push as GitHub sends it: the repository's addresses, the ref and the commits before and after.
HookRequest githubPush(const QByteArray &secret, const QString &repo, const QString &ref, const QString &after,
                       const QString &id = newId())
{
    const QJsonObject body{
        {u"ref"_s, ref},
        {u"before"_s, QString(40, u'0')},
        {u"after"_s, after},
        {u"created"_s, false},
        {u"deleted"_s, after == QString(40, u'0')},
        {u"repository"_s, QJsonObject{{u"full_name"_s, u"acme/shop"_s}, {u"clone_url"_s, repo}, {u"html_url"_s, repo}}},
        {u"pusher"_s, QJsonObject{{u"name"_s, u"alice"_s}, {u"email"_s, u"alice@example.com"_s}}},
    };
    HookRequest request;
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    request.headers.insert("x-github-event", "push");
    request.headers.insert("x-github-delivery", id.toUtf8());
    request.headers.insert("x-hub-signature-256", "sha256=" + hmacHex(secret, request.body));
    request.headers.insert("content-type", "application/json");
    return request;
}

core::Actor forge()
{
    return core::Actor{u"anonymous"_s, u"192.0.2.10"_s, {}};
}

} // namespace

class TestEngineAutoDeploy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void thePushedCommitDeploys();
    void aDeliveryIsActedOnOnce();
    void badSignaturesDeployNothingAndLookAlike();
    void pushesNotFollowedSayWhy();
    void eachForgeAsItSigns_data();
    void eachForgeAsItSigns();
    void tagsMatchingThePattern();
    void underApprovalItWaitsForSignOff();
    void pollingDeploysAMovedBranchOnce();
    void theSecretIsNeverShownAgain();

private:
    QByteArray createApp(const QString &name, const QString &autodeploy, const QString &ref = u"main"_s);
    // Waits until the delivery was acted on and returns it.
    core::autodeploy::Delivery settled(const QString &app, const QString &id);
    int deployCount(const QString &app);

    QTemporaryDir m_dir;
    test::GitFixture m_git;
    QString m_repo;
    QString m_first, m_second;
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestEngineAutoDeploy::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(m_git.isValid(), "git is needed (Debian's git)");
    QVERIFY(!m_git.createRepository(u"shop"_s).isEmpty());
    m_first = m_git.commit(u"shop"_s, u"main"_s, {{u"Dockerfile"_s, test::GitFile{"FROM scratch\n"}}});
    m_second = m_git.commit(u"shop"_s, u"main"_s, {{u"README"_s, test::GitFile{"two\n"}}});
    QVERIFY(!m_first.isEmpty() && !m_second.isEmpty());
    m_repo = m_git.url(u"shop"_s);

    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<adapters::git::GitSource>(m_dir.filePath(u"cache/git"_s));
    auto policy = core::policy::parsePolicy(R"({"apps": ["gated-*"]})");
    QVERIFY2(policy, qPrintable(policy ? QString() : text(policy.error())));
    options.engine.approvalPolicy = *policy;
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : text(opened.error())));
    m_engine = &m_install->engine();
    const QString made =
        m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin}, {"alice", core::accounts::Role::Member}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
}

void TestEngineAutoDeploy::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
}

QByteArray TestEngineAutoDeploy::createApp(const QString &name, const QString &autodeploy, const QString &ref)
{
    // Nothing answers the fake runtime's health probe: a deploy ends after a second.
    const QByteArray spec = u"name: %1\nsource:\n  repo: %2\n  ref: %3\n  autodeploy: %4\nrun:\n  port: 8080\n"
                            u"health:\n  timeout: 1s\n"_s.arg(name, m_repo, ref, autodeploy)
                                .toUtf8();
    auto created = m_engine->createApp(spec, m_people.actor(u"ada"_s));
    if (!created) {
        qWarning("%s", qPrintable(text(created.error())));
        return {};
    }
    auto secret = m_engine->setHookSecret(name, {}, m_people.actor(u"ada"_s));
    if (!secret) {
        qWarning("%s", qPrintable(text(secret.error())));
        return {};
    }
    return *secret;
}

core::autodeploy::Delivery TestEngineAutoDeploy::settled(const QString &app, const QString &id)
{
    core::autodeploy::Delivery found;
    const auto look = [&] {
        auto hook = m_engine->appHook(app, 50);
        if (!hook)
            return false;
        for (const core::autodeploy::Delivery &d : std::as_const(hook->deliveries)) {
            if (d.id == id) {
                found = d;
                return d.outcome != u"accepted";
            }
        }
        return false;
    };
    // A delivery still "accepted" after the wait fails the caller's comparison of its outcome.
    QElapsedTimer waited;
    waited.start();
    while (!look() && waited.elapsed() < 20000)
        QTest::qWait(20);
    return found;
}

int TestEngineAutoDeploy::deployCount(const QString &app)
{
    auto deploys = m_engine->deploys(app, 100);
    return deploys ? int(deploys->size()) : -1;
}

void TestEngineAutoDeploy::thePushedCommitDeploys()
{
    const QByteArray secret = createApp(u"shop"_s, u"push"_s);
    QVERIFY(!secret.isEmpty());
    QCOMPARE(secret.size(), 40);
    // The branch is at m_second already; the delivery is of m_first, and m_first is what deploys.
    const HookRequest push = githubPush(secret, m_repo, u"refs/heads/main"_s, m_first);
    auto delivery = m_engine->receiveHook(u"shop"_s, push, forge());
    QVERIFY2(delivery, qPrintable(delivery ? QString() : text(delivery.error())));
    QCOMPARE(delivery->outcome, u"accepted"_s);
    QCOMPARE(delivery->forge, u"github"_s);
    const core::autodeploy::Delivery done = settled(u"shop"_s, delivery->id);
    QVERIFY2(done.outcome == u"deployed", qPrintable(done.outcome + u": "_s + done.detail));
    QVERIFY(!done.deployId.isEmpty());
    auto view = m_engine->deployView(done.deployId);
    QVERIFY(view);
    QCOMPARE(view->record.commit, m_first);
    QCOMPARE(view->record.actor, u"hook:github:alice"_s);
    // Audited with the delivery's facts.
    core::AuditRepository::Filter filter;
    filter.action = u"app.hook"_s;
    auto lines = m_engine->auditLines(filter);
    QVERIFY(lines && !lines->isEmpty());
    QVERIFY(lines->first().detail.contains(delivery->id));
    QVERIFY(!lines->first().detail.contains(QString::fromLatin1(secret)));
    test::waitSettled(*m_engine, done.deployId);
}

void TestEngineAutoDeploy::aDeliveryIsActedOnOnce()
{
    auto hook = m_engine->appHook(u"shop"_s, 1);
    QVERIFY(hook);
    const QByteArray secret =
        m_engine->setHookSecret(u"shop"_s, "a-secret-we-chose-42", m_people.actor(u"ada"_s)).value_or(QByteArray());
    QCOMPARE(secret, QByteArray("a-secret-we-chose-42"));
    const int before = deployCount(u"shop"_s);
    const HookRequest push = githubPush(secret, m_repo, u"refs/heads/main"_s, m_second);
    auto first = m_engine->receiveHook(u"shop"_s, push, forge());
    QVERIFY2(first, qPrintable(first ? QString() : text(first.error())));
    // The same delivery again, as a forge's redeliver button or an attacker sends it.
    auto again = m_engine->receiveHook(u"shop"_s, push, forge());
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Conflict);
    QVERIFY2(again.error().message.contains(first->id), qPrintable(text(again.error())));
    QCOMPARE(settled(u"shop"_s, first->id).outcome, u"deployed"_s);
    QCOMPARE(deployCount(u"shop"_s), before + 1);
}

void TestEngineAutoDeploy::badSignaturesDeployNothingAndLookAlike()
{
    const int before = deployCount(u"shop"_s);
    const HookRequest wrong = githubPush("not-the-secret-at-all", m_repo, u"refs/heads/main"_s, m_second);
    auto refused = m_engine->receiveHook(u"shop"_s, wrong, forge());
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unauthorized);
    // An app that does not exist answers the same.
    auto unknown = m_engine->receiveHook(u"nosuchapp"_s, wrong, forge());
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::Unauthorized);
    QCOMPARE(unknown.error().message, refused.error().message);
    // A body changed after signing.
    HookRequest tampered = githubPush("a-secret-we-chose-42", m_repo, u"refs/heads/main"_s, m_second);
    tampered.body.replace("alice", "mallo");
    auto changed = m_engine->receiveHook(u"shop"_s, tampered, forge());
    QVERIFY(!changed);
    QCOMPARE(changed.error().code, ErrorCode::Unauthorized);
    // No signature at all.
    HookRequest unsigned_ = githubPush("a-secret-we-chose-42", m_repo, u"refs/heads/main"_s, m_second);
    unsigned_.headers.remove("x-hub-signature-256");
    auto missing = m_engine->receiveHook(u"shop"_s, unsigned_, forge());
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::Unauthorized);
    QVERIFY2(missing.error().message.contains(u"X-Hub-Signature-256"_s, Qt::CaseInsensitive),
             qPrintable(text(missing.error())));
    // Ten megabytes: refused before anything is read.
    HookRequest huge = githubPush("a-secret-we-chose-42", m_repo, u"refs/heads/main"_s, m_second);
    huge.body = QByteArray(10 * 1024 * 1024, ' ');
    auto tooLarge = m_engine->receiveHook(u"shop"_s, huge, forge());
    QVERIFY(!tooLarge);
    QCOMPARE(tooLarge.error().code, ErrorCode::TooLarge);
    QCOMPARE(deployCount(u"shop"_s), before);
    auto hook = m_engine->appHook(u"shop"_s, 50);
    QVERIFY(hook);
    for (const core::autodeploy::Delivery &d : std::as_const(hook->deliveries))
        QVERIFY2(d.id.toUtf8() != wrong.headers.value("x-github-delivery"), "a refused delivery was recorded");
}

void TestEngineAutoDeploy::pushesNotFollowedSayWhy()
{
    const QByteArray secret = "a-secret-we-chose-42";
    const int before = deployCount(u"shop"_s);
    auto other = m_engine->receiveHook(u"shop"_s, githubPush(secret, m_repo, u"refs/heads/dev"_s, m_second), forge());
    QVERIFY2(other, qPrintable(other ? QString() : text(other.error())));
    QCOMPARE(other->outcome, u"ignored"_s);
    QCOMPARE(other->detail, u"push to refs/heads/dev; shop follows branch main"_s);
    auto deleted =
        m_engine->receiveHook(u"shop"_s, githubPush(secret, m_repo, u"refs/heads/main"_s, QString(40, u'0')), forge());
    QVERIFY(deleted);
    QCOMPARE(deleted->outcome, u"ignored"_s);
    QVERIFY2(deleted->detail.contains(u"deleted"_s), qPrintable(deleted->detail));
    // A push to another repository is an error at body.repository.
    auto elsewhere = m_engine->receiveHook(
        u"shop"_s, githubPush(secret, u"https://github.com/acme/other.git"_s, u"refs/heads/main"_s, m_second), forge());
    QVERIFY(!elsewhere);
    QCOMPARE(elsewhere.error().code, ErrorCode::Invalid);
    QCOMPARE(elsewhere.error().where, u"body.repository"_s);
    // A ping says the webhook works.
    HookRequest ping;
    ping.body = R"({"zen":"Keep it logically awesome.","hook_id":42,"hook":{"type":"Repository"}})";
    ping.headers.insert("x-github-event", "ping");
    ping.headers.insert("x-github-delivery", newId().toUtf8());
    ping.headers.insert("x-hub-signature-256", "sha256=" + hmacHex(secret, ping.body));
    auto pong = m_engine->receiveHook(u"shop"_s, ping, forge());
    QVERIFY2(pong, qPrintable(pong ? QString() : text(pong.error())));
    QCOMPARE(pong->outcome, u"ignored"_s);
    QVERIFY2(pong->detail.contains(u"signature matches"_s), qPrintable(pong->detail));
    // An app whose auto-deploy is off is told so, and deploys nothing.
    const QByteArray offSecret = createApp(u"manual"_s, u"off"_s);
    QVERIFY(!offSecret.isEmpty());
    auto off =
        m_engine->receiveHook(u"manual"_s, githubPush(offSecret, m_repo, u"refs/heads/main"_s, m_second), forge());
    QVERIFY(off);
    QCOMPARE(off->outcome, u"ignored"_s);
    QVERIFY2(off->detail.contains(u"off"_s), qPrintable(off->detail));
    QCOMPARE(deployCount(u"manual"_s), 0);
    QCOMPARE(deployCount(u"shop"_s), before);
}

void TestEngineAutoDeploy::eachForgeAsItSigns_data()
{
    QTest::addColumn<QString>("forge");
    QTest::newRow("gitlab") << u"gitlab"_s;
    QTest::newRow("gitea") << u"gitea"_s;
    QTest::newRow("bitbucket-cloud") << u"bitbucket-cloud"_s;
    QTest::newRow("bitbucket-dc") << u"bitbucket-dc"_s;
    QTest::newRow("azure-devops") << u"azure-devops"_s;
}

void TestEngineAutoDeploy::eachForgeAsItSigns()
{
    QFETCH(QString, forge);
    const QString app = u"via-"_s + forge;
    const QByteArray secret = createApp(app, u"push"_s);
    QVERIFY(!secret.isEmpty());
    const QString id = newId();
    HookRequest request;
    QJsonObject body;
    if (forge == u"gitlab") {
        body = QJsonObject{{u"object_kind"_s, u"push"_s},
                           {u"ref"_s, u"refs/heads/main"_s},
                           {u"after"_s, m_first},
                           {u"checkout_sha"_s, m_first},
                           {u"user_username"_s, u"alice"_s},
                           {u"project"_s, QJsonObject{{u"git_http_url"_s, m_repo}, {u"web_url"_s, m_repo}}},
                           {u"repository"_s, QJsonObject{{u"git_http_url"_s, m_repo}}}};
        request.headers.insert("x-gitlab-event", "Push Hook");
        request.headers.insert("x-gitlab-token", secret);
        request.headers.insert("x-gitlab-event-uuid", id.toUtf8());
    } else if (forge == u"gitea") {
        body = QJsonObject{{u"ref"_s, u"refs/heads/main"_s},
                           {u"after"_s, m_first},
                           {u"repository"_s, QJsonObject{{u"clone_url"_s, m_repo}, {u"html_url"_s, m_repo}}},
                           {u"pusher"_s, QJsonObject{{u"login"_s, u"alice"_s}}}};
        request.headers.insert("x-gitea-event", "push");
        request.headers.insert("x-gitea-delivery", id.toUtf8());
    } else if (forge == u"bitbucket-cloud") {
        const QJsonObject change{{u"new"_s, QJsonObject{{u"type"_s, u"branch"_s},
                                                        {u"name"_s, u"main"_s},
                                                        {u"target"_s, QJsonObject{{u"hash"_s, m_first}}}}},
                                 {u"old"_s, QJsonObject{{u"type"_s, u"branch"_s}, {u"name"_s, u"main"_s}}}};
        body = QJsonObject{
            {u"push"_s, QJsonObject{{u"changes"_s, QJsonArray{change}}}},
            {u"actor"_s, QJsonObject{{u"nickname"_s, u"alice"_s}}},
            {u"repository"_s, QJsonObject{{u"full_name"_s, u"acme/shop"_s},
                                          {u"links"_s, QJsonObject{{u"html"_s, QJsonObject{{u"href"_s, m_repo}}}}}}}};
        request.headers.insert("x-event-key", "repo:push");
        request.headers.insert("x-request-uuid", id.toUtf8());
    } else if (forge == u"bitbucket-dc") {
        const QJsonObject change{
            {u"ref"_s,
             QJsonObject{{u"id"_s, u"refs/heads/main"_s}, {u"displayId"_s, u"main"_s}, {u"type"_s, u"BRANCH"_s}}},
            {u"refId"_s, u"refs/heads/main"_s},
            {u"fromHash"_s, m_second},
            {u"toHash"_s, m_first},
            {u"type"_s, u"UPDATE"_s}};
        body = QJsonObject{
            {u"eventKey"_s, u"repo:refs_changed"_s},
            {u"actor"_s, QJsonObject{{u"name"_s, u"alice"_s}}},
            {u"changes"_s, QJsonArray{change}},
            {u"repository"_s,
             QJsonObject{{u"slug"_s, u"shop"_s},
                         {u"project"_s, QJsonObject{{u"key"_s, u"ACME"_s}}},
                         {u"links"_s, QJsonObject{{u"clone"_s, QJsonArray{QJsonObject{{u"href"_s, m_repo},
                                                                                      {u"name"_s, u"http"_s}}}}}}}}};
        request.headers.insert("x-event-key", "repo:refs_changed");
        request.headers.insert("x-request-id", id.toUtf8());
    } else {
        body =
            QJsonObject{{u"id"_s, id},
                        {u"eventType"_s, u"git.push"_s},
                        {u"publisherId"_s, u"tfs"_s},
                        {u"resource"_s,
                         QJsonObject{{u"refUpdates"_s, QJsonArray{QJsonObject{{u"name"_s, u"refs/heads/main"_s},
                                                                              {u"oldObjectId"_s, m_second},
                                                                              {u"newObjectId"_s, m_first}}}},
                                     {u"repository"_s, QJsonObject{{u"name"_s, u"shop"_s}, {u"remoteUrl"_s, m_repo}}},
                                     {u"pushedBy"_s, QJsonObject{{u"displayName"_s, u"Alice"_s}}}}}};
        request.headers.insert("authorization", "Basic " + QByteArray("pando:" + secret).toBase64());
    }
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    if (forge == u"gitea")
        request.headers.insert("x-gitea-signature", hmacHex(secret, request.body));
    else if (forge.startsWith(u"bitbucket"_s))
        request.headers.insert("x-hub-signature", "sha256=" + hmacHex(secret, request.body));
    auto delivery = m_engine->receiveHook(app, request, ::forge());
    QVERIFY2(delivery, qPrintable(delivery ? QString() : text(delivery.error())));
    QCOMPARE(delivery->id, id);
    const core::autodeploy::Delivery done = settled(app, id);
    QVERIFY2(done.outcome == u"deployed", qPrintable(done.outcome + u": "_s + done.detail));
    auto view = m_engine->deployView(done.deployId);
    QVERIFY(view);
    QCOMPARE(view->record.commit, m_first);
    // Delivered twice, deployed once.
    auto again = m_engine->receiveHook(app, request, ::forge());
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Conflict);
    QCOMPARE(deployCount(app), 1);
    // The same request with a wrong secret is refused.
    auto wrongSecret = m_engine->setHookSecret(app, {}, m_people.actor(u"ada"_s));
    QVERIFY(wrongSecret);
    request.headers.insert("x-gitea-delivery", newId().toUtf8());
    auto refused = m_engine->receiveHook(app, request, ::forge());
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unauthorized);
    test::waitSettled(*m_engine, done.deployId);
}

void TestEngineAutoDeploy::tagsMatchingThePattern()
{
    auto created =
        m_engine->createApp(u"name: released\nsource:\n  repo: %1\n  ref: main\n  autodeploy:\n    on: push\n"
                            u"    tags: \"v*\"\nrun:\n  port: 8080\nhealth:\n  timeout: 1s\n"_s.arg(m_repo)
                                .toUtf8(),
                            m_people.actor(u"ada"_s));
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    const QByteArray secret = m_engine->setHookSecret(u"released"_s, {}, m_people.actor(u"ada"_s)).value_or("");
    const QString tagObject = m_git.tag(u"shop"_s, u"v1.0"_s, m_first);
    QVERIFY(!tagObject.isEmpty());
    auto branch =
        m_engine->receiveHook(u"released"_s, githubPush(secret, m_repo, u"refs/heads/main"_s, m_second), forge());
    QVERIFY(branch);
    QCOMPARE(branch->outcome, u"ignored"_s);
    QCOMPARE(branch->detail, u"push to refs/heads/main; released follows tags matching v*"_s);
    auto tag =
        m_engine->receiveHook(u"released"_s, githubPush(secret, m_repo, u"refs/tags/v1.0"_s, tagObject), forge());
    QVERIFY2(tag, qPrintable(tag ? QString() : text(tag.error())));
    const core::autodeploy::Delivery done = settled(u"released"_s, tag->id);
    QVERIFY2(done.outcome == u"deployed", qPrintable(done.outcome + u": "_s + done.detail));
    auto view = m_engine->deployView(done.deployId);
    QVERIFY(view);
    // The annotated tag's push names the tag object; what deploys is the commit it tags.
    QCOMPARE(view->record.commit, m_first);
    test::waitSettled(*m_engine, done.deployId);
}

void TestEngineAutoDeploy::underApprovalItWaitsForSignOff()
{
    // A member may not turn auto-deploy on for an app under approval; an administrator may.
    const QByteArray manual =
        u"name: gated-shop\nsource:\n  repo: %1\n  ref: main\nrun:\n  port: 8080\n"_s.arg(m_repo).toUtf8();
    auto created = m_engine->createApp(manual, m_people.actor(u"ada"_s));
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    const QByteArray onPush = u"name: gated-shop\nsource:\n  repo: %1\n  ref: main\n  autodeploy: push\nrun:\n"
                              u"  port: 8080\n"_s.arg(m_repo)
                                  .toUtf8();
    QVERIFY(m_engine->addGrant(core::authz::ObjectKind::App, u"gated-shop"_s, u"alice"_s, u"owner"_s,
                               m_people.actor(u"ada"_s)));
    auto byMember = m_engine->updateApp(u"gated-shop"_s, onPush, m_people.actor(u"alice"_s));
    QVERIFY(!byMember);
    QCOMPARE(byMember.error().code, ErrorCode::Forbidden);
    QVERIFY2(byMember.error().message.contains(u"auto-deploy turns on"_s), qPrintable(text(byMember.error())));
    auto byAdmin = m_engine->updateApp(u"gated-shop"_s, onPush, m_people.actor(u"ada"_s));
    QVERIFY2(byAdmin, qPrintable(byAdmin ? QString() : text(byAdmin.error())));
    const QByteArray secret = m_engine->setHookSecret(u"gated-shop"_s, {}, m_people.actor(u"ada"_s)).value_or("");
    auto push =
        m_engine->receiveHook(u"gated-shop"_s, githubPush(secret, m_repo, u"refs/heads/main"_s, m_second), forge());
    QVERIFY(push);
    const core::autodeploy::Delivery done = settled(u"gated-shop"_s, push->id);
    QVERIFY2(done.outcome == u"deployed", qPrintable(done.outcome + u": "_s + done.detail));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_engine->deployView(done.deployId);
            return view && view->record.status == core::DeployStatus::AwaitingApproval;
        }(),
        20000);
    QVERIFY(m_engine->cancelDeploy(done.deployId, m_people.actor(u"ada"_s)));
}

void TestEngineAutoDeploy::pollingDeploysAMovedBranchOnce()
{
    QVERIFY(!m_git.commit(u"shop"_s, u"poll"_s, {{u"POLL"_s, test::GitFile{"one\n"}}}).isEmpty());
    auto created = m_engine->createApp(u"name: polled\nsource:\n  repo: %1\n  ref: poll\n  autodeploy:\n    on: poll\n"
                                       u"    every: 30s\nrun:\n  port: 8080\nhealth:\n  timeout: 1s\n"_s.arg(m_repo)
                                           .toUtf8(),
                                       m_people.actor(u"ada"_s));
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    // The first look deploys what the branch has (nothing was deployed yet).
    auto first = m_engine->pollOnce(u"polled"_s);
    QVERIFY2(first, qPrintable(first ? QString() : text(first.error())));
    QVERIFY2(first->size() == 1, qPrintable(first->join(u"; "_s)));
    QCOMPARE(deployCount(u"polled"_s), 1);
    // Not moved: nothing.
    auto same = m_engine->pollOnce(u"polled"_s);
    QVERIFY(same && same->isEmpty());
    QCOMPARE(deployCount(u"polled"_s), 1);
    // Moved: one deploy of the new commit, however often it is looked at.
    const QString moved = m_git.commit(u"shop"_s, u"poll"_s, {{u"POLL"_s, test::GitFile{"two\n"}}});
    QVERIFY(m_engine->pollOnce(u"polled"_s));
    QVERIFY(m_engine->pollOnce(u"polled"_s));
    QCOMPARE(deployCount(u"polled"_s), 2);
    auto deploys = m_engine->deploys(u"polled"_s, 1);
    QVERIFY(deploys && !deploys->isEmpty());
    QCOMPARE(deploys->first().commit, moved);
    QCOMPARE(deploys->first().actor, u"system:autodeploy"_s);
    // The periodic pass leaves an app that is not due.
    QVERIFY(m_engine->pollOnce());
    QCOMPARE(deployCount(u"polled"_s), 2);
    auto hook = m_engine->appHook(u"polled"_s, 5);
    QVERIFY(hook);
    QCOMPARE(hook->poll.commit, moved);
    QVERIFY(hook->poll.error.isEmpty());
    test::waitSettled(*m_engine, deploys->first().id);
}

void TestEngineAutoDeploy::theSecretIsNeverShownAgain()
{
    auto hook = m_engine->appHook(u"shop"_s, 5);
    QVERIFY(hook);
    QVERIFY(hook->hook.hasSecret);
    const QByteArray json = QJsonDocument(hook->toJson()).toJson();
    QVERIFY(!json.contains("a-secret-we-chose-42"));
    // A secret too short or with spaces is refused without showing it.
    auto shortOne = m_engine->setHookSecret(u"shop"_s, "short", m_people.actor(u"ada"_s));
    QVERIFY(!shortOne);
    QCOMPARE(shortOne.error().where, u"secret"_s);
    QVERIFY(!text(shortOne.error()).contains(u"short\""_s));
    auto spaced = m_engine->setHookSecret(u"shop"_s, "has a space in it!!", m_people.actor(u"ada"_s));
    QVERIFY(!spaced);
    QVERIFY(!text(spaced.error()).contains(u"has a space"_s));
    core::AuditRepository::Filter filter;
    filter.action = u"app.hook.secret"_s;
    auto lines = m_engine->auditLines(filter);
    QVERIFY(lines && !lines->isEmpty());
    for (const core::AuditRecord &line : std::as_const(*lines))
        QVERIFY(!line.detail.contains(u"a-secret-we-chose-42"_s));
}

QTEST_GUILESS_MAIN(TestEngineAutoDeploy)
#include "tst_engineautodeploy.moc"
