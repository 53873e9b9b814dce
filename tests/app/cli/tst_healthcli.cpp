// The health monitor (core/health) against HTTP servers of this test, as the fake runtime's
// containers: an app whose health path starts failing is unhealthy with what the probe got,
// told by an event, shown so by `pando apps list|show`, and healthy again at the next answer; its
// restart policy restarts it; and one app that hangs does not hold up the probes of another.
// The same against real Docker containers is tests/core/engine/tst_apphealth.cpp.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/vocabtesting.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

// What an app answers on every path: 200, 503, or nothing at all (the connection stays open).
class AppServer : public QTcpServer {
public:
    enum class Mode { Ok, Unavailable, Hang };
    AppServer()
    {
        connect(this, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = nextPendingConnection()) {
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                    if (!socket->readAll().contains("\r\n\r\n") || mode == Mode::Hang)
                        return;
                    socket->write(mode == Mode::Ok ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                                                   : "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
                    socket->disconnectFromHost();
                });
            }
        });
        listen(QHostAddress::LocalHost, 0);
    }
    Mode mode = Mode::Ok;
};

} // namespace

class TestHealthCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void anAppThatStopsAnsweringIsUnhealthyAndRecovers();
    void theRestartPolicyRestartsAnUnhealthyApp();
    void aHungAppDoesNotDelayTheOthers();

private:
    test::CliRun pando(const QStringList &args);
    // An app served by the test's server on port, with its spec's health section (and run lines).
    void createAndDeploy(const QString &name, quint16 port, const QString &health, const QString &run = {});
    core::AppView view(const QString &name);
    QList<core::Event> eventsOf(const QString &app, core::EventType type);

    // Declared before the install: its health thread publishes into them until the install is gone.
    QMutex m_eventsMutex;
    QList<core::Event> m_events;
    test::TestInstall m_install;
    QTemporaryDir m_config;
    QList<std::shared_ptr<QTemporaryFile>> m_files;
};

void TestHealthCli::initTestCase()
{
    QVERIFY2(QFile::exists(test::pandoBinary()), "no pando binary");
    m_install.healthTickMs = 50;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    connect(
        m_install.engine->events(), &core::EventBus::published, this,
        [this](const core::Event &event) {
            QMutexLocker lock(&m_eventsMutex);
            m_events << event;
        },
        Qt::DirectConnection);
}

test::CliRun TestHealthCli::pando(const QStringList &args)
{
    return test::runCli(args, test::cliEnvironment(m_install.baseUrl(), m_install.token, m_config.path()));
}

void TestHealthCli::createAndDeploy(const QString &name, quint16 port, const QString &health, const QString &run)
{
    const QByteArray spec =
        u"name: %1\nsource:\n  repo: https://git.example/%1.git\nrun:\n  port: %2\n%3health:\n%4"_s.arg(name)
            .arg(port)
            .arg(run, health)
            .toUtf8();
    auto created = m_install.engine->createApp(spec, core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    auto deploy = m_install.engine->deploy(name, {}, core::Actor{});
    QVERIFY2(deploy, qPrintable(deploy ? QString() : deploy.error().text()));
    QTRY_COMPARE_WITH_TIMEOUT(view(name).status, core::AppStatus::Running, 20000);
}

core::AppView TestHealthCli::view(const QString &name)
{
    auto found = m_install.engine->app(name);
    return found ? *found : core::AppView{};
}

QList<core::Event> TestHealthCli::eventsOf(const QString &app, core::EventType type)
{
    QMutexLocker lock(&m_eventsMutex);
    QList<core::Event> out;
    for (const core::Event &event : std::as_const(m_events))
        if (event.app == app && event.type == type)
            out << event;
    return out;
}

void TestHealthCli::anAppThatStopsAnsweringIsUnhealthyAndRecovers()
{
    AppServer server;
    createAndDeploy(u"flaky"_s, server.serverPort(), u"  path: /healthz\n  every: 100ms\n  failures: 2\n"_s);
    // Healthy so far, and said so by the CLI.
    QCOMPARE(view(u"flaky"_s).status, core::AppStatus::Running);

    server.mode = AppServer::Mode::Unavailable;
    QElapsedTimer timer;
    timer.start();
    QTRY_COMPARE_WITH_TIMEOUT(view(u"flaky"_s).status, core::AppStatus::Unhealthy, 5000);
    // Two failed probes 100 ms apart: well within a second, not at the next deploy.
    QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(view(u"flaky"_s).statusReason, u"GET /healthz answered 503"_s);
    const QList<core::Event> told = eventsOf(u"flaky"_s, core::EventType::AppUnhealthy);
    QCOMPARE(told.size(), 1);
    QCOMPARE(told.first().data.value(u"reason"_s).toString(), u"GET /healthz answered 503"_s);

    test::CliRun run = pando({u"apps"_s, u"show"_s, u"flaky"_s});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(u"unhealthy (GET /healthz answered 503)"_s), qPrintable(run.out));
    run = pando({u"apps"_s, u"list"_s});
    QVERIFY2(run.out.contains(u"unhealthy: GET /healthz answered 503"_s), qPrintable(run.out));

    // run.restart defaults to always: it was restarted once it turned unhealthy.
    QTRY_VERIFY_WITH_TIMEOUT(!eventsOf(u"flaky"_s, core::EventType::AppRestarted).isEmpty(), 5000);

    server.mode = AppServer::Mode::Ok;
    QTRY_COMPARE_WITH_TIMEOUT(view(u"flaky"_s).status, core::AppStatus::Running, 5000);
    QCOMPARE(view(u"flaky"_s).statusReason, QString());
    QCOMPARE(eventsOf(u"flaky"_s, core::EventType::AppHealthy).size(), 1);
    run = pando({u"apps"_s, u"show"_s, u"flaky"_s});
    QVERIFY2(run.out.contains(QRegularExpression(u"status:\\s+running\\n"_s)), qPrintable(run.out));
}

void TestHealthCli::theRestartPolicyRestartsAnUnhealthyApp()
{
    AppServer always;
    AppServer never;
    createAndDeploy(u"restarts"_s, always.serverPort(), u"  every: 100ms\n  failures: 2\n"_s);
    createAndDeploy(u"staysdown"_s, never.serverPort(), u"  every: 100ms\n  failures: 2\n"_s, u"  restart: never\n"_s);

    always.mode = AppServer::Mode::Unavailable;
    never.mode = AppServer::Mode::Unavailable;
    QTRY_VERIFY_WITH_TIMEOUT(!eventsOf(u"restarts"_s, core::EventType::AppRestarted).isEmpty(), 5000);
    const core::Event restarted = eventsOf(u"restarts"_s, core::EventType::AppRestarted).first();
    QCOMPARE(restarted.data.value(u"reason"_s).toString(), u"unhealthy"_s);
    QCOMPARE(restarted.data.value(u"probe"_s).toString(), u"GET / answered 503"_s);
    QTRY_COMPARE_WITH_TIMEOUT(view(u"staysdown"_s).status, core::AppStatus::Unhealthy, 5000);
    QTest::qWait(500); // five more probes: never is never
    QVERIFY(eventsOf(u"staysdown"_s, core::EventType::AppRestarted).isEmpty());
    always.mode = AppServer::Mode::Ok;
    never.mode = AppServer::Mode::Ok;
    QTRY_COMPARE_WITH_TIMEOUT(view(u"restarts"_s).status, core::AppStatus::Running, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(view(u"staysdown"_s).status, core::AppStatus::Running, 5000);
}

void TestHealthCli::aHungAppDoesNotDelayTheOthers()
{
    AppServer hung;
    AppServer failing;
    // every 5s: each of the hung app's probes waits its whole 5 s deadline.
    createAndDeploy(u"hung"_s, hung.serverPort(), u"  every: 5s\n  failures: 1\n"_s);
    createAndDeploy(u"fast"_s, failing.serverPort(), u"  every: 100ms\n  failures: 3\n"_s);
    hung.mode = AppServer::Mode::Hang;
    QTest::qWait(5200); // the hung app's next probe has begun and hangs
    failing.mode = AppServer::Mode::Unavailable;
    QElapsedTimer timer;
    timer.start();
    QTRY_COMPARE_WITH_TIMEOUT(view(u"fast"_s).status, core::AppStatus::Unhealthy, 3000);
    QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    // And the hung one is told with its deadline, once that is over.
    QTRY_COMPARE_WITH_TIMEOUT(view(u"hung"_s).status, core::AppStatus::Unhealthy, 8000);
    QCOMPARE(view(u"hung"_s).statusReason, u"GET /: no answer within 5 s"_s);
    hung.mode = AppServer::Mode::Ok;
    failing.mode = AppServer::Mode::Ok;
}

QTEST_GUILESS_MAIN(TestHealthCli)
#include "tst_healthcli.moc"
