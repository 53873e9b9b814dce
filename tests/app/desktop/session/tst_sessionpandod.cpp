// The remote session against a real pandod process with a real Docker engine and a real git
// repository: attach with the install's initial admin token, create an app, deploy it and follow
// it to its end through the event stream, read its steps and logs, remove it.

#include "sessionharness.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"

#include "adapters/runtime/docker/dockerruntime.h"
#include "app/desktop/session/remotesession.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
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

private:
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
    const adapters::Labels mine{{QLatin1String(adapters::LabelInstall), m_installId}};
    if (auto containers = m_docker.containers(mine))
        for (const auto &c : std::as_const(*containers))
            m_docker.remove(c.id);
    if (auto images = m_docker.images(mine))
        for (const auto &i : std::as_const(*images))
            m_docker.removeImage(i.id);
}

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
    QJsonObject end;
    QDeadlineTimer deadline(300000);
    while (end.isEmpty() && !deadline.hasExpired()) {
        end = events.waitFor(u"deploy.succeeded"_s, id, 200);
        if (end.isEmpty())
            end = events.waitFor(u"deploy.failed"_s, id, 200);
    }
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

QTEST_GUILESS_MAIN(TestSessionPandod)
#include "tst_sessionpandod.moc"
