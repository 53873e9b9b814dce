// Authorization over the real API: every route of the table for every role and a narrowly
// scoped token, against objects someone else owns; the bootstrap, login, token revocation (its
// WebSocket closes too), deploy grants and the app limit; and the audit line every refusal leaves.

#include "fakes.h"
#include "routematrix.h"
#include "tests/app/server/apicall.h"

#include "core/authz/authz.h"
#include "core/engine/enginewiring.h"
#include "tests/support/vocabtesting.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>

using namespace pando;
using namespace pando::test::routematrix;

namespace {

using Answer = test::ApiAnswer;

const QByteArray PipelineYaml = "resources:\n- name: repo\n  type: git\njobs:\n- name: unit\n  plan:\n  - get: repo\n";

} // namespace

class TestAuthz : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();

    void bootstrapWorksOnce();
    void loginFailuresLookAlike();
    void sessionLoginAndLogout();
    void revokedTokenIsRefusedAndItsSocketCloses();
    void expiredTokenClosesItsSocket();
    void narrowAdminTokenListsOnlyItsOwnTokens();
    void disabledUserLosesSocketsAndTokens();
    void memberDeploysOnlyWithAGrant();
    void memberOwnsWhatItCreates();
    void appLimit();
    void bodyNeverNamesTheObject();
    void appGrantsOverTheApi();
    void logStreamEndsWithItsGrant();
    void pipelineGrantsOverTheApi();
    void eventStreamShowsOnlyGrantedObjects();
    void everyRouteHasAnExpectation();
    void routeWalk_data();
    void routeWalk();

private:
    Answer call(const QByteArray &method, const QString &path, const QString &token, const QByteArray &body = {},
                const QByteArray &contentType = "application/json");
    Answer call(test::TestInstall &install, const QByteArray &method, const QString &path, const QString &token,
                const QByteArray &body = {}, const QByteArray &contentType = "application/json");
    QString userId(const QString &username);
    void grant(core::authz::ObjectKind kind, const QString &object, const QString &username, const QString &role);

    test::TestInstall m_install;
    QNetworkAccessManager m_network;
    QString m_scoped;   // admin's token with only approvals:write
    QString m_deploy;   // a deploy of member2's app "theirs"
    QString m_run;      // a run of member2's pipeline "theirs"
    QString m_tokenId;  // one of member2's tokens
    QString m_approval; // a pending approval member2 asked for, on the deploy of "theirs"
};

void TestAuthz::initTestCase()
{
    m_install.withPipelines = true;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    core::accounts::AccountService &accounts = *m_install.engine->accounts();
    const core::Actor actor = core::Actor::system(QStringLiteral("test"));
    auto scoped = accounts.createToken(QStringLiteral("admin"), QStringLiteral("narrow"),
                                       {QStringLiteral("approvals:write")}, 0, actor);
    QVERIFY(scoped);
    m_scoped = scoped->secret;
    auto spare = accounts.createToken(QStringLiteral("member2"), QStringLiteral("spare"), {QStringLiteral("apps:read")},
                                      0, actor);
    QVERIFY(spare);
    m_tokenId = spare->token.id;

    // member2 creates an app and a pipeline: it owns both. The fake runtime's containers answer
    // on 127.0.0.1:<run.port>: this API, so that the app's deploys pass their health probe at once.
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    const QByteArray theirs = QStringLiteral("name: theirs\n"
                                             "source:\n  repo: https://git.example/theirs.git\n"
                                             "run:\n  port: %1\n"
                                             "health:\n  path: /api/v1/health\n"
                                             "services:\n  db: { kind: postgres, version: \"15\" }\n")
                                  .arg(m_install.port)
                                  .toUtf8();
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member2, theirs, "application/yaml").status, 201);
    grant(core::authz::ObjectKind::Pipeline, QStringLiteral("theirs"), QStringLiteral("member2"),
          QStringLiteral("owner"));
    // Running from the start (new pipelines are paused otherwise), so that the walk's triggers run.
    const QByteArray pipelineBody =
        QJsonDocument(
            QJsonObject{{QStringLiteral("config"), QString::fromUtf8(PipelineYaml)}, {QStringLiteral("paused"), false}})
            .toJson();
    Answer a = call("PUT", QStringLiteral("/api/v1/pipelines/theirs"), member2, pipelineBody);
    QVERIFY2(a.status == 201, qPrintable(QString::fromUtf8(QJsonDocument(a.json).toJson())));
    a = call("POST", QStringLiteral("/api/v1/apps/theirs/deploys"), member2);
    QCOMPARE(a.status, 202);
    m_deploy = a.json.value(QStringLiteral("id")).toString();
    m_install.pipelines->setAutoPlay(false);
    m_install.pipelines->setWebhookToken(QStringLiteral("theirs"), QStringLiteral("repo"), QStringLiteral("hook"));
    a = call("POST", QStringLiteral("/api/v1/pipelines/theirs/jobs/unit/runs"), member2);
    QVERIFY2(a.status == 201, qPrintable(QString::fromUtf8(QJsonDocument(a.json).toJson())));
    m_run = a.json.value(QStringLiteral("id")).toString();
    if (m_run.isEmpty())
        m_run = a.json.value(QStringLiteral("run")).toObject().value(QStringLiteral("id")).toString();
    QVERIFY(!m_deploy.isEmpty());
    QVERIFY(!m_run.isEmpty());

    // The walk expects member2's deploy to have ended: cancelling it is then a conflict.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_install.engine->deployView(m_deploy);
            return view && view->record.status == core::DeployStatus::Succeeded;
        }(),
        10000);
    // An approval member2 asked for on their app's deploy: the walk decides it.
    auto approval = m_install.engine->approvals().request(
        QString(core::approval::KindDeploy), QStringLiteral("deploy/") + m_deploy,
        core::Actor{QStringLiteral("user:member2"), {}, {}}, QStringLiteral("walk"), {}, 0);
    QVERIFY2(approval, qPrintable(approval ? QString() : approval.error().text()));
    m_approval = approval->id;
    // Routes that delete their object get one per walker, all member2's.
    for (const QString &walker : Walkers) {
        const QString name = QStringLiteral("gone-") + walker;
        QCOMPARE(
            call("POST", QStringLiteral("/api/v1/apps"), member2, test::helloSpec(name), "application/yaml").status,
            201);
        grant(core::authz::ObjectKind::Pipeline, name, QStringLiteral("member2"), QStringLiteral("owner"));
        QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/") + name, member2, pipelineBody).status, 201);
        // And one for the archive route.
        const QString shelved = QStringLiteral("shelved-") + walker;
        grant(core::authz::ObjectKind::Pipeline, shelved, QStringLiteral("member2"), QStringLiteral("owner"));
        QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/") + shelved, member2, pipelineBody).status, 201);
    }
    // A grant for the grant routes to take away: viewer's, which changes nothing else viewer may do.
    grant(core::authz::ObjectKind::App, QStringLiteral("theirs"), QStringLiteral("viewer"), QStringLiteral("viewer"));
    grant(core::authz::ObjectKind::Pipeline, QStringLiteral("theirs"), QStringLiteral("viewer"),
          QStringLiteral("viewer"));
}

Answer TestAuthz::call(const QByteArray &method, const QString &path, const QString &token, const QByteArray &body,
                       const QByteArray &contentType)
{
    return call(m_install, method, path, token, body, contentType);
}

Answer TestAuthz::call(test::TestInstall &install, const QByteArray &method, const QString &path, const QString &token,
                       const QByteArray &body, const QByteArray &contentType)
{
    return test::callApi(m_network, install.baseUrl(), method, path, body, body.isEmpty() ? QByteArray() : contentType,
                         token.isEmpty() ? QByteArray() : "Bearer " + token.toUtf8(), {.followRedirects = false});
}

QString TestAuthz::userId(const QString &username)
{
    auto user = m_install.engine->accounts()->user(username);
    return user ? user->id : QString();
}

void TestAuthz::grant(core::authz::ObjectKind kind, const QString &object, const QString &username, const QString &role)
{
    auto added = core::authz::GrantRepository(core::wiringParts(*m_install.engine).database)
                     .add(core::authz::Grant{kind, object, userId(username), role, 0});
    QVERIFY2(added, qPrintable(added ? QString() : added.error().text()));
}

void TestAuthz::bootstrapWorksOnce()
{
    test::TestInstall fresh;
    fresh.bootstrapAccounts = false;
    QVERIFY2(fresh.start(), qPrintable(fresh.error));
    const QString file = fresh.dir.path() + QStringLiteral("/initial-admin-token");
    QVERIFY(QFile::exists(file));
    // Before the bootstrap the initial token is an administrator.
    QCOMPARE(call(fresh, "GET", QStringLiteral("/api/v1/apps"), fresh.initialToken).status, 200);

    auto body = [](const QString &token) {
        return QJsonDocument(QJsonObject{{QStringLiteral("token"), token},
                                         {QStringLiteral("username"), QStringLiteral("root")},
                                         {QStringLiteral("password"), QStringLiteral("long enough pass")}})
            .toJson();
    };
    QCOMPARE(call(fresh, "POST", QStringLiteral("/api/v1/bootstrap"), {}, body(QStringLiteral("pando_wrong"))).status,
             401);
    Answer a = call(fresh, "POST", QStringLiteral("/api/v1/bootstrap"), {}, body(fresh.initialToken));
    QCOMPARE(a.status, 201);
    QCOMPARE(a.json.value(QStringLiteral("role")).toString(), QStringLiteral("admin"));
    QVERIFY2(!QFile::exists(file), "the spent initial token's file is deleted");
    QCOMPARE(call(fresh, "POST", QStringLiteral("/api/v1/bootstrap"), {}, body(fresh.initialToken)).status, 409);
    QCOMPARE(call(fresh, "GET", QStringLiteral("/api/v1/apps"), fresh.initialToken).status, 401);
    auto again = fresh.engine->bootstrapAdminToken();
    QVERIFY(again);
    QVERIFY2(!again->has_value(), "no new initial token once accounts exist");
}

void TestAuthz::loginFailuresLookAlike()
{
    auto login = [this](const QString &user, const QString &password) {
        return call(
            "POST", QStringLiteral("/api/v1/sessions"), {},
            QJsonDocument(QJsonObject{{QStringLiteral("username"), user}, {QStringLiteral("password"), password}})
                .toJson());
    };
    const Answer wrong = login(QStringLiteral("viewer"), QStringLiteral("not the password"));
    const Answer unknown = login(QStringLiteral("nobody"), QStringLiteral("not the password"));
    QCOMPARE(wrong.status, 401);
    QCOMPARE(unknown.status, 401);
    QCOMPARE(wrong.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")),
             unknown.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("message")));
}

void TestAuthz::sessionLoginAndLogout()
{
    Answer a =
        call("POST", QStringLiteral("/api/v1/sessions"), {},
             QJsonDocument(QJsonObject{{QStringLiteral("username"), QStringLiteral("operator")},
                                       {QStringLiteral("password"), QString::fromLatin1(test::TestInstall::Password)}})
                 .toJson());
    QCOMPARE(a.status, 201);
    const QString session = a.json.value(QStringLiteral("token")).toString();
    QVERIFY(!session.isEmpty());
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps"), session).status, 200);
    // An operator's session cannot manage users.
    QCOMPARE(call("GET", QStringLiteral("/api/v1/users"), session).status, 403);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/sessions/current"), session).status, 204);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps"), session).status, 401);
}

void TestAuthz::revokedTokenIsRefusedAndItsSocketCloses()
{
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    Answer a = call("POST", QStringLiteral("/api/v1/tokens"), member,
                    R"({"name":"watch","scopes":["apps:read"],"expiresIn":"30d"})");
    QCOMPARE(a.status, 201);
    const QString secret = a.json.value(QStringLiteral("secret")).toString();
    const QString id = a.json.value(QStringLiteral("id")).toString();
    QVERIFY(a.json.value(QStringLiteral("expiresMs")).toInteger() > 0);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps"), secret).status, 200);
    // Its own list shows it, without the secret.
    a = call("GET", QStringLiteral("/api/v1/tokens"), member);
    QCOMPARE(a.status, 200);
    QVERIFY(!QJsonDocument(a.json).toJson().contains(secret.toUtf8()));

    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/events").arg(m_install.port)));
    request.setRawHeader("Authorization", "Bearer " + secret.toUtf8());
    socket.open(request);
    QVERIFY(connected.wait(5000));

    // Another member may not revoke it; its owner may.
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/tokens/") + id, m_install.tokens.value(QStringLiteral("member2")))
                 .status,
             403);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/tokens/") + id, member).status, 204);
    // The close may already have arrived while the DELETE was answered.
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, 5000);
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps"), secret).status, 401);
}

void TestAuthz::expiredTokenClosesItsSocket()
{
    // A token good for 1.5 s more: the stream it opened must not outlive it.
    auto issued = m_install.engine->accounts()->createToken(
        QStringLiteral("member"), QStringLiteral("brief"), {QStringLiteral("apps:read")},
        QDateTime::currentMSecsSinceEpoch() + 1500, core::Actor::system(QStringLiteral("test")));
    QVERIFY(issued);
    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/events").arg(m_install.port)));
    request.setRawHeader("Authorization", "Bearer " + issued->secret.toUtf8());
    socket.open(request);
    QVERIFY(connected.wait(5000));
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, 5000);
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    QCOMPARE(socket.closeReason(), QStringLiteral("the token expired"));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps"), issued->secret).status, 401);
}

void TestAuthz::narrowAdminTokenListsOnlyItsOwnTokens()
{
    // The administrator's token narrowed to apps:read is not the administrator.
    const QString admin = m_install.tokens.value(QStringLiteral("admin"));
    Answer a = call("POST", QStringLiteral("/api/v1/tokens"), admin, R"({"name":"narrow","scopes":["apps:read"]})");
    QCOMPARE(a.status, 201);
    const QString narrow = a.json.value(QStringLiteral("secret")).toString();
    a = call("GET", QStringLiteral("/api/v1/tokens"), narrow);
    QCOMPARE(a.status, 200);
    const QJsonArray listed = a.json.value(QStringLiteral("tokens")).toArray();
    QVERIFY(!listed.isEmpty());
    const QString adminId = m_install.engine->accounts()->user(QStringLiteral("admin"))->id;
    for (const QJsonValue &token : listed)
        QCOMPARE(token.toObject().value(QStringLiteral("userId")).toString(), adminId);
    QVERIFY(call("GET", QStringLiteral("/api/v1/tokens"), admin).json.value(QStringLiteral("tokens")).toArray().size() >
            listed.size());
    // Nor may it mint a broader token.
    QCOMPARE(call("POST", QStringLiteral("/api/v1/tokens"), narrow, R"({"name":"wide","scopes":["admin"]})").status,
             403);
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/tokens"), narrow, R"({"name":"wide","scopes":["apps:write"]})").status,
        403);
}

void TestAuthz::eventStreamShowsOnlyGrantedObjects()
{
    // member holds no grant on member2's "theirs"; viewer holds viewer grants on both.
    struct Watcher {
        QWebSocket socket;
        QStringList seen;
    } member, viewer;
    for (auto [watcher, who] :
         {std::pair{&member, QStringLiteral("member")}, std::pair{&viewer, QStringLiteral("viewer")}}) {
        connect(&watcher->socket, &QWebSocket::textMessageReceived, this,
                [watcher](const QString &text) { watcher->seen << text; });
        QSignalSpy connected(&watcher->socket, &QWebSocket::connected);
        QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/events").arg(m_install.port)));
        request.setRawHeader("Authorization", "Bearer " + m_install.tokens.value(who).toUtf8());
        watcher->socket.open(request);
        QVERIFY(connected.wait(5000));
    }
    core::EventBus &bus = *m_install.engine->events();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    bus.publish(core::Event{core::EventType::AppUpdated, QStringLiteral("theirs"), {}, {}, now});
    const QJsonObject run{{QStringLiteral("pipeline"), QStringLiteral("theirs")},
                          {QStringLiteral("run"), QStringLiteral("r-watched")}};
    bus.publish(core::Event{core::EventType::RunQueued, {}, {}, run, now});
    // An approval's event is about its deploy's app.
    bus.publish(core::Event{core::EventType::ApprovalRequested,
                            {},
                            {},
                            QJsonObject{{QStringLiteral("object"), QString(QStringLiteral("deploy/") + m_deploy)},
                                        {QStringLiteral("summary"), QStringLiteral("approval-watched")}},
                            now});
    // An app member owns, published last: once member has it, it had its chance at the others.
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), m_install.tokens.value(QStringLiteral("member")),
                  test::helloSpec(QStringLiteral("mine-watched")), "application/yaml")
                 .status,
             201);
    QTRY_VERIFY_WITH_TIMEOUT(member.seen.join(u'\n').contains(QLatin1String("mine-watched")), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(viewer.seen.size() >= 3, 5000);
    const QString memberSaw = member.seen.join(u'\n'), viewerSaw = viewer.seen.join(u'\n');
    for (const char *about : {"theirs", "r-watched", "approval-watched"})
        QVERIFY2(!memberSaw.contains(QLatin1String(about)), qPrintable(memberSaw));
    for (const char *about : {"r-watched", "approval-watched"})
        QVERIFY2(viewerSaw.contains(QLatin1String(about)), qPrintable(viewerSaw));
    QVERIFY2(!viewerSaw.contains(QLatin1String("mine-watched")), qPrintable(viewerSaw));
}

void TestAuthz::disabledUserLosesSocketsAndTokens()
{
    // A user of its own, so that the walk's users stay as they are.
    const QString admin = m_install.token;
    QCOMPARE(call("POST", QStringLiteral("/api/v1/users"), admin,
                  R"({"username":"leaver","password":"a long password","role":"viewer"})")
                 .status,
             201);
    Answer a =
        call("POST", QStringLiteral("/api/v1/sessions"), {}, R"({"username":"leaver","password":"a long password"})");
    QCOMPARE(a.status, 201);
    const QString session = a.json.value(QStringLiteral("token")).toString();

    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/events").arg(m_install.port)));
    request.setRawHeader("Authorization", "Bearer " + session.toUtf8());
    socket.open(request);
    QVERIFY(connected.wait(5000));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/users/leaver/disable"), admin).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, 5000);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/apps"), session).status, 401);
}

void TestAuthz::memberDeploysOnlyWithAGrant()
{
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member2, test::helloSpec(QStringLiteral("granted")),
                  "application/yaml")
                 .status,
             201);
    const Answer refused = call("POST", QStringLiteral("/api/v1/apps/granted/deploys"), member);
    QCOMPARE(refused.status, 403);
    QCOMPARE(refused.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
             QStringLiteral("forbidden"));

    // The refusal is in the audit log: who, what, on what, which request, from where.
    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("deploys.write");
    filter.object = QStringLiteral("app/granted");
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QVERIFY(!lines->isEmpty());
    const core::AuditRecord &line = lines->first();
    QCOMPARE(line.outcome, QStringLiteral("denied"));
    QVERIFY2(line.actor.startsWith(QLatin1String("user:member/token:")), qPrintable(line.actor));
    QCOMPARE(line.requestId.toUtf8(), refused.requestId);
    QCOMPARE(line.source, QStringLiteral("127.0.0.1"));

    grant(core::authz::ObjectKind::App, QStringLiteral("granted"), QStringLiteral("member"),
          QStringLiteral("deployer"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/granted/deploys"), member).status, 202);
    // A deployer may not remove the app: that is the owner's.
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/granted"), member).status, 403);
    // A viewer stays a viewer whatever it is granted.
    grant(core::authz::ObjectKind::App, QStringLiteral("granted"), QStringLiteral("viewer"),
          QStringLiteral("deployer"));
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/apps/granted/deploys"), m_install.tokens.value(QStringLiteral("viewer")))
            .status,
        403);
}

void TestAuthz::memberOwnsWhatItCreates()
{
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member, test::helloSpec(QStringLiteral("mine")),
                  "application/yaml")
                 .status,
             201);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/mine/deploys"), member).status, 202);
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/apps/mine/deploys"), m_install.tokens.value(QStringLiteral("member2")))
            .status,
        403);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/mine"), member).status, 202);
}

void TestAuthz::appLimit()
{
    const QString member = m_install.tokens.value(QStringLiteral("member2"));
    auto owned = core::authz::GrantRepository(core::wiringParts(*m_install.engine).database)
                     .countOwned(core::authz::ObjectKind::App, userId(QStringLiteral("member2")));
    QVERIFY(owned);
    m_install.server->setAuthzOptions(core::authz::AuthzOptions{*owned + 1});
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member, test::helloSpec(QStringLiteral("limit1")),
                  "application/yaml")
                 .status,
             201);
    const Answer refused = call("POST", QStringLiteral("/api/v1/apps"), member,
                                test::helloSpec(QStringLiteral("limit2")), "application/yaml");
    QCOMPARE(refused.status, 403);
    QVERIFY(refused.json.value(QStringLiteral("error"))
                .toObject()
                .value(QStringLiteral("message"))
                .toString()
                .contains(QLatin1String("app limit")));
    // Operators are not limited.
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), m_install.tokens.value(QStringLiteral("operator")),
                  test::helloSpec(QStringLiteral("limit3")), "application/yaml")
                 .status,
             201);
    m_install.server->setAuthzOptions({});
}

void TestAuthz::bodyNeverNamesTheObject()
{
    // The URL names the app; a body field naming another is refused, never obeyed.
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/theirs/deploys"), member, R"({"app":"mine"})").status, 403);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/tokens"), member, R"({"name":"x","user":"admin"})").status, 400);
    // A narrow token cannot make a broader one.
    Answer a = call("POST", QStringLiteral("/api/v1/tokens"), member, R"({"name":"narrow","scopes":["apps:read"]})");
    QCOMPARE(a.status, 201);
    const QString narrow = a.json.value(QStringLiteral("secret")).toString();
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/tokens"), narrow, R"({"name":"wide","scopes":["apps:write"]})").status,
        403);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/tokens"), narrow, R"({"name":"same","scopes":["apps:read"]})").status,
             201);
}

void TestAuthz::appGrantsOverTheApi()
{
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member, test::helloSpec(QStringLiteral("shared")),
                  "application/yaml")
                 .status,
             201);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/shared/deploys"), member2).status, 403);

    // The owner gives member2 a deployer grant; it is audited, and member2 may now deploy.
    Answer a =
        call("POST", QStringLiteral("/api/v1/apps/shared/grants"), member, R"({"user":"member2","role":"deployer"})");
    QVERIFY2(a.status == 201, QJsonDocument(a.json).toJson(QJsonDocument::Compact).constData());
    QCOMPARE(a.json.value(QStringLiteral("object")).toString(), QStringLiteral("app/shared"));
    QCOMPARE(a.json.value(QStringLiteral("user")).toString(), QStringLiteral("member2"));
    QCOMPARE(a.json.value(QStringLiteral("role")).toString(), QStringLiteral("deployer"));
    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("grant.add");
    filter.object = QStringLiteral("app/shared");
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);
    QCOMPARE(lines->first().outcome, QStringLiteral("success"));
    QVERIFY2(lines->first().actor.startsWith(QLatin1String("user:member/")), qPrintable(lines->first().actor));
    QCOMPARE(lines->first().requestId.toUtf8(), a.requestId);
    const QJsonObject detail = QJsonDocument::fromJson(lines->first().detail.toUtf8()).object();
    QCOMPARE(detail.value(QStringLiteral("user")).toString(), QStringLiteral("member2"));
    QCOMPARE(detail.value(QStringLiteral("role")).toString(), QStringLiteral("deployer"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/shared/deploys"), member2).status, 202);
    // A deployer may not hand out grants: that is the owner's.
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/shared/grants"), member2, R"({"user":"viewer","role":"viewer"})")
                 .status,
             403);

    // Again: nothing changes, nothing is audited.
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/apps/shared/grants"), member, R"({"user":"member2","role":"deployer"})")
            .status,
        200);
    lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);

    a = call("GET", QStringLiteral("/api/v1/apps/shared/grants"), member);
    QCOMPARE(a.status, 200);
    QStringList held;
    for (const QJsonValue &grant : a.json.value(QStringLiteral("grants")).toArray())
        held << grant.toObject().value(QStringLiteral("user")).toString() + QLatin1Char(':') +
                    grant.toObject().value(QStringLiteral("role")).toString();
    QCOMPARE(held, (QStringList{QStringLiteral("member:owner"), QStringLiteral("member2:deployer")}));

    // Unknown users and roles are named; the body never names the object.
    a = call("POST", QStringLiteral("/api/v1/apps/shared/grants"), member, R"({"user":"ghost","role":"viewer"})");
    QCOMPARE(a.status, 404);
    QVERIFY(a.json.value(QStringLiteral("error"))
                .toObject()
                .value(QStringLiteral("message"))
                .toString()
                .contains(QLatin1String("\"ghost\"")));
    a = call("POST", QStringLiteral("/api/v1/apps/shared/grants"), member, R"({"user":"member2","role":"boss"})");
    QCOMPARE(a.status, 400);
    QCOMPARE(a.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("where")).toString(),
             QStringLiteral("role"));
    QVERIFY(a.json.value(QStringLiteral("error"))
                .toObject()
                .value(QStringLiteral("hint"))
                .toString()
                .contains(QLatin1String("owner, deployer, viewer")));
    a = call("POST", QStringLiteral("/api/v1/apps/shared/grants"), member,
             R"({"user":"member2","role":"owner","app":"theirs"})");
    QCOMPARE(a.status, 400);
    QCOMPARE(a.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("where")).toString(),
             QStringLiteral("app"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/theirs/grants"), member, R"({"user":"member","role":"owner"})")
                 .status,
             403);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/nosuchapp/grants"), m_install.token,
                  R"({"user":"member","role":"owner"})")
                 .status,
             404);

    // Taking it away: audited, and member2 can no longer deploy.
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/shared/grants/member2/boss"), member).status, 400);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/shared/grants/ghost/viewer"), member).status, 404);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/shared/grants/member2/deployer"), member).status, 204);
    filter.action = QStringLiteral("grant.remove");
    lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps/shared/deploys"), member2).status, 403);
    a = call("DELETE", QStringLiteral("/api/v1/apps/shared/grants/member2/deployer"), member);
    QCOMPARE(a.status, 404);
    QVERIFY(a.json.value(QStringLiteral("error"))
                .toObject()
                .value(QStringLiteral("message"))
                .toString()
                .contains(QLatin1String("member2 holds no deployer grant on app/shared")));
}

void TestAuthz::logStreamEndsWithItsGrant()
{
    // A viewer grant lets member2 follow the logs of member's app; taking the grant away ends
    // the stream it opened, not only the streams it would open next.
    server::ConnectionLimits limits;
    limits.streamReauthorizeMs = 200;
    m_install.server->setConnectionLimits(limits);
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member, test::helloSpec(QStringLiteral("watched")),
                  "application/yaml")
                 .status,
             201);
    QCOMPARE(
        call("POST", QStringLiteral("/api/v1/apps/watched/grants"), member, R"({"user":"member2","role":"viewer"})")
            .status,
        201);

    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QNetworkRequest request(
        QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/apps/watched/logs/follow").arg(m_install.port)));
    request.setRawHeader("Authorization", "Bearer " + member2.toUtf8());
    socket.open(request);
    QVERIFY(connected.wait(5000));
    // Still open after several checks while the grant holds.
    QTest::qWait(700);
    QCOMPARE(disconnected.size(), 0);

    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/watched/grants/member2/viewer"), member).status, 204);
    QTRY_COMPARE_WITH_TIMEOUT(disconnected.size(), 1, 3000);
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
    QVERIFY2(socket.closeReason().startsWith(QLatin1String("forbidden")), qPrintable(socket.closeReason()));
    m_install.server->setConnectionLimits({});
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/apps/watched"), member).status, 202);
}

void TestAuthz::pipelineGrantsOverTheApi()
{
    const QString member = m_install.tokens.value(QStringLiteral("member"));
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    const QString trigger = QStringLiteral("/api/v1/pipelines/theirs/jobs/unit/runs");
    QCOMPARE(call("POST", trigger, member).status, 403);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/theirs/grants"), member2,
                  R"({"user":"member","role":"deployer"})")
                 .status,
             400);
    Answer a = call("POST", QStringLiteral("/api/v1/pipelines/theirs/grants"), member2,
                    R"({"user":"member","role":"operator"})");
    QVERIFY2(a.status == 201, QJsonDocument(a.json).toJson(QJsonDocument::Compact).constData());
    QCOMPARE(a.json.value(QStringLiteral("object")).toString(), QStringLiteral("pipeline/theirs"));
    QCOMPARE(call("POST", trigger, member).status, 201);
    // An operator grant runs the pipeline; it does not manage it.
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/theirs/grants"), member).status, 403);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/theirs/grants"), member2).status, 200);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/pipelines/theirs/grants/member/operator"), member2).status, 204);
    QCOMPARE(call("POST", trigger, member).status, 403);
    core::AuditRepository::Filter filter;
    filter.object = QStringLiteral("pipeline/theirs");
    filter.action = QStringLiteral("grant.add");
    auto added = m_install.engine->auditLines(filter);
    filter.action = QStringLiteral("grant.remove");
    auto removed = m_install.engine->auditLines(filter);
    QVERIFY(added && removed);
    QCOMPARE(added->size(), 1);
    QCOMPARE(removed->size(), 1);
}

void TestAuthz::everyRouteHasAnExpectation()
{
    QStringList missing;
    QSet<QString> served;
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        const QString key = route.method + QLatin1Char(' ') + route.path;
        served.insert(key);
        if (!expectations().contains(key))
            missing << QStringLiteral("served without an expectation: %1").arg(key);
        else if (expectedStatuses(key).isEmpty())
            missing << QStringLiteral("%1: expected five statuses (admin operator member viewer scoped), like "
                                      "\"200 200 403 403 403\", got \"%2\"")
                           .arg(key, expectations().value(key));
    }
    for (auto it = expectations().cbegin(); it != expectations().cend(); ++it) {
        if (!served.contains(it.key()))
            missing << QStringLiteral("expected but not served: %1").arg(it.key());
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QLatin1Char('\n'))));
}

void TestAuthz::routeWalk_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("walker");
    QTest::addColumn<int>("expected");
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        const QString key = route.method + QLatin1Char(' ') + route.path;
        const QList<int> expected = expectedStatuses(key);
        if (expected.isEmpty())
            continue; // everyRouteHasAnExpectation names it
        QString path = route.path;
        path.replace(QStringLiteral("{job}"), QStringLiteral("unit"));
        path.replace(QStringLiteral("{resource}"), QStringLiteral("repo"));
        path.replace(QStringLiteral("{secret}"), QStringLiteral("API_KEY"));
        path.replace(QStringLiteral("{slot}"), QStringLiteral("db"));
        path.replace(QStringLiteral("{number}"), QStringLiteral("7"));
        path.replace(QStringLiteral("{volume}"), QStringLiteral("data"));
        // The grant initTestCase gave viewer.
        path.replace(QStringLiteral("{user}"), QStringLiteral("viewer"));
        path.replace(QStringLiteral("{role}"), QStringLiteral("viewer"));
        if (route.object == QLatin1String("deploy"))
            path.replace(QStringLiteral("{id}"), m_deploy);
        else if (route.object == QLatin1String("run"))
            path.replace(QStringLiteral("{id}"), m_run);
        else if (route.object == QLatin1String("token"))
            path.replace(QStringLiteral("{id}"), m_tokenId);
        else if (route.object == QLatin1String("approval"))
            path.replace(QStringLiteral("{id}"), m_approval);
        if (path.endsWith(QLatin1String("/edge/auth")) || path.endsWith(QLatin1String("/edge/sign-in")) ||
            path.endsWith(QLatin1String("/edge/sign-out")))
            path += QStringLiteral("?app={name}"); // the app the edge asks about
        if (path.endsWith(QLatin1String("/check")))
            path += QStringLiteral("?webhook_token=hook"); // the webhook's own token, set in initTestCase
        for (const QString &walker : Walkers) {
            QString walked = path;
            const QString prefix = consumedPrefix(key);
            walked.replace(QStringLiteral("{name}"), prefix.isEmpty() ? QStringLiteral("theirs") : prefix + walker);
            QTest::newRow(qPrintable(key + QStringLiteral(" as ") + walker))
                << route.method.toUtf8() << walked << walker << expected.at(Columns.indexOf(walker));
        }
    }
}

void TestAuthz::routeWalk()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QString, walker);
    QFETCH(int, expected);
    const QString token = walker == QLatin1String("scoped") ? m_scoped : m_install.tokens.value(walker);
    QVERIFY(!token.isEmpty());
    const Answer a = call(method, path, token);
    const QString what = QStringLiteral("%1 %2 as %3 answered %4: %5")
                             .arg(QString::fromUtf8(method), path, walker)
                             .arg(a.status)
                             .arg(QString::fromUtf8(QJsonDocument(a.json).toJson(QJsonDocument::Compact)));
    QVERIFY2(a.status == expected, qPrintable(what + QStringLiteral(", expected %1").arg(expected)));
    // A refusal is the authorizer's, never a handler's own 403.
    if (expected == 403)
        QCOMPARE(a.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString(),
                 QStringLiteral("forbidden"));
}

QTEST_GUILESS_MAIN(TestAuthz)
#include "tst_authz.moc"
