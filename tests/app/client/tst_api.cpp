// The typed API client (app/client/api.h) against a socket that records what arrives: each
// operation's method, path and query as they go over the wire, with names that need encoding
// (spaces, slashes, unicode) and query values holding & and =, which must stay one value.

#include "app/client/api.h"
#include "app/client/apiclient.h"

#include <QBuffer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

struct Recorded {
    QByteArray method;
    QByteArray target; // the request line's path and query, as sent
    QByteArray body;
};

// Answers every request with 200 {} (a WebSocket handshake too, which then fails) and keeps
// what it was asked.
class RecordingServer : public QTcpServer {
public:
    RecordingServer()
    {
        connect(this, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = nextPendingConnection()) {
                auto buffer = std::make_shared<QByteArray>();
                connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
                    *buffer += socket->readAll();
                    const qsizetype end = buffer->indexOf("\r\n\r\n");
                    if (end < 0)
                        return;
                    const QList<QByteArray> lines = buffer->left(end).split('\n');
                    qsizetype length = 0;
                    for (const QByteArray &line : lines) {
                        if (line.toLower().startsWith("content-length:"))
                            length = line.mid(15).trimmed().toLongLong();
                    }
                    if (buffer->size() < end + 4 + length)
                        return;
                    const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
                    requests.append({first.value(0), first.value(1), buffer->mid(end + 4, length)});
                    socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                                  "Connection: close\r\n\r\n{}");
                    socket->disconnectFromHost();
                });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
    }
    QList<Recorded> requests;
};

using Call = std::function<void(const client::Api &, client::Api::Callback)>;

// The operations of requests_data(), by row.
QList<Call> &calls()
{
    static QList<Call> list;
    return list;
}

} // namespace

class TestApi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void pathBuilding();
    void requests_data();
    void requests();
    void bodies();
    void streams();
    void basePathIsKept();

private:
    // Runs one operation and returns what the server got.
    Recorded send(const std::function<void(const client::Api &, client::Api::Callback)> &call);

    RecordingServer m_server;
    std::unique_ptr<client::ApiClient> m_client;
};

void TestApi::initTestCase()
{
    QVERIFY(m_server.listen(QHostAddress::LocalHost));
    m_client =
        std::make_unique<client::ApiClient>(QUrl(u"http://127.0.0.1:%1"_s.arg(m_server.serverPort())), u"t0ken"_s);
}

void TestApi::init()
{
    m_server.requests.clear();
}

Recorded TestApi::send(const std::function<void(const client::Api &, client::Api::Callback)> &call)
{
    bool answered = false;
    call(client::Api(m_client.get()), [&answered](const Result<client::ApiResponse> &) { answered = true; });
    if (!QTest::qWaitFor([&] { return answered; }, 5000))
        return {};
    return m_server.requests.value(0);
}

void TestApi::pathBuilding()
{
    QCOMPARE(client::apiPath({u"apps"_s}), u"/api/v1/apps"_s);
    QCOMPARE(client::apiPath({u"apps"_s, u"my app"_s, u"deploys"_s}), u"/api/v1/apps/my%20app/deploys"_s);
    QCOMPARE(client::apiPath({u"apps"_s, u"a/b"_s}), u"/api/v1/apps/a%2Fb"_s);
    QCOMPARE(client::apiPath({u"apps"_s, u"..?#%"_s}), u"/api/v1/apps/..%3F%23%25"_s);
    QCOMPARE(client::apiPath({u"users"_s, u"zoë"_s}), u"/api/v1/users/zo%C3%AB"_s);
    QCOMPARE(client::Query().suffix(), QString());
    QCOMPARE(client::Query().add(u"q"_s, u"a&b=c d+e"_s).suffix(), u"?q=a%26b%3Dc%20d%2Be"_s);
    QCOMPARE(client::Query().addIfSet(u"a"_s, QString()).add(u"b"_s, qint64(5)).suffix(), u"?b=5"_s);
    QCOMPARE(client::Query().addIfSet(u"n"_s, std::optional<int>()).suffix(), QString());
    QCOMPARE(client::Query().add(u"x y"_s, u"1"_s).suffix(), u"?x%20y=1"_s);
}

void TestApi::requests_data()
{
    QTest::addColumn<int>("row");
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("target");
    calls().clear();
    const auto row = [](const char *name, Call call, const QByteArray &method, const QByteArray &target) {
        calls() << std::move(call);
        QTest::newRow(name) << int(calls().size() - 1) << method << target;
    };
    using C = client::Api::Callback;
    using A = client::Api;
    row(
        "app with a space, slash and unicode", [](const A &a, C c) { a.app(u"my app/ü"_s, c); }, "GET",
        "/api/v1/apps/my%20app%2F%C3%BC");
    row(
        "update app", [](const A &a, C c) { a.updateApp(u"x y"_s, "name: x", client::SpecFormat::Yaml, c); }, "PUT",
        "/api/v1/apps/x%20y");
    row(
        "remove app, keep data", [](const A &a, C c) { a.removeApp(u"web"_s, client::ServiceData::Keep, c); }, "DELETE",
        "/api/v1/apps/web?service_data=keep");
    row(
        "remove app, unsaid", [](const A &a, C c) { a.removeApp(u"web"_s, client::ServiceData::Unsaid, c); }, "DELETE",
        "/api/v1/apps/web");
    row(
        "deploys with a limit", [](const A &a, C c) { a.deploys(u"web"_s, 5, c); }, "GET",
        "/api/v1/apps/web/deploys?limit=5");
    row(
        "deploys without", [](const A &a, C c) { a.deploys(u"web"_s, std::nullopt, c); }, "GET",
        "/api/v1/apps/web/deploys");
    row(
        "log tail", [](const A &a, C c) { a.logTail(u"w b"_s, 100, c); }, "GET", "/api/v1/apps/w%20b/logs?tail=100");
    row(
        "app secret", [](const A &a, C c) { a.removeAppSecret(u"web"_s, u"DB/URL"_s, c); }, "DELETE",
        "/api/v1/apps/web/secrets/DB%2FURL");
    row(
        "service rm", [](const A &a, C c) { a.removeService(u"web"_s, u"db"_s, client::ServiceData::Delete, c); },
        "DELETE", "/api/v1/apps/web/services/db?data=delete");
    row(
        "runs of a job with & and =", [](const A &a, C c) { a.runs(u"ci"_s, u"a&b=c"_s, 3, c); }, "GET",
        "/api/v1/pipelines/ci/runs?job=a%26b%3Dc&limit=3");
    row(
        "all runs", [](const A &a, C c) { a.runs({}, {}, std::nullopt, c); }, "GET", "/api/v1/runs");
    row(
        "trigger", [](const A &a, C c) { a.triggerJob(u"my ci"_s, u"unit/test"_s, false, c); }, "POST",
        "/api/v1/pipelines/my%20ci/jobs/unit%2Ftest/runs");
    row(
        "run events", [](const A &a, C c) { a.runEvents(u"r1"_s, 42, 1000, c); }, "GET",
        "/api/v1/runs/r1/events?after=42&limit=1000");
    row(
        "install secrets", [](const A &a, C c) { a.secrets({}, c); }, "GET", "/api/v1/secrets?scope=");
    row(
        "pipeline secret rm", [](const A &a, C c) { a.removeSecret(u"k&v"_s, u"ci=1"_s, c); }, "DELETE",
        "/api/v1/secrets/k%26v?scope=ci%3D1");
    row(
        "grant rm",
        [](const A &a, C c) { a.removeGrant(client::GrantKind::App, u"web"_s, u"bob smith"_s, u"owner"_s, c); },
        "DELETE", "/api/v1/apps/web/grants/bob%20smith/owner");
    row(
        "pipeline grants", [](const A &a, C c) { a.grants(client::GrantKind::Pipeline, u"ci"_s, c); }, "GET",
        "/api/v1/pipelines/ci/grants");
    row(
        "approvals", [](const A &a, C c) { a.approvals(u"pending"_s, 2, c); }, "GET",
        "/api/v1/approvals?status=pending&limit=2");
    row(
        "approve", [](const A &a, C c) { a.decideApproval(u"a1"_s, client::Decision::Approve, {}, c); }, "POST",
        "/api/v1/approvals/a1/approve");
    row(
        "audit with & and =",
        [](const A &a, C c) {
            a.audit({u"bob&eve"_s, u"app.create"_s, u"app/x=y"_s, 10, std::nullopt, 7}, c);
        },
        "GET", "/api/v1/audit?actor=bob%26eve&action=app.create&object=app%2Fx%3Dy&since_ms=10&limit=7");
    row(
        "disable user", [](const A &a, C c) { a.disableUser(u"zoë"_s, c); }, "POST", "/api/v1/users/zo%C3%AB/disable");
    row(
        "pairing", [](const A &a, C c) { a.createPairing(u"a b"_s, c); }, "POST", "/api/v1/users/a%20b/pairings");
    row(
        "revoke token", [](const A &a, C c) { a.revokeToken(u"t/1"_s, c); }, "DELETE", "/api/v1/tokens/t%2F1");
    row(
        "webhook", [](const A &a, C c) { a.checkResource(u"ci"_s, u"repo"_s, u"s&t=u"_s, c); }, "POST",
        "/api/v1/pipelines/ci/resources/repo/check?webhook_token=s%26t%3Du");
    row(
        "capacity", [](const A &a, C c) { a.capacity(c); }, "GET", "/api/v1/capacity");
}

void TestApi::requests()
{
    QFETCH(int, row);
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, target);
    const Recorded got = send(calls()[row]);
    QCOMPARE(got.method, method);
    QCOMPARE(got.target, target);
}

void TestApi::bodies()
{
    Recorded got = send([](const client::Api &a, client::Api::Callback c) {
        a.setAppSecret(u"web"_s, u"DB"_s, u"p&ss=\"word\""_s, c);
    });
    QCOMPARE(got.method, QByteArray("PUT"));
    QCOMPARE(QJsonDocument::fromJson(got.body).object(), QJsonObject({{u"value"_s, u"p&ss=\"word\""_s}}));
    m_server.requests.clear();
    got =
        send([](const client::Api &a, client::Api::Callback c) { a.setPipeline(u"ci"_s, u"jobs: []"_s, {}, true, c); });
    QCOMPARE(QJsonDocument::fromJson(got.body).object(),
             QJsonObject({{u"config"_s, u"jobs: []"_s}, {u"dry_run"_s, true}}));
    m_server.requests.clear();
    got = send([](const client::Api &a, client::Api::Callback c) {
        a.createToken({u"ci"_s, {u"apps.read"_s, u"deploys.write"_s}, u"30d"_s}, c);
    });
    QCOMPARE(got.target, QByteArray("/api/v1/tokens"));
    QCOMPARE(QJsonDocument::fromJson(got.body).object(),
             QJsonObject({{u"name"_s, u"ci"_s},
                          {u"scopes"_s, QJsonArray{u"apps.read"_s, u"deploys.write"_s}},
                          {u"expiresIn"_s, u"30d"_s}}));
    m_server.requests.clear();
    got = send([](const client::Api &a, client::Api::Callback c) { a.deploy(u"web"_s, {}, c); });
    QCOMPARE(got.body, QByteArray("{}"));
}

void TestApi::streams()
{
    // A stream's handshake is an HTTP GET to the same path; the recording server refuses the
    // upgrade, which ends the stream.
    const client::Api api(m_client.get());
    bool closed = false;
    api.followLogs(
        u"my app"_s, 10, [](const QJsonObject &) {}, [&closed](const Status &) { closed = true; });
    QVERIFY(QTest::qWaitFor([&] { return closed; }, 5000));
    QCOMPARE(m_server.requests.value(0).target, QByteArray("/api/v1/apps/my%20app/logs/follow?tail=10"));
    m_server.requests.clear();
    closed = false;
    api.followEvents(
        u"a&b"_s, [](const QJsonObject &) {}, [&closed](const Status &) { closed = true; });
    QVERIFY(QTest::qWaitFor([&] { return closed; }, 5000));
    QCOMPARE(m_server.requests.value(0).target, QByteArray("/api/v1/events?app=a%26b"));
    m_server.requests.clear();
    closed = false;
    api.followRun(
        u"r 1"_s, 7, [](const QJsonObject &) {}, [&closed](const Status &) { closed = true; });
    QVERIFY(QTest::qWaitFor([&] { return closed; }, 5000));
    QCOMPARE(m_server.requests.value(0).target, QByteArray("/api/v1/runs/r%201/follow?after=7"));
}

void TestApi::basePathIsKept()
{
    // An install behind a proxy at /pando/: the prefix stays, the encoded segments too.
    client::ApiClient prefixed(QUrl(u"http://127.0.0.1:%1/pando/"_s.arg(m_server.serverPort())), u"t"_s);
    bool answered = false;
    client::Api(&prefixed).app(u"a b"_s, [&answered](const Result<client::ApiResponse> &) { answered = true; });
    QVERIFY(QTest::qWaitFor([&] { return answered; }, 5000));
    QCOMPARE(m_server.requests.value(0).target, QByteArray("/pando/api/v1/apps/a%20b"));
}

QTEST_GUILESS_MAIN(TestApi)
#include "tst_api.moc"
