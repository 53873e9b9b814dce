// Private repositories through source connections (issue 15, "Source connections"): real git over
// smart HTTP behind Caddy's basic auth with a token, and over a real sshd with a deploy key whose
// host key is pinned. A GitHub App connection's installation token is minted by the stand-in for
// GitHub's API (tests/adapters/forge/forge_api_standin.py, which verifies the app's signed JWT) and
// then read with by git over smart HTTP, as GitHub takes it (user x-access-token). The engine is real (SQLite in a
// temporary directory, the real GitSource); the runtime, router and services are fakes. What is checked is what a user
// relies on: without a connection the repository is refused, with one it is read (at create and at each deploy), the
// closest connection wins, members read only through connections granted to them, a connection
// in use cannot be removed, and no credential shows up in an error or the audit log.

#include "adapters/forge/rest/forgerest.h"
#include "adapters/source/generic/gitsource.h"
#include "app/wiring/install.h"
#include "core/accounts/accountservice.h"
#include "enginepeople.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/app/server/fakes.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/ports.h"
#include "tests/support/privategit.h"
#include "tests/support/sshserver.h"

#include <QFile>
#include <QFileInfo>
#include <QTest>
#include <QUrlQuery>

using namespace Qt::StringLiterals;
using namespace pando;
using core::authz::ObjectKind;
using core::sourceconn::AuthKind;
using core::sourceconn::ConnectionInput;

namespace {

const QByteArray Token = "glpat-Private-Token-4711";
const QByteArray InstallationToken = "ghs_Installation-Token-6620";
const QString AppId = u"812734"_s;
// What the stand-in's API takes, and what its OAuth application's grants are.
const QByteArray ForgeToken = "gho_Forge-Standin-Token-3390";
const QByteArray ClientSecret = "oauth-Client-Secret-1187";
const QString ClientId = u"Iv1.0c5e7a11"_s;

QByteArray spec(const QString &name, const QString &repo, const QString &sourceExtra = {})
{
    // Nothing answers the fake runtime's health probe: a deploy ends after a second.
    return u"name: %1\nsource:\n  repo: %2\n  ref: main\n%3run:\n  port: 8080\nhealth:\n  timeout: 1s\n"_s
        .arg(name, repo, sourceExtra)
        .toUtf8();
}

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

ConnectionInput tokenConnection(const QString &name, const QString &url, const QByteArray &token,
                                const QString &owner = {})
{
    ConnectionInput input;
    input.name = name;
    input.scope = adapters::ForgeScope{adapters::ForgeKind::Generic, url, owner};
    input.auth = AuthKind::Token;
    input.username = u"alice"_s;
    input.secret = token;
    return input;
}

} // namespace

class TestEngineConnections : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void privateRepositoryNeedsAConnection();
    void theClosestConnectionReads();
    void membersUseWhatIsGranted();
    void deployKeyOverSsh();
    void gitHubAppReadsThroughItsInstallation();
    void oauthAppIsAuthorizedAndRenewed();
    void oauthBadInputIsRefused();
    void noCredentialIsEverShown();

private:
    void remove(const QString &app);
    QString stepStatus(const QString &deployId, const QString &step);

    QTemporaryDir m_dir;
    test::GitFixture m_git;
    QString m_commit;
    test::PrivateHttpGit m_http;
    // GitHub's side of a GitHub App: its API (the stand-in) and its git, which takes the tokens
    // the API minted.
    std::unique_ptr<test::ForgeStandIn> m_gitHub;
    test::PrivateHttpGit m_gitHubGit;
    // GitHub's git as an OAuth application's access token reads it.
    test::PrivateHttpGit m_oauthGit;
    test::RsaKeyPair m_appKey;
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestEngineConnections::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(m_git.isValid(), "git is needed (Debian's git)");
    QVERIFY(!m_git.createRepository(u"private"_s).isEmpty());
    m_commit = m_git.commit(u"private"_s, u"main"_s, {{u"Dockerfile"_s, test::GitFile{"FROM scratch\n"}}});
    QVERIFY(!m_commit.isEmpty());
    PANDO_REQUIRE_COMPONENT(test::privateHttpGitAvailable(), u"caddy and python3 (the private git server)"_s);
    // What the forge serves: the repository at its root and again below an owner, acme.
    const QString served = m_git.root() + u"/served"_s;
    for (const QString &path : {u"private.git"_s, u"acme/private.git"_s})
        QVERIFY2(m_git.git({u"clone"_s, u"--bare"_s, u"--quiet"_s, m_git.barePath(u"private"_s), served + u'/' + path}),
                 qPrintable(m_git.errorString()));
    const QString started = m_http.start(served, u"alice"_s, Token);
    QVERIFY2(started.isEmpty(), qPrintable(started));
    PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                            u"Debian's python3 with python3-jwt (the stand-in for GitHub's API)"_s);
    m_appKey = test::rsaKeyPair();
    QVERIFY2(!m_appKey.publicPem.isEmpty(), "openssl made no RSA key");
    m_gitHub = std::make_unique<test::ForgeStandIn>(ForgeToken);
    QVERIFY2(m_gitHub->start(), "the stand-in for GitHub's API did not start");
    m_gitHub->gitHubApp(AppId, m_appKey.publicPem, QJsonObject{{"41002"_L1, "active"_L1}, {"41003"_L1, "suspended"_L1}},
                        InstallationToken);
    const QString gitHubStarted = m_gitHubGit.start(served, u"x-access-token"_s, InstallationToken);
    QVERIFY2(gitHubStarted.isEmpty(), qPrintable(gitHubStarted));
    const QString oauthStarted = m_oauthGit.start(served, u"x-access-token"_s, ForgeToken);
    QVERIFY2(oauthStarted.isEmpty(), qPrintable(oauthStarted));

    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<adapters::git::GitSource>(m_dir.filePath(u"cache/git"_s));
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    const QString gitHubApi = m_gitHub->base() + u"/github"_s;
    options.engine.forgeAppTokens = [gitHubApi](const adapters::ForgeAppInstallation &app) {
        return adapters::forgerest::mintInstallationToken(app, {.apiBase = gitHubApi, .requestTimeoutMs = 5000}, {});
    };
    options.engine.forgeApis = [gitHubApi](const adapters::ForgeAccount &account) {
        return adapters::forgerest::makeApi(account, {.apiBase = gitHubApi, .requestTimeoutMs = 5000});
    };
    options.engine.forgeOAuth = adapters::forgerest::makeOAuth({.apiBase = gitHubApi, .requestTimeoutMs = 5000});
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();
    const QString made = m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin},
                                                     {"alice", core::accounts::Role::Member},
                                                     {"bob", core::accounts::Role::Member}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
}

void TestEngineConnections::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
}

void TestEngineConnections::remove(const QString &app)
{
    QVERIFY(m_engine->removeApp(app, m_people.actor(u"ada"_s), core::Engine::ServiceData::Delete));
    test::waitGone(*m_engine, app);
}

QString TestEngineConnections::stepStatus(const QString &deployId, const QString &step)
{
    auto view = m_engine->deployView(deployId);
    if (!view)
        return u"no deploy"_s;
    for (const core::StepRecord &s : std::as_const(view->steps)) {
        if (s.name == step)
            return core::toString(s.status) + u": "_s + s.detail;
    }
    return u"no step "_s + step;
}

void TestEngineConnections::privateRepositoryNeedsAConnection()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QString repo = m_http.url(u"private.git"_s);
    // Without a connection the forge answers 401 and the create says what to do.
    auto refused = m_engine->createApp(spec(u"web"_s, repo), ada);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unauthorized);
    QCOMPARE(refused.error().where, u"source.repo"_s);
    QVERIFY2(refused.error().hint.contains(u"pando connections add"_s), qPrintable(text(refused.error())));
    QCOMPARE(m_engine->app(u"web"_s).error().code, ErrorCode::NotFound);

    // A token connection for the forge: the app reads through it, at create and at each deploy.
    auto added =
        m_engine->addConnection(tokenConnection(u"forge"_s, u"http://127.0.0.1:%1"_s.arg(m_http.port()), Token), ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));
    auto tested = m_engine->testConnection(u"forge"_s, repo, {}, ada);
    QVERIFY2(tested, qPrintable(tested ? QString() : text(tested.error())));
    QCOMPARE(*tested, m_commit);
    QVERIFY(m_engine->connection(u"forge"_s, ada)->checkResult.startsWith(u"ok: "_s));

    auto created = m_engine->createApp(spec(u"web"_s, repo), ada);
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    QCOMPARE(created->record.sourceConnection, u"forge"_s);
    QCOMPARE(created->toJson().value(u"source_connection"_s).toString(), u"forge"_s);
    auto deploy = m_engine->deploy(u"web"_s, {}, ada);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    QCOMPARE(deploy->commit, m_commit);
    test::waitSettled(*m_engine, deploy->id);
    const QString fetch = stepStatus(deploy->id, u"fetch"_s);
    QVERIFY2(fetch.startsWith(u"succeeded"_s), qPrintable(fetch));

    // In use, it stays; the apps are named.
    const Status inUse = m_engine->removeConnection(u"forge"_s, ada);
    QVERIFY(!inUse);
    QCOMPARE(inUse.error().code, ErrorCode::Conflict);
    QVERIFY(inUse.error().message.contains(u"web"_s));
    QCOMPARE(m_engine->connectionApps(u"forge"_s).value(), QStringList{u"web"_s});
    // Only administrators manage connections.
    QCOMPARE(m_engine->removeConnection(u"forge"_s, m_people.actor(u"alice"_s)).error().code, ErrorCode::Forbidden);
    QCOMPARE(
        m_engine->addConnection(tokenConnection(u"mine"_s, u"https://example.com"_s, Token), m_people.actor(u"alice"_s))
            .error()
            .code,
        ErrorCode::Forbidden);

    remove(u"web"_s);
    QVERIFY(m_engine->removeConnection(u"forge"_s, ada));
    QCOMPARE(m_engine->connection(u"forge"_s, ada).error().code, ErrorCode::NotFound);
}

void TestEngineConnections::theClosestConnectionReads()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QString base = u"http://127.0.0.1:%1"_s.arg(m_http.port());
    const QString repo = m_http.url(u"acme/private.git"_s);
    QVERIFY(m_engine->addConnection(tokenConnection(u"right"_s, base, Token), ada));
    // Narrowed to the owner acme, with a token the forge refuses: it covers the repository more
    // closely, so it is the one used, and the error says which connection read it.
    QVERIFY(m_engine->addConnection(tokenConnection(u"narrow"_s, base, "revoked-token", u"acme"_s), ada));
    auto refused = m_engine->createApp(spec(u"web2"_s, repo), ada);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unauthorized);
    QVERIFY2(refused.error().hint.contains(u"connection narrow"_s), qPrintable(text(refused.error())));
    // Named in the spec, another is used.
    auto named = m_engine->createApp(spec(u"web2"_s, repo, u"  connection: right\n"_s), ada);
    QVERIFY2(named, qPrintable(named ? QString() : text(named.error())));
    QCOMPARE(named->record.sourceConnection, u"right"_s);

    // Two that cover it equally: the spec must say which.
    QVERIFY(m_engine->removeConnection(u"narrow"_s, ada));
    QVERIFY(m_engine->addConnection(tokenConnection(u"also-right"_s, base, Token), ada));
    auto tie = m_engine->updateApp(u"web2"_s, spec(u"web2"_s, repo), ada);
    QVERIFY(!tie);
    QCOMPARE(tie.error().code, ErrorCode::Conflict);
    QCOMPARE(tie.error().where, u"source.connection"_s);
    auto renamed = m_engine->updateApp(u"web2"_s, spec(u"web2"_s, repo, u"  connection: also-right\n"_s), ada);
    QVERIFY2(renamed, qPrintable(renamed ? QString() : text(renamed.error())));
    QCOMPARE(renamed->record.sourceConnection, u"also-right"_s);

    // A connection that does not cover the address is refused by name.
    QVERIFY(m_engine->addConnection(tokenConnection(u"elsewhere"_s, u"https://git.example.com"_s, Token), ada));
    auto uncovered = m_engine->updateApp(u"web2"_s, spec(u"web2"_s, repo, u"  connection: elsewhere\n"_s), ada);
    QVERIFY(!uncovered);
    QCOMPARE(uncovered.error().where, u"source.connection"_s);
    QVERIFY2(uncovered.error().message.contains(u"does not cover"_s), qPrintable(text(uncovered.error())));
    QCOMPARE(m_engine->app(u"web2"_s)->record.sourceConnection, u"also-right"_s);

    // A token the forge refuses: the test fails, says so, and the failure is recorded.
    QVERIFY(m_engine->addConnection(tokenConnection(u"wrong"_s, base, "not-the-token"), ada));
    auto denied = m_engine->testConnection(u"wrong"_s, repo, {}, ada);
    QVERIFY(!denied);
    QCOMPARE(denied.error().code, ErrorCode::Failed);
    QVERIFY2(denied.error().message.contains(u"connection wrong"_s), qPrintable(text(denied.error())));
    QVERIFY2(denied.error().hint.contains(u"expired or been revoked"_s), qPrintable(text(denied.error())));
    QVERIFY(m_engine->connection(u"wrong"_s, ada)->checkResult.startsWith(u"failed: "_s));
    auto notCovered = m_engine->testConnection(u"elsewhere"_s, repo, {}, ada);
    QCOMPARE(notCovered.error().code, ErrorCode::Invalid);
    QCOMPARE(notCovered.error().where, u"repo"_s);

    remove(u"web2"_s);
    for (const QString &name : {u"right"_s, u"also-right"_s, u"elsewhere"_s, u"wrong"_s})
        QVERIFY(m_engine->removeConnection(name, ada));
}

void TestEngineConnections::membersUseWhatIsGranted()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const core::Actor alice = m_people.actor(u"alice"_s);
    // The forge is on loopback here: members may reach it only with the setting on.
    auto access = m_engine->appAccess();
    QVERIFY(access);
    access->internalHosts = true;
    QVERIFY(m_engine->setAppAccess(*access, ada));
    QVERIFY(
        m_engine->addConnection(tokenConnection(u"team"_s, u"http://127.0.0.1:%1"_s.arg(m_http.port()), Token), ada));
    const QString repo = m_http.url(u"private.git"_s);

    // Not granted: alice does not see it, it is not used for her app, and naming it is refused.
    QVERIFY(m_engine->connections(alice)->isEmpty());
    QCOMPARE(m_engine->connection(u"team"_s, alice).error().code, ErrorCode::NotFound);
    auto unread = m_engine->createApp(spec(u"hers"_s, repo), alice);
    QVERIFY(!unread);
    auto named = m_engine->createApp(spec(u"hers"_s, repo, u"  connection: team\n"_s), alice);
    QVERIFY(!named);
    QCOMPARE(named.error().code, ErrorCode::NotFound);
    QCOMPARE(named.error().where, u"source.connection"_s);

    // Granted: she sees it and her app reads through it; bob still does not.
    QVERIFY(m_engine->addGrant(ObjectKind::Connection, u"team"_s, u"alice"_s, u"user"_s, ada));
    QCOMPARE(m_engine->connections(alice)->size(), 1);
    auto hers = m_engine->createApp(spec(u"hers"_s, repo), alice);
    QVERIFY2(hers, qPrintable(hers ? QString() : text(hers.error())));
    QCOMPARE(hers->record.sourceConnection, u"team"_s);
    QVERIFY(m_engine->connections(m_people.actor(u"bob"_s))->isEmpty());
    QCOMPARE(m_engine->addGrant(ObjectKind::Connection, u"team"_s, u"bob"_s, u"owner"_s, ada).error().where, u"role"_s);

    // Its grants go with it: a new connection of that name is nobody's.
    remove(u"hers"_s);
    QVERIFY(m_engine->removeConnection(u"team"_s, ada));
    QVERIFY(m_engine->addConnection(tokenConnection(u"team"_s, u"https://example.com"_s, Token), ada));
    QVERIFY(m_engine->connections(alice)->isEmpty());
    QVERIFY(m_engine->removeConnection(u"team"_s, ada));
    access->internalHosts = false;
    QVERIFY(m_engine->setAppAccess(*access, ada));
}

void TestEngineConnections::deployKeyOverSsh()
{
    PANDO_REQUIRE_COMPONENT(test::sshAvailable(), u"OpenSSH server and client (openssh-server, openssh-client)"_s);
    test::SshServer server;
    const QString started = server.start(test::unusedPort());
    QVERIFY2(started.isEmpty(), qPrintable(started));
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QString repo = u"ssh://root@127.0.0.1:%1%2"_s.arg(server.port())
                             .arg(QFileInfo(m_git.barePath(u"private"_s)).absoluteFilePath());
    QFile key(server.path(u"client_ed25519"_s));
    QVERIFY(key.open(QIODevice::ReadOnly));
    ConnectionInput input;
    input.name = u"deploy-key"_s;
    input.scope = adapters::ForgeScope{adapters::ForgeKind::Generic, u"ssh://127.0.0.1"_s, {}};
    input.auth = AuthKind::SshKey;
    input.secret = key.readAll();
    // Pinned to another key (the client's stands in for a changed host key): refused before any
    // credential is offered, saying where the pin is.
    QFile clientPub(server.path(u"client_ed25519.pub"_s));
    QVERIFY(clientPub.open(QIODevice::ReadOnly));
    input.knownHosts = u"[127.0.0.1]:%1 "_s.arg(server.port()) + QString::fromUtf8(clientPub.readAll());
    auto pinnedWrong = m_engine->addConnection(input, ada);
    QVERIFY2(pinnedWrong, qPrintable(pinnedWrong ? QString() : text(pinnedWrong.error())));
    auto impostor = m_engine->testConnection(u"deploy-key"_s, repo, {}, ada);
    QVERIFY(!impostor);
    QVERIFY2(impostor.error().message.contains(u"does not match"_s), qPrintable(text(impostor.error())));
    QCOMPARE(impostor.error().where, u"the connection's pinned host keys"_s);
    QVERIFY(m_engine->removeConnection(u"deploy-key"_s, ada));

    input.knownHosts = QString::fromUtf8(server.knownHostsLine());
    auto added = m_engine->addConnection(input, ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));
    QVERIFY(added->fingerprint.startsWith(u"SHA256:"_s));
    auto created = m_engine->createApp(spec(u"sshweb"_s, repo), ada);
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error()) + u"\nsshd: "_s + server.log()));
    QCOMPARE(created->record.sourceConnection, u"deploy-key"_s);
    auto deploy = m_engine->deploy(u"sshweb"_s, {}, ada);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    test::waitSettled(*m_engine, deploy->id);
    const QString fetch = stepStatus(deploy->id, u"fetch"_s);
    QVERIFY2(fetch.startsWith(u"succeeded"_s), qPrintable(fetch));
    remove(u"sshweb"_s);
    QVERIFY(m_engine->removeConnection(u"deploy-key"_s, ada));
}

// Everything the tests above did left audit lines and errors: none holds the token.
void TestEngineConnections::gitHubAppReadsThroughItsInstallation()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QString base = u"http://127.0.0.1:%1"_s.arg(m_gitHubGit.port());
    const QString repo = m_gitHubGit.url(u"acme/private.git"_s);
    const auto app = [&](const QString &name, const QString &installation) {
        ConnectionInput input;
        input.name = name;
        input.scope = adapters::ForgeScope{adapters::ForgeKind::GitHub, base, u"acme"_s};
        input.auth = AuthKind::GitHubApp;
        input.appId = AppId;
        input.installationId = installation;
        input.secret = m_appKey.privatePem;
        return input;
    };
    const auto mints = [this](const QString &installation) {
        int n = 0;
        for (const QJsonValue r : m_gitHub->requests(u"github"_s))
            n += r[u"path"_s].toString() == u"/github/app/installations/%1/access_tokens"_s.arg(installation);
        return n;
    };

    auto added = m_engine->addConnection(app(u"gh-app"_s, u"41002"_s), ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));
    QCOMPARE(added->auth, AuthKind::GitHubApp);
    auto tested = m_engine->testConnection(u"gh-app"_s, repo, {}, ada);
    QVERIFY2(tested, qPrintable(tested ? QString() : text(tested.error())));
    QCOMPARE(*tested, m_commit);

    // Created and deployed through it: the token minted for the test is the one every fetch uses.
    auto created = m_engine->createApp(spec(u"viaapp"_s, repo), ada);
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    QCOMPARE(created->record.sourceConnection, u"gh-app"_s);
    auto deploy = m_engine->deploy(u"viaapp"_s, {}, ada);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    test::waitSettled(*m_engine, deploy->id);
    const QString fetch = stepStatus(deploy->id, u"fetch"_s);
    QVERIFY2(fetch.startsWith(u"succeeded"_s), qPrintable(fetch));
    QCOMPARE(mints(u"41002"_s), 1);
    // Its forge API lists what the installation was given, with the same token.
    auto listed = m_engine->connectionRepositories(u"gh-app"_s, ada);
    QVERIFY2(listed, qPrintable(listed ? QString() : text(listed.error())));
    QCOMPARE(listed->size(), 3);
    QCOMPARE(mints(u"41002"_s), 1);

    // Uninstalled, the app's tokens stop working: the refusal drops the token held, and the next
    // use mints again and says what happened.
    const QJsonObject installed{{"41002"_L1, "active"_L1}, {"41003"_L1, "suspended"_L1}};
    m_gitHub->gitHubApp(AppId, m_appKey.publicPem, QJsonObject{{"41003"_L1, "suspended"_L1}}, "ghs_Another-Token");
    auto revoked = m_engine->connectionRepositories(u"gh-app"_s, ada);
    QVERIFY(!revoked);
    QCOMPARE(revoked.error().code, ErrorCode::Failed);
    auto told = m_engine->connectionRepositories(u"gh-app"_s, ada);
    QVERIFY(!told);
    QVERIFY2(told.error().message.contains(u"no installation 41002"_s), qPrintable(text(told.error())));
    QCOMPARE(mints(u"41002"_s), 2);
    m_gitHub->gitHubApp(AppId, m_appKey.publicPem, installed, InstallationToken);

    remove(u"viaapp"_s);
    QVERIFY(m_engine->removeConnection(u"gh-app"_s, ada));

    // An installation GitHub no longer has, and a suspended one: the test says so and what to do,
    // the connection's last check keeps it, and the audit log has it.
    QVERIFY(m_engine->addConnection(app(u"gh-gone"_s, u"41099"_s), ada));
    auto gone = m_engine->testConnection(u"gh-gone"_s, repo, {}, ada);
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::Failed);
    QCOMPARE(gone.error().where, u"installation_id"_s);
    QVERIFY2(gone.error().message.contains(u"no installation 41099"_s), qPrintable(text(gone.error())));
    QVERIFY2(gone.error().hint.contains(u"install the app"_s), qPrintable(text(gone.error())));
    QVERIFY(m_engine->connection(u"gh-gone"_s, ada)->checkResult.startsWith(u"failed: "_s));
    QVERIFY(m_engine->removeConnection(u"gh-gone"_s, ada));
    QVERIFY(m_engine->addConnection(app(u"gh-held"_s, u"41003"_s), ada));
    auto held = m_engine->testConnection(u"gh-held"_s, repo, {}, ada);
    QVERIFY(!held);
    QVERIFY2(held.error().message.contains(u"suspended"_s), qPrintable(text(held.error())));
    QVERIFY(m_engine->removeConnection(u"gh-held"_s, ada));

    // Bad input is refused before anything is stored.
    ConnectionInput notAKey = app(u"gh-bad"_s, u"41002"_s);
    notAKey.secret = m_appKey.publicPem;
    auto refused = m_engine->addConnection(notAKey, ada);
    QVERIFY(!refused);
    QCOMPARE(refused.error().where, u"private_key"_s);
    QCOMPARE(m_engine->connection(u"gh-bad"_s, ada).error().code, ErrorCode::NotFound);
}

namespace {

ConnectionInput oauthConnection(const QString &name, const QString &url)
{
    ConnectionInput input;
    input.name = name;
    input.scope = adapters::ForgeScope{adapters::ForgeKind::GitHub, url, u"acme"_s};
    input.auth = AuthKind::OAuth;
    input.clientId = ClientId;
    input.secret = ClientSecret;
    return input;
}

// The code the forge sends the browser back with, once the user chose Authorize on the page
// begun shows; empty when the page did not send it back to redirect with begun's state.
QString authorizeOnForge(const core::Engine::OAuthAuthorization &begun, const QString &redirect)
{
    const QUrl back(test::ForgeStandIn::authorizationRedirect(begun.authorizeUrl));
    const QUrlQuery query(back);
    if (back.toString(QUrl::RemoveQuery) != redirect || query.queryItemValue(u"state"_s) != begun.state)
        return {};
    return query.queryItemValue(u"code"_s);
}

} // namespace

void TestEngineConnections::oauthAppIsAuthorizedAndRenewed()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QString redirect = u"http://127.0.0.1:41234/callback"_s;
    const QString repo = m_oauthGit.url(u"acme/private.git"_s);
    const QString base = u"http://127.0.0.1:%1"_s.arg(m_oauthGit.port());
    // How many grants GitHub's token endpoint was asked for.
    const auto grants = [this] {
        int n = 0;
        for (const QJsonValue r : m_gitHub->requests(u"github"_s))
            n += r[u"path"_s].toString() == u"/github/login/oauth/access_token"_s;
        return n;
    };
    // Tokens that expire within the five minutes before which Pando renews: each use renews.
    m_gitHub->oauthApp(ClientId, ClientSecret, 120);

    auto begun = m_engine->beginConnectionAuthorization(oauthConnection(u"gh-oauth"_s, base), redirect, ada);
    QVERIFY2(begun, qPrintable(begun ? QString() : text(begun.error())));
    QVERIFY(begun->authorizeUrl.startsWith(m_gitHub->base() + u"/github/login/oauth/authorize?"_s));
    QVERIFY(!begun->authorizeUrl.contains(QString::fromLatin1(ClientSecret)));
    // Nothing is stored before the forge said yes.
    QCOMPARE(m_engine->connection(u"gh-oauth"_s, ada).error().code, ErrorCode::NotFound);
    const QString code = authorizeOnForge(*begun, redirect);
    QVERIFY(!code.isEmpty());
    // Only who began it finishes it, and only once.
    auto stranger = m_engine->completeConnectionAuthorization(begun->state, code, core::Actor{u"token:other"_s});
    QVERIFY(!stranger);
    QCOMPARE(stranger.error().code, ErrorCode::NotFound);
    auto added = m_engine->completeConnectionAuthorization(begun->state, code, ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));
    QCOMPARE(added->auth, AuthKind::OAuth);
    QCOMPARE(added->clientId, ClientId);
    auto twice = m_engine->completeConnectionAuthorization(begun->state, u"any"_s, ada);
    QCOMPARE(twice.error().code, ErrorCode::NotFound);
    QCOMPARE(twice.error().where, u"state"_s);
    const int afterAdd = grants();

    // Read over git with the access token, renewed first (it expires within five minutes); the
    // renewal's new refresh token is kept, so the next renewal works as well.
    auto tested = m_engine->testConnection(u"gh-oauth"_s, repo, {}, ada);
    QVERIFY2(tested, qPrintable(tested ? QString() : text(tested.error())));
    QCOMPARE(*tested, m_commit);
    auto listed = m_engine->connectionRepositories(u"gh-oauth"_s, ada);
    QVERIFY2(listed, qPrintable(listed ? QString() : text(listed.error())));
    QCOMPARE(listed->size(), 3);
    QCOMPARE(grants(), afterAdd + 2);
    auto created = m_engine->createApp(spec(u"viaoauth"_s, repo), ada);
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    QCOMPARE(created->record.sourceConnection, u"gh-oauth"_s);

    // Revoked on the forge: the next use says to authorize again, and how.
    m_gitHub->revokeOAuth();
    auto revoked = m_engine->testConnection(u"gh-oauth"_s, repo, {}, ada);
    QVERIFY(!revoked);
    QCOMPARE(revoked.error().code, ErrorCode::Failed);
    QVERIFY2(revoked.error().hint.contains(u"pando connections authorize gh-oauth"_s),
             qPrintable(text(revoked.error())));
    QVERIFY(m_engine->connection(u"gh-oauth"_s, ada)->checkResult.startsWith(u"failed: "_s));

    // Authorized again: the connection (and the app reading through it) works again.
    auto again = m_engine->reauthorizeConnection(u"gh-oauth"_s, redirect, ada);
    QVERIFY2(again, qPrintable(again ? QString() : text(again.error())));
    auto reauthorized =
        m_engine->completeConnectionAuthorization(again->state, authorizeOnForge(*again, redirect), ada);
    QVERIFY2(reauthorized, qPrintable(reauthorized ? QString() : text(reauthorized.error())));
    QCOMPARE(reauthorized->createdMs, added->createdMs);
    auto deploy = m_engine->deploy(u"viaoauth"_s, {}, ada);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : text(deploy.error())));
    test::waitSettled(*m_engine, deploy->id);
    const QString fetch = stepStatus(deploy->id, u"fetch"_s);
    QVERIFY2(fetch.startsWith(u"succeeded"_s), qPrintable(fetch));

    remove(u"viaoauth"_s);
    QVERIFY(m_engine->removeConnection(u"gh-oauth"_s, ada));
}

void TestEngineConnections::oauthBadInputIsRefused()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QString redirect = u"http://127.0.0.1:41234/callback"_s;
    const QString base = u"http://127.0.0.1:%1"_s.arg(m_oauthGit.port());
    m_gitHub->oauthApp(ClientId, ClientSecret, 0);
    const auto refusedAt = [&](const ConnectionInput &input, const QString &uri, const QString &where) {
        auto begun = m_engine->beginConnectionAuthorization(input, uri, ada);
        return !begun && begun.error().where == where;
    };
    // The browser may be sent back only to this machine.
    QVERIFY(refusedAt(oauthConnection(u"o1"_s, base), u"https://attacker.example/callback"_s, u"redirect_uri"_s));
    QVERIFY(refusedAt(oauthConnection(u"o1"_s, base), u"http://127.0.0.1/callback"_s, u"redirect_uri"_s));
    ConnectionInput azure = oauthConnection(u"o1"_s, u"https://dev.azure.com/acme"_s);
    azure.scope.kind = adapters::ForgeKind::AzureDevOps;
    QVERIFY(refusedAt(azure, redirect, u"kind"_s));
    ConnectionInput noSecret = oauthConnection(u"o1"_s, base);
    noSecret.secret.clear();
    QVERIFY(refusedAt(noSecret, redirect, u"client_secret"_s));
    ConnectionInput noClient = oauthConnection(u"o1"_s, base);
    noClient.clientId.clear();
    QVERIFY(refusedAt(noClient, redirect, u"client_id"_s));
    // Members do not add connections; a taken name is said before the forge's page.
    QCOMPARE(
        m_engine->beginConnectionAuthorization(oauthConnection(u"o1"_s, base), redirect, m_people.actor(u"alice"_s))
            .error()
            .code,
        ErrorCode::Forbidden);
    QVERIFY(m_engine->addConnection(tokenConnection(u"taken"_s, u"https://example.com"_s, Token), ada));
    auto taken = m_engine->beginConnectionAuthorization(oauthConnection(u"taken"_s, base), redirect, ada);
    QCOMPARE(taken.error().code, ErrorCode::Conflict);
    // Only OAuth connections are authorized again.
    QCOMPARE(m_engine->reauthorizeConnection(u"taken"_s, redirect, ada).error().code, ErrorCode::Invalid);
    QVERIFY(m_engine->removeConnection(u"taken"_s, ada));
    // An OAuth connection is not added without authorizing it.
    QCOMPARE(m_engine->addConnection(oauthConnection(u"o1"_s, base), ada).error().where, u"auth"_s);

    // A git server that refuses what the forge granted (the application revoked there, its tokens
    // never expiring): the test says to authorize it again.
    auto begun = m_engine->beginConnectionAuthorization(
        oauthConnection(u"o2"_s, u"http://127.0.0.1:%1"_s.arg(m_http.port())), redirect, ada);
    QVERIFY(begun);
    QVERIFY(m_engine->completeConnectionAuthorization(begun->state, authorizeOnForge(*begun, redirect), ada));
    auto refusedByGit = m_engine->testConnection(u"o2"_s, m_http.url(u"acme/private.git"_s), {}, ada);
    QVERIFY(!refusedByGit);
    QCOMPARE(refusedByGit.error().code, ErrorCode::Failed);
    QVERIFY2(refusedByGit.error().hint.contains(u"pando connections authorize o2"_s),
             qPrintable(text(refusedByGit.error())));
    QVERIFY(m_engine->removeConnection(u"o2"_s, ada));

    // A wrong client secret is the forge's refusal, said at client_secret; nothing is stored.
    ConnectionInput wrong = oauthConnection(u"o1"_s, base);
    wrong.secret = "not-the-Secret-9021";
    begun = m_engine->beginConnectionAuthorization(wrong, redirect, ada);
    QVERIFY(begun);
    auto refused = m_engine->completeConnectionAuthorization(begun->state, authorizeOnForge(*begun, redirect), ada);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Failed);
    QCOMPARE(refused.error().where, u"client_secret"_s);
    QVERIFY(!text(refused.error()).contains(u"not-the-Secret-9021"_s));
    QCOMPARE(m_engine->connection(u"o1"_s, ada).error().code, ErrorCode::NotFound);
}

void TestEngineConnections::noCredentialIsEverShown()
{
    core::AuditRepository::Filter filter;
    filter.limit = 1000;
    auto lines = m_engine->auditLines(filter);
    QVERIFY(lines);
    int connectionLines = 0;
    for (const core::AuditRecord &line : std::as_const(*lines)) {
        QVERIFY2(!line.detail.contains(QString::fromUtf8(Token)), qPrintable(line.detail));
        QVERIFY2(!line.detail.contains(QString::fromUtf8(InstallationToken)), qPrintable(line.detail));
        QVERIFY2(!line.detail.contains(QString::fromUtf8(ForgeToken)), qPrintable(line.detail));
        QVERIFY2(!line.detail.contains(QString::fromUtf8(ClientSecret)), qPrintable(line.detail));
        QVERIFY(!line.detail.contains(u"PRIVATE KEY"_s));
        if (line.object.startsWith(u"connection/"_s))
            ++connectionLines;
    }
    QVERIFY2(connectionLines >= 10, qPrintable(QString::number(connectionLines)));
}

QTEST_GUILESS_MAIN(TestEngineConnections)
#include "tst_engineconnections.moc"
