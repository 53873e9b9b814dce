// Apps keep answering while pandod does not run: pandod with its default edge (Caddy, from
// Debian) deploys an app to a real Docker engine, then a client polls the app's address while
// pandod is stopped, SIGKILLed, started again (adopting the edge as it is) and redeploys. Not one
// request may fail, and the second pandod serves the new version through the same address. A
// second pandod gets its edge's certificates itself (--edge-certificates pando) from Pebble.

#include "adapters/routing/caddy/caddyedge.h"
#include "adapters/runtime/docker/dockerruntime.h"
#include "tests/adapters/caddy/edgetesting.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/curlget.h"
#include "tests/support/gitfixture.h"
#include "tests/support/ports.h"

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

// One pandod with its default edge (Caddy) on its own data directory, install id and API port,
// and the CLI talking to it.
class Daemon {
public:
    explicit Daemon(const QString &dataDir, QStringList extraArgs = {})
        : m_dataDir(dataDir),
          m_installId(u"edge-%1"_s.arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'))),
          m_port(unusedPort()), m_extraArgs(std::move(extraArgs))
    {}
    ~Daemon()
    {
        stop(SIGTERM);
        discardResult(adapters::caddy::CaddyEdge({.stateDir = m_dataDir + u"/edge"_s}).stop(),
                      "best-effort clean-up: a leftover Caddy serves only this test's loopback ports");
        adapters::docker::DockerRuntime docker;
        const adapters::Labels mine{{QLatin1String(adapters::LabelInstall), m_installId}};
        if (auto containers = docker.containers(mine))
            for (const auto &c : std::as_const(*containers))
                discardResult(docker.remove(c.id), "best-effort clean-up; leftovers carry this test's label");
        if (auto images = docker.images(mine))
            for (const auto &i : std::as_const(*images))
                discardResult(docker.removeImage(i.id), "best-effort clean-up; leftovers carry this test's label");
    }
    Daemon(const Daemon &) = delete;
    Daemon &operator=(const Daemon &) = delete;

    QString dataDir() const { return m_dataDir; }

    bool start()
    {
        m_process = std::make_unique<QProcess>();
        m_process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"PANDO_EDGE"_s, u"caddy"_s); // the default where Caddy is installed; the suite sets in-process
        m_process->setProcessEnvironment(env);
        m_process->start(binaryDir() + u"/app/daemon/pandod"_s,
                         QStringList{u"--data-dir"_s, m_dataDir, u"--listen"_s, u"127.0.0.1:%1"_s.arg(m_port),
                                     u"--install-id"_s, m_installId, u"--reconcile-interval"_s, u"500"_s} +
                             m_extraArgs);
        if (!m_process->waitForStarted(5000))
            return false;
        for (int i = 0; i < 400; ++i) {
            if (httpGet(QUrl(u"http://127.0.0.1:%1/api/v1/health"_s.arg(m_port)), 500).status == 200) {
                QFile token(m_dataDir + u"/initial-admin-token"_s);
                if (m_token.isEmpty() && token.open(QIODevice::ReadOnly))
                    m_token = QString::fromUtf8(token.readAll()).trimmed();
                return !m_token.isEmpty();
            }
            if (m_process->state() != QProcess::Running)
                return false;
            QTest::qWait(50);
        }
        return false;
    }
    void stop(int signal)
    {
        if (!m_process || m_process->state() != QProcess::Running)
            return;
        ::kill(pid_t(m_process->processId()), signal);
        m_process->waitForFinished(30000);
    }
    QByteArray cli(const QStringList &args, int *exitCode = nullptr) const
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
    // apps create from the spec, then deploy --wait; the CLI's words when either fails.
    QByteArray createAndDeploy(const QString &name, const QByteArray &spec) const
    {
        QTemporaryDir dir;
        QFile file(dir.filePath(u"app.yaml"_s));
        if (!file.open(QIODevice::WriteOnly) || file.write(spec) != spec.size())
            return "cannot write the spec";
        file.close();
        int code = -1;
        if (QByteArray said = cli({u"apps"_s, u"create"_s, u"-f"_s, file.fileName()}, &code); code != 0)
            return said;
        if (QByteArray said = cli({u"deploy"_s, name, u"--wait"_s}, &code); code != 0)
            return said;
        return {};
    }

private:
    QString m_dataDir;
    QString m_installId;
    int m_port = 0;
    QStringList m_extraArgs;
    QString m_token;
    std::unique_ptr<QProcess> m_process;
};

class TestPandodEdge : public QObject {
    Q_OBJECT

    QTemporaryDir m_tmp;
    GitFixture m_git;
    QString m_repo;

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
    }

    void appsServeWhilePandodIsDown()
    {
        Daemon daemon(m_tmp.path() + u"/data"_s);
        QVERIFY(daemon.start());
        QByteArray said = daemon.createAndDeploy(u"web"_s, helloSpec(u"web"_s, m_repo));
        QVERIFY2(said.isEmpty(), said.constData());
        int code = -1;
        const QString url = QJsonDocument::fromJson(daemon.cli({u"apps"_s, u"show"_s, u"web"_s, u"--json"_s}))
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
        daemon.stop(SIGTERM);
        int before = polled();
        QTRY_VERIFY_WITH_TIMEOUT(polled() > before + 20, 10000);
        QVERIFY(daemon.start());
        daemon.stop(SIGKILL);
        before = polled();
        QTRY_VERIFY_WITH_TIMEOUT(polled() > before + 20, 10000);

        // Back again: it adopts the edge, and a redeploy switches through it.
        QVERIFY(daemon.start());
        QVERIFY(!m_git.commit(u"web"_s, u"main"_s, helloApp("two")).isEmpty());
        said = daemon.cli({u"deploy"_s, u"web"_s, u"--wait"_s}, &code);
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
        QByteArray status = daemon.cli({u"edge"_s, u"status"_s}, &code);
        QVERIFY2(code == 0 && status.contains("caddy") && status.contains("apps keep answering"), status.constData());
        QFile pidFile(daemon.dataDir() + u"/edge/caddy.pid"_s);
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        QVERIFY(::kill(pid_t(pidFile.readAll().trimmed().toLongLong()), SIGKILL) == 0);
        QTRY_VERIFY(httpGet(QUrl(url), 500).status == 0);
        status = daemon.cli({u"edge"_s, u"status"_s}, &code);
        // Unless the reconciler was quicker than this command.
        if (code != 0)
            QVERIFY2(code == 1 && status.contains("not answering"), status.constData());
        QTRY_COMPARE_WITH_TIMEOUT(httpGet(QUrl(url)).body.trimmed(), QByteArray("two"), 10000);
        status = daemon.cli({u"edge"_s, u"status"_s}, &code);
        QVERIFY2(code == 0 && status.contains("serving"), status.constData());
    }

    // pandod --edge-certificates pando: pandod itself orders a tls: auto name's certificate from the
    // CA (Pebble), the Caddy edge answers the challenge and serves it, the CLI shows its issuer; a
    // pandod SIGKILLed and started again while the CA is gone serves the same certificate, with no
    // new order and no error.
    void pandodGetsTheEdgesCertificates()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(Pebble::available(&why), why);
        PebbleSite site;
        QVERIFY2(site.startPebble(), qPrintable(site.pebble->error()));
        const QString root = site.pebble->issuingRootFile();
        QVERIFY2(!root.isEmpty(), qPrintable(site.pebble->error()));
        const QString repo = m_git.createRepository(u"shop"_s);
        QVERIFY(!m_git.commit(u"shop"_s, u"main"_s, helloApp("shop")).isEmpty());

        Daemon daemon(m_tmp.path() + u"/certified"_s,
                      {u"--edge-listen"_s, u"127.0.0.1"_s, u"--edge-http-port"_s, QString::number(site.http),
                       u"--edge-https-port"_s, QString::number(site.https), u"--acme-ca"_s, site.pebble->directoryUrl(),
                       u"--acme-ca-root"_s, site.pebble->listenerRootFile(), u"--acme-email"_s, u"ops@example.com"_s,
                       u"--edge-certificates"_s, u"pando"_s});
        QVERIFY(daemon.start());
        const QByteArray said = daemon.createAndDeploy(
            u"shop"_s, helloSpec(u"shop"_s, repo, u"route:\n  domains: [shop.example.com]\n  tls: auto\n"_s));
        QVERIFY2(said.isEmpty(), said.constData());
        const QString url = site.url(u"shop.example.com"_s);
        QTRY_COMPARE_WITH_TIMEOUT(curlGet(url, root).body.trimmed(), QByteArray("shop"), 90000);
        QByteArray shown = daemon.cli({u"apps"_s, u"show"_s, u"shop"_s});
        QVERIFY2(shown.contains("https://shop.example.com") && shown.contains("certificate from Pebble"),
                 shown.constData());
        int code = -1;
        QByteArray status = daemon.cli({u"edge"_s, u"status"_s}, &code);
        QVERIFY2(code == 0 && status.contains("shop.example.com") && status.contains("Pebble"), status.constData());

        // Pando's store holds it (its modes: tst_caddyedgecert).
        QFile chain(daemon.dataDir() + u"/edge/certificates/shop.example.com.crt"_s);
        QVERIFY(chain.open(QIODevice::ReadOnly));
        const QByteArray issued = chain.readAll();
        chain.close();
        QVERIFY(issued.startsWith("-----BEGIN CERTIFICATE-----"));

        // The CA goes away and pandod is killed: the name serves on, and a new pandod keeps what it
        // had instead of ordering again (which would fail and say so).
        site.pebble->stop();
        daemon.stop(SIGKILL);
        QCOMPARE(curlGet(url, root).body.trimmed(), QByteArray("shop"));
        QVERIFY(daemon.start());
        QTest::qWait(1500); // three reconciler passes
        QCOMPARE(curlGet(url, root).body.trimmed(), QByteArray("shop"));
        QVERIFY(chain.open(QIODevice::ReadOnly));
        QCOMPARE(chain.readAll(), issued);
        shown = daemon.cli({u"apps"_s, u"show"_s, u"shop"_s});
        QVERIFY2(shown.contains("certificate from Pebble") && !shown.contains("certificate problem"),
                 shown.constData());
    }
};

QTEST_GUILESS_MAIN(TestPandodEdge)
#include "tst_pandodedge.moc"
