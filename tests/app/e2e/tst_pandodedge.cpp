// Apps keep answering while pandod does not run: pandod with its default edge (Caddy, from
// Debian) deploys an app to a real Docker engine, then a client polls the app's address while
// pandod is stopped, SIGKILLed, started again (adopting the edge as it is) and redeploys. Not one
// request may fail, and the second pandod serves the new version through the same address.

#include "adapters/routing/caddy/caddyedge.h"
#include "adapters/runtime/docker/dockerruntime.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <csignal>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

class TestPandodEdge : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    GitFixture m_git;
    QString m_repo;
    QString m_dataDir;
    QString m_installId;
    int m_port = 0;
    QString m_token;
    std::unique_ptr<QProcess> m_daemon;
    adapters::docker::DockerRuntime m_docker;

    bool startDaemon()
    {
        m_daemon = std::make_unique<QProcess>();
        m_daemon->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PANDO_EDGE"_s, u"caddy"_s); // the default where Caddy is installed; the suite sets in-process
        m_daemon->setProcessEnvironment(env);
        m_daemon->start(binaryDir() + u"/app/daemon/pandod"_s,
                        {u"--data-dir"_s, m_dataDir, u"--listen"_s, u"127.0.0.1:%1"_s.arg(m_port), u"--install-id"_s,
                         m_installId, u"--reconcile-interval"_s, u"500"_s});
        if (!m_daemon->waitForStarted(5000))
            return false;
        for (int i = 0; i < 400; ++i) {
            if (httpGet(QUrl(u"http://127.0.0.1:%1/api/v1/health"_s.arg(m_port)), 500).status == 200)
                return true;
            if (m_daemon->state() != QProcess::Running)
                return false;
            QTest::qWait(50);
        }
        return false;
    }
    void stopDaemon(int signal)
    {
        if (!m_daemon || m_daemon->state() != QProcess::Running)
            return;
        ::kill(pid_t(m_daemon->processId()), signal);
        m_daemon->waitForFinished(30000);
    }
    QByteArray cli(const QStringList &args, int *exitCode = nullptr)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PANDO_SERVER"_s, u"http://127.0.0.1:%1"_s.arg(m_port));
        env.insert(u"PANDO_TOKEN"_s, m_token);
        p.setProcessEnvironment(env);
        p.start(binaryDir() + u"/app/cli/pando"_s, args);
        if (!p.waitForFinished(180000))
            p.kill();
        if (exitCode)
            *exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        return p.readAllStandardOutput() + p.readAllStandardError();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
        PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
        PANDO_REQUIRE_COMPONENT(!adapters::caddy::CaddyEdge::findCaddy().isEmpty(), u"caddy (Debian's caddy)"_s);
        QVERIFY(DockerHarness::ensureBaseImage());
        m_repo = m_git.createRepository(u"web"_s);
        QVERIFY(!m_git.commit(u"web"_s, u"main"_s, helloApp("one")).isEmpty());
        m_dataDir = m_tmp.path() + u"/data"_s;
        m_installId = u"edge-%1"_s.arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        m_port = probe.serverPort();
        probe.close();
        QVERIFY(startDaemon());
        QFile token(m_dataDir + u"/initial-admin-token"_s);
        QVERIFY(token.open(QIODevice::ReadOnly));
        m_token = QString::fromUtf8(token.readAll()).trimmed();
    }

    void cleanupTestCase()
    {
        stopDaemon(SIGTERM);
        discardResult(adapters::caddy::CaddyEdge({.stateDir = m_dataDir + u"/edge"_s}).stop(),
                      "best-effort clean-up: a leftover Caddy serves only this test's loopback port");
        const adapters::Labels mine{{QLatin1String(adapters::LabelInstall), m_installId}};
        if (auto containers = m_docker.containers(mine))
            for (const auto &c : std::as_const(*containers))
                discardResult(m_docker.remove(c.id), "best-effort clean-up; leftovers carry this test's label");
        if (auto images = m_docker.images(mine))
            for (const auto &i : std::as_const(*images))
                discardResult(m_docker.removeImage(i.id), "best-effort clean-up; leftovers carry this test's label");
    }

    void appsServeWhilePandodIsDown()
    {
        QTemporaryDir dir;
        QFile spec(dir.filePath(u"web.yaml"_s));
        QVERIFY(spec.open(QIODevice::WriteOnly));
        spec.write(helloSpec(u"web"_s, m_repo));
        spec.close();
        int code = -1;
        QByteArray said = cli({u"apps"_s, u"create"_s, u"-f"_s, spec.fileName()}, &code);
        QVERIFY2(code == 0, said.constData());
        said = cli({u"deploy"_s, u"web"_s, u"--wait"_s}, &code);
        QVERIFY2(code == 0, said.constData());
        const QString url = QJsonDocument::fromJson(cli({u"apps"_s, u"show"_s, u"web"_s, u"--json"_s}))
                                .object()
                                .value("url"_L1)
                                .toString();
        QCOMPARE(httpGet(QUrl(url)).body.trimmed(), QByteArray("one"));

        std::atomic_bool done{false};
        std::atomic_int ok{0}, failed{0};
        std::atomic_int sawTwo{0};
        QByteArray firstFailure;
        std::thread poller([&] {
            while (!done) {
                const HttpAnswer answer = httpGet(QUrl(url), 3000);
                if (answer.status == 200) {
                    ++ok;
                    if (answer.body.trimmed() == "two")
                        ++sawTwo;
                } else if (failed++ == 0) {
                    firstFailure = QByteArray::number(answer.status) + ' ' + answer.body.left(200);
                }
            }
        });
        const auto polled = [&] {
            return int(ok + failed);
        };

        // A clean stop, then a SIGKILL: the app answers while pandod is gone.
        stopDaemon(SIGTERM);
        int before = polled();
        QTRY_VERIFY_WITH_TIMEOUT(polled() > before + 20, 10000);
        QVERIFY(startDaemon());
        stopDaemon(SIGKILL);
        before = polled();
        QTRY_VERIFY_WITH_TIMEOUT(polled() > before + 20, 10000);

        // Back again: it adopts the edge, and a redeploy switches through it.
        QVERIFY(startDaemon());
        QVERIFY(!m_git.commit(u"web"_s, u"main"_s, helloApp("two")).isEmpty());
        said = cli({u"deploy"_s, u"web"_s, u"--wait"_s}, &code);
        QVERIFY2(code == 0, said.constData());
        QTRY_VERIFY_WITH_TIMEOUT(sawTwo > 5, 10000);
        done = true;
        poller.join();
        QVERIFY2(failed == 0, qPrintable(u"%1 of %2 requests failed, the first: %3"_s.arg(int(failed))
                                             .arg(polled())
                                             .arg(QString::fromUtf8(firstFailure))));
        QCOMPARE(httpGet(QUrl(url)).body.trimmed(), QByteArray("two"));

        // `pando edge status` says what serves; when Caddy dies, it says so and fails, and the
        // reconciler starts it again with the routes it had.
        code = -1;
        QByteArray status = cli({u"edge"_s, u"status"_s}, &code);
        QVERIFY2(code == 0 && status.contains("caddy") && status.contains("apps keep answering"), status.constData());
        QFile pidFile(m_dataDir + u"/edge/caddy.pid"_s);
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        QVERIFY(::kill(pid_t(pidFile.readAll().trimmed().toLongLong()), SIGKILL) == 0);
        QTRY_VERIFY(httpGet(QUrl(url), 500).status == 0);
        status = cli({u"edge"_s, u"status"_s}, &code);
        // Unless the reconciler was quicker than this command.
        if (code != 0)
            QVERIFY2(code == 1 && status.contains("not answering"), status.constData());
        QTRY_COMPARE_WITH_TIMEOUT(httpGet(QUrl(url)).body.trimmed(), QByteArray("two"), 10000);
        status = cli({u"edge"_s, u"status"_s}, &code);
        QVERIFY2(code == 0 && status.contains("serving"), status.constData());
    }
};

QTEST_GUILESS_MAIN(TestPandodEdge)
#include "tst_pandodedge.moc"
