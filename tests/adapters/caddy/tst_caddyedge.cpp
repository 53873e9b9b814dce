// The Caddy edge against a real Caddy (Debian's caddy) and real sockets: it proxies to the
// backend it is given and switches without a lost request, it keeps serving after the object
// (Pando's process) that started it is gone and is adopted as it is by the next one, it is
// started again with its routes when it dies, a port someone else holds is refused while the
// other routes keep serving, and its files are private.

#include "adapters/routing/caddy/caddyedge.h"
#include "tests/adapters/caddy/edgetesting.h"
#include "tests/support/component.h"
#include "tests/support/httpbackend.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <csignal>
#include <cstring>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;
using pando::adapters::caddy::CaddyEdge;
using pando::adapters::caddy::CaddyEdgeOptions;

namespace {

QByteArray backendOf(quint16 port)
{
    auto reply = oneShot(port);
    return reply ? reply->backend : QByteArray("(no answer)");
}

} // namespace

class TestCaddyEdge : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;

    CaddyEdgeOptions options() const { return CaddyEdgeOptions{.stateDir = m_dir->filePath(u"edge"_s)}; }
    qint64 caddyPid() const
    {
        QFile file(m_dir->filePath(u"edge/caddy.pid"_s));
        return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed().toLongLong() : 0;
    }

private Q_SLOTS:
    void init()
    {
        PANDO_REQUIRE_COMPONENT(!CaddyEdge::findCaddy().isEmpty(), u"caddy (Debian's caddy package)"_s);
        m_dir = std::make_unique<QTemporaryDir>();
    }
    void cleanup()
    {
        // Whatever a test left running goes with it.
        if (m_dir)
            discardResult(CaddyEdge(options()).stop(), "a test that stopped it already leaves nothing to stop");
    }

    void proxiesAndSwitchesWithoutALostRequest()
    {
        HttpBackend a("A"), b("B");
        CaddyEdge edge(options());
        PANDO_VERIFY_OK(edge.start());
        const auto route = edge.ensure(u"web"_s, 0);
        PANDO_VERIFY_OK(route);
        const quint16 port = quint16(route->port);
        QCOMPARE(route->url, QUrl(u"http://127.0.0.1:%1/"_s.arg(port)));
        // No backend yet: a plain 503 that says so.
        Client early;
        QVERIFY(early.connectTo(port));
        QVERIFY(early.send("GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"));
        QByteArray answer;
        char chunk[4096];
        for (ssize_t n; (n = ::recv(early.fd(), chunk, sizeof chunk, 0)) > 0;)
            answer.append(chunk, n);
        QVERIFY2(answer.startsWith("HTTP/1.1 503") && answer.contains("web has no running version yet"),
                 answer.constData());

        PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
        QCOMPARE(backendOf(port), QByteArray("A"));
        QCOMPARE(edge.route(u"web"_s)->backendPort, int(a.port()));

        // A client opening a connection per request while the backend flips twenty times.
        std::atomic_bool done{false};
        std::atomic_int ok{0}, failed{0};
        QString firstFailure; // what the first failed request saw, written by the poller only
        std::thread poller([&] {
            while (!done) {
                Client client;
                const bool connected = client.connectTo(port);
                const int connectErrno = errno;
                const auto reply = connected ? client.request("ping") : std::nullopt;
                if (reply && reply->body == "ping") {
                    ++ok;
                    continue;
                }
                if (failed++ == 0)
                    firstFailure = !connected ? u"connect: "_s + QString::fromLocal8Bit(strerror(connectErrno))
                                   : reply    ? u"answered: "_s + QString::fromUtf8(reply->body.left(200))
                                              : u"no answer: "_s + QString::fromLocal8Bit(strerror(errno));
            }
        });
        for (int i = 0; i < 20; ++i) {
            PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, i % 2 == 0 ? b.port() : a.port()));
            QTest::qWait(50);
        }
        done = true;
        poller.join();
        QVERIFY2(failed == 0,
                 qPrintable(u"%1 of %2 requests failed through the switches; the first: %3"_s.arg(int(failed))
                                .arg(int(ok + failed))
                                .arg(firstFailure)));
        QVERIFY(ok > 20);
        QVERIFY(a.served() > 1 && b.served() > 1);
    }

    void outlivesItsOwnerAndIsAdopted()
    {
        HttpBackend a("A");
        quint16 port = 0;
        {
            CaddyEdge edge(options());
            const auto route = edge.ensure(u"web"_s, 0); // starts on first use
            PANDO_VERIFY_OK(route);
            port = quint16(route->port);
            PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
        }
        // The process that drove it is gone; the app still answers.
        const qint64 pid = caddyPid();
        QVERIFY(pid > 0);
        QCOMPARE(backendOf(port), QByteArray("A"));

        CaddyEdge next(options());
        PANDO_VERIFY_OK(next.start());
        QCOMPARE(caddyPid(), pid); // adopted, not started again
        const auto adopted = next.route(u"web"_s);
        QVERIFY(adopted);
        QCOMPARE(adopted->port, int(port));
        QCOMPARE(adopted->backendHost, u"127.0.0.1"_s);
        QCOMPARE(adopted->backendPort, int(a.port()));
        // What the engine does on start changes nothing that serves.
        const auto again = next.ensure(u"web"_s, port);
        PANDO_VERIFY_OK(again);
        PANDO_VERIFY_OK(next.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
        QCOMPARE(backendOf(port), QByteArray("A"));
        QVERIFY(next.status().running);
    }

    // A Caddy that serves the routes as an earlier Pando rendered them (an upgrade) gets this
    // Pando's rendering when it is adopted, without a restart and without a lost request.
    void anEarlierPandosRenderingIsReplacedOnAdopt()
    {
        HttpBackend a("A");
        quint16 port = 0;
        {
            CaddyEdge edge(options());
            const auto route = edge.ensure(u"web"_s, 0);
            PANDO_VERIFY_OK(route);
            port = quint16(route->port);
            PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
        }
        const QString socket = QDir(options().stateDir).filePath(u"admin.sock"_s);
        const auto admin = [&socket](const QString &method, const QString &path, const QByteArray &body = {}) {
            QProcess curl;
            QStringList args{u"-sS"_s,   u"--max-time"_s, u"10"_s, u"--unix-socket"_s, socket, u"-H"_s,
                             u"Host;"_s, u"-X"_s,         method};
            if (!body.isEmpty())
                args << u"-H"_s << u"Content-Type: application/json"_s << u"--data-binary"_s << QString::fromUtf8(body);
            curl.start(u"curl"_s, args << u"http://localhost/config/apps/http/servers/pando:web/"_s + path);
            curl.waitForFinished(15000);
            return curl.readAllStandardOutput().trimmed();
        };
        // What an earlier Pando might have written: a setting this one does not.
        admin(u"POST"_s, u"max_header_bytes"_s, "65536");
        QCOMPARE(admin(u"GET"_s, u"max_header_bytes"_s), QByteArray("65536"));
        const qint64 pid = caddyPid();

        CaddyEdge next(options());
        PANDO_VERIFY_OK(next.start());
        QCOMPARE(caddyPid(), pid); // adopted, not started again
        QCOMPARE(admin(u"GET"_s, u"max_header_bytes"_s), QByteArray("null"));
        QCOMPARE(backendOf(port), QByteArray("A"));
    }

    void startsAgainWithItsRoutes()
    {
        HttpBackend a("A");
        CaddyEdge edge(options());
        const auto route = edge.ensure(u"web"_s, 0);
        PANDO_VERIFY_OK(route);
        PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
        const qint64 pid = caddyPid();
        QVERIFY(::kill(pid_t(pid), SIGKILL) == 0);
        QTRY_VERIFY(!oneShot(quint16(route->port)));
        QVERIFY(!edge.status().running);
        QVERIFY(!edge.status().problem.isEmpty());

        PANDO_VERIFY_OK(edge.check());
        QVERIFY(caddyPid() != pid);
        QCOMPARE(backendOf(quint16(route->port)), QByteArray("A"));
        QVERIFY(edge.status().running);
    }

    // A Caddy that cannot start (someone took its port while it was down) is tried again at once,
    // then after a second, two, ...: not on every pass, and the status says when.
    void aCaddyThatCannotStartIsNotStartedOnEveryPass()
    {
        HttpBackend a("A");
        CaddyEdge edge(options());
        const auto route = edge.ensure(u"web"_s, 0);
        PANDO_VERIFY_OK(route);
        PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));
        QVERIFY(::kill(pid_t(caddyPid()), SIGKILL) == 0);
        QTRY_VERIFY(!oneShot(quint16(route->port)));
        QTcpServer someoneElse;
        QVERIFY(someoneElse.listen(QHostAddress::LocalHost, quint16(route->port)));

        QVERIFY(!edge.check()); // tried at once
        QVERIFY(!edge.check()); // a second failure in a row: tried, and the next waits
        QElapsedTimer timer;
        timer.start();
        const Status waiting = edge.check();
        QVERIFY(!waiting);
        QVERIFY2(timer.elapsed() < 500, "a start that waits is not tried");
        QVERIFY2(waiting.error().hint.contains(u"starts it again in 1 s (after 2 failures in a row)"_s),
                 qPrintable(waiting.error().text()));
        QVERIFY2(waiting.error().message.contains(u"address already in use"_s), qPrintable(waiting.error().text()));
        QVERIFY2(edge.status().problem.contains(u"starts it again in"_s), qPrintable(edge.status().problem));

        someoneElse.close();
        QTRY_VERIFY_WITH_TIMEOUT(edge.check().has_value(), 5000);
        QCOMPARE(backendOf(quint16(route->port)), QByteArray("A"));
    }

    void refusesATakenPortAndKeepsServing()
    {
        HttpBackend a("A");
        CaddyEdge edge(options());
        const auto route = edge.ensure(u"web"_s, 0);
        PANDO_VERIFY_OK(route);
        PANDO_VERIFY_OK(edge.setBackend(u"web"_s, u"127.0.0.1"_s, a.port()));

        QTcpServer someoneElse;
        QVERIFY(someoneElse.listen(QHostAddress::LocalHost, 0));
        const auto taken = edge.ensure(u"other"_s, someoneElse.serverPort());
        QVERIFY(!taken);
        QCOMPARE(taken.error().code, ErrorCode::Conflict);
        QCOMPARE(taken.error().message, u"port %1 is already in use"_s.arg(someoneElse.serverPort()));
        QVERIFY(!edge.route(u"other"_s));
        // Another app's port, or moving this one, is refused too.
        QCOMPARE(edge.ensure(u"other"_s, route->port).error().code, ErrorCode::Conflict);
        QCOMPARE(edge.ensure(u"web"_s, route->port + 1).error().code, ErrorCode::Conflict);
        QCOMPARE(edge.setBackend(u"missing"_s, u"127.0.0.1"_s, 80).error().code, ErrorCode::NotFound);
        QCOMPARE(edge.setBackend(u"web"_s, u"127.0.0.1"_s, 0).error().code, ErrorCode::Invalid);
        QCOMPARE(backendOf(quint16(route->port)), QByteArray("A"));

        // Removing a route frees its port; the others stay.
        const auto second = edge.ensure(u"second"_s, 0);
        PANDO_VERIFY_OK(second);
        PANDO_VERIFY_OK(edge.remove(u"second"_s));
        QTRY_VERIFY(!oneShot(quint16(second->port)));
        QCOMPARE(backendOf(quint16(route->port)), QByteArray("A"));
    }

    void keepsItsFilesPrivate()
    {
        CaddyEdge edge(options());
        PANDO_VERIFY_OK(edge.ensure(u"web"_s, 0));
        const QString dir = m_dir->filePath(u"edge"_s);
        QCOMPARE(QFileInfo(dir).permissions() & (QFile::ReadGroup | QFile::ReadOther | QFile::ExeOther),
                 QFile::Permissions());
        for (const QString &file : {u"caddy.json"_s, u"caddy.log"_s})
            QCOMPARE(QFileInfo(dir + u'/' + file).permissions() &
                         (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
                     QFile::Permissions());
    }

    void saysWhatIsMissing()
    {
        CaddyEdgeOptions missing = options();
        missing.caddyBinary = m_dir->filePath(u"no-caddy-here"_s);
        CaddyEdge edge(missing);
        const auto started = edge.start();
        QVERIFY(!started);
        QCOMPARE(started.error().code, ErrorCode::Unavailable);
        QCOMPARE(started.error().message, u"Caddy is not installed"_s);
        QVERIFY(started.error().hint.contains(u"caddy"_s));
        QCOMPARE(edge.ensure(u"web"_s, 0).error().code, ErrorCode::Unavailable);
    }
};

QTEST_GUILESS_MAIN(TestCaddyEdge)
#include "tst_caddyedge.moc"
