// pandod and the pando CLI as a user runs them: real processes, a real Docker engine, real git
// repositories. Covers the first start, a deploy through the CLI, bad input catalogue, and a
// SIGKILL in the middle of a deploy.

#include "adapters/runtime/incus/incusruntime.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/incus/incusharness.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/ports.h"

#include "adapters/runtime/docker/dockerruntime.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSslSocket>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/stat.h>

using namespace pando;
using namespace pando::test;

namespace {

struct Run {
    int exitCode = -1; // -1: it crashed or was killed
    QByteArray out;
    QByteArray err;
    // For a failed check: how it ended and everything it said.
    QByteArray told() const { return "exit " + QByteArray::number(exitCode) + "\nstdout: " + out + "\nstderr: " + err; }
};

} // namespace

class TestPandod : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void firstStartWritesTokenAndGuardsRoutes();
    void deployThroughTheCli();
    void badInputIsRefusedWithNothingCreated_data();
    void badInputIsRefusedWithNothingCreated();
    void sigkillMidDeployIsSettledOnRestart();
    void incusDeployIsSettledAfterSigkill();
    void auditTrailListsAndVerifies();
    void servesHttpsWithItsOwnCertificate();

private:
    bool startDaemon();
    void killDaemon(int signal);
    // Waits at most waitMs for the command, then kills it (exit code -1).
    Run cli(const QStringList &args, const QByteArray &stdinData = {}, int waitMs = 180000);
    QJsonObject cliJson(const QStringList &args);
    // Deploys branch (a slow build) of app, SIGKILLs pandod during the build and starts it
    // again; the deploy's id once the restart settled it as interrupted, empty otherwise.
    QString killMidBuildAndRestart(const QString &app, const QString &branch);

    QTemporaryDir m_tmp;
    GitFixture m_git;
    QString m_repo;
    QString m_dataDir;
    QString m_installId;
    int m_port = 0;
    QString m_token;
    std::unique_ptr<QProcess> m_daemon;
    adapters::docker::DockerRuntime m_docker;
};

void TestPandod::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), QStringLiteral("git"));
    QVERIFY(DockerHarness::ensureBaseImage());
    m_repo = m_git.createRepository(QStringLiteral("web"));
    QVERIFY(!m_git.commit(QStringLiteral("web"), QStringLiteral("main"), helloApp("hello")).isEmpty());
    m_dataDir = m_tmp.path() + QStringLiteral("/data");
    m_installId = QStringLiteral("e2e-%1").arg(QRandomGenerator::global()->generate(), 8, 16, QLatin1Char('0'));
    m_port = unusedPort();
    QVERIFY(startDaemon());
}

void TestPandod::cleanupTestCase()
{
    killDaemon(SIGTERM);
    const adapters::Labels mine{{QLatin1String(adapters::LabelInstall), m_installId}};
    if (auto containers = m_docker.containers(mine))
        for (const auto &c : std::as_const(*containers))
            discardResult(m_docker.remove(c.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
    if (auto images = m_docker.images(mine))
        for (const auto &i : std::as_const(*images))
            discardResult(m_docker.removeImage(i.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
}

bool TestPandod::startDaemon()
{
    m_daemon = std::make_unique<QProcess>();
    m_daemon->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_daemon->start(binaryDir() + QStringLiteral("/app/daemon/pandod"),
                    {QStringLiteral("--data-dir"), m_dataDir, QStringLiteral("--listen"),
                     QStringLiteral("127.0.0.1:%1").arg(m_port), QStringLiteral("--install-id"), m_installId,
                     QStringLiteral("--reconcile-interval"), QStringLiteral("500")});
    if (!m_daemon->waitForStarted(5000))
        return false;
    for (int i = 0; i < 200; ++i) {
        if (httpGet(QUrl(QStringLiteral("http://127.0.0.1:%1/api/v1/health").arg(m_port)), 500).status == 200)
            return true;
        if (m_daemon->state() != QProcess::Running)
            return false;
        QTest::qWait(50);
    }
    return false;
}

void TestPandod::killDaemon(int signal)
{
    if (!m_daemon || m_daemon->state() != QProcess::Running)
        return;
    ::kill(pid_t(m_daemon->processId()), signal);
    m_daemon->waitForFinished(30000);
}

Run TestPandod::cli(const QStringList &args, const QByteArray &stdinData, int waitMs)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PANDO_SERVER"), QStringLiteral("http://127.0.0.1:%1").arg(m_port));
    env.insert(QStringLiteral("PANDO_TOKEN"), m_token);
    p.setProcessEnvironment(env);
    p.start(binaryDir() + QStringLiteral("/app/cli/pando"), args);
    p.waitForStarted();
    if (!stdinData.isEmpty())
        p.write(stdinData);
    p.closeWriteChannel();
    Run r;
    if (!p.waitForFinished(waitMs)) {
        p.kill();
        p.waitForFinished();
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QJsonObject TestPandod::cliJson(const QStringList &args)
{
    const Run r = cli(QStringList(args) << QStringLiteral("--json"));
    return QJsonDocument::fromJson(r.out).object();
}

void TestPandod::firstStartWritesTokenAndGuardsRoutes()
{
    const QString path = m_dataDir + QStringLiteral("/initial-admin-token");
    QFile file(path);
    QVERIFY2(file.open(QIODevice::ReadOnly), "the first start writes the initial admin token");
    m_token = QString::fromUtf8(file.readAll()).trimmed();
    QVERIFY(m_token.startsWith(QLatin1String("pando_")));
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));

    // No route but health answers without the token.
    QCOMPARE(httpGet(QUrl(QStringLiteral("http://127.0.0.1:%1/api/v1/apps").arg(m_port))).status, 401);
    const QString saved = m_token;
    m_token = QStringLiteral("pando_wrong");
    const Run denied = cli({QStringLiteral("apps"), QStringLiteral("list")});
    QCOMPARE(denied.exitCode, 1);
    m_token = saved;
}

void TestPandod::deployThroughTheCli()
{
    QTemporaryDir dir;
    const QString specPath = dir.path() + QStringLiteral("/web.yaml");
    QFile spec(specPath);
    QVERIFY(spec.open(QIODevice::WriteOnly));
    spec.write(helloSpec(QStringLiteral("web"), m_repo));
    spec.close();

    Run created = cli({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), specPath});
    QVERIFY2(created.exitCode == 0, created.told().constData());
    Run deployed = cli({QStringLiteral("deploy"), QStringLiteral("web"), QStringLiteral("--wait")});
    QVERIFY2(deployed.exitCode == 0, QByteArray(deployed.out + deployed.err).constData());
    for (const char *step : {"fetch", "build", "health", "switch"})
        QVERIFY2(deployed.out.contains(step), deployed.out.constData());
    // Docker's own build output (BuildKit's, as `docker build --progress=plain` says it), each
    // line under its step, before the build's end.
    const qsizetype firstLine = deployed.out.indexOf("\n  build | #1 [internal] load remote build context");
    QVERIFY2(firstLine > 0 && firstLine < deployed.out.indexOf("\n  ✓ build"), deployed.out.constData());

    const QJsonObject app = cliJson({QStringLiteral("apps"), QStringLiteral("show"), QStringLiteral("web")});
    const QString url = app.value(QStringLiteral("url")).toString();
    QVERIFY2(url.startsWith(QLatin1String("http://127.0.0.1:")), qPrintable(url));
    const HttpAnswer answer = httpGet(QUrl(url));
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.trimmed(), QByteArray("hello"));

    const Run list =
        cli({QStringLiteral("deploys"), QStringLiteral("list"), QStringLiteral("web"), QStringLiteral("--json")});
    QCOMPARE(list.exitCode, 0);
    QVERIFY(list.out.contains("succeeded"));
    // httpd logs nothing by default; the tail must still answer.
    QCOMPARE(
        cli({QStringLiteral("logs"), QStringLiteral("web"), QStringLiteral("--tail"), QStringLiteral("10")}).exitCode,
        0);

    // A command in the app's container: its input, its two streams apart, its exit code as pando's.
    const Run exec = cli({QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("web"), QStringLiteral("--"),
                          QStringLiteral("sh"), QStringLiteral("-c"),
                          QStringLiteral("read name; echo \"hi $name\"; cat /www/index.html; echo oops >&2; exit 4")},
                         "pando\n");
    QCOMPARE(exec.exitCode, 4);
    QCOMPARE(exec.out, QByteArray("hi pando\nhello"));
    QCOMPARE(exec.err, QByteArray("oops\n"));
    const Run missing = cli({QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("web"),
                             QStringLiteral("--"), QStringLiteral("no-such-tool")});
    QVERIFY2(missing.exitCode == 126 || missing.exitCode == 127, missing.told().constData());
    QVERIFY2(missing.out.contains("no-such-tool") || missing.err.contains("no-such-tool"), missing.told().constData());

    // The engine builder's own cache (BuildKit's, which built web) is said beside the install's.
    const Run capacity = cli({QStringLiteral("capacity")});
    QCOMPARE(capacity.exitCode, 0);
    QVERIFY2(capacity.out.contains("docker builder cache (BuildKit's, every build's on the engine): ") &&
                 capacity.out.contains("reclaimable; docker builder prune trims it"),
             capacity.told().constData());
}

void TestPandod::badInputIsRefusedWithNothingCreated_data()
{
    QTest::addColumn<QByteArray>("spec");
    QTest::addColumn<QString>("expected"); // part of the one-line reason

    const QByteArray good = helloSpec(QStringLiteral("bad"), QStringLiteral("REPO"));
    QTest::newRow("malformed yaml") << QByteArray("name: bad\nrun: [port: 1\n") << QStringLiteral("line ");
    QTest::newRow("unknown field") << QByteArray(good).replace("  port: 8080", "  prot: 8080")
                                   << QStringLiteral("run.prot");
    QTest::newRow("wrong type") << QByteArray(good).replace("port: 8080", "port: eighty") << QStringLiteral("run.port");
    QTest::newRow("shell metacharacters in name")
        << QByteArray(good).replace("name: bad", "name: a;rm -rf") << QStringLiteral("name");
    QTest::newRow("leading dash in name")
        << QByteArray(good).replace("name: bad", "name: -bad") << QStringLiteral("name");
    QTest::newRow("ext:: url") << QByteArray(good).replace("REPO", "ext::sh -c touch% /tmp/pwned")
                               << QStringLiteral("source.repo");
    QTest::newRow("upload-pack url") << QByteArray(good).replace("REPO", "--upload-pack=touch /tmp/x")
                                     << QStringLiteral("source.repo");
    QTest::newRow("dockerfile escapes context")
        << QByteArray(good).replace("run:", "build:\n  dockerfile: ../../etc/passwd\nrun:")
        << QStringLiteral("build.dockerfile");
    QTest::newRow("port already taken") << QByteArray(good + "route:\n  port: TAKENPORT\n")
                                        << QStringLiteral("already in use");
    QTest::newRow("missing ref") << QByteArray(good).replace("ref: main", "ref: no-such-ref")
                                 << QStringLiteral("no-such-ref");
    QByteArray deep = "name: bad\nx: ";
    deep += QByteArray(100, '[');
    QTest::newRow("nested too deep") << deep << QStringLiteral("deep");
    QTest::newRow("over 1 MiB") << QByteArray(good + "# " + QByteArray(1100 * 1024, 'x') + "\n")
                                << QStringLiteral("more than the limit");
}

void TestPandod::badInputIsRefusedWithNothingCreated()
{
    QFETCH(QByteArray, spec);
    QFETCH(QString, expected);
    spec.replace("REPO", m_repo.toUtf8());
    QTcpServer squatter; // somebody else's server on the port the spec asks for
    QVERIFY(squatter.listen(QHostAddress::LocalHost, 0));
    spec.replace("TAKENPORT", QByteArray::number(squatter.serverPort()));
    const QJsonObject before = cliJson({QStringLiteral("apps"), QStringLiteral("list")});

    const Run r =
        cli({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), QStringLiteral("-")}, spec);
    QCOMPARE(r.exitCode, 1);
    const QString err = QString::fromUtf8(r.err).trimmed();
    QVERIFY2(!err.isEmpty(), "a refusal says why");
    QVERIFY2(err.split(QLatin1Char('\n')).first().contains(expected, Qt::CaseInsensitive), qPrintable(err));
    QCOMPARE(cliJson({QStringLiteral("apps"), QStringLiteral("list")}), before);
}

QString TestPandod::killMidBuildAndRestart(const QString &app, const QString &branch)
{
    // A build that takes a while, with content no cache has seen.
    const QByteArray nonce = QByteArray::number(QRandomGenerator::global()->generate64());
    if (m_git.commit(QStringLiteral("web"), branch, helloApp("slow", "RUN echo " + nonce + " > /nonce && sleep 6\n"))
            .isEmpty())
        return {};
    const QString id = cliJson({QStringLiteral("deploy"), app, QStringLiteral("--ref"), branch})
                           .value(QStringLiteral("id"))
                           .toString();
    if (id.isEmpty())
        return {};
    // Wait until the build runs, then kill pandod without a chance to clean up.
    QElapsedTimer building;
    building.start();
    while (!cli({QStringLiteral("deploys"), QStringLiteral("show"), id, QStringLiteral("--json")})
                .out.contains("\"build\"")) {
        if (building.elapsed() > 30000)
            return {};
        QTest::qWait(100);
    }
    QTest::qWait(1000);
    killDaemon(SIGKILL);
    if (!startDaemon())
        return {};
    // The restart settles the cut-off deploy as failed.
    QJsonObject settled;
    QElapsedTimer settling;
    settling.start();
    while (
        (settled = cliJson({QStringLiteral("deploys"), QStringLiteral("show"), id})).value(QStringLiteral("status")) !=
        QLatin1String("failed")) {
        if (settling.elapsed() > 30000)
            return {};
        QTest::qWait(100);
    }
    if (!settled.value(QStringLiteral("error")).toString().contains(QLatin1String("interrupted"))) {
        qWarning("settled without saying it was interrupted: %s",
                 qPrintable(settled.value(QStringLiteral("error")).toString()));
        return {};
    }
    return id;
}

void TestPandod::sigkillMidDeployIsSettledOnRestart()
{
    const QString id = killMidBuildAndRestart(QStringLiteral("web"), QStringLiteral("slow"));
    QVERIFY(!id.isEmpty());

    // Nothing of the cut-off deploy is left (a build Docker finishes after the kill included).
    const adapters::Labels ofDeploy{{QLatin1String(adapters::LabelInstall), m_installId},
                                    {QLatin1String(adapters::LabelDeploy), id}};
    QTRY_VERIFY_WITH_TIMEOUT(m_docker.containers(ofDeploy)->isEmpty() &&
                                 m_docker.imageId(QStringLiteral("pando/web:") + id).error().code ==
                                     ErrorCode::NotFound,
                             30000);
    // The previous version still serves.
    const QJsonObject app = cliJson({QStringLiteral("apps"), QStringLiteral("show"), QStringLiteral("web")});
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(QUrl(app.value(QStringLiteral("url")).toString())).body.trimmed(),
                              QByteArray("hello"), 15000);
}

void TestPandod::incusDeployIsSettledAfterSigkill()
{
    // The same on Incus: pandod finds the local incusd by itself; the app asks for it.
    QString why;
    PANDO_REQUIRE_COMPONENT(IncusHarness::available(&why), QStringLiteral("Incus: ") + why);
    // An instance's start and its address can take a while beside the rest of the suite: the
    // health check waits for it longer than for a container.
    const QByteArray spec = helloSpec(QStringLiteral("webi"), m_repo, QStringLiteral("runtime: incus\n"))
                                .replace("timeout: 20s", "timeout: 90s");
    QCOMPARE(cli({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), QStringLiteral("-")}, spec)
                 .exitCode,
             0);
    // Longer than the deploy's own deadlines (an instance's start, 120 s, then the health check,
    // 90 s), so that a slow Incus ends in the CLI's own verdict, never in the test killing it
    // (a CI run saw Incus take minutes to start the instance beside the sanitizer builds).
    const Run first = cli({QStringLiteral("deploy"), QStringLiteral("webi"), QStringLiteral("--wait")}, {}, 300000);
    QVERIFY2(first.exitCode == 0, first.told().constData());
    const QJsonObject app = cliJson({QStringLiteral("apps"), QStringLiteral("show"), QStringLiteral("webi")});
    QCOMPARE(httpGet(QUrl(app.value(QStringLiteral("url")).toString())).body.trimmed(), QByteArray("hello"));

    const QString id = killMidBuildAndRestart(QStringLiteral("webi"), QStringLiteral("slow-incus"));
    QVERIFY(!id.isEmpty());
    // No instance and no image of the cut-off deploy, in Incus or in Docker (the builder).
    adapters::incus::IncusRuntime incus;
    const adapters::Labels ofDeploy{{QLatin1String(adapters::LabelInstall), m_installId},
                                    {QLatin1String(adapters::LabelDeploy), id}};
    const QString tag = QStringLiteral("pando/webi:") + id;
    auto incusHasTag = [&incus, &tag] {
        auto images = incus.images({});
        if (!images)
            return true;
        for (const auto &image : std::as_const(*images))
            if (image.tags.contains(tag))
                return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(incus.containers(ofDeploy)->isEmpty() && !incusHasTag() &&
                                 m_docker.imageId(tag).error().code == ErrorCode::NotFound,
                             30000);
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(QUrl(app.value(QStringLiteral("url")).toString())).body.trimmed(),
                              QByteArray("hello"), 15000);

    const Run removed = cli({QStringLiteral("apps"), QStringLiteral("rm"), QStringLiteral("webi")});
    QVERIFY2(removed.exitCode == 0, removed.told().constData());
    const adapters::Labels ofApp{{QLatin1String(adapters::LabelInstall), m_installId},
                                 {QLatin1String(adapters::LabelApp), QStringLiteral("webi")}};
    QTRY_VERIFY_WITH_TIMEOUT(incus.containers(ofApp)->isEmpty(), 60000);
}

void TestPandod::auditTrailListsAndVerifies()
{
    // What happened above is on the record, with who did it.
    const QJsonObject created = cliJson(
        {QStringLiteral("audit"), QStringLiteral("list"), QStringLiteral("--action"), QStringLiteral("app.create")});
    QJsonObject line; // the creation of app "web" (the Incus test made "webi" after it)
    for (const QJsonValue &v : created.value(QStringLiteral("lines")).toArray())
        if (v.toObject().value(QStringLiteral("object")).toString() == QLatin1String("app/web"))
            line = v.toObject();
    QVERIFY(!line.isEmpty());
    QCOMPARE(line.value(QStringLiteral("actor")).toString(), QStringLiteral("token:initial-admin"));
    const Run intact = cli({QStringLiteral("audit"), QStringLiteral("verify")});
    QVERIFY2(intact.exitCode == 0, intact.told().constData());
    QVERIFY(intact.out.contains("intact"));

    // Someone edits a line in the database: verify names it.
    const qint64 seq = qint64(line.value(QStringLiteral("seq")).toDouble());
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("tamper"));
        db.setDatabaseName(m_dataDir + QStringLiteral("/pando.db"));
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.prepare(QStringLiteral("UPDATE audit_log SET actor = 'someone-else' WHERE seq = ?")));
        q.addBindValue(seq);
        QVERIFY(q.exec());
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("tamper"));
    const Run broken = cli({QStringLiteral("audit"), QStringLiteral("verify")});
    QCOMPARE(broken.exitCode, 1);
    QVERIFY2(broken.err.contains(QByteArray("broken at line " + QByteArray::number(seq))), broken.err.constData());
}

// --tls: pandod makes a certificate (key owner-only) naming --tls-name, says its fingerprint,
// serves HTTPS with it (plain HTTP gets no answer), and keeps it across a restart; a key that is
// not the certificate's is refused at start, naming the key file.
void TestPandod::servesHttpsWithItsOwnCertificate()
{
    const QString dataDir = m_tmp.path() + QStringLiteral("/tls-data");
    const int port = unusedPort();
    auto start = [&](const QStringList &extra, QByteArray *said) {
        auto daemon = std::make_unique<QProcess>();
        daemon->setProcessChannelMode(QProcess::MergedChannels);
        daemon->start(binaryDir() + QStringLiteral("/app/daemon/pandod"),
                      QStringList{QStringLiteral("--data-dir"), dataDir, QStringLiteral("--listen"),
                                  QStringLiteral("127.0.0.1:%1").arg(port), QStringLiteral("--install-id"),
                                  m_installId + QStringLiteral("-tls")} +
                          extra);
        daemon->waitForStarted(5000);
        for (int i = 0; i < 200 && daemon->state() == QProcess::Running && !said->contains("fingerprint"); ++i) {
            daemon->waitForReadyRead(50);
            *said += daemon->readAll();
        }
        return daemon;
    };
    auto stop = [](QProcess &daemon) {
        ::kill(pid_t(daemon.processId()), SIGTERM);
        daemon.waitForFinished(30000);
    };
    // One HTTPS GET of the health route, trusting nothing but the pinned fingerprint.
    auto healthOverTls = [&](const QString &fingerprint) -> QByteArray {
        QSslSocket socket;
        socket.setPeerVerifyMode(QSslSocket::VerifyNone);
        socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), quint16(port));
        if (!socket.waitForEncrypted(5000))
            return "no handshake: " + socket.errorString().toUtf8();
        const QString seen = QString::fromLatin1(socket.peerCertificate().digest(QCryptographicHash::Sha256).toHex());
        if (seen != fingerprint)
            return "certificate " + seen.toUtf8();
        socket.write("GET /api/v1/health HTTP/1.1\r\nHost: pando.test\r\n\r\n");
        QByteArray answer;
        while (!answer.contains("\r\n\r\n") && socket.waitForReadyRead(5000))
            answer += socket.readAll();
        return answer.left(answer.indexOf("\r\n"));
    };

    QByteArray said;
    auto daemon = start({QStringLiteral("--tls"), QStringLiteral("--tls-name"), QStringLiteral("pando.test")}, &said);
    QVERIFY2(said.contains("listening on https://127.0.0.1:"), said.constData());
    const qsizetype at = said.indexOf("SHA-256 fingerprint ");
    QVERIFY2(at >= 0, said.constData());
    const QString fingerprint = QString::fromLatin1(said.mid(at + 20, 64));
    QCOMPARE(healthOverTls(fingerprint), QByteArray("HTTP/1.1 200 OK"));
    QCOMPARE(httpGet(QUrl(QStringLiteral("http://127.0.0.1:%1/api/v1/health").arg(port)), 2000).status, 0);
    struct stat key {};
    QCOMPARE(::stat(QFile::encodeName(dataDir + QStringLiteral("/tls/server.key")).constData(), &key), 0);
    QCOMPARE(key.st_mode & 0777, mode_t(0600));
    const QList<QSslCertificate> certs = QSslCertificate::fromPath(dataDir + QStringLiteral("/tls/server.crt"));
    QCOMPARE(certs.size(), 1);
    QVERIFY(certs.first().subjectAlternativeNames().values(QSsl::DnsEntry).contains(QStringLiteral("pando.test")));
    stop(*daemon);

    said.clear();
    daemon = start({QStringLiteral("--tls"), QStringLiteral("--tls-name"), QStringLiteral("pando.test")}, &said);
    QVERIFY2(said.contains(fingerprint.toLatin1()), said.constData()); // the same certificate again
    QCOMPARE(healthOverTls(fingerprint), QByteArray("HTTP/1.1 200 OK"));
    stop(*daemon);

    // Someone else's key with this certificate: refused before anything listens.
    QTemporaryDir other;
    QVERIFY(other.isValid());
    QByteArray otherSaid;
    {
        QProcess maker;
        maker.start(QStringLiteral("openssl"),
                    {QStringLiteral("ecparam"), QStringLiteral("-name"), QStringLiteral("prime256v1"),
                     QStringLiteral("-genkey"), QStringLiteral("-noout"), QStringLiteral("-out"),
                     other.filePath(QStringLiteral("other.key"))});
        QVERIFY(maker.waitForFinished(10000) && maker.exitCode() == 0);
    }
    daemon = start({QStringLiteral("--tls-cert"), dataDir + QStringLiteral("/tls/server.crt"),
                    QStringLiteral("--tls-key"), other.filePath(QStringLiteral("other.key"))},
                   &otherSaid);
    QVERIFY(daemon->state() == QProcess::NotRunning || daemon->waitForFinished(10000));
    otherSaid += daemon->readAll();
    QCOMPARE(daemon->exitCode(), 1);
    QVERIFY2(otherSaid.contains("not the private key of") && otherSaid.contains("other.key"), otherSaid.constData());
}

QTEST_GUILESS_MAIN(TestPandod)
#include "tst_pandod.moc"
