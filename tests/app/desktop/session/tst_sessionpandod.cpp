// The remote session against a real pandod process with a real Docker engine and a real git
// repository: attach with the install's initial admin token, create an app, deploy it and follow
// it to its end through the event stream, read its steps and logs, remove it. And this
// computer's own engine (the in-process session) on real parts: it has what pandod has (an app
// with services deploys), and it and a pandod never share a data directory.

#include "sessionharness.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"

#include "adapters/runtime/docker/dockerruntime.h"
#include "adapters/services/docker/dockerservices.h"
#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

#define VERIFY_OK(r) QVERIFY2(r, qPrintable(r ? QString() : test::describe(r.error())))

class TestSessionPandod : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void deployThroughARemoteSession();
    void desktopEngineHasServicesAndHoldsItsDataDirectory();

private:
    // Every container and image labelled with the install id.
    void removeObjectsOf(const QString &installId);

    QTemporaryDir m_tmp;
    GitFixture m_git;
    QString m_repo;
    QString m_installId;
    int m_port = 0;
    std::unique_ptr<QProcess> m_daemon;
    adapters::docker::DockerRuntime m_docker;
};

void TestSessionPandod::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
    QVERIFY(DockerHarness::ensureBaseImage());
    m_repo = m_git.createRepository(u"web"_s);
    QVERIFY(!m_git.commit(u"web"_s, u"main"_s, helloApp("hello from pandod")).isEmpty());
    m_installId = u"desk-%1"_s.arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        m_port = probe.serverPort();
    }
    m_daemon = std::make_unique<QProcess>();
    m_daemon->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_daemon->start(binaryDir() + u"/app/daemon/pandod"_s,
                    {u"--data-dir"_s, m_tmp.path(), u"--listen"_s, u"127.0.0.1:%1"_s.arg(m_port), u"--install-id"_s,
                     m_installId, u"--reconcile-interval"_s, u"500"_s});
    QVERIFY(m_daemon->waitForStarted(5000));
}

void TestSessionPandod::cleanupTestCase()
{
    if (m_daemon && m_daemon->state() == QProcess::Running) {
        ::kill(pid_t(m_daemon->processId()), SIGTERM);
        m_daemon->waitForFinished(30000);
    }
    removeObjectsOf(m_installId);
}

void TestSessionPandod::removeObjectsOf(const QString &installId)
{
    const adapters::Labels mine{{QLatin1String(adapters::LabelInstall), installId}};
    if (auto containers = m_docker.containers(mine))
        for (const auto &c : std::as_const(*containers))
            discardResult(m_docker.remove(c.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
    if (auto images = m_docker.images(mine))
        for (const auto &i : std::as_const(*images))
            discardResult(m_docker.removeImage(i.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
    // Networks too: each one left takes an address pool, and the engine has few.
    const QJsonObject filters{
        {u"label"_s, QJsonArray{QString(QLatin1String(adapters::LabelInstall) + u'=' + installId)}}};
    if (auto networks = m_docker.client().get(
            u"/networks"_s, {{u"filters"_s, QString::fromUtf8(QJsonDocument(filters).toJson(QJsonDocument::Compact))}}))
        for (const QJsonValue network : networks->json().array()) {
            adapters::dockerapi::Request r;
            r.method = "DELETE";
            r.path = u"/networks/"_s + network.toObject().value(u"Id"_s).toString();
            discardResult(m_docker.client().call(r),
                          "best-effort clean-up; a leftover carries only this test's install label");
        }
}

namespace {

// The deploy's deploy.succeeded or deploy.failed event; empty when neither came in five minutes.
QJsonObject deployEnd(EventLog &events, const QString &id)
{
    QJsonObject end;
    QDeadlineTimer deadline(300000);
    while (end.isEmpty() && !deadline.hasExpired()) {
        end = events.waitFor(u"deploy.succeeded"_s, id, 200);
        if (end.isEmpty())
            end = events.waitFor(u"deploy.failed"_s, id, 200);
    }
    return end;
}

} // namespace

void TestSessionPandod::deployThroughARemoteSession()
{
    const QString tokenPath = m_tmp.filePath(u"initial-admin-token"_s);
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(tokenPath), 30000);
    QFile tokenFile(tokenPath);
    QVERIFY(tokenFile.open(QIODevice::ReadOnly));
    const QString token = QString::fromUtf8(tokenFile.readAll()).trimmed();

    // Attaching before the daemon listens fails, saying where; opening again later connects.
    desktop::RemoteSession session(QUrl(u"http://127.0.0.1:%1"_s.arg(m_port)), token);
    QString why;
    for (int attempt = 0; attempt < 100 && session.state() != desktop::Session::State::Connected; ++attempt) {
        session.open();
        if (!test::awaitConnected(session, &why, 5000))
            QTest::qWait(100);
    }
    QVERIFY2(session.state() == desktop::Session::State::Connected, qPrintable(why));
    test::EventLog events(session);

    auto created = test::awaitObject([&](auto done) { session.createApp(helloSpec(u"web"_s, m_repo), done); });
    VERIFY_OK(created);
    auto queued = test::awaitObject([&](auto done) { session.deploy(u"web"_s, u"main"_s, done); });
    VERIFY_OK(queued);
    const QString id = queued->value(u"id"_s).toString();
    const QJsonObject end = deployEnd(events, id);
    QVERIFY2(end.value(u"type"_s).toString() == u"deploy.succeeded"_s,
             qPrintable(QString::fromUtf8(QJsonDocument(end).toJson())));

    auto detail = test::awaitObject([&](auto done) { session.deployDetail(id, done); });
    VERIFY_OK(detail);
    QStringList steps;
    for (const QJsonValue &step : detail->value(u"steps"_s).toArray())
        steps << step.toObject().value(u"name"_s).toString();
    for (const QString &step : {u"fetch"_s, u"build"_s, u"health"_s, u"switch"_s})
        QVERIFY2(steps.contains(step), qPrintable(steps.join(u", "_s)));

    auto app = test::awaitObject([&](auto done) { session.app(u"web"_s, done); });
    VERIFY_OK(app);
    QCOMPARE(app->value(u"status"_s).toString(), u"running"_s);
    const HttpAnswer answer = httpGet(QUrl(app->value(u"url"_s).toString()));
    QCOMPARE(answer.status, 200);

    auto tail = test::awaitList([&](auto done) { session.logTail(u"web"_s, 50, done); });
    VERIFY_OK(tail);

    auto removed = test::awaitDone([&](auto done) { session.removeApp(u"web"_s, done); });
    VERIFY_OK(removed);
    QVERIFY(!events.waitFor(u"app.removed"_s, {}, 120000).isEmpty());
    auto gone = test::awaitObject([&](auto done) { session.app(u"web"_s, done); });
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::NotFound);
}

void TestSessionPandod::desktopEngineHasServicesAndHoldsItsDataDirectory()
{
    QTemporaryDir dir;
    desktop::InProcessOptions options;
    options.engine.dataDir = dir.path();
    options.engine.reconcileIntervalMs = 0;
    options.engine.healthTickMs = 0; // no probes of the containers unless a test asks
    options.userName = u"owner"_s;
    options.edge = wiring::EdgeChoice::InProcess; // an edge of its own would outlive the test
    desktop::InProcessSession local(options);
    local.open();
    QString why;
    QVERIFY2(test::awaitConnected(local, &why, 60000), qPrintable(why));
    QFile idFile(dir.filePath(u"install-id"_s));
    QVERIFY(idFile.open(QIODevice::ReadOnly));
    const QString installId = QString::fromUtf8(idFile.readAll()).trimmed();
    QVERIFY(!installId.isEmpty() && installId != u"default"_s);
    adapters::docker::DockerServiceProvisioner services;
    auto cleanUp = qScopeGuard([&] {
        // The app's containers first: the services' network goes with its last user.
        removeObjectsOf(installId);
        discardResult(services.remove(installId, u"withdb"_s, u"cache"_s, true), "best effort: the test's own objects");
        removeObjectsOf(installId);
    });

    // An app with a service is planned, provisioned and served, as on pandod.
    test::EventLog events(local);
    auto created = test::awaitObject([&](auto done) {
        local.createApp(helloSpec(u"withdb"_s, m_repo, u"services:\n  cache: { kind: redis }\n"_s), done);
    });
    VERIFY_OK(created);
    auto queued = test::awaitObject([&](auto done) { local.deploy(u"withdb"_s, u"main"_s, done); });
    VERIFY_OK(queued);
    const QString id = queued->value(u"id"_s).toString();
    const QJsonObject end = deployEnd(events, id);
    QVERIFY2(end.value(u"type"_s).toString() == u"deploy.succeeded"_s,
             qPrintable(QString::fromUtf8(QJsonDocument(end).toJson())));
    auto running = services.list(installId, u"withdb"_s);
    VERIFY_OK(running);
    QCOMPARE(running->size(), 1);

    // A pandod on the desktop's data directory is refused and says why; the desktop goes on.
    QProcess daemon;
    daemon.start(binaryDir() + u"/app/daemon/pandod"_s, {u"--data-dir"_s, dir.path(), u"--listen"_s, u"127.0.0.1:0"_s});
    QVERIFY(daemon.waitForFinished(30000));
    QCOMPARE(daemon.exitCode(), 1);
    const QString said = QString::fromUtf8(daemon.readAllStandardError());
    QVERIFY2(said.contains(u"uses this data directory"_s), qPrintable(said));
    QVERIFY2(said.contains(u"hint: "_s), qPrintable(said));
    auto app = test::awaitObject([&](auto done) { local.app(u"withdb"_s, done); });
    VERIFY_OK(app);
    QCOMPARE(app->value(u"status"_s).toString(), u"running"_s);
}

QTEST_GUILESS_MAIN(TestSessionPandod)
#include "tst_sessionpandod.moc"
