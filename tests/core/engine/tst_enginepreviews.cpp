// Preview deployments (issue 15, docs/autodeploy.md): pull request deliveries signed as GitHub
// signs them reach a real engine (SQLite in a temporary directory) whose forge API is the local
// stand-in for the forges' documented APIs (tests/adapters/forge/forge_api_standin.py; no forge
// on the internet is reached); runtime, router and services are fakes, and the source resolves a
// commit id to itself. What a user relies on: a pull request to the app's branch gets an app of
// its own built from its head, with the spec's preview changes, the app's secrets and whoever may
// act on the app; each push deploys the pushed commit again; the pull request gets one comment
// linking to it; closing the request (or the TTL, or removing the app) removes the preview and
// everything it made; forks, other branches, other repositories and apps without previews are
// answered with why and make nothing.

#include "adapters/forge/rest/forgerest.h"
#include "app/wiring/install.h"
#include "enginepeople.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/app/server/fakes.h"
#include "tests/support/component.h"
#include "tests/support/githubpull.h"
#include "tests/support/laterclock.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

using namespace Qt::StringLiterals;
using namespace pando;
using core::autodeploy::HookRequest;
using core::sourceconn::AuthKind;

namespace {

const QByteArray Token = "ghp_previews-Standin-Token-8842";
const QString Repo = u"https://github.com/acme/web.git"_s;
const QString ForkRepo = u"https://github.com/mallory/web.git"_s;

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

QString commit(char digit)
{
    return QString(40, QLatin1Char(digit));
}

// Resolves a commit id to itself, as a repository holding it would.
class CommitSource final : public test::FakeSource {
public:
    // Written into every checkout beside the Dockerfile: path → content. Set while no deploy runs.
    QMap<QString, QByteArray> files;

    Result<QString> resolve(const QString &repo, const QString &ref, const adapters::SourceAccess &access,
                            const CancelToken &cancel, const std::function<void(const QString &)> &progress) override
    {
        if (ref.size() == 40)
            return ref;
        return test::FakeSource::resolve(repo, ref, access, cancel, progress);
    }
    Result<adapters::SourceCheckout> checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                              const adapters::SourceAccess &access, const CancelToken &cancel,
                                              const std::function<void(const QString &)> &progress) override
    {
        auto out = test::FakeSource::checkout(repo, ref, workRoot, access, cancel, progress);
        if (out && ref.size() == 40)
            out->commit = ref;
        for (auto it = files.cbegin(); out && it != files.cend(); ++it) {
            const QString path = out->directory + u'/' + it.key();
            QDir().mkpath(QFileInfo(path).path());
            QFile file(path);
            if (!file.open(QIODevice::WriteOnly) || file.write(*it) != it->size())
                return fail(ErrorCode::Failed, u"cannot write "_s + path);
        }
        return out;
    }
};

using Pull = test::GitHubPull;

// The delivery as the engine is handed it: header names lower-cased, as the server does.
HookRequest githubPull(const QByteArray &secret, Pull pull)
{
    if (pull.baseRepo.isEmpty())
        pull.baseRepo = Repo;
    const test::GitHubDelivery delivery = test::githubPullDelivery(secret, pull);
    HookRequest request;
    request.body = delivery.body;
    for (const auto &header : delivery.headers)
        request.headers.insert(header.first.toLower(), header.second);
    return request;
}

core::Actor forge()
{
    return core::Actor{u"anonymous"_s, u"192.0.2.20"_s, {}};
}

} // namespace

class TestEnginePreviews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void aPullRequestLivesAndDiesWithItsPreview();
    void whatGetsNoPreviewSaysWhy();
    void forksOnlyWhenAllowedAndWithoutSecrets();
    void closedMidBuildLeavesNothing();
    void expiresAfterTheTtl();
    void removingTheAppRemovesItsPreviews();
    void previewServicesAreSeeded();

private:
    QByteArray createApp(const QString &name, const QString &preview);
    core::autodeploy::Delivery deliver(const QString &app, const HookRequest &request);
    bool appExists(const QString &name);

    QTemporaryDir m_dir;
    test::LaterClock m_clock;
    std::unique_ptr<test::ForgeStandIn> m_standIn;
    std::unique_ptr<wiring::Install> m_install;
    std::shared_ptr<CommitSource> m_source = std::make_shared<CommitSource>();
    std::shared_ptr<test::FakeServiceProvisioner> m_services = std::make_shared<test::FakeServiceProvisioner>();
    std::shared_ptr<test::FakeRuntime> m_runtime = std::make_shared<test::FakeRuntime>();
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestEnginePreviews::initTestCase()
{
    QVERIFY(m_dir.isValid());
    PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                            u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
    m_standIn = std::make_unique<test::ForgeStandIn>(Token);
    QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");

    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.runtime = m_runtime;
    options.router = std::make_shared<test::FakeRouter>();
    options.source = m_source;
    options.services = m_services;
    options.clock = &m_clock;
    const QString base = m_standIn->base();
    options.engine.forgeApis = [base](const adapters::ForgeAccount &account) {
        return adapters::forgerest::makeApi(account, {.apiBase = base + u"/github"_s, .requestTimeoutMs = 5000});
    };
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();
    const QString made =
        m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin}, {"alice", core::accounts::Role::Member}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
    const core::Actor ada = m_people.actor(u"ada"_s);
    core::sourceconn::ConnectionInput input;
    input.name = u"gh"_s;
    input.scope = adapters::ForgeScope{adapters::ForgeKind::GitHub, u"https://github.com"_s, {}};
    input.auth = AuthKind::Token;
    input.secret = Token;
    auto added = m_engine->addConnection(input, ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));
    QVERIFY(m_engine->addGrant(core::authz::ObjectKind::Connection, u"gh"_s, u"alice"_s, u"user"_s, ada));
}

void TestEnginePreviews::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
    m_standIn.reset();
}

void TestEnginePreviews::init()
{
    if (m_standIn)
        m_standIn->reset();
}

// Alice (a member) makes the app; its webhook gets a random secret, returned. The fake runtime's
// containers are at 127.0.0.1, where the forge stand-in answers the health probe at run.port.
QByteArray TestEnginePreviews::createApp(const QString &name, const QString &preview)
{
    const QByteArray spec = u"name: %1\nsource:\n  repo: %2\n  ref: main\n  autodeploy: push\n"
                            u"run:\n  port: %4\n  env:\n    MODE: production\n    SHARED: app\n"
                            u"health:\n  path: /_standin/statuses\n  timeout: 5s\n%3"_s.arg(name, Repo, preview)
                                .arg(QUrl(m_standIn->base()).port())
                                .toUtf8();
    auto created = m_engine->createApp(spec, m_people.actor(u"alice"_s));
    if (!created) {
        qWarning("createApp: %s", qPrintable(text(created.error())));
        return {};
    }
    auto secret = m_engine->setHookSecret(name, {}, m_people.actor(u"alice"_s));
    return secret ? *secret : QByteArray();
}

core::autodeploy::Delivery TestEnginePreviews::deliver(const QString &app, const HookRequest &request)
{
    auto received = m_engine->receiveHook(app, request, forge());
    if (!received) {
        qWarning("receiveHook: %s", qPrintable(text(received.error())));
        return {};
    }
    if (received->outcome != u"accepted")
        return *received;
    core::autodeploy::Delivery settled;
    (void)QTest::qWaitFor(
        [&] {
            auto view = m_engine->appHook(app, 50);
            if (!view)
                return false;
            for (const auto &delivery : std::as_const(view->deliveries)) {
                if (delivery.id == received->id && delivery.outcome != u"accepted") {
                    settled = delivery;
                    return true;
                }
            }
            return false;
        },
        20000);
    return settled;
}

bool TestEnginePreviews::appExists(const QString &name)
{
    auto apps = m_engine->apps();
    if (!apps)
        return false;
    return std::any_of(apps->cbegin(), apps->cend(), [&](const core::AppView &a) { return a.record.name == name; });
}

void TestEnginePreviews::aPullRequestLivesAndDiesWithItsPreview()
{
    const QByteArray secret = createApp(u"web"_s, u"preview:\n  ttl: 48h\n  env:\n    MODE: preview\n  resources:\n"
                                                  u"    memory: 128Mi\n"_s);
    QVERIFY(!secret.isEmpty());
    const core::Actor alice = m_people.actor(u"alice"_s);
    QVERIFY(m_engine->setAppSecret(u"web"_s, u"API_KEY"_s, "k3y-for-previews", alice));

    // Opened: the preview is made from the request's head and deployed at the pushed commit.
    const core::autodeploy::Delivery opened = deliver(u"web"_s, githubPull(secret, Pull{}));
    QCOMPARE(opened.outcome, u"deployed"_s);
    QCOMPARE(opened.commit, commit('a'));
    QCOMPARE(opened.ref, u"refs/heads/feature-x"_s);
    QVERIFY(!opened.deployId.isEmpty());
    auto preview = m_engine->app(u"web-pr-7"_s);
    QVERIFY2(preview, qPrintable(preview ? QString() : text(preview.error())));
    QCOMPARE(preview->spec.source.ref, u"feature-x"_s);
    QCOMPARE(preview->spec.source.repo, Repo);
    QCOMPARE(preview->record.sourceConnection, u"gh"_s);
    QCOMPARE(preview->spec.run.env.value(u"MODE"_s), u"preview"_s);
    QCOMPARE(preview->spec.run.env.value(u"SHARED"_s), u"app"_s);
    QCOMPARE(preview->spec.run.memoryBytes, 128LL * 1024 * 1024);
    QCOMPARE(preview->spec.labels.value(u"preview-of"_s), u"web"_s);
    QCOMPARE(preview->spec.labels.value(u"pull-request"_s), u"7"_s);
    QCOMPARE(preview->spec.source.autodeploy.mode, core::AppSpec::Source::AutoDeploy::Mode::Off);
    QVERIFY(!preview->spec.preview.enabled);
    auto deploy = m_engine->deployView(opened.deployId);
    QVERIFY(deploy);
    QCOMPARE(deploy->record.app, u"web-pr-7"_s);
    QCOMPARE(deploy->record.commit, commit('a'));
    // The app's secrets reach it; whoever may change the app may change its preview.
    auto secrets = m_engine->appSecrets(u"web-pr-7"_s);
    QVERIFY(secrets);
    QCOMPARE(secrets->size(), 1);
    QCOMPARE(secrets->first().name, u"API_KEY"_s);
    auto allowed = m_engine->authorize(m_people.principal(u"alice"_s), "apps.write",
                                       core::authz::ObjectRef{core::authz::ObjectKind::App, u"web-pr-7"_s, {}}, alice,
                                       u"PUT /api/v1/apps/web-pr-7"_s);
    QVERIFY(allowed && *allowed);

    // The pull request gets one comment naming its preview, edited to say where it serves.
    const auto commentSays = [this](const QString &what) {
        const QJsonArray comments = m_standIn->comments(u"github"_s);
        return comments.size() == 1 && comments.first()[u"body"_s][u"body"_s].toString().contains(what);
    };
    const QString servingA = u"**Serving** commit `%1` at http"_s.arg(commit('a').left(12));
    QTRY_VERIFY2_WITH_TIMEOUT(commentSays(servingA),
                              QJsonDocument(m_standIn->comments(u"github"_s)).toJson().constData(), 10000);
    const QJsonObject comment = m_standIn->comments(u"github"_s).first().toObject();
    QCOMPARE(comment[u"repo"_s].toString(), u"acme/web"_s);
    QCOMPARE(comment[u"number"_s].toInt(), 7);
    QVERIFY2(comment[u"edits"_s].toInt() >= 1, QJsonDocument(comment).toJson().constData()); // Deploying, then Serving
    const QString said = comment[u"body"_s][u"body"_s].toString();
    QVERIFY2(said.contains(u"`web-pr-7`"_s) && said.contains(u"`feature-x`"_s) && said.contains(opened.deployId),
             qPrintable(said));

    // A push to it: the same preview, deployed again at the new head, no second comment.
    Pull pushed;
    pushed.action = u"synchronize"_s;
    pushed.sha = commit('b');
    const core::autodeploy::Delivery synced = deliver(u"web"_s, githubPull(secret, pushed));
    QCOMPARE(synced.outcome, u"deployed"_s);
    auto again = m_engine->deployView(synced.deployId);
    QVERIFY(again);
    QCOMPARE(again->record.app, u"web-pr-7"_s);
    QCOMPARE(again->record.commit, commit('b'));
    auto listed = m_engine->previews(u"web"_s);
    QVERIFY(listed);
    QCOMPARE(listed->size(), 1);
    QCOMPARE(listed->first().record.number, 7);
    QCOMPARE(listed->first().record.headCommit, commit('b'));
    QCOMPARE(listed->first().record.author, u"octo-dev"_s);
    QCOMPARE(listed->first().expiresMs - listed->first().record.updatedMs, 48LL * 3600 * 1000);
    QVERIFY(!listed->first().record.commentId.isEmpty());
    // The same comment now speaks of the new head.
    QTRY_VERIFY_WITH_TIMEOUT(commentSays(u"**Serving** commit `%1`"_s.arg(commit('b').left(12))), 10000);
    QCOMPARE(QString::number(m_standIn->comments(u"github"_s).first()[u"id"_s].toInteger()),
             listed->first().record.commentId);

    // Someone deleted the comment on the forge: the next deploy posts a new one and keeps its id.
    m_standIn->deleteComment(u"github"_s, listed->first().record.commentId);
    Pull pushedAgain;
    pushedAgain.action = u"synchronize"_s;
    pushedAgain.sha = commit('c');
    QCOMPARE(deliver(u"web"_s, githubPull(secret, pushedAgain)).outcome, u"deployed"_s);
    QTRY_VERIFY_WITH_TIMEOUT(commentSays(u"**Serving** commit `%1`"_s.arg(commit('c').left(12))), 10000);
    const QString reposted = QString::number(m_standIn->comments(u"github"_s).first()[u"id"_s].toInteger());
    QVERIFY(reposted != listed->first().record.commentId);
    QTRY_COMPARE(m_engine->previews(u"web"_s)->first().record.commentId, reposted);

    // Merged: the preview goes, with everything it made; the app stays.
    Pull closed;
    closed.action = u"closed"_s;
    closed.merged = true;
    closed.sha = commit('c');
    const core::autodeploy::Delivery merged = deliver(u"web"_s, githubPull(secret, closed));
    QCOMPARE(merged.outcome, u"removed"_s);
    QVERIFY2(merged.detail.contains(u"merged"_s), qPrintable(merged.detail));
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"web-pr-7"_s), 20000);
    QVERIFY(appExists(u"web"_s));
    QTRY_VERIFY_WITH_TIMEOUT(commentSays(u"**Removed**: the pull request was merged"_s), 10000);
    QCOMPARE(m_engine->previews(u"web"_s)->size(), 0);
    // Its grants went with it: a later app of that name is nobody's but its maker's.
    auto after = m_engine->authorize(m_people.principal(u"alice"_s), "apps.read",
                                     core::authz::ObjectRef{core::authz::ObjectKind::App, u"web-pr-7"_s, {}}, alice,
                                     u"GET /api/v1/apps/web-pr-7"_s);
    QVERIFY(after && !*after);

    // Closed again (a forge's retry under another id): nothing to remove, and it says so.
    const core::autodeploy::Delivery twice = deliver(u"web"_s, githubPull(secret, closed));
    QCOMPARE(twice.outcome, u"ignored"_s);
    QVERIFY2(twice.detail.contains(u"no preview"_s), qPrintable(twice.detail));
    QVERIFY(m_engine->removeApp(u"web"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"web"_s), 20000);
}

void TestEnginePreviews::whatGetsNoPreviewSaysWhy()
{
    const QByteArray withPreviews = createApp(u"shop"_s, u"preview: true\n"_s);
    const QByteArray without = createApp(u"plain"_s, {});
    QVERIFY(!withPreviews.isEmpty() && !without.isEmpty());

    Pull otherBase;
    otherBase.base = u"release"_s;
    auto ignored = deliver(u"shop"_s, githubPull(withPreviews, otherBase));
    QCOMPARE(ignored.outcome, u"ignored"_s);
    QVERIFY2(ignored.detail.contains(u"release"_s) && ignored.detail.contains(u"main"_s), qPrintable(ignored.detail));

    Pull labelled;
    labelled.action = u"labeled"_s;
    ignored = deliver(u"shop"_s, githubPull(withPreviews, labelled));
    QCOMPARE(ignored.outcome, u"ignored"_s);

    ignored = deliver(u"plain"_s, githubPull(without, Pull{}));
    QCOMPARE(ignored.outcome, u"ignored"_s);
    QVERIFY2(ignored.detail.contains(u"previews are off"_s), qPrintable(ignored.detail));

    // Another repository's pull request is refused, at the repository.
    Pull elsewhere;
    elsewhere.baseRepo = u"https://github.com/acme/other.git"_s;
    auto refused = m_engine->receiveHook(u"shop"_s, githubPull(withPreviews, elsewhere), forge());
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
    QCOMPARE(refused.error().where, u"body.repository"_s);

    // A wrong signature makes nothing.
    auto forged = m_engine->receiveHook(u"shop"_s, githubPull("not-the-secret-at-all", Pull{}), forge());
    QVERIFY(!forged);
    QCOMPARE(forged.error().code, ErrorCode::Unauthorized);

    QVERIFY(!appExists(u"shop-pr-7"_s));
    QVERIFY(!appExists(u"plain-pr-7"_s));
    QCOMPARE(m_engine->previews(u"shop"_s)->size(), 0);

    // An app already holding the preview's name is never taken over.
    const QByteArray squatter =
        u"name: shop-pr-12\nsource:\n  repo: %1\n  ref: main\nrun:\n  port: 8080\n"_s.arg(Repo).toUtf8();
    QVERIFY(m_engine->createApp(squatter, m_people.actor(u"ada"_s)));
    Pull twelve;
    twelve.number = 12;
    auto failed = deliver(u"shop"_s, githubPull(withPreviews, twelve));
    QCOMPARE(failed.outcome, u"failed"_s);
    QVERIFY2(failed.detail.contains(u"no preview"_s), qPrintable(failed.detail));
    QCOMPARE(m_engine->app(u"shop-pr-12"_s)->spec.labels.value(u"preview-of"_s), QString());

    auto missing = m_engine->removePreview(u"shop"_s, 3, m_people.actor(u"ada"_s));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
    for (const QString &name : {u"shop"_s, u"plain"_s, u"shop-pr-12"_s})
        QVERIFY(m_engine->removeApp(name, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
}

void TestEnginePreviews::forksOnlyWhenAllowedAndWithoutSecrets()
{
    const QByteArray secret = createApp(u"forked"_s, u"preview: true\n"_s);
    QVERIFY(!secret.isEmpty());
    const core::Actor ada = m_people.actor(u"ada"_s);
    QVERIFY(m_engine->setAppSecret(u"forked"_s, u"API_KEY"_s, "never-for-forks", ada));
    Pull fork;
    fork.headRepo = ForkRepo;
    fork.head = u"patch-1"_s;
    auto ignored = deliver(u"forked"_s, githubPull(secret, fork));
    QCOMPARE(ignored.outcome, u"ignored"_s);
    QVERIFY2(ignored.detail.contains(u"fork"_s), qPrintable(ignored.detail));
    QVERIFY(!appExists(u"forked-pr-7"_s));

    auto access = m_engine->appAccess();
    QVERIFY(access);
    access->previewForks = true;
    QVERIFY(m_engine->setAppAccess(*access, ada));
    auto made = deliver(u"forked"_s, githubPull(secret, fork));
    QCOMPARE(made.outcome, u"deployed"_s);
    auto preview = m_engine->app(u"forked-pr-7"_s);
    QVERIFY(preview);
    QCOMPARE(preview->spec.source.repo, ForkRepo);
    QCOMPARE(preview->spec.source.ref, u"patch-1"_s);
    QVERIFY(preview->record.sourceConnection.isEmpty());
    QCOMPARE(m_engine->appSecrets(u"forked-pr-7"_s)->size(), 0);
    QCOMPARE(m_engine->previews(u"forked"_s)->first().record.fork, true);

    access->previewForks = false;
    QVERIFY(m_engine->setAppAccess(*access, ada));
    QVERIFY(m_engine->removePreview(u"forked"_s, 7, ada));
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"forked-pr-7"_s), 20000);
    QVERIFY(m_engine->removeApp(u"forked"_s, ada, core::Engine::ServiceData::Delete));
}

void TestEnginePreviews::closedMidBuildLeavesNothing()
{
    // The fake runtime's container never answers its probe: the deploy runs for its health
    // timeout (5 s here), and the request closes while it does.
    const QByteArray spec = u"name: busy\nsource:\n  repo: %1\n  ref: main\n  autodeploy: push\n"
                            u"run:\n  port: 8080\nhealth:\n  timeout: 5s\npreview: true\n"_s.arg(Repo)
                                .toUtf8();
    QVERIFY(m_engine->createApp(spec, m_people.actor(u"alice"_s)));
    auto secret = m_engine->setHookSecret(u"busy"_s, {}, m_people.actor(u"alice"_s));
    QVERIFY(secret);
    const core::autodeploy::Delivery opened = deliver(u"busy"_s, githubPull(*secret, Pull{}));
    QCOMPARE(opened.outcome, u"deployed"_s);
    QTRY_VERIFY_WITH_TIMEOUT(m_engine->deployView(opened.deployId)->record.status == core::DeployStatus::Running, 5000);
    Pull closed;
    closed.action = u"closed"_s;
    const core::autodeploy::Delivery gone = deliver(u"busy"_s, githubPull(*secret, closed));
    QCOMPARE(gone.outcome, u"removed"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"busy-pr-7"_s), 20000);
    // The deploy did not run on to the end: it was cancelled with the request.
    auto ended = m_engine->deployView(opened.deployId);
    QVERIFY(!ended || ended->record.status == core::DeployStatus::Cancelled);
    QVERIFY(m_engine->removeApp(u"busy"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
}

void TestEnginePreviews::expiresAfterTheTtl()
{
    const QByteArray secret = createApp(u"stale"_s, u"preview:\n  ttl: 2h\n"_s);
    QVERIFY(!secret.isEmpty());
    QCOMPARE(deliver(u"stale"_s, githubPull(secret, Pull{})).outcome, u"deployed"_s);
    QVERIFY(appExists(u"stale-pr-7"_s));
    m_clock.advance(3600 * 1000);
    auto kept = m_engine->expirePreviews();
    QVERIFY(kept);
    QVERIFY2(kept->isEmpty(), qPrintable(kept->join(u'\n')));
    m_clock.advance(3601 * 1000);
    auto expired = m_engine->expirePreviews();
    QVERIFY(expired);
    QCOMPARE(expired->size(), 1);
    QVERIFY2(expired->first().contains(u"stale-pr-7"_s), qPrintable(expired->first()));
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"stale-pr-7"_s), 20000);
    QVERIFY(m_engine->removeApp(u"stale"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
}

void TestEnginePreviews::removingTheAppRemovesItsPreviews()
{
    const QByteArray secret = createApp(u"gone"_s, u"preview: true\n"_s);
    QVERIFY(!secret.isEmpty());
    QCOMPARE(deliver(u"gone"_s, githubPull(secret, Pull{})).outcome, u"deployed"_s);
    Pull twelve;
    twelve.number = 12;
    twelve.head = u"feature-y"_s;
    QCOMPARE(deliver(u"gone"_s, githubPull(secret, twelve)).outcome, u"deployed"_s);
    QCOMPARE(m_engine->previews(u"gone"_s)->size(), 2);
    QVERIFY(m_engine->removeApp(u"gone"_s, m_people.actor(u"alice"_s), core::Engine::ServiceData::Delete));
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"gone"_s) && !appExists(u"gone-pr-7"_s) && !appExists(u"gone-pr-12"_s), 20000);
}

// A service with a seed file is loaded with it when it is made, the app's with the app's seed
// and each preview's with the preview's, from the checkout the deploy built; a redeploy loads
// nothing again. A seed that fails fails the deploy saying so and leaves no service behind, so
// the next push makes it again.
void TestEnginePreviews::previewServicesAreSeeded()
{
    m_source->files = {{u"db/seed.sql"_s, "insert into shop values ('app');\n"},
                       {u"db/preview.sql"_s, "insert into shop values ('preview');\n"}};
    const QByteArray secret = createApp(u"seedy"_s, u"services:\n  db:\n    kind: postgres\n    seed: db/seed.sql\n"
                                                    u"preview:\n  seed:\n    db: db/preview.sql\n"_s);
    QVERIFY(!secret.isEmpty());
    const core::Actor alice = m_people.actor(u"alice"_s);
    const auto seededFor = [this](const QString &app) {
        QList<QByteArray> out;
        for (const auto &[slot, data] : std::as_const(m_services->seeds))
            if (slot == app + u"/db"_s)
                out << data;
        return out;
    };

    auto deploy = m_engine->deploy(u"seedy"_s, {}, alice);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    test::waitSettled(*m_engine, deploy->id);
    QCOMPARE(m_engine->deployView(deploy->id)->record.status, core::DeployStatus::Succeeded);
    QCOMPARE(seededFor(u"seedy"_s), QList<QByteArray>{"insert into shop values ('app');\n"});

    // The app's container and its service's data are lost (a volume removed by hand, a pruned
    // engine): the reconciler makes both again, and loads the service from the seed that deploy
    // read, not from what the repository has since, and says so.
    m_source->files.insert(u"db/seed.sql"_s, "insert into shop values ('later');\n");
    QVERIFY(m_runtime->remove(m_engine->deployView(deploy->id)->record.containerId));
    QVERIFY(m_services->remove(m_install->installId(), u"seedy"_s, u"db"_s, true));
    const auto reconciled = m_engine->reconcileOnce();
    QVERIFY2(reconciled, qPrintable(reconciled ? QString() : text(reconciled.error())));
    const QString changes = reconciled->join(u'\n');
    QVERIFY2(changes.contains(u"recreated seedy and its services db: postgres"_s) &&
                 changes.contains(u"loaded from db/seed.sql as its app's last deploy read it"_s),
             qPrintable(changes));
    QCOMPARE(seededFor(u"seedy"_s),
             (QList<QByteArray>{"insert into shop values ('app');\n", "insert into shop values ('app');\n"}));
    // A container lost alone leaves the data, and loads nothing.
    const QString remade = m_engine->deployView(deploy->id)->record.containerId;
    QVERIFY(m_runtime->remove(remade));
    QVERIFY(m_engine->reconcileOnce());
    QCOMPARE(seededFor(u"seedy"_s).size(), 2);
    m_source->files.insert(u"db/seed.sql"_s, "insert into shop values ('app');\n");

    const core::autodeploy::Delivery opened = deliver(u"seedy"_s, githubPull(secret, Pull{}));
    QCOMPARE(opened.outcome, u"deployed"_s);
    test::waitSettled(*m_engine, opened.deployId);
    const core::DeployView previewDeploy = *m_engine->deployView(opened.deployId);
    QVERIFY2(previewDeploy.record.status == core::DeployStatus::Succeeded, qPrintable(previewDeploy.record.error));
    QCOMPARE(seededFor(u"seedy-pr-7"_s), QList<QByteArray>{"insert into shop values ('preview');\n"});
    QCOMPARE(m_engine->app(u"seedy-pr-7"_s)->spec.services.value(u"db"_s).seed, u"db/preview.sql"_s);
    bool told = false;
    for (const core::StepRecord &step : previewDeploy.steps)
        told |= step.name == u"services"_s && step.detail.contains(u"loaded from db/preview.sql"_s);
    QVERIFY2(told, "the services step says what it loaded");

    // Pushed again: the preview's data stays as the first deploy left it.
    Pull pushed;
    pushed.action = u"synchronize"_s;
    pushed.sha = commit('b');
    const core::autodeploy::Delivery again = deliver(u"seedy"_s, githubPull(secret, pushed));
    QCOMPARE(again.outcome, u"deployed"_s);
    test::waitSettled(*m_engine, again.deployId);
    QCOMPARE(seededFor(u"seedy-pr-7"_s).size(), 1);

    // A seed that fails: the deploy fails at the services step, saying why, and the new service
    // goes; once it loads, the next push makes the service and loads it.
    m_services->seedError = u"exit code 3: ERROR:  relation \"shop\" does not exist"_s;
    Pull twelve;
    twelve.number = 12;
    twelve.head = u"feature-y"_s;
    const core::autodeploy::Delivery failing = deliver(u"seedy"_s, githubPull(secret, twelve));
    QCOMPARE(failing.outcome, u"deployed"_s);
    test::waitSettled(*m_engine, failing.deployId);
    const core::DeployView failed = *m_engine->deployView(failing.deployId);
    QCOMPARE(failed.record.status, core::DeployStatus::Failed);
    QCOMPARE(failed.record.failedStep, u"services"_s);
    QVERIFY2(failed.record.error.contains(u"loading db/preview.sql failed"_s) &&
                 failed.record.error.contains(u"does not exist"_s),
             qPrintable(failed.record.error));
    auto left = m_services->list(m_install->installId(), u"seedy-pr-12"_s);
    QVERIFY(left && left->isEmpty());
    m_services->seedError.clear();
    twelve.action = u"synchronize"_s;
    twelve.sha = commit('c');
    const core::autodeploy::Delivery fixed = deliver(u"seedy"_s, githubPull(secret, twelve));
    test::waitSettled(*m_engine, fixed.deployId);
    QCOMPARE(m_engine->deployView(fixed.deployId)->record.status, core::DeployStatus::Succeeded);
    QCOMPARE(seededFor(u"seedy-pr-12"_s).size(), 1);
    QVERIFY(m_engine->removeApp(u"seedy"_s, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    QTRY_VERIFY_WITH_TIMEOUT(!appExists(u"seedy-pr-7"_s) && !appExists(u"seedy-pr-12"_s), 20000);
    m_source->files.clear();
}

QTEST_MAIN(TestEnginePreviews)
#include "tst_enginepreviews.moc"
