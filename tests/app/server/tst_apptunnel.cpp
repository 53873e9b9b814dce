// Port-forwards to apps through the API (GET /api/v1/apps/{name}/tunnel) with real sockets on
// loopback: the client's AppForwarder listens locally, each local connection rides a WebSocket to
// the server, which connects to the app's stable route. The routes here are the fake router's, so
// an app's stable port is set to where a real HTTP backend (tests/support/httpbackend.h) listens:
// the bytes go through the forwarder, the WebSocket, the server's tunnel and a real TCP
// connection to that backend. Refusals come before the upgrade (403, 404, 409), the app's side
// closing closes the local connection (and a port nobody listens on is refused saying so), a port
// that never accepts meets the connect deadline, an idle tunnel is closed, two connections at once both work, the caps
// say why, the opening is audited, and over TLS the pin of the pairing is what lets the tunnel through.

#include "fakes.h"

#include "app/client/apiclient.h"
#include "app/client/appforwarder.h"
#include "app/server/tlsidentity.h"
#include "tests/support/httpbackend.h"

#include <QScopeGuard>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace pando;

namespace {

// An HTTP exchange over a local socket, waited for on the event loop (the forwarder and the
// server share this thread, so a blocking client would stall them).
struct HttpExchange {
    QTcpSocket socket;
    QByteArray received;

    bool open(quint16 port)
    {
        QObject::connect(&socket, &QTcpSocket::readyRead, &socket, [this] { received += socket.readAll(); });
        socket.connectToHost(QHostAddress::LocalHost, port);
        return socket.waitForConnected(5000);
    }
    void send(const QByteArray &body = {})
    {
        QByteArray head = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n";
        if (!body.isEmpty())
            head += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
        socket.write(head + "\r\n" + body);
    }
    // The whole answer once it came (headers and Content-Length bytes of body), else empty.
    QByteArray answer() const
    {
        const qsizetype end = received.indexOf("\r\n\r\n");
        if (end < 0)
            return {};
        qsizetype length = 0;
        for (const QByteArray &line : received.left(end).split('\n'))
            if (line.toLower().startsWith("content-length:"))
                length = line.mid(15).trimmed().toLongLong();
        return received.size() >= end + 4 + length ? received.left(end + 4 + length) : QByteArray();
    }
};

// The status line of a WebSocket upgrade of path with token, sent by hand: the answer before
// (or instead of) the 101.
QByteArray upgradeStatus(quint16 port, const QString &path, const QString &token)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(5000))
        return "no connection";
    socket.write("GET " + path.toUtf8() + " HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
                 "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer " +
                 token.toUtf8() + "\r\n\r\n");
    QByteArray received;
    (void)QTest::qWaitFor(
        [&] {
            received += socket.readAll();
            return received.contains("\r\n") || socket.state() == QAbstractSocket::UnconnectedState;
        },
        10000);
    return received.left(received.indexOf("\r\n"));
}

struct Started {
    std::optional<Result<quint16>> result;
};

Result<quint16> startForwarder(client::AppForwarder &forwarder, quint16 port = 0)
{
    auto started = std::make_shared<Started>();
    forwarder.start(port, [started](const Result<quint16> &r) { started->result = r; });
    if (!QTest::qWaitFor([started] { return started->result.has_value(); }, 15000))
        return fail(ErrorCode::Timeout, u"the forwarder did not start within 15 s"_s);
    return *started->result;
}

} // namespace

class TestAppTunnel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void forwardsHttpToTheApp();
    void twoConnectionsAtOnce();
    void refusedBeforeTheUpgrade();
    void forwarderSaysWhyItCannotStart();
    void appClosingClosesTheLocalConnection();
    void idleTunnelIsClosed();
    void appThatNeverAcceptsMeetsTheConnectDeadline();
    void capsSayWhy();
    void openingIsAudited();
    void throughTlsWithThePinnedCertificate();

private:
    std::unique_ptr<client::ApiClient> client(const QString &token);
    // Routes app's stable port to port, as a deploy would, and marks it as leading somewhere.
    void route(const QString &app, quint16 port);

    test::TestInstall m_install;
    std::unique_ptr<test::HttpBackend> m_backend;
};

void TestAppTunnel::initTestCase()
{
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    m_backend = std::make_unique<test::HttpBackend>("web");
    const core::Actor actor = core::Actor::system(u"test"_s);
    for (const QString &name : {u"web"_s, u"idle"_s, u"gone"_s, u"stuck"_s}) {
        auto created = m_install.engine->createApp(test::helloSpec(name), actor);
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    }
    // idle has a stable port but leads nowhere: never deployed, or stopped.
    QVERIFY(m_install.router->remove(u"idle"_s));
    QVERIFY(m_install.router->ensure(u"idle"_s, 0));
    route(u"web"_s, m_backend->port());
    // member reads web through a grant; member2 holds none.
    auto grant = m_install.engine->addGrant(core::authz::ObjectKind::App, u"web"_s, u"member"_s, u"viewer"_s, actor);
    QVERIFY2(grant, qPrintable(grant ? QString() : grant.error().text()));
}

void TestAppTunnel::route(const QString &app, quint16 port)
{
    // Made anew on the backend's port: the app's creation gave it a stable port of its own.
    QVERIFY(m_install.router->remove(app));
    QVERIFY(m_install.router->ensure(app, port));
    QVERIFY(m_install.router->setBackend(app, u"127.0.0.1"_s, port));
}

std::unique_ptr<client::ApiClient> TestAppTunnel::client(const QString &token)
{
    auto c = std::make_unique<client::ApiClient>(QUrl(m_install.baseUrl()), token);
    c->setTimeoutMs(15000);
    return c;
}

void TestAppTunnel::forwardsHttpToTheApp()
{
    auto api = client(m_install.tokens.value(u"member"_s));
    client::AppForwarder forwarder(api.get(), u"web"_s);
    auto port = startForwarder(forwarder);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    QCOMPARE(forwarder.localUrl(), QUrl(u"http://127.0.0.1:%1/"_s.arg(*port)));
    QSignalSpy failed(&forwarder, &client::AppForwarder::connectionFailed);

    HttpExchange http;
    QVERIFY(http.open(*port));
    const int servedBefore = m_backend->served();
    http.send("hello through the tunnel");
    QTRY_VERIFY_WITH_TIMEOUT(!http.answer().isEmpty(), 10000);
    QVERIFY2(http.answer().startsWith("HTTP/1.1 200 OK"), http.answer().constData());
    QVERIFY(http.answer().contains("X-Backend: web"));
    QVERIFY(http.answer().endsWith("hello through the tunnel"));
    QCOMPARE(m_backend->served(), servedBefore + 1);

    // A keep-alive connection carries a second request, and a large body both ways (many
    // messages, past the read buffers).
    http.received.clear();
    const QByteArray big(3 * 1024 * 1024 + 17, 'x');
    http.send(big);
    QTRY_VERIFY_WITH_TIMEOUT(!http.answer().isEmpty(), 20000);
    QVERIFY(http.answer().endsWith(big));
    QCOMPARE(failed.count(), 0);
    QCOMPARE(forwarder.connectionCount(), 1);
    http.socket.disconnectFromHost();
    QTRY_COMPARE_WITH_TIMEOUT(forwarder.connectionCount(), 0, 10000);
}

void TestAppTunnel::twoConnectionsAtOnce()
{
    auto api = client(m_install.token);
    client::AppForwarder forwarder(api.get(), u"web"_s);
    auto port = startForwarder(forwarder);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    HttpExchange first;
    HttpExchange second;
    QVERIFY(first.open(*port));
    QVERIFY(second.open(*port));
    // Both are sent before either is answered: two tunnels are open at once.
    first.send("one");
    second.send("two");
    QTRY_VERIFY_WITH_TIMEOUT(!first.answer().isEmpty() && !second.answer().isEmpty(), 10000);
    QVERIFY(first.answer().endsWith("one"));
    QVERIFY(second.answer().endsWith("two"));
    QCOMPARE(forwarder.connectionCount(), 2);
}

void TestAppTunnel::refusedBeforeTheUpgrade()
{
    const quint16 port = m_install.port;
    QCOMPARE(upgradeStatus(port, u"/api/v1/apps/web/tunnel"_s, m_install.tokens.value(u"member2"_s)),
             QByteArray("HTTP/1.1 403 Forbidden"));
    QCOMPARE(upgradeStatus(port, u"/api/v1/apps/nosuch/tunnel"_s, m_install.token),
             QByteArray("HTTP/1.1 404 Not Found"));
    QCOMPARE(upgradeStatus(port, u"/api/v1/apps/idle/tunnel"_s, m_install.token), QByteArray("HTTP/1.1 409 Conflict"));
    QCOMPARE(upgradeStatus(port, u"/api/v1/apps/web/tunnel"_s, u"not-a-token"_s),
             QByteArray("HTTP/1.1 401 Unauthorized"));
    // The one it lets through is upgraded.
    QCOMPARE(upgradeStatus(port, u"/api/v1/apps/web/tunnel"_s, m_install.tokens.value(u"member"_s)),
             QByteArray("HTTP/1.1 101 Switching Protocols"));
}

void TestAppTunnel::forwarderSaysWhyItCannotStart()
{
    auto stranger = client(m_install.tokens.value(u"member2"_s));
    client::AppForwarder refused(stranger.get(), u"web"_s);
    auto notAllowed = startForwarder(refused);
    QVERIFY(!notAllowed);
    QCOMPARE(notAllowed.error().code, ErrorCode::Forbidden);
    QVERIFY(!refused.isListening());

    auto admin = client(m_install.token);
    client::AppForwarder missing(admin.get(), u"nosuch"_s);
    auto notFound = startForwarder(missing);
    QVERIFY(!notFound);
    QCOMPARE(notFound.error().code, ErrorCode::NotFound);

    // A port someone else holds is named.
    QTcpServer holder;
    QVERIFY(holder.listen(QHostAddress::LocalHost, 0));
    client::AppForwarder taken(admin.get(), u"web"_s);
    auto conflict = startForwarder(taken, holder.serverPort());
    QVERIFY(!conflict);
    QCOMPARE(conflict.error().code, ErrorCode::Conflict);
    QVERIFY2(conflict.error().message.contains(QString::number(holder.serverPort())),
             qPrintable(conflict.error().text()));

    // An app that does not run: the forwarder listens (it may start later), and each connection
    // fails saying why.
    client::AppForwarder idle(admin.get(), u"idle"_s);
    auto listening = startForwarder(idle);
    QVERIFY2(listening, qPrintable(listening ? QString() : listening.error().text()));
    QSignalSpy failed(&idle, &client::AppForwarder::connectionFailed);
    HttpExchange http;
    QVERIFY(http.open(*listening));
    http.send("anyone?");
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    const auto error = failed.first().first().value<Error>();
    QCOMPARE(error.code, ErrorCode::Conflict);
    QVERIFY2(error.message.contains(u"not running"_s), qPrintable(error.text()));
    QTRY_COMPARE_WITH_TIMEOUT(http.socket.state(), QAbstractSocket::UnconnectedState, 10000);
}

void TestAppTunnel::appClosingClosesTheLocalConnection()
{
    auto backend = std::make_unique<test::HttpBackend>("gone");
    route(u"gone"_s, backend->port());
    auto api = client(m_install.token);
    client::AppForwarder forwarder(api.get(), u"gone"_s);
    auto port = startForwarder(forwarder);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    QSignalSpy failed(&forwarder, &client::AppForwarder::connectionFailed);
    HttpExchange http;
    QVERIFY(http.open(*port));
    http.send();
    QTRY_VERIFY_WITH_TIMEOUT(!http.answer().isEmpty(), 10000);
    QVERIFY(http.answer().endsWith("gone"));
    // The backend's thread ends and its sockets with it: the app's side of the tunnel closes.
    backend->stop();
    QTRY_COMPARE_WITH_TIMEOUT(http.socket.state(), QAbstractSocket::UnconnectedState, 10000);
    // An app that closes is a normal end, not a failure.
    QCOMPARE(failed.count(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(forwarder.connectionCount(), 0, 10000);

    // With nothing listening on its port any more, a new connection is refused saying so.
    HttpExchange again;
    QVERIFY(again.open(*port));
    again.send("anyone?");
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    const auto error = failed.first().first().value<Error>();
    QCOMPARE(error.code, ErrorCode::Unavailable);
    QVERIFY2(error.message.contains(u"refused the connection"_s), qPrintable(error.text()));
    QTRY_COMPARE_WITH_TIMEOUT(again.socket.state(), QAbstractSocket::UnconnectedState, 10000);
}

void TestAppTunnel::idleTunnelIsClosed()
{
    server::ConnectionLimits limits;
    limits.tunnelIdleTimeoutMs = 300;
    m_install.server->setConnectionLimits(limits);
    auto api = client(m_install.token);
    client::AppForwarder forwarder(api.get(), u"web"_s);
    auto port = startForwarder(forwarder);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    QSignalSpy failed(&forwarder, &client::AppForwarder::connectionFailed);
    HttpExchange http;
    QVERIFY(http.open(*port));
    http.send("then nothing");
    QTRY_VERIFY_WITH_TIMEOUT(!http.answer().isEmpty(), 10000);
    // Nothing more either way: the server ends the tunnel, and the local connection with it.
    QTRY_COMPARE_WITH_TIMEOUT(http.socket.state(), QAbstractSocket::UnconnectedState, 10000);
    QCOMPARE(failed.count(), 1);
    const auto error = failed.first().first().value<Error>();
    QVERIFY2(error.message.contains(u"carried nothing"_s), qPrintable(error.text()));
    m_install.server->setConnectionLimits(server::ConnectionLimits{});
}

// An app whose port takes no more connections (its accept queue full: the kernel drops the SYN
// and the connect would retry for minutes) is given up on at the connect deadline, saying so.
void TestAppTunnel::appThatNeverAcceptsMeetsTheConnectDeadline()
{
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    QVERIFY(listener >= 0);
    auto closeListener = qScopeGuard([listener] { ::close(listener); });
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    QCOMPARE(::bind(listener, reinterpret_cast<const sockaddr *>(&address), sizeof address), 0);
    QCOMPARE(::listen(listener, 0), 0);
    socklen_t length = sizeof address;
    QCOMPARE(::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length), 0);
    const quint16 port = ntohs(address.sin_port);
    // Never accepted: these fill its queue.
    std::vector<std::unique_ptr<QTcpSocket>> fillers;
    for (int i = 0; i < 3; ++i) {
        fillers.push_back(std::make_unique<QTcpSocket>());
        fillers.back()->connectToHost(QHostAddress::LocalHost, port);
    }
    QTest::qWait(200);
    route(u"stuck"_s, port);

    server::ConnectionLimits limits;
    limits.tunnelConnectTimeoutMs = 300;
    m_install.server->setConnectionLimits(limits);
    auto restore = qScopeGuard([this] { m_install.server->setConnectionLimits(server::ConnectionLimits{}); });
    auto api = client(m_install.token);
    client::AppForwarder forwarder(api.get(), u"stuck"_s);
    auto local = startForwarder(forwarder);
    QVERIFY2(local, qPrintable(local ? QString() : local.error().text()));
    QSignalSpy failed(&forwarder, &client::AppForwarder::connectionFailed);
    HttpExchange http;
    QVERIFY(http.open(*local));
    http.send("anyone?");
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    const auto error = failed.first().first().value<Error>();
    QCOMPARE(error.code, ErrorCode::Unavailable);
    QVERIFY2(error.message.contains(u"did not accept a connection on its route within 300 ms"_s),
             qPrintable(error.text()));
    QTRY_COMPARE_WITH_TIMEOUT(http.socket.state(), QAbstractSocket::UnconnectedState, 10000);
}

void TestAppTunnel::capsSayWhy()
{
    server::ConnectionLimits limits;
    limits.maxTunnelsPerUser = 1;
    m_install.server->setConnectionLimits(limits);
    auto api = client(m_install.tokens.value(u"member"_s));
    client::AppForwarder forwarder(api.get(), u"web"_s);
    auto port = startForwarder(forwarder);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    QSignalSpy failed(&forwarder, &client::AppForwarder::connectionFailed);
    HttpExchange first;
    QVERIFY(first.open(*port));
    first.send("first");
    QTRY_VERIFY_WITH_TIMEOUT(!first.answer().isEmpty(), 10000);
    HttpExchange second;
    QVERIFY(second.open(*port));
    second.send("second");
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    const auto error = failed.first().first().value<Error>();
    QVERIFY2(error.message.contains(u"1 tunnels to apps are open for this user, the limit"_s),
             qPrintable(error.text()));
    QTRY_COMPARE_WITH_TIMEOUT(second.socket.state(), QAbstractSocket::UnconnectedState, 10000);
    // Once the first is closed, its place is free again.
    first.socket.disconnectFromHost();
    QTRY_COMPARE_WITH_TIMEOUT(forwarder.connectionCount(), 0, 10000);
    HttpExchange third;
    QVERIFY(third.open(*port));
    third.send("third");
    QTRY_VERIFY_WITH_TIMEOUT(!third.answer().isEmpty(), 10000);
    QVERIFY(third.answer().endsWith("third"));
    m_install.server->setConnectionLimits(server::ConnectionLimits{});
}

void TestAppTunnel::openingIsAudited()
{
    auto lines = m_install.engine->auditLines({.action = u"app.tunnel"_s, .object = u"app/web"_s});
    QVERIFY2(lines, qPrintable(lines ? QString() : lines.error().text()));
    QVERIFY(!lines->isEmpty());
    const bool byMember = std::any_of(lines->cbegin(), lines->cend(), [](const core::AuditRecord &line) {
        return line.actor.contains(u"user:member"_s) && line.outcome == u"success"_s;
    });
    QVERIFY(byMember);
}

void TestAppTunnel::throughTlsWithThePinnedCertificate()
{
    QTemporaryDir tlsDir;
    auto identity = server::loadOrCreateTlsIdentity(tlsDir.path(), {u"pando.test"_s});
    QVERIFY2(identity, qPrintable(identity ? QString() : identity.error().text()));
    auto tlsPort = m_install.server->listenTls(QHostAddress::LocalHost, 0, identity->certificate, identity->key);
    QVERIFY2(tlsPort, qPrintable(tlsPort ? QString() : tlsPort.error().text()));
    const QUrl server(u"https://127.0.0.1:%1"_s.arg(*tlsPort));

    client::ApiClient pinned(server, m_install.tokens.value(u"member"_s));
    pinned.setPinnedFingerprint(identity->fingerprint);
    client::AppForwarder forwarder(&pinned, u"web"_s);
    auto port = startForwarder(forwarder);
    QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
    HttpExchange http;
    QVERIFY(http.open(*port));
    http.send("over tls");
    QTRY_VERIFY_WITH_TIMEOUT(!http.answer().isEmpty(), 15000);
    QVERIFY(http.answer().endsWith("over tls"));

    // Pinned to another certificate, nothing goes through, and the error names both.
    const QString wrong(64, u'c');
    client::ApiClient mispinned(server, m_install.tokens.value(u"member"_s));
    mispinned.setPinnedFingerprint(wrong);
    client::AppForwarder refused(&mispinned, u"web"_s);
    auto notStarted = startForwarder(refused);
    QVERIFY(!notStarted);
    QCOMPARE(notStarted.error().code, ErrorCode::Unauthorized);
    QVERIFY2(notStarted.error().message.contains(identity->fingerprint) && notStarted.error().message.contains(wrong),
             qPrintable(notStarted.error().text()));
    m_install.server->stopTls();
}

QTEST_GUILESS_MAIN(TestAppTunnel)
#include "tst_apptunnel.moc"
