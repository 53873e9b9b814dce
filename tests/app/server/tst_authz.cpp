// Authorization over the real API: every route of the table for every role and a narrowly
// scoped token, against objects someone else owns; the bootstrap, login, token revocation (its
// WebSocket closes too), deploy grants and the app limit; and the audit line every refusal leaves.

#include "fakes.h"

#include "core/authz/authz.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>

using namespace pando;

namespace {

struct Answer {
    int status = 0;
    QJsonObject json;
    QByteArray requestId;
};

// The roles each cell is walked with, in this order, so that what the strongest do to the
// objects (remove them, say) comes last.
const QStringList Walkers = {QStringLiteral("scoped"), QStringLiteral("viewer"), QStringLiteral("member"),
                             QStringLiteral("operator"), QStringLiteral("admin")};

// Expected outcome per route for admin, operator, member, viewer and an administrator's token
// whose only scope is approvals:write: A allowed (the handler answers, anything but 401/403),
// D denied (403). The objects belong to member2. A route missing here fails the walk.
const QHash<QString, QString> &expectations()
{
    static const QHash<QString, QString> table{
        // route                                                           admin operator member viewer scoped
        {QStringLiteral("GET /api/v1/health"), QStringLiteral("AAAAA")},
        {QStringLiteral("POST /api/v1/bootstrap"), QStringLiteral("AAAAA")},
        {QStringLiteral("POST /api/v1/sessions"), QStringLiteral("AAAAA")},
        {QStringLiteral("DELETE /api/v1/sessions/current"), QStringLiteral("AAAAA")},
        {QStringLiteral("GET /api/v1/users"), QStringLiteral("ADDDD")},
        {QStringLiteral("POST /api/v1/users"), QStringLiteral("ADDDD")},
        {QStringLiteral("POST /api/v1/users/{name}/disable"), QStringLiteral("ADDDD")},
        {QStringLiteral("GET /api/v1/tokens"), QStringLiteral("AAAAA")},
        {QStringLiteral("POST /api/v1/tokens"), QStringLiteral("AAAAA")},
        {QStringLiteral("DELETE /api/v1/tokens/{id}"), QStringLiteral("ADDDD")},
        {QStringLiteral("GET /api/v1/apps"), QStringLiteral("AAAAD")},
        {QStringLiteral("POST /api/v1/apps"), QStringLiteral("AAADD")},
        {QStringLiteral("GET /api/v1/apps/{name}"), QStringLiteral("AAAAD")},
        {QStringLiteral("DELETE /api/v1/apps/{name}"), QStringLiteral("AADDD")},
        {QStringLiteral("POST /api/v1/apps/{name}/deploys"), QStringLiteral("AADDD")},
        {QStringLiteral("GET /api/v1/apps/{name}/deploys"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/deploys/{id}"), QStringLiteral("AAAAD")},
        {QStringLiteral("POST /api/v1/deploys/{id}/cancel"), QStringLiteral("AADDD")},
        {QStringLiteral("GET /api/v1/apps/{name}/logs"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/apps/{name}/logs/follow"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/events"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/pipelines"), QStringLiteral("AAAAD")},
        {QStringLiteral("PUT /api/v1/pipelines/{name}"), QStringLiteral("AADDD")},
        {QStringLiteral("GET /api/v1/pipelines/{name}"), QStringLiteral("AAAAD")},
        {QStringLiteral("DELETE /api/v1/pipelines/{name}"), QStringLiteral("AADDD")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/pause"), QStringLiteral("AADDD")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/unpause"), QStringLiteral("AADDD")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/jobs/{job}/runs"), QStringLiteral("AADDD")},
        {QStringLiteral("GET /api/v1/pipelines/{name}/runs"), QStringLiteral("AAAAD")},
        {QStringLiteral("POST /api/v1/pipelines/{name}/resources/{resource}/check"), QStringLiteral("AAAAA")},
        {QStringLiteral("GET /api/v1/runs"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/runs/{id}"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/runs/{id}/events"), QStringLiteral("AAAAD")},
        {QStringLiteral("POST /api/v1/runs/{id}/abort"), QStringLiteral("AADDD")},
        {QStringLiteral("GET /api/v1/runs/{id}/follow"), QStringLiteral("AAAAD")},
        {QStringLiteral("GET /api/v1/secrets"), QStringLiteral("AAAAD")},
        {QStringLiteral("PUT /api/v1/secrets/{name}"), QStringLiteral("AADDD")},
        {QStringLiteral("DELETE /api/v1/secrets/{name}"), QStringLiteral("AADDD")},
        {QStringLiteral("GET /api/v1/audit"), QStringLiteral("ADDDD")},
        {QStringLiteral("GET /api/v1/audit/verify"), QStringLiteral("ADDDD")},
    };
    return table;
}

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
    void disabledUserLosesSocketsAndTokens();
    void memberDeploysOnlyWithAGrant();
    void memberOwnsWhatItCreates();
    void appLimit();
    void bodyNeverNamesTheObject();
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
    QString m_scoped;  // admin's token with only approvals:write
    QString m_deploy;  // a deploy of member2's app "theirs"
    QString m_run;     // a run of member2's pipeline "theirs"
    QString m_tokenId; // one of member2's tokens
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

    // member2 creates an app and a pipeline: it owns both.
    const QString member2 = m_install.tokens.value(QStringLiteral("member2"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/apps"), member2, test::helloSpec(QStringLiteral("theirs")),
                  "application/yaml")
                 .status,
             201);
    grant(core::authz::ObjectKind::Pipeline, QStringLiteral("theirs"), QStringLiteral("member2"),
          QStringLiteral("owner"));
    const QByteArray pipelineBody =
        QJsonDocument(QJsonObject{{QStringLiteral("config"), QString::fromUtf8(PipelineYaml)}}).toJson();
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
}

Answer TestAuthz::call(const QByteArray &method, const QString &path, const QString &token, const QByteArray &body,
                       const QByteArray &contentType)
{
    return call(m_install, method, path, token, body, contentType);
}

Answer TestAuthz::call(test::TestInstall &install, const QByteArray &method, const QString &path, const QString &token,
                       const QByteArray &body, const QByteArray &contentType)
{
    QNetworkRequest request(QUrl(install.baseUrl() + path));
    if (!token.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + token.toUtf8());
    if (!body.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    QNetworkReply *reply = m_network.sendCustomRequest(request, method, body);
    QSignalSpy finished(reply, &QNetworkReply::finished);
    if (!reply->isFinished())
        finished.wait(10000);
    Answer answer;
    answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    answer.json = QJsonDocument::fromJson(reply->readAll()).object();
    answer.requestId = reply->rawHeader("X-Request-Id");
    reply->deleteLater();
    return answer;
}

QString TestAuthz::userId(const QString &username)
{
    auto user = m_install.engine->accounts()->user(username);
    return user ? user->id : QString();
}

void TestAuthz::grant(core::authz::ObjectKind kind, const QString &object, const QString &username, const QString &role)
{
    auto added = core::authz::GrantRepository(m_install.engine->database())
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
    auto owned = core::authz::GrantRepository(m_install.engine->database())
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

void TestAuthz::everyRouteHasAnExpectation()
{
    QStringList missing;
    QSet<QString> served;
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        const QString key = route.method + QLatin1Char(' ') + route.path;
        served.insert(key);
        if (!expectations().contains(key))
            missing << key;
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
    QTest::addColumn<bool>("allowed");
    const QStringList columns = {QStringLiteral("admin"), QStringLiteral("operator"), QStringLiteral("member"),
                                 QStringLiteral("viewer"), QStringLiteral("scoped")};
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        const QString key = route.method + QLatin1Char(' ') + route.path;
        const QString expected = expectations().value(key);
        QString path = route.path;
        path.replace(QStringLiteral("{name}"), QStringLiteral("theirs"));
        path.replace(QStringLiteral("{job}"), QStringLiteral("unit"));
        path.replace(QStringLiteral("{resource}"), QStringLiteral("repo"));
        if (route.object == QLatin1String("deploy"))
            path.replace(QStringLiteral("{id}"), m_deploy);
        else if (route.object == QLatin1String("run"))
            path.replace(QStringLiteral("{id}"), m_run);
        else if (route.object == QLatin1String("token"))
            path.replace(QStringLiteral("{id}"), m_tokenId);
        if (path.endsWith(QLatin1String("/check")))
            path += QStringLiteral("?webhook_token=hook"); // the webhook's own token, set in initTestCase
        for (const QString &walker : Walkers) {
            const qsizetype column = columns.indexOf(walker);
            if (expected.size() != columns.size())
                continue; // everyRouteHasAnExpectation names it
            QTest::newRow(qPrintable(key + QStringLiteral(" as ") + walker))
                << route.method.toUtf8() << path << walker << (expected.at(column) == QLatin1Char('A'));
        }
    }
}

void TestAuthz::routeWalk()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QString, walker);
    QFETCH(bool, allowed);
    const QString token = walker == QLatin1String("scoped") ? m_scoped : m_install.tokens.value(walker);
    QVERIFY(!token.isEmpty());
    const Answer a = call(method, path, token);
    const QString what = QStringLiteral("%1 %2 as %3 answered %4: %5")
                             .arg(QString::fromUtf8(method), path, walker)
                             .arg(a.status)
                             .arg(QString::fromUtf8(QJsonDocument(a.json).toJson(QJsonDocument::Compact)));
    if (allowed)
        QVERIFY2(a.status != 403 && a.status != 401 && a.status != 0, qPrintable(what));
    else
        QVERIFY2(a.status == 403, qPrintable(what));
}

QTEST_GUILESS_MAIN(TestAuthz)
#include "tst_authz.moc"
