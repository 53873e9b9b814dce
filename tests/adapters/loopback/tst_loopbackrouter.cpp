// LoopbackRouter against real sockets: a QTcpServer-based HTTP-ish echo backend on its own
// thread, and blocking POSIX clients so that what is measured is the proxy, not the client.

#include "adapters/routing/loopback/loopbackrouter.h"
#include "tests/support/component.h"
#include "tests/support/httpbackend.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QSemaphore>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QThread>

#include <arpa/inet.h>
#include <array>
#include <atomic>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace Qt::StringLiterals;
using pando::ErrorCode;
using pando::adapters::loopback::LoopbackRouter;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

using namespace pando::test;

class TestLoopbackRouter : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void proxiesRequests();
    void largeBodyWithBackpressure();
    void halfClose();
    void switchBackendsUnderLoad();
    void openConnectionsStayOnTheirBackend();
    void takenPortIsConflict();
    void ensureIsIdempotent();
    void removeFreesPortAndClosesConnections();
    void backendDownClosesClient();
    void noBackendClosesClient();
    void invalidInput();
    void connectionCapAndIdleTimeout();
    void closedWhileAForkedChildHoldsDescriptors();
    void benchmark();
};

void TestLoopbackRouter::proxiesRequests()
{
    HttpBackend backend("A");
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    QVERIFY(route->port > 0);
    QCOMPARE(route->url, QUrl(u"http://127.0.0.1:%1/"_s.arg(route->port)));
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, backend.port()));
    QCOMPARE(router.route(u"web"_s)->backendPort, int(backend.port()));
    QCOMPARE(router.route(u"web"_s)->backendHost, u"127.0.0.1"_s);

    Client client;
    QVERIFY(client.connectTo(quint16(route->port)));
    for (int i = 0; i < 20; ++i) { // one kept-alive connection, many requests
        const auto reply = client.request("ping " + QByteArray::number(i));
        QVERIFY(reply);
        QCOMPARE(reply->backend, QByteArray("A"));
        QCOMPARE(reply->body, "ping " + QByteArray::number(i));
    }
    QCOMPARE(router.openConnections(u"web"_s), 1);
    QVERIFY(!router.route(u"other"_s).has_value());
}

void TestLoopbackRouter::largeBodyWithBackpressure()
{
    HttpBackend backend("A");
    LoopbackRouter router;
    const auto route = router.ensure(u"big"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"big"_s, u"localhost"_s, backend.port()));
    QByteArray body(8 * 1024 * 1024, Qt::Uninitialized);
    for (qsizetype i = 0; i < body.size(); ++i)
        body[i] = char('a' + i % 26);
    Client client;
    QVERIFY(client.connectTo(quint16(route->port)));
    // The client writes 8 MiB before reading anything: the proxy must keep reading and
    // writing in bounded chunks rather than stall or buffer it all.
    std::thread writer([&] {
        client.send("POST / HTTP/1.1\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    });
    QByteArray received;
    char chunk[65536];
    qsizetype wanted = -1;
    while (wanted < 0 || received.size() < wanted) {
        const ssize_t n = ::recv(client.fd(), chunk, sizeof chunk, 0);
        if (n <= 0)
            break;
        received.append(chunk, n);
        if (wanted < 0 && received.contains("\r\n\r\n"))
            wanted = received.indexOf("\r\n\r\n") + 4 + body.size();
    }
    writer.join();
    QCOMPARE(received.size(), wanted);
    QVERIFY(received.endsWith(body.right(1000)));
    QVERIFY(received.mid(received.indexOf("\r\n\r\n") + 4) == body);
}

void TestLoopbackRouter::halfClose()
{
    // A raw backend that reads until the client finished sending, then answers and closes:
    // only works if the proxy forwards the half-close and keeps the way back open.
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    QCOMPARE(::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
    QCOMPARE(::listen(listener, 4), 0);
    socklen_t length = sizeof address;
    ::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length);
    std::thread backend([listener] {
        const int fd = ::accept(listener, nullptr, nullptr);
        QByteArray got;
        char chunk[4096];
        ssize_t n;
        while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0)
            got.append(chunk, n);
        const QByteArray answer = "got " + QByteArray::number(got.size()) + " bytes: " + got;
        ::send(fd, answer.constData(), size_t(answer.size()), MSG_NOSIGNAL);
        ::close(fd);
    });

    LoopbackRouter router;
    const auto route = router.ensure(u"half"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"half"_s, u"127.0.0.1"_s, ntohs(address.sin_port)));
    Client client;
    QVERIFY(client.connectTo(quint16(route->port)));
    QVERIFY(client.send("hello"));
    QCOMPARE(::shutdown(client.fd(), SHUT_WR), 0);
    QByteArray answer;
    char chunk[4096];
    ssize_t n;
    while ((n = ::recv(client.fd(), chunk, sizeof chunk, 0)) > 0)
        answer.append(chunk, n);
    backend.join();
    ::close(listener);
    QCOMPARE(answer, QByteArray("got 5 bytes: hello"));
    QTRY_COMPARE(router.openConnections(u"half"_s), 0);
}

void TestLoopbackRouter::switchBackendsUnderLoad()
{
    auto a = std::make_unique<HttpBackend>("A");
    auto b = std::make_unique<HttpBackend>("B");
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, a->port()));

    std::atomic_bool stop{false};
    std::atomic_int ok{0}, failed{0}, fromA{0}, fromB{0}, fromC{0};
    auto loop = [&] {
        while (!stop) {
            const auto reply = oneShot(quint16(route->port)); // a new connection every time
            if (!reply) {
                ++failed;
                continue;
            }
            ++ok;
            (reply->backend == "A" ? fromA : reply->backend == "B" ? fromB : fromC)++;
        }
    };
    std::thread client1(loop), client2(loop);
    for (int i = 0; i < 20; ++i) {
        QThread::msleep(15);
        PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, (i % 2 ? a : b)->port()));
    }
    // A redeploy: switch to a new backend, then retire the old one once its requests ended.
    auto c = std::make_unique<HttpBackend>("C");
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, c->port()));
    QThread::msleep(100);
    a.reset();
    b.reset();
    QThread::msleep(200);
    stop = true;
    client1.join();
    client2.join();
    qInfo("switched 21 times under load: %d requests, %d failed (A %d, B %d, C %d)", ok.load(), failed.load(),
          fromA.load(), fromB.load(), fromC.load());
    QCOMPARE(failed.load(), 0);
    QVERIFY(fromA > 0);
    QVERIFY(fromB > 0);
    QVERIFY(fromC > 0);
}

void TestLoopbackRouter::openConnectionsStayOnTheirBackend()
{
    HttpBackend a("A");
    HttpBackend b("B");
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
    Client old;
    QVERIFY(old.connectTo(quint16(route->port)));
    QCOMPARE(old.request()->backend, QByteArray("A"));
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, b.port()));
    QCOMPARE(oneShot(quint16(route->port))->backend, QByteArray("B"));
    QCOMPARE(old.request()->backend, QByteArray("A"));
}

void TestLoopbackRouter::takenPortIsConflict()
{
    QTcpServer someoneElse;
    QVERIFY(someoneElse.listen(QHostAddress::LocalHost, 0));
    const int port = someoneElse.serverPort();
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, port);
    QVERIFY(!route.has_value());
    QCOMPARE(route.error().code, ErrorCode::Conflict);
    QCOMPARE(route.error().message, u"port %1 is already in use"_s.arg(port));
    QVERIFY(!route.error().hint.isEmpty());
    QVERIFY(!router.route(u"web"_s).has_value());

    // Taken by another app of the same router.
    const auto first = router.ensure(u"one"_s, 0);
    PANDO_VERIFY_OK(first);
    const auto second = router.ensure(u"two"_s, first->port);
    QVERIFY(!second.has_value());
    QCOMPARE(second.error().code, ErrorCode::Conflict);
    QVERIFY(second.error().hint.contains(u"one"_s));
}

void TestLoopbackRouter::ensureIsIdempotent()
{
    LoopbackRouter router;
    const quint16 wanted = unusedPort();
    const auto first = router.ensure(u"web"_s, wanted);
    PANDO_VERIFY_OK(first);
    QCOMPARE(first->port, int(wanted));
    const auto again = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(again);
    QCOMPARE(again->port, int(wanted));
    const auto same = router.ensure(u"web"_s, wanted);
    PANDO_VERIFY_OK(same);
    const auto moved = router.ensure(u"web"_s, wanted == 65535 ? 65534 : wanted + 1);
    QVERIFY(!moved.has_value());
    QCOMPARE(moved.error().code, ErrorCode::Conflict);
}

void TestLoopbackRouter::removeFreesPortAndClosesConnections()
{
    HttpBackend backend("A");
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, backend.port()));
    Client open;
    QVERIFY(open.connectTo(quint16(route->port)));
    QVERIFY(open.request());
    QCOMPARE(router.openConnections(u"web"_s), 1);

    PANDO_VERIFY_OK(router.remove(u"web"_s));
    QVERIFY(!router.route(u"web"_s).has_value());
    QVERIFY(open.closedWithin(2000));
    QTcpServer reuse;
    QVERIFY2(reuse.listen(QHostAddress::LocalHost, quint16(route->port)), qPrintable(reuse.errorString()));
    reuse.close();
    PANDO_VERIFY_OK(router.remove(u"web"_s)); // a missing route is not an error
    PANDO_VERIFY_OK(router.remove(u"never"_s));
    // The same app can be routed again on the same port.
    const auto back = router.ensure(u"web"_s, route->port);
    PANDO_VERIFY_OK(back);
}

void TestLoopbackRouter::backendDownClosesClient()
{
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, unusedPort()));
    Client client;
    QVERIFY(client.connectTo(quint16(route->port)));
    QVERIFY(client.send("GET / HTTP/1.1\r\n\r\n"));
    QElapsedTimer timer;
    timer.start();
    QVERIFY(client.closedWithin(3000)); // after a few quick retries, not a hang
    QVERIFY(timer.elapsed() >= 150);
    QTRY_COMPARE(router.openConnections(u"web"_s), 0);
}

void TestLoopbackRouter::noBackendClosesClient()
{
    LoopbackRouter router;
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    Client client;
    QVERIFY(client.connectTo(quint16(route->port)));
    QVERIFY(client.closedWithin(2000));
}

void TestLoopbackRouter::invalidInput()
{
    LoopbackRouter router;
    QCOMPARE(router.ensure(QString(), 0).error().code, ErrorCode::Invalid);
    QCOMPARE(router.ensure(u"x"_s, 70000).error().code, ErrorCode::Invalid);
    QCOMPARE(router.setBackend(u"missing"_s, u"127.0.0.1"_s, 80).error().code, ErrorCode::NotFound);
    PANDO_VERIFY_OK(router.ensure(u"x"_s, 0));
    QCOMPARE(router.setBackend(u"x"_s, u"127.0.0.1"_s, 0).error().code, ErrorCode::Invalid);
    QCOMPARE(router.setBackend(u"x"_s, QString(), 80).error().code, ErrorCode::Invalid);
    QCOMPARE(router.setBackend(u"x"_s, u"no-such-host.invalid"_s, 80).error().code, ErrorCode::Unavailable);
}

void TestLoopbackRouter::connectionCapAndIdleTimeout()
{
    // Idle sockets used to stay open for ever and without number, each holding two descriptors.
    HttpBackend backend("A");
    LoopbackRouter router({4, std::chrono::milliseconds(600)});
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, backend.port()));
    std::vector<std::unique_ptr<Client>> idle;
    for (int i = 0; i < 4; ++i) {
        idle.push_back(std::make_unique<Client>());
        QVERIFY(idle.back()->connectTo(quint16(route->port)));
    }
    QTRY_COMPARE(router.openConnections(u"web"_s), 4);
    // The fifth is closed at once; the four are not, yet.
    Client fifth;
    QVERIFY(fifth.connectTo(quint16(route->port)));
    QVERIFY(fifth.closedWithin(1000));
    QCOMPARE(router.openConnections(u"web"_s), 4);
    // One that keeps talking stays; the silent ones are closed once idle for the timeout.
    QVERIFY(idle[0]->request("still here"));
    QTest::qWait(400);
    QVERIFY(idle[0]->request("still here"));
    for (int i = 1; i < 4; ++i)
        QVERIFY2(idle[size_t(i)]->closedWithin(3000), qPrintable(u"idle connection %1 stayed open"_s.arg(i)));
    QVERIFY(idle[0]->closedWithin(3000));
    QTRY_COMPARE(router.openConnections(u"web"_s), 0);
    // And the port serves again.
    const auto reply = oneShot(quint16(route->port), "after");
    QVERIFY(reply);
    QCOMPARE(reply->body, QByteArray("after"));
}

void TestLoopbackRouter::closedWhileAForkedChildHoldsDescriptors()
{
    // A child forked by any thread (a build, a git or docker command) holds copies of the proxy's
    // descriptors until it execs. epoll kept reporting a connection closed meanwhile, and the loop
    // called into the freed connection ("pure virtual method called" in a redeploy test).
    HttpBackend backend("A");
    LoopbackRouter router({16, std::chrono::milliseconds(300)});
    const auto route = router.ensure(u"web"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"web"_s, u"127.0.0.1"_s, backend.port()));
    auto client = std::make_unique<Client>();
    QVERIFY(client->connectTo(quint16(route->port)));
    QVERIFY(client->request("before"));

    std::array<int, 2> release{};
    QVERIFY(::pipe2(release.data(), O_CLOEXEC) == 0);
    const pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) { // holds the proxy's descriptors (not the client's) until let go
        ::close(client->fd());
        ::close(release[1]);
        char byte;
        [[maybe_unused]] const ssize_t n = ::read(release[0], &byte, 1);
        ::_exit(0);
    }
    ::close(release[0]);
    auto reap = qScopeGuard([&] {
        ::close(release[1]);
        ::waitpid(child, nullptr, 0);
    });

    // The proxy closes the idle connection while the child holds its descriptors; then the
    // client hangs up, which is an event on the closed connection's socket.
    QTRY_COMPARE(router.openConnections(u"web"_s), 0);
    client.reset();
    QTest::qWait(100);
    const auto reply = oneShot(quint16(route->port), "after");
    QVERIFY(reply);
    QCOMPARE(reply->body, QByteArray("after"));
}

void TestLoopbackRouter::benchmark()
{
    HttpBackend backend("A");
    LoopbackRouter router;
    const auto route = router.ensure(u"bench"_s, 0);
    PANDO_VERIFY_OK(route);
    PANDO_VERIFY_OK(router.setBackend(u"bench"_s, u"127.0.0.1"_s, backend.port()));

    auto keepAlive = [](quint16 port, int threads, int perThread) {
        std::atomic_int failures{0};
        QElapsedTimer timer;
        timer.start();
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
            workers.emplace_back([&] {
                Client client;
                if (!client.connectTo(port)) {
                    failures += perThread;
                    return;
                }
                for (int i = 0; i < perThread; ++i)
                    failures += client.request() ? 0 : 1;
            });
        }
        for (auto &w : workers)
            w.join();
        return std::pair{threads * perThread * 1000.0 / std::max<qint64>(1, timer.elapsed()), failures.load()};
    };
    auto newConnections = [](quint16 port, int count) {
        int failures = 0;
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < count; ++i)
            failures += oneShot(port) ? 0 : 1;
        return std::pair{count * 1000.0 / std::max<qint64>(1, timer.elapsed()), failures};
    };
    const quint16 direct = backend.port();
    const quint16 proxied = quint16(route->port);
    const auto d1 = keepAlive(direct, 1, 5000);
    const auto p1 = keepAlive(proxied, 1, 5000);
    const auto d4 = keepAlive(direct, 4, 2500);
    const auto p4 = keepAlive(proxied, 4, 2500);
    const auto dn = newConnections(direct, 1000);
    const auto pn = newConnections(proxied, 1000);
    qInfo("keep-alive, 1 client:  direct %.0f req/s, through the proxy %.0f req/s (%.0f%%)", d1.first, p1.first,
          100 * p1.first / d1.first);
    qInfo("keep-alive, 4 clients: direct %.0f req/s, through the proxy %.0f req/s (%.0f%%)", d4.first, p4.first,
          100 * p4.first / d4.first);
    qInfo("new connection each:   direct %.0f req/s, through the proxy %.0f req/s (%.0f%%)", dn.first, pn.first,
          100 * pn.first / dn.first);
    QCOMPARE(d1.second + p1.second + d4.second + p4.second + dn.second + pn.second, 0);
}

QTEST_GUILESS_MAIN(TestLoopbackRouter)
#include "tst_loopbackrouter.moc"
