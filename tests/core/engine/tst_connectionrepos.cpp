// What a source connection's forge API shows through the engine (Engine::connectionRepositories
// and connectionBranches; docs/user-guide.md, "Private repositories"): the repositories a GitHub
// token connection's token sees (both pages of the listing) and a repository's branches, answered
// by the local stand-in for the forges' APIs (tests/adapters/forge/forge_api_standin.py) that the
// install's forge APIs are pointed at. Also who may ask (a member without a grant learns nothing),
// what a deploy-key connection and an address the connection does not cover answer, and that a
// token the forge refuses shows up in no error. And each deploy of an app read through the
// connection is reported on its commit (pending, then success or failure), a forge that refuses
// the report failing no deploy and leaving an audit line without the token. Pando registers an
// app's webhook on the forge itself, with a secret the forge then signs deliveries with. The engine is real (SQLite in
// a temporary directory); runtime, router, source and services are fakes. No forge on the internet is reached.

#include "adapters/forge/rest/forgerest.h"
#include "app/wiring/install.h"
#include "enginepeople.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/app/server/fakes.h"
#include "tests/support/component.h"

#include <QCryptographicHash>
#include <QFile>
#include <QMessageAuthenticationCode>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

using namespace Qt::StringLiterals;
using namespace pando;
using core::authz::ObjectKind;
using core::sourceconn::AuthKind;
using core::sourceconn::ConnectionInput;

namespace {

const QByteArray Token = "ghp_repos-Standin-Token-5150";

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

QString sha1(const char *text)
{
    return QString::fromLatin1(QCryptographicHash::hash(text, QCryptographicHash::Sha1).toHex());
}

ConnectionInput gitHubToken(const QString &name, const QString &owner = {})
{
    ConnectionInput input;
    input.name = name;
    input.scope = adapters::ForgeScope{adapters::ForgeKind::GitHub, u"https://github.com"_s, owner};
    input.auth = AuthKind::Token;
    input.secret = Token;
    return input;
}

} // namespace

class TestConnectionRepos : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void listsRepositories();
    void listsBranches();
    void onlyForThoseWhoMayUseIt();
    void deployKeyHasNoApi();
    void repositoryNotCovered();
    void refusedTokenIsNeverShown();
    void deploysAreReportedOnTheirCommit();
    void registersTheWebhookOnTheForge();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<test::ForgeStandIn> m_standIn;
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestConnectionRepos::initTestCase()
{
    QVERIFY(m_dir.isValid());
    PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                            u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
    m_standIn = std::make_unique<test::ForgeStandIn>(Token);
    QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");

    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    const QString base = m_standIn->base();
    options.engine.forgeApis = [base](const adapters::ForgeAccount &account) {
        return adapters::forgerest::makeApi(account, {.apiBase = base + u"/github"_s, .requestTimeoutMs = 5000});
    };
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();
    const QString made = m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin},
                                                     {"alice", core::accounts::Role::Member},
                                                     {"bob", core::accounts::Role::Member}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
    const core::Actor ada = m_people.actor(u"ada"_s);
    auto added = m_engine->addConnection(gitHubToken(u"gh"_s), ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));
    QVERIFY(m_engine->addGrant(ObjectKind::Connection, u"gh"_s, u"alice"_s, u"user"_s, ada));
}

void TestConnectionRepos::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
    m_standIn.reset();
}

void TestConnectionRepos::init()
{
    if (m_standIn)
        m_standIn->reset();
}

void TestConnectionRepos::listsRepositories()
{
    // A member granted the connection sees what its token sees; the stand-in pages by two.
    auto listed = m_engine->connectionRepositories(u"gh"_s, m_people.actor(u"alice"_s));
    QVERIFY2(listed, qPrintable(listed ? QString() : text(listed.error())));
    QStringList names;
    for (const adapters::ForgeRepository &r : std::as_const(*listed))
        names << r.fullName;
    QCOMPARE(names, (QStringList{u"acme/api"_s, u"acme/web"_s, u"acme/tools"_s}));
    QCOMPARE(m_standIn->gets(u"github"_s, u"/user/repos"_s), 2);
    const adapters::ForgeRepository &web = listed->at(1);
    QVERIFY(!web.isPrivate);
    QVERIFY(listed->at(0).isPrivate);
    QCOMPARE(web.defaultBranch, u"trunk"_s);
    QVERIFY2(web.cloneUrl.startsWith(u"https://"_s) && web.cloneUrl.endsWith(u"acme/web.git"_s),
             qPrintable(web.cloneUrl));

    // An owner narrows the listing to the owner's repositories.
    const core::Actor ada = m_people.actor(u"ada"_s);
    QVERIFY(m_engine->addConnection(gitHubToken(u"gh-acme"_s, u"acme"_s), ada));
    auto owned = m_engine->connectionRepositories(u"gh-acme"_s, ada);
    QVERIFY2(owned, qPrintable(owned ? QString() : text(owned.error())));
    QCOMPARE(owned->size(), 3);
    QCOMPARE(m_standIn->gets(u"github"_s, u"/orgs/acme/repos"_s), 2);
    QVERIFY(m_engine->removeConnection(u"gh-acme"_s, ada));
}

void TestConnectionRepos::listsBranches()
{
    auto branches =
        m_engine->connectionBranches(u"gh"_s, u"https://github.com/acme/api.git"_s, m_people.actor(u"alice"_s));
    QVERIFY2(branches, qPrintable(branches ? QString() : text(branches.error())));
    QCOMPARE(branches->size(), 3);
    QCOMPARE(branches->at(0).name, u"main"_s);
    QCOMPARE(branches->at(0).commit, sha1("main"));
    QCOMPARE(branches->at(1).name, u"feature/x"_s);
    QCOMPARE(branches->at(2).commit, sha1("release"));

    // A repository the token cannot see: the forge's 404, at the repository.
    auto missing =
        m_engine->connectionBranches(u"gh"_s, u"https://github.com/acme/nothere"_s, m_people.actor(u"ada"_s));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
    QCOMPARE(missing.error().where, u"repo"_s);
}

void TestConnectionRepos::onlyForThoseWhoMayUseIt()
{
    // bob holds no grant on gh: it reads as no connection at all, exactly as connection() says.
    const core::Actor bob = m_people.actor(u"bob"_s);
    auto shown = m_engine->connection(u"gh"_s, bob);
    QVERIFY(!shown);
    auto listed = m_engine->connectionRepositories(u"gh"_s, bob);
    QVERIFY(!listed);
    QCOMPARE(listed.error().code, ErrorCode::NotFound);
    QCOMPARE(listed.error().message, shown.error().message);
    auto branches = m_engine->connectionBranches(u"gh"_s, u"https://github.com/acme/api.git"_s, bob);
    QVERIFY(!branches);
    QCOMPARE(branches.error().code, ErrorCode::NotFound);
    QCOMPARE(m_engine->connectionRepositories(u"nothere"_s, m_people.actor(u"ada"_s)).error().code,
             ErrorCode::NotFound);
    QCOMPARE(m_standIn->requests(u"github"_s).size(), 0);
}

void TestConnectionRepos::deployKeyHasNoApi()
{
    const QString keygen = QStandardPaths::findExecutable(u"ssh-keygen"_s);
    PANDO_REQUIRE_COMPONENT(!keygen.isEmpty(), u"ssh-keygen (openssh-client) makes the deploy key"_s);
    QTemporaryDir keys;
    QVERIFY(keys.isValid());
    const QString keyPath = keys.filePath(u"id_ed25519"_s);
    QProcess process;
    process.start(keygen, {u"-q"_s, u"-t"_s, u"ed25519"_s, u"-N"_s, QString(), u"-f"_s, keyPath});
    QVERIFY(process.waitForFinished(20000) && process.exitCode() == 0);
    QFile key(keyPath);
    QFile pub(keyPath + u".pub"_s);
    QVERIFY(key.open(QIODevice::ReadOnly) && pub.open(QIODevice::ReadOnly));

    ConnectionInput input;
    input.name = u"gh-key"_s;
    input.scope = adapters::ForgeScope{adapters::ForgeKind::GitHub, u"ssh://github.com"_s, {}};
    input.auth = AuthKind::SshKey;
    input.secret = key.readAll();
    // The key's public half stands in for github.com's host key: nothing connects here.
    input.knownHosts = u"github.com "_s + QString::fromUtf8(pub.readAll()).section(u' ', 0, 1);
    const core::Actor ada = m_people.actor(u"ada"_s);
    auto added = m_engine->addConnection(input, ada);
    QVERIFY2(added, qPrintable(added ? QString() : text(added.error())));

    auto listed = m_engine->connectionRepositories(u"gh-key"_s, ada);
    QVERIFY(!listed);
    QCOMPARE(listed.error().code, ErrorCode::Invalid);
    QVERIFY2(listed.error().message.contains(u"deploy key"_s), qPrintable(text(listed.error())));
    QVERIFY2(listed.error().hint.contains(u"token connection"_s), qPrintable(text(listed.error())));
    auto branches = m_engine->connectionBranches(u"gh-key"_s, u"git@github.com:acme/api.git"_s, ada);
    QVERIFY(!branches);
    QCOMPARE(branches.error().code, ErrorCode::Invalid);
    QVERIFY(!branches.error().hint.isEmpty());
    QVERIFY(m_engine->removeConnection(u"gh-key"_s, ada));
    QCOMPARE(m_standIn->requests(u"github"_s).size(), 0);
}

void TestConnectionRepos::repositoryNotCovered()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    QVERIFY(m_engine->addConnection(gitHubToken(u"gh-acme"_s, u"acme"_s), ada));
    // Another owner's repository, another host, and no address at all: each said at "repo".
    for (const QString &repo :
         {u"https://github.com/evil/api.git"_s, u"https://gitlab.com/acme/api.git"_s, u"not an address"_s}) {
        auto branches = m_engine->connectionBranches(u"gh-acme"_s, repo, ada);
        QVERIFY2(!branches, qPrintable(repo));
        QCOMPARE(branches.error().code, ErrorCode::Invalid);
        QCOMPARE(branches.error().where, u"repo"_s);
    }
    auto other = m_engine->connectionBranches(u"gh-acme"_s, u"https://github.com/evil/api.git"_s, ada);
    QVERIFY2(other.error().message.contains(u"does not cover"_s), qPrintable(text(other.error())));
    QCOMPARE(m_standIn->requests(u"github"_s).size(), 0);
    QVERIFY(m_engine->removeConnection(u"gh-acme"_s, ada));
}

void TestConnectionRepos::refusedTokenIsNeverShown()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    m_standIn->failFor(u"github"_s, u"*"_s, 401);
    auto listed = m_engine->connectionRepositories(u"gh"_s, ada);
    QVERIFY(!listed);
    // The forge refusing the token is not the caller's sign-in failing: Failed, not Unauthorized.
    QCOMPARE(listed.error().code, ErrorCode::Failed);
    const QString said = text(listed.error());
    QVERIFY2(said.contains(u"connection gh"_s) && said.contains(u"refused the token"_s), qPrintable(said));
    QVERIFY2(!said.contains(QString::fromLatin1(Token)), qPrintable(said));
    auto branches = m_engine->connectionBranches(u"gh"_s, u"https://github.com/acme/api.git"_s, ada);
    QVERIFY(!branches);
    QCOMPARE(branches.error().code, ErrorCode::Failed);
    QVERIFY2(!text(branches.error()).contains(QString::fromLatin1(Token)), qPrintable(text(branches.error())));
}

void TestConnectionRepos::deploysAreReportedOnTheirCommit()
{
    // What the app's health probe reaches: answered 200 while it listens.
    QTcpServer answerer;
    QVERIFY(answerer.listen(QHostAddress::LocalHost, 0));
    connect(&answerer, &QTcpServer::newConnection, &answerer, [&answerer] {
        while (QTcpSocket *socket = answerer.nextPendingConnection()) {
            connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                socket->readAll();
                socket->write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
                socket->disconnectFromHost();
            });
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        }
    });
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QByteArray spec = u"name: reported\nsource:\n  repo: https://github.com/acme/api.git\n  ref: main\n"
                            u"run:\n  port: %1\nhealth:\n  path: /\n  timeout: 2s\n"_s.arg(answerer.serverPort())
                                .toUtf8();
    auto created = m_engine->createApp(spec, ada);
    QVERIFY2(created, qPrintable(created ? QString() : text(created.error())));
    QCOMPARE(created->record.sourceConnection, u"gh"_s);

    const auto deployed = [this, &ada]() -> core::DeployRecord {
        auto queued = m_engine->deploy(u"reported"_s, {}, ada);
        if (!queued)
            return {};
        core::DeployRecord ended;
        // A deploy still running after the wait is returned as it is, and the caller's check fails.
        (void)QTest::qWaitFor(
            [&] {
                auto view = m_engine->deployView(queued->id);
                ended = view ? view->record : core::DeployRecord{};
                return view && view->record.status != core::DeployStatus::Queued &&
                       view->record.status != core::DeployStatus::Running;
            },
            30000);
        return ended;
    };
    const auto states = [this] {
        QStringList said;
        for (const QJsonValue status : m_standIn->statuses(u"github"_s))
            said << status[u"body"_s][u"state"_s].toString();
        return said;
    };

    const core::DeployRecord first = deployed();
    QCOMPARE(first.status, core::DeployStatus::Succeeded);
    QTRY_COMPARE_WITH_TIMEOUT(states(), (QStringList{u"pending"_s, u"success"_s}), 10000);
    const QJsonObject success = m_standIn->statuses(u"github"_s).at(1).toObject();
    QCOMPARE(success[u"repo"_s].toString(), u"acme/api"_s);
    QCOMPARE(success[u"sha"_s].toString(), first.commit);
    const QJsonObject body = success[u"body"_s].toObject();
    QCOMPARE(body[u"context"_s].toString(), u"pando/reported"_s);
    QCOMPARE(body[u"target_url"_s].toString(), m_engine->app(u"reported"_s)->url);
    QVERIFY2(body[u"description"_s].toString().contains(first.id), qPrintable(body[u"description"_s].toString()));

    // A deploy whose app does not answer: failure, naming the step.
    answerer.close();
    m_standIn->reset();
    const core::DeployRecord broken = deployed();
    QCOMPARE(broken.status, core::DeployStatus::Failed);
    QTRY_COMPARE_WITH_TIMEOUT(states(), (QStringList{u"pending"_s, u"failure"_s}), 10000);
    const QString why = m_standIn->statuses(u"github"_s).at(1)[u"body"_s][u"description"_s].toString();
    QVERIFY2(why.contains(u"failed at health"_s) && why.size() <= 140, qPrintable(why));

    // A forge that refuses the token changes nothing of the deploy (it fails at its health check
    // as before); the audit log says it, once per report, without the token.
    m_standIn->reset();
    m_standIn->failFor(u"github"_s, u"*"_s, 401);
    core::AuditRepository::Filter filter;
    filter.action = u"forge.status"_s;
    const qsizetype before = m_engine->auditLines(filter)->size();
    const core::DeployRecord refused = deployed();
    QCOMPARE(refused.status, core::DeployStatus::Failed);
    QCOMPARE(refused.failedStep, u"health"_s);
    QTRY_VERIFY_WITH_TIMEOUT(m_engine->auditLines(filter)->size() >= before + 2, 10000);
    const auto lines = m_engine->auditLines(filter);
    QVERIFY(lines);
    for (const core::AuditRecord &line : *lines) {
        QCOMPARE(line.outcome, u"failure"_s);
        const QByteArray detail = line.detail.toUtf8();
        QVERIFY2(!detail.contains(Token), detail.constData());
        QVERIFY2(detail.contains("refused the token"), detail.constData());
    }
}

void TestConnectionRepos::registersTheWebhookOnTheForge()
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    const QByteArray spec = "name: hooked\nsource:\n  repo: https://github.com/acme/api.git\n  ref: main\n"
                            "run:\n  port: 8080\n";
    QVERIFY(m_engine->createApp(spec, ada));
    // A ping signed with what the forge holds for the hook: Pando must accept its signature.
    const auto pingSignedWith = [this](const QByteArray &secret) {
        core::autodeploy::HookRequest ping;
        ping.body = R"({"zen":"Design for failure.","hook_id":7,"hook":{"type":"Repository"}})";
        ping.headers.insert("x-github-event", "ping");
        ping.headers.insert("x-github-delivery", QUuid::createUuid().toString(QUuid::WithoutBraces).toUtf8());
        ping.headers.insert(
            "x-hub-signature-256",
            "sha256=" + QMessageAuthenticationCode::hash(ping.body, secret, QCryptographicHash::Sha256).toHex());
        return m_engine->receiveHook(u"hooked"_s, ping, core::Actor{u"forge"_s, u"192.0.2.7"_s, {}});
    };
    const auto hookOnForge = [this] {
        const QJsonArray hooks = m_standIn->hooks(u"github"_s).value(u"acme/api"_s).toArray();
        return hooks.size() == 1 ? hooks.first().toObject() : QJsonObject{{u"count"_s, hooks.size()}};
    };

    auto registered = m_engine->registerAppHook(u"hooked"_s, u"https://pando.example.com/"_s, ada);
    QVERIFY2(registered, qPrintable(registered ? QString() : text(registered.error())));
    QCOMPARE(registered->url, u"https://pando.example.com/api/v1/hooks/hooked"_s);
    QJsonObject hook = hookOnForge();
    QCOMPARE(hook[u"config"_s][u"url"_s].toString(), registered->url);
    QCOMPARE(hook[u"id"_s].toVariant().toString(), registered->id);
    const QByteArray first = hook[u"config"_s][u"secret"_s].toString().toUtf8();
    QCOMPARE(first.size(), 40);
    auto pong = pingSignedWith(first);
    QVERIFY2(pong, qPrintable(pong ? QString() : text(pong.error())));
    QVERIFY2(pong->detail.contains(u"signature matches"_s), qPrintable(pong->detail));

    // Again: the same hook, with a new secret; the old one no longer signs.
    auto again = m_engine->registerAppHook(u"hooked"_s, u"https://pando.example.com"_s, ada);
    QVERIFY2(again, qPrintable(again ? QString() : text(again.error())));
    QCOMPARE(again->id, registered->id);
    hook = hookOnForge();
    const QByteArray second = hook[u"config"_s][u"secret"_s].toString().toUtf8();
    QVERIFY(!second.isEmpty() && second != first);
    QVERIFY(pingSignedWith(second));
    auto stale = pingSignedWith(first);
    QVERIFY(!stale);
    QCOMPARE(stale.error().code, ErrorCode::Unauthorized);

    // What a forge cannot reach, and an app without a connection, are refused naming the field.
    for (const QString &unreachable :
         {u"http://127.0.0.1:8080"_s, u"http://localhost"_s, u"ftp://pando.example.com"_s}) {
        auto refused = m_engine->registerAppHook(u"hooked"_s, unreachable, ada);
        QVERIFY2(!refused && refused.error().where == u"url"_s, qPrintable(unreachable));
    }
    QVERIFY(
        m_engine->createApp("name: loose\nsource:\n  repo: https://git.example/loose.git\nrun:\n  port: 8080\n", ada));
    auto loose = m_engine->registerAppHook(u"loose"_s, u"https://pando.example.com"_s, ada);
    QVERIFY(!loose);
    QCOMPARE(loose.error().where, u"source.connection"_s);

    // A token the forge refuses: an error that is not the caller's own sign-in, without the token,
    // and the app's secret stays what the forge has.
    m_standIn->failFor(u"github"_s, u"*"_s, 403);
    auto denied = m_engine->registerAppHook(u"hooked"_s, u"https://pando.example.com"_s, ada);
    QVERIFY(!denied);
    QCOMPARE(denied.error().code, ErrorCode::Failed);
    QVERIFY2(!text(denied.error()).contains(QString::fromUtf8(Token)), qPrintable(text(denied.error())));
    QVERIFY(pingSignedWith(second));
    core::AuditRepository::Filter filter;
    filter.action = u"app.hook.register"_s;
    auto lines = m_engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 3);
    QCOMPARE(lines->first().outcome, u"failure"_s);
}

QTEST_GUILESS_MAIN(TestConnectionRepos)
#include "tst_connectionrepos.moc"
