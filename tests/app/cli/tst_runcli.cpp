// `pando jobs|runs` against an install served from this test process, with an in-memory pipeline
// service whose runs play a short script: triggering and following a run to its end with the exit
// code saying how it ended (over the event stream, or by polling where no WebSocket gets
// through), jobs paused and unpaused, and the run's step tree.

#include "tests/app/cli/scriptedpipeline.h"
#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using namespace pando;

namespace {

using Run = test::CliRun;

using test::ScriptedPipelineYaml;

// A TCP proxy to the API that refuses every WebSocket upgrade, as some proxies do: the CLI must
// then poll.
class NoWebSocketProxy : public QTcpServer {
public:
    explicit NoWebSocketProxy(quint16 upstream) : m_upstream(upstream)
    {
        connect(this, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *client = nextPendingConnection())
                serve(client);
        });
    }

private:
    void serve(QTcpSocket *client)
    {
        auto *upstream = new QTcpSocket(client);
        auto head = std::make_shared<QByteArray>();
        auto piping = std::make_shared<bool>(false);
        connect(client, &QTcpSocket::readyRead, client, [=, this] {
            if (*piping) {
                upstream->write(client->readAll());
                return;
            }
            *head += client->readAll();
            if (!head->contains("\r\n\r\n"))
                return;
            if (head->toLower().contains("upgrade: websocket")) {
                ++m_refused;
                client->write("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                client->disconnectFromHost();
                return;
            }
            *piping = true;
            upstream->connectToHost(QHostAddress::LocalHost, m_upstream);
            upstream->write(*head);
        });
        connect(upstream, &QTcpSocket::readyRead, client, [=] { client->write(upstream->readAll()); });
        connect(upstream, &QTcpSocket::disconnected, client, [=] { client->disconnectFromHost(); });
        connect(client, &QTcpSocket::disconnected, client, &QObject::deleteLater);
    }

    quint16 m_upstream;
    int m_refused = 0;

public:
    int refused() const { return m_refused; }
};

} // namespace

class TestRunCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void usageErrors_data();
    void usageErrors();
    void triggerWatch_data();
    void triggerWatch();
    void triggerWatchAborted();
    void watchPollsWithoutWebSocket();
    void triggerWithoutWatch();
    void jobsListPauseAndUnpause();
    void runsListAndShowTree();

private:
    Run pando(const QStringList &args, const QByteArray &input = {});
    QProcessEnvironment environment() const;
    QProcess *startPando(const QStringList &args);

    test::TestInstall m_install;
    QTemporaryDir m_config; // XDG_CONFIG_HOME: no saved login session of the user running the tests
    QString m_binary;
    QString m_succeededRun;
};

// The pipeline "ci" set and unpaused, as its user would.
void TestRunCli::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(QStringLiteral("no pando binary at %1").arg(m_binary)));
    m_install.withPipelines = true;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    QTemporaryFile config;
    QVERIFY(config.open());
    config.write(ScriptedPipelineYaml);
    config.flush();
    const Run set =
        pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci"), QStringLiteral("-c"),
               config.fileName(), QStringLiteral("--unpaused"), QStringLiteral("-y")});
    QVERIFY2(set.code == 0, qPrintable(set.all()));
}

QProcessEnvironment TestRunCli::environment() const
{
    return test::cliEnvironment(m_install.baseUrl(), m_install.token, m_config.path());
}

QProcess *TestRunCli::startPando(const QStringList &args)
{
    auto *process = new QProcess(this);
    process->setProcessEnvironment(environment());
    process->start(m_binary, args);
    return process;
}

Run TestRunCli::pando(const QStringList &args, const QByteArray &input)
{
    return test::runCli(args, environment(), input);
}

void TestRunCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("trigger without job") << QStringList{QStringLiteral("jobs"), QStringLiteral("trigger"),
                                                        QStringLiteral("ci")}
                                         << QStringLiteral("pando: jobs trigger: expected PIPELINE/JOB, got \"ci\"");
    QTest::newRow("runs list, two targets")
        << QStringList{QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("a"), QStringLiteral("b")}
        << QStringLiteral("pando: runs list: unexpected argument \"b\"");
    QTest::newRow("runs list, empty job")
        << QStringList{QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("ci/")}
        << QStringLiteral("pando: runs list: expected PIPELINE or PIPELINE/JOB, got \"ci/\"");
}

void TestRunCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = pando(args);
    QCOMPARE(run.code, 2);
    QCOMPARE(run.errLines().value(0), message);
}

void TestRunCli::triggerWatch_data()
{
    QTest::addColumn<QString>("job");
    QTest::addColumn<int>("code");
    QTest::addColumn<QStringList>("out");
    QTest::addColumn<QString>("err");
    QTest::newRow("succeeded") << QStringLiteral("unit") << 0
                               << QStringList{QStringLiteral("  … get repo"),
                                              QStringLiteral("    repo | fetching repo@abc123"),
                                              QStringLiteral("  ✓ get repo  "),
                                              QStringLiteral("    … task unit"),
                                              QStringLiteral("    ↷ task lint  unchanged"),
                                              QStringLiteral("      unit | all tests passed"),
                                              QStringLiteral("    ✓ task unit  "),
                                              QStringLiteral("  ✓ in_parallel  "),
                                              QStringLiteral("succeeded: ci/unit #")}
                               << QString();
    QTest::newRow("failed") << QStringLiteral("unitfail") << 1
                            << QStringList{QStringLiteral("      unit | 1 test failed"),
                                           QStringLiteral("    ✗ task unit  "), QStringLiteral("failed  exit 1")}
                            << QStringLiteral("failed at step unit: task unit exited with 1");
    QTest::newRow("errored") << QStringLiteral("builderror") << 3 << QStringList{QStringLiteral("    ✗ task unit  ")}
                             << QStringLiteral("errored at step unit: the venue went away");
}

void TestRunCli::triggerWatch()
{
    QFETCH(QString, job);
    QFETCH(int, code);
    QFETCH(QStringList, out);
    QFETCH(QString, err);
    const Run run = pando(
        {QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/") + job, QStringLiteral("--watch")});
    QVERIFY2(run.code == code, qPrintable(run.all()));
    QVERIFY2(run.out.startsWith(QStringLiteral("started ci/%1 #").arg(job)), qPrintable(run.out));
    for (const QString &expected : out)
        QVERIFY2(run.out.contains(expected), qPrintable(QStringLiteral("no \"%1\" in:\n%2").arg(expected, run.all())));
    // Each event once, however the backlog and the live stream met.
    QCOMPARE(run.out.count(QStringLiteral("task unit  ")), 1);
    QCOMPARE(run.out.count(QStringLiteral("fetching repo@abc123")), 1);
    if (err.isEmpty()) {
        QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
        m_succeededRun = QRegularExpression(QStringLiteral("\\(run (r[0-9a-f]+)\\)")).match(run.out).captured(1);
    } else {
        const QString first = run.errLines().value(0);
        QVERIFY2(first.startsWith(QStringLiteral("pando: run r")) && first.endsWith(err), qPrintable(run.err));
        QVERIFY2(run.errLines().value(1).startsWith(QStringLiteral("hint: see the whole run with: pando runs show r")),
                 qPrintable(run.err));
    }
}

void TestRunCli::triggerWatchAborted()
{
    // -w: fly's short form of --watch.
    std::unique_ptr<QProcess> process(startPando(
        {QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/slowjob"), QStringLiteral("-w")}));
    QSignalSpy finished(process.get(), &QProcess::finished);
    QString runId;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto runs = m_install.pipelines->runs(QStringLiteral("ci"), QStringLiteral("slowjob"), 1);
            if (runs && !runs->isEmpty() && runs->first().status == core::RunStatus::Running)
                runId = runs->first().id;
            return !runId.isEmpty();
        }(),
        10000);
    const Run abort = pando({QStringLiteral("runs"), QStringLiteral("abort"), runId});
    QVERIFY2(abort.code == 0, qPrintable(abort.all()));
    QCOMPARE(abort.out.trimmed(), QStringLiteral("aborting run ") + runId);
    // It may have ended already, while the event loop ran for the abort command.
    QVERIFY(!finished.isEmpty() || finished.wait(20000));
    const QString err = QString::fromUtf8(process->readAllStandardError());
    QCOMPARE(process->exitCode(), 4);
    QVERIFY2(err.startsWith(QStringLiteral("pando: run %1: ci/slowjob #1 was aborted").arg(runId)), qPrintable(err));

    // Watching a run that has ended gives the same answer at once.
    const Run again = pando({QStringLiteral("runs"), QStringLiteral("watch"), runId});
    QCOMPARE(again.code, 4);
    QVERIFY2(again.out.contains(QStringLiteral("✓ get repo")), qPrintable(again.all()));
}

void TestRunCli::watchPollsWithoutWebSocket()
{
    NoWebSocketProxy proxy(m_install.port);
    QVERIFY(proxy.listen(QHostAddress::LocalHost, 0));
    const QString server = QStringLiteral("http://127.0.0.1:%1").arg(proxy.serverPort());
    Run run = pando({QStringLiteral("--server"), server, QStringLiteral("jobs"), QStringLiteral("trigger"),
                     QStringLiteral("ci/unitfail"), QStringLiteral("--watch")});
    QVERIFY2(run.code == 1, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("      unit | 1 test failed")), qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("    ✗ task unit  ")), qPrintable(run.all()));
    QCOMPARE(run.out.count(QStringLiteral("fetching repo@abc123")), 1);
    QVERIFY2(run.errLines().value(0).endsWith(QStringLiteral("failed at step unit: task unit exited with 1")),
             qPrintable(run.err));

    run = pando({QStringLiteral("--server"), server, QStringLiteral("jobs"), QStringLiteral("trigger"),
                 QStringLiteral("ci/unit"), QStringLiteral("--watch")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("succeeded: ci/unit #")), qPrintable(run.all()));
    QCOMPARE(proxy.refused(), 2);
}

void TestRunCli::triggerWithoutWatch()
{
    const Run run =
        pando({QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/unit"), QStringLiteral("--json")});
    QCOMPARE(run.code, 0);
    const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QVERIFY(json.value(QStringLiteral("id")).toString().startsWith(QLatin1Char('r')));
    QCOMPARE(json.value(QStringLiteral("status")).toString(), QStringLiteral("queued"));

    QVERIFY(!json.value(QStringLiteral("force")).toBool());

    // --force reaches the install, and runs show says what it did.
    const Run forced = pando({QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/unit"),
                              QStringLiteral("--force"), QStringLiteral("--json")});
    QVERIFY2(forced.code == 0, qPrintable(forced.all()));
    const QString forcedId =
        QJsonDocument::fromJson(forced.out.toUtf8()).object().value(QStringLiteral("id")).toString();
    QVERIFY(QJsonDocument::fromJson(forced.out.toUtf8()).object().value(QStringLiteral("force")).toBool());
    const Run shown = pando({QStringLiteral("runs"), QStringLiteral("show"), forcedId});
    QVERIFY2(shown.out.contains(QStringLiteral("manual (forced: every step ran)")), qPrintable(shown.all()));

    const Run missing = pando({QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/nojob")});
    QCOMPARE(missing.code, 1);
    QCOMPARE(missing.errLines().value(0), QStringLiteral("pando: job: pipeline ci has no job \"nojob\""));
}

// fly's jobs, pause-job and unpause-job: a paused job's trigger is refused, saying how to go on.
void TestRunCli::jobsListPauseAndUnpause()
{
    QVERIFY2(!m_succeededRun.isEmpty(), "triggerWatch(succeeded) did not run first");
    Run run = pando({QStringLiteral("jobs"), QStringLiteral("pause"), QStringLiteral("ci/unit")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(), QStringLiteral("paused job ci/unit: its runs wait and none is queued until: pando "
                                               "jobs unpause ci/unit"));
    run = pando({QStringLiteral("jobs"), QStringLiteral("list"), QStringLiteral("ci")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QStringList lines = run.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY2(lines.value(0).startsWith(QStringLiteral("JOB")) && lines.value(0).contains(QStringLiteral("LAST RUN")),
             qPrintable(run.out));
    const QString unit = lines.filter(QRegularExpression(QStringLiteral("^unit "))).value(0);
    QVERIFY2(unit.contains(QStringLiteral("paused by user:admin")) && unit.contains(QStringLiteral(" succeeded ")),
             qPrintable(run.out));
    const QString fail = lines.filter(QRegularExpression(QStringLiteral("^unitfail "))).value(0);
    QVERIFY2(fail.contains(QStringLiteral("active")) && fail.contains(QStringLiteral(" failed ")), qPrintable(run.out));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("show"), QStringLiteral("ci")});
    QVERIFY2(run.out.contains(QStringLiteral("unit (paused)")), qPrintable(run.out));

    run = pando(
        {QStringLiteral("jobs"), QStringLiteral("trigger"), QStringLiteral("ci/unit"), QStringLiteral("--watch")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("job unit of pipeline ci is paused (paused by user:admin")) &&
                 run.err.contains(QStringLiteral("pando jobs unpause ci/unit")),
             qPrintable(run.err));

    run =
        pando({QStringLiteral("jobs"), QStringLiteral("unpause"), QStringLiteral("ci/unit"), QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("paused")).toBool(true), false);
    run = pando({QStringLiteral("jobs"), QStringLiteral("pause"), QStringLiteral("ci/nojob")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("pipeline ci has no job \"nojob\"")), qPrintable(run.err));
    run = pando({QStringLiteral("jobs"), QStringLiteral("pause"), QStringLiteral("ci")});
    QCOMPARE(run.code, 2);
}

void TestRunCli::runsListAndShowTree()
{
    QVERIFY2(!m_succeededRun.isEmpty(), "triggerWatch(succeeded) did not run first");
    Run run = pando({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("ci/unit")});
    QCOMPARE(run.code, 0);
    QVERIFY(run.out.startsWith(QStringLiteral("ID")));
    QVERIFY2(run.out.contains(m_succeededRun), qPrintable(run.out));
    QVERIFY(!run.out.contains(QStringLiteral("ci/unitfail")));
    run = pando({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("1"),
                 QStringLiteral("--json")});
    QCOMPARE(run.code, 0);
    QCOMPARE(QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("runs")).toArray().size(), 1);

    run = pando({QStringLiteral("runs"), QStringLiteral("show"), m_succeededRun});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("status:")) && run.out.contains(QStringLiteral("succeeded")),
             qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("4 (1 unchanged, 0 failed)")), qPrintable(run.out));
    const QStringList lines = run.out.split(QLatin1Char('\n'));
    const auto line = [&](const QString &start) {
        for (const QString &l : lines)
            if (l.startsWith(start))
                return l;
        return QString();
    };
    QVERIFY2(line(QStringLiteral("STEP")).contains(QStringLiteral("ATTEMPT")), qPrintable(run.out));
    QVERIFY2(line(QStringLiteral("get repo ")).contains(QStringLiteral("succeeded")), qPrintable(run.out));
    QVERIFY2(line(QStringLiteral("in_parallel ")).contains(QStringLiteral("succeeded")), qPrintable(run.out));
    // Nested steps are indented under their parent, cached ones say "unchanged".
    QVERIFY2(QRegularExpression(QStringLiteral("^  task unit\\s+succeeded\\s+\\S+\\s+1\\s+0$"))
                 .match(line(QStringLiteral("  task unit")))
                 .hasMatch(),
             qPrintable(run.out));
    QVERIFY2(QRegularExpression(QStringLiteral("^  task lint\\s+unchanged\\s+-\\s+1\\s+-$"))
                 .match(line(QStringLiteral("  task lint")))
                 .hasMatch(),
             qPrintable(run.out));

    run = pando({QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("r000000000000")});
    QCOMPARE(run.code, 1);
}

QTEST_GUILESS_MAIN(TestRunCli)
#include "tests/support/vocabtesting.h"
#include "tst_runcli.moc"
