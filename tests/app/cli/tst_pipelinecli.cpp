// `pando pipelines|jobs|runs|secrets` against an install served from this test process, with an
// in-memory pipeline service whose runs play a short script: confirmation before a change,
// following a run to its end with the exit code saying how it ended, the step tree, and secrets
// read from standard input only.

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
#include <QTemporaryFile>
#include <QTest>

using namespace pando;

namespace {

using Run = test::CliRun;

const QByteArray PipelineYaml = "resources:\n"
                                "- name: repo\n"
                                "  type: git\n"
                                "jobs:\n"
                                "- name: unit\n"
                                "- name: unitfail\n"
                                "- name: builderror\n"
                                "- name: slowjob\n";

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

class TestPipelineCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void usageErrors_data();
    void usageErrors();
    void setWithYes();
    void setAnInstance();
    void validateOffline();
    void formatOffline();
    void setWithoutYesRefuses();
    void listShowPause();
    void triggerWatch_data();
    void triggerWatch();
    void triggerWatchAborted();
    void watchPollsWithoutWebSocket();
    void triggerWithoutWatch();
    void jobsListPauseAndUnpause();
    void runsListAndShowTree();
    void secretsFromStdin();
    void removeNeedsConfirmation();
    void archiveAndListArchived();
    void serviceMissing();

private:
    Run pando(const QStringList &args, const QByteArray &input = {});
    QProcessEnvironment environment() const;
    QProcess *startPando(const QStringList &args);
    QString writeFile(const QByteArray &content);

    test::TestInstall m_install;
    QTemporaryDir m_config; // XDG_CONFIG_HOME: no saved login session of the user running the tests
    QString m_binary;
    QList<std::shared_ptr<QTemporaryFile>> m_files;
    QString m_succeededRun;
};

void TestPipelineCli::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(QStringLiteral("no pando binary at %1").arg(m_binary)));
    m_install.withPipelines = true;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
}

QProcessEnvironment TestPipelineCli::environment() const
{
    return test::cliEnvironment(m_install.baseUrl(), m_install.token, m_config.path());
}

QProcess *TestPipelineCli::startPando(const QStringList &args)
{
    auto *process = new QProcess(this);
    process->setProcessEnvironment(environment());
    process->start(m_binary, args);
    return process;
}

Run TestPipelineCli::pando(const QStringList &args, const QByteArray &input)
{
    return test::runCli(args, environment(), input);
}

QString TestPipelineCli::writeFile(const QByteArray &content)
{
    auto file = std::make_shared<QTemporaryFile>();
    if (!file->open())
        return {};
    file->write(content);
    file->flush();
    m_files << file;
    return file->fileName();
}

void TestPipelineCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("trigger without job") << QStringList{QStringLiteral("jobs"), QStringLiteral("trigger"),
                                                        QStringLiteral("ci")}
                                         << QStringLiteral("pando: jobs trigger: expected PIPELINE/JOB, got \"ci\"");
    QTest::newRow("set without config") << QStringList{QStringLiteral("pipelines"), QStringLiteral("set"),
                                                       QStringLiteral("ci")}
                                        << QStringLiteral("pando: pipelines set: needs --config");
    QTest::newRow("runs list, two targets")
        << QStringList{QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("a"), QStringLiteral("b")}
        << QStringLiteral("pando: runs list: unexpected argument \"b\"");
    QTest::newRow("runs list, empty job")
        << QStringList{QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("ci/")}
        << QStringLiteral("pando: runs list: expected PIPELINE or PIPELINE/JOB, got \"ci/\"");
    QTest::newRow("unknown subcommand") << QStringList{QStringLiteral("secrets"), QStringLiteral("show")}
                                        << QStringLiteral("pando: secrets show: unknown subcommand \"show\"");
    QTest::newRow("secret value on the command line")
        << QStringList{QStringLiteral("secrets"), QStringLiteral("set"), QStringLiteral("web"), QStringLiteral("db"),
                       QStringLiteral("hunter2")}
        << QStringLiteral("pando: secrets set: unexpected argument \"hunter2\"");
}

void TestPipelineCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = pando(args);
    QCOMPARE(run.code, 2);
    QCOMPARE(run.errLines().value(0), message);
}

// pipelines format as fly format-pipeline, with no install: printed, or written back with -w
// keeping the file's permissions; a formatted file is left alone; what is wrong names the file.
void TestPipelineCli::formatOffline()
{
    const QStringList offline{QStringLiteral("--server"), QStringLiteral("http://127.0.0.1:1")};
    const auto format = [&](const QStringList &args, const QByteArray &input = {}) {
        return pando(QStringList{QStringLiteral("pipelines"), QStringLiteral("format")} + args + offline, input);
    };
    const QByteArray text =
        "jobs:\n- plan:\n  - config: {platform: linux, run: {path: \"true\"}}\n    task: t  # check\n"
        "  name: unit\n";
    const QString file = writeFile(text);
    QVERIFY(QFile::setPermissions(file, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup));
    Run run = format({QStringLiteral("-c"), file});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.startsWith(QStringLiteral("jobs:\n  - name: unit\n    plan:\n      - task: t\n")),
             qPrintable(run.out));
    const QString printed = run.out;
    QFile unchanged(file);
    QVERIFY(unchanged.open(QIODevice::ReadOnly));
    QCOMPARE(unchanged.readAll(), text); // printing leaves the file alone

    run = format({QStringLiteral("-c"), file, QStringLiteral("-w")});
    QVERIFY2(run.code == 0 && run.err.contains(QStringLiteral("formatted ")), qPrintable(run.all()));
    QFile written(file);
    QVERIFY(written.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(written.readAll()).trimmed(), printed.trimmed());
    const auto mode =
        QFileInfo(file).permissions() & (QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                                         QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup |
                                         QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther);
    QCOMPARE(mode, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup);
    run = format({QStringLiteral("-c"), file, QStringLiteral("--write")});
    QVERIFY2(run.code == 0 && run.err.contains(QStringLiteral("formatted already")), qPrintable(run.all()));

    run = format({QStringLiteral("-c"), QStringLiteral("-")}, text);
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("- task: t")), qPrintable(run.all()));
    run = format({QStringLiteral("-c"), QStringLiteral("-"), QStringLiteral("-w")}, text);
    QVERIFY2(run.code != 0 && run.err.contains(QStringLiteral("--write needs a file")), qPrintable(run.all()));
    const QString broken = writeFile("jobs: [\n");
    run = format({QStringLiteral("-c"), broken});
    QVERIFY2(run.code == 1 && run.err.contains(broken + QStringLiteral(": line 2")), qPrintable(run.all()));
}

// As fly validate-pipeline: no install is asked (the server named is not there); where the file
// is wrong is said; vars nothing gives are notes, or errors with --strict.
// fly's -i and -p NAME/KEY:VALUE: the CLI names the instance in its one form, and every command
// reaches it through the API with the '/' inside one path segment.
void TestPipelineCli::setAnInstance()
{
    const QString config = writeFile(PipelineYaml);
    Run run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci-preview"),
                     QStringLiteral("-c"), config, QStringLiteral("-i"), QStringLiteral("region=eu"),
                     QStringLiteral("-i"), QStringLiteral("branch=feature-1"), QStringLiteral("--yes")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("created pipeline ci-preview/branch:feature-1,region:eu")),
             qPrintable(run.out));
    // Named as fly's -p names it, in any order of its keys, set again: the same pipeline.
    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci-preview/region:eu"),
                 QStringLiteral("-i"), QStringLiteral("branch=feature-1"), QStringLiteral("-c"), config});
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("is unchanged")), qPrintable(run.all()));
    const QString name = QStringLiteral("ci-preview/branch:feature-1,region:eu");
    run = pando({QStringLiteral("pipelines"), QStringLiteral("show"), name});
    QVERIFY2(run.code == 0 && run.out.contains(name), qPrintable(run.all()));
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("unpause"), name}).code, 0);
    run = pando({QStringLiteral("pipelines"), QStringLiteral("list")});
    QVERIFY2(run.out.contains(name), qPrintable(run.out));
    // PIPELINE/JOB with an instance's name: the job is what follows the instance's vars.
    run = pando(
        {QStringLiteral("jobs"), QStringLiteral("trigger"), name + QStringLiteral("/unit"), QStringLiteral("--watch")});
    QVERIFY2(run.code == 0 && run.out.contains(name + QStringLiteral("/unit")), qPrintable(run.all()));
    // Bad instance vars are refused before anything is sent.
    const QList<std::pair<QStringList, QString>> bad{
        {{QStringLiteral("ci-preview/branch:x"), QStringLiteral("-i"), QStringLiteral("branch=y")},
         QStringLiteral("instance var branch is given twice")},
        {{QStringLiteral("ci-preview"), QStringLiteral("-i"), QStringLiteral("=y")},
         QStringLiteral("write NAME=VALUE")},
        {{QStringLiteral("ci-preview/branch"), QStringLiteral("-i"), QStringLiteral("a=b")}, QStringLiteral("no ':'")},
    };
    for (const auto &[args, says] : bad) {
        run = pando(QStringList{QStringLiteral("pipelines"), QStringLiteral("set")} + args +
                    QStringList{QStringLiteral("-c"), config, QStringLiteral("--yes")});
        QVERIFY2(run.code != 0 && run.err.contains(says), qPrintable(args.join(u' ') + run.all()));
    }
}

void TestPipelineCli::validateOffline()
{
    const QByteArray good = "anchors:\n"
                            "  image: &image {type: registry-image, source: {repository: busybox}}\n"
                            "jobs:\n"
                            "- name: unit\n"
                            "  plan:\n"
                            "  - task: t\n"
                            "    config:\n"
                            "      platform: linux\n"
                            "      image_resource: *image\n"
                            "      params: {TOKEN: ((api.token)), BRANCH: ((branch))}\n"
                            "      run: {path: \"true\"}\n";
    const QString config = writeFile(good);
    const QStringList offline{QStringLiteral("--server"), QStringLiteral("http://127.0.0.1:1")};
    const auto validate = [&](QStringList args) {
        return pando(QStringList{QStringLiteral("pipelines"), QStringLiteral("validate")} + args + offline);
    };
    Run run = validate({QStringLiteral("-c"), config});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("looks good: 1 jobs, 0 resources")), qPrintable(run.out));
    QVERIFY2(run.err.contains(QStringLiteral("note: Pando does not read the top-level keys anchors")),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("((api.token)), ((branch))")), qPrintable(run.err));

    // Given by the flags, a var is no note; one left is an error with --strict.
    run = validate({QStringLiteral("-c"), config, QStringLiteral("-v"), QStringLiteral("branch=main"),
                    QStringLiteral("--strict")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("error: no value here for ((api.token))")) &&
                 !run.err.contains(QStringLiteral("((branch))")),
             qPrintable(run.err));
    run = validate({QStringLiteral("-c"), config, QStringLiteral("--yaml-var"), QStringLiteral("api={token: x}"),
                    QStringLiteral("-v"), QStringLiteral("branch=main"), QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QJsonObject report = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QVERIFY(report.value(QStringLiteral("valid")).toBool());
    QVERIFY(report.value(QStringLiteral("undefined_vars")).toArray().isEmpty());

    // What is wrong is said with where: the file, then the place in it.
    QByteArray broken = good;
    broken.replace("run: {path: \"true\"}", "run: {args: [x]}");
    run = validate({QStringLiteral("-c"), writeFile(broken)});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("jobs[0]")) && run.err.contains(QStringLiteral("path")),
             qPrintable(run.err));
    run = validate({QStringLiteral("-c"), writeFile("jobs:\n- name: a\n  plan: []\n")});
    QVERIFY2(run.code == 1 && run.err.contains(QStringLiteral(": jobs[0].plan: a plan needs at least one step")),
             qPrintable(run.all()));
    // A file piped in is named as what it is.
    run = pando(QStringList{QStringLiteral("pipelines"), QStringLiteral("validate"), QStringLiteral("-c"),
                            QStringLiteral("-")} +
                    offline,
                "jobs:\n- name: a\n  plan: []\n");
    QVERIFY2(run.code == 1 && run.err.contains(QStringLiteral("standard input: jobs[0].plan: a plan needs")),
             qPrintable(run.all()));
    const QByteArray job = "- name: a\n  plan:\n  - task: t\n    config:\n      platform: linux\n"
                           "      image_resource: {type: registry-image, source: {repository: busybox}}\n"
                           "      run: {path: \"true\"}\n";
    const QByteArray twice = "jobs:\n" + job + job;
    run = validate({QStringLiteral("-c"), writeFile(twice)});
    QVERIFY2(run.code == 1 && run.err.contains(QStringLiteral("job \"a\" is already declared")), qPrintable(run.all()));
    run = validate({QStringLiteral("-c"), m_config.filePath(QStringLiteral("missing.yml"))});
    QVERIFY2(run.code == 1 && run.err.contains(QStringLiteral("cannot read the pipeline config")),
             qPrintable(run.all()));
    run = validate({QStringLiteral("-c"), config, QStringLiteral("-v"), QStringLiteral("novalue")});
    QVERIFY2(run.code != 0 && run.err.contains(QStringLiteral("NAME=VALUE")), qPrintable(run.all()));
}

void TestPipelineCli::setWithYes()
{
    const QString config = writeFile(PipelineYaml);
    const QString vars = writeFile("branch: main\n");
    Run run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci"), QStringLiteral("-c"),
                     config, QStringLiteral("-l"), vars, QStringLiteral("--yes")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("pipeline ci is new:")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("+- name: unitfail")), qPrintable(run.out));
    QVERIFY2(!run.out.contains(QStringLiteral("\033[")), "no colours when stdout is not a terminal");
    QVERIFY2(run.out.contains(QStringLiteral("created pipeline ci (version 1)")), qPrintable(run.out));
    // As fly's set-pipeline: a new pipeline starts paused, and the way on is printed.
    QVERIFY2(run.out.contains(QStringLiteral("it is paused (set by user:admin")) &&
                 run.out.contains(QStringLiteral("new pipelines start paused); start it with: pando pipelines "
                                                 "unpause ci")),
             qPrintable(run.out));
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("unpause"), QStringLiteral("ci")}).code, 0);

    run =
        pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci"), QStringLiteral("-c"), config});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(), QStringLiteral("pipeline ci is unchanged (version 1)"));

    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci"), QStringLiteral("-c"), config,
                 QStringLiteral("--json")});
    QCOMPARE(run.code, 0);
    QCOMPARE(QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("changed")).toBool(true), false);

    // Anchors under a key Pando does not read: accepted as fly accepts them, and the key named.
    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("anchored"), QStringLiteral("-c"),
                 writeFile("shared:\n  step: &get {get: repo, trigger: true}\n"
                           "resources:\n- {name: repo, type: git, source: {uri: 'file:///srv/r.git'}}\n"
                           "jobs:\n- name: a\n  plan: [*get]\n- name: b\n  plan: [*get, {put: repo, params: "
                           "{token: ((secrets:deploy.token))}}]\n"),
                 QStringLiteral("--unpaused"), QStringLiteral("--yes")});
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("created pipeline anchored")), qPrintable(run.all()));
    QVERIFY2(!run.out.contains(QStringLiteral("paused")), qPrintable(run.out)); // --unpaused: it runs
    QVERIFY2(run.err.contains(QStringLiteral("note: Pando does not read the top-level keys shared")),
             qPrintable(run.err));
    // A var with no value yet is named, with the command that gives it one.
    QVERIFY2(run.err.contains(QStringLiteral("note: ((secrets:deploy.token)) has no value yet; runs that use it fail "
                                             "until it is set: pando secrets set deploy --pipeline anchored")),
             qPrintable(run.err));
    QVERIFY(
        pando({QStringLiteral("pipelines"), QStringLiteral("rm"), QStringLiteral("anchored"), QStringLiteral("--yes")})
            .code == 0);

    // -v and --yaml-var over the vars file, as fly's -v and -y: what they give has a value.
    run =
        pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("flagged"), QStringLiteral("-c"),
               writeFile("resources:\n- {name: repo, type: git, source: {uri: 'file:///srv/r.git', branch: ((branch)), "
                         "paths: ((paths)), tag_filter: ((db.host))}}\njobs:\n- name: a\n  plan: [{get: repo, "
                         "params: {x: ((other))}}]\n"),
               QStringLiteral("-l"), writeFile("branch: from-file\npaths: [x]\n"), QStringLiteral("-v"),
               QStringLiteral("branch=main"), QStringLiteral("--var"), QStringLiteral("db.host=primary"),
               QStringLiteral("--yaml-var"), QStringLiteral("paths=[src/*, docs/*]"), QStringLiteral("--yes")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.err.contains(QStringLiteral("((other)) has no value yet")), qPrintable(run.err));
    for (const QString &given :
         QStringList{QStringLiteral("branch"), QStringLiteral("paths"), QStringLiteral("db.host")})
        QVERIFY2(!run.err.contains(QStringLiteral("((%1)) has no value yet").arg(given)), qPrintable(run.err));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("flagged"), QStringLiteral("-c"),
                 writeFile("jobs:\n- name: a\n  plan: []\n"), QStringLiteral("-v"), QStringLiteral("branch"),
                 QStringLiteral("--yes")});
    QVERIFY(run.code != 0);
    QVERIFY2(run.err.contains(QStringLiteral("--var branch: write NAME=VALUE")), qPrintable(run.err));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("flagged"), QStringLiteral("-c"),
                 writeFile("jobs:\n- name: a\n  plan: []\n"), QStringLiteral("--yaml-var"), QStringLiteral("x=[a"),
                 QStringLiteral("--yes")});
    QVERIFY(run.code != 0);
    QVERIFY2(run.err.contains(QStringLiteral("--yaml-var x")), qPrintable(run.err));

    // Var sources are named as what runs read from.
    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("sourced"), QStringLiteral("-c"),
                 writeFile("var_sources:\n- {name: settings, type: dummy, config: {vars: {branch: main}}}\n"
                           "resources:\n- {name: repo, type: git, source: {uri: 'file:///srv/r.git', branch: "
                           "((settings:branch))}}\njobs:\n- name: a\n  plan: [{get: repo}]\n"),
                 QStringLiteral("--yes")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(
        run.err.contains(QStringLiteral("note: runs read ((source:...)) vars from settings (dummy) when they start")),
        qPrintable(run.all()));
    QVERIFY2(run.out.contains(QStringLiteral("((settings:branch))")), qPrintable(run.out));

    // A config the service refuses: its error, one line, nothing applied.
    run = pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("bad"), QStringLiteral("-c"),
                 writeFile("resources: []\n"), QStringLiteral("--yes")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: jobs: ")), qPrintable(run.err));
}

void TestPipelineCli::setWithoutYesRefuses()
{
    const QString changed = writeFile(PipelineYaml + "- name: extra\n");
    // QProcess's stdin is a pipe, not a terminal: pando cannot ask, so it refuses.
    const Run run = pando(
        {QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("ci"), QStringLiteral("-c"), changed});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.out.contains(QStringLiteral("+- name: extra")), qPrintable(run.out));
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: pipelines set ci: not confirmed")),
             qPrintable(run.err));
    QCOMPARE(run.errLines().value(1), QStringLiteral("hint: pass --yes to go ahead without asking"));

    const Run shown =
        pando({QStringLiteral("pipelines"), QStringLiteral("show"), QStringLiteral("ci"), QStringLiteral("--json")});
    QCOMPARE(shown.code, 0);
    const QJsonObject pipeline = QJsonDocument::fromJson(shown.out.toUtf8()).object();
    QCOMPARE(pipeline.value(QStringLiteral("config_version")).toInt(), 1);
    QVERIFY(!pipeline.value(QStringLiteral("jobs")).toArray().contains(QStringLiteral("extra")));
}

void TestPipelineCli::listShowPause()
{
    Run run = pando({QStringLiteral("pipelines"), QStringLiteral("list")});
    QCOMPARE(run.code, 0);
    QVERIFY(run.out.startsWith(QStringLiteral("NAME")));
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("\\nci\\s+4\\s+1\\s"))), qPrintable(run.out));

    run = pando({QStringLiteral("pipelines"), QStringLiteral("pause"), QStringLiteral("ci")});
    QCOMPARE(run.code, 0);
    run = pando({QStringLiteral("pipelines"), QStringLiteral("show"), QStringLiteral("ci")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QStringLiteral("paused: by user:admin/token:")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("unit, unitfail, builderror, slowjob")), qPrintable(run.out));
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("unpause"), QStringLiteral("ci")}).code, 0);

    run = pando({QStringLiteral("pipelines"), QStringLiteral("show"), QStringLiteral("nosuch")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).contains(QStringLiteral("no pipeline \"nosuch\"")), qPrintable(run.err));
}

void TestPipelineCli::triggerWatch_data()
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

void TestPipelineCli::triggerWatch()
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

void TestPipelineCli::triggerWatchAborted()
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

void TestPipelineCli::watchPollsWithoutWebSocket()
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

void TestPipelineCli::triggerWithoutWatch()
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
void TestPipelineCli::jobsListPauseAndUnpause()
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

void TestPipelineCli::runsListAndShowTree()
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

void TestPipelineCli::secretsFromStdin()
{
    const QByteArray value = "hunter2-from-stdin";
    Run run = pando({QStringLiteral("secrets"), QStringLiteral("set"), QStringLiteral("db"),
                     QStringLiteral("--pipeline"), QStringLiteral("ci")},
                    value + "\n");
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(), QStringLiteral("set secret db for pipeline ci"));
    QVERIFY(!run.all().contains(QString::fromUtf8(value)));
    QCOMPARE(m_install.pipelines->secretValue(QStringLiteral("ci"), QStringLiteral("db")), QString::fromUtf8(value));

    // NAME alone, its scope not said: `secrets set APP` with the secret's name forgotten. Refused,
    // nothing set anywhere.
    run = pando({QStringLiteral("secrets"), QStringLiteral("set"), QStringLiteral("global")}, "g-value");
    QCOMPARE(run.code, 2);
    QCOMPARE(run.errLines().value(0),
             QStringLiteral("pando: secrets set: \"global\" alone does not say whose secret it is"));
    QVERIFY2(run.err.contains(QStringLiteral("NAME --install")), qPrintable(run.err));
    QCOMPARE(m_install.pipelines->secretValue(QString(), QStringLiteral("global")), QString());
    run = pando({QStringLiteral("secrets"), QStringLiteral("rm"), QStringLiteral("global")});
    QCOMPARE(run.code, 2);
    run = pando({QStringLiteral("secrets"), QStringLiteral("set"), QStringLiteral("web"), QStringLiteral("db"),
                 QStringLiteral("--install")},
                "x");
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("--install does not apply")), qPrintable(run.err));

    run =
        pando({QStringLiteral("secrets"), QStringLiteral("set"), QStringLiteral("global"), QStringLiteral("--install")},
              "g-value");
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.startsWith(QStringLiteral("set secret global for the install; ")), qPrintable(run.out));
    QCOMPARE(m_install.pipelines->secretValue(QString(), QStringLiteral("global")), QStringLiteral("g-value"));
    QVERIFY2(run.out.contains(QLatin1String("pando secrets access global PIPELINE")), qPrintable(run.out));
    // Which pipelines read the install's secret: exactly those listed, or every one.
    run = pando({QStringLiteral("secrets"), QStringLiteral("access"), QStringLiteral("global"), QStringLiteral("ci"),
                 QStringLiteral("nightly")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(), QStringLiteral("install-wide secret global is read by ci, nightly"));
    run = pando({QStringLiteral("secrets"), QStringLiteral("list")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("global +ci, nightly"))), qPrintable(run.out));
    run = pando({QStringLiteral("secrets"), QStringLiteral("access"), QStringLiteral("global"),
                 QStringLiteral("--all-pipelines")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(), QStringLiteral("install-wide secret global is read by every pipeline"));
    run = pando({QStringLiteral("secrets"), QStringLiteral("access"), QStringLiteral("global"), QStringLiteral("ci"),
                 QStringLiteral("--all-pipelines")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("give --all-pipelines or pipelines, not both")), qPrintable(run.err));

    run = pando({QStringLiteral("secrets"), QStringLiteral("list"), QStringLiteral("-p"), QStringLiteral("ci")});
    QCOMPARE(run.code, 0);
    QCOMPARE(run.out.trimmed(), QStringLiteral("db"));
    QVERIFY(!run.out.contains(QString::fromUtf8(value)));

    // Nothing on stdin: refused, nothing sent.
    run =
        pando({QStringLiteral("secrets"), QStringLiteral("set"), QStringLiteral("empty"), QStringLiteral("--install")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: stdin: the secret's value is empty")),
             qPrintable(run.err));

    run = pando({QStringLiteral("secrets"), QStringLiteral("rm"), QStringLiteral("db"), QStringLiteral("--pipeline"),
                 QStringLiteral("ci")});
    QCOMPARE(run.code, 0);
    run =
        pando({QStringLiteral("secrets"), QStringLiteral("list"), QStringLiteral("--pipeline"), QStringLiteral("ci")});
    QCOMPARE(run.out.trimmed(), QStringLiteral("no secrets for pipeline ci"));
}

void TestPipelineCli::removeNeedsConfirmation()
{
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("tmp"), QStringLiteral("-c"),
                    writeFile(PipelineYaml), QStringLiteral("-y")})
                 .code,
             0);
    Run run = pando({QStringLiteral("pipelines"), QStringLiteral("rm"), QStringLiteral("tmp")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: pipelines rm tmp: not confirmed")),
             qPrintable(run.err));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("rm"), QStringLiteral("tmp"), QStringLiteral("--yes")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(), QStringLiteral("removed pipeline tmp"));
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("show"), QStringLiteral("tmp")}).code, 1);
}

// As fly archive-pipeline: asked first; then listed only with --include-archived (-a).
void TestPipelineCli::archiveAndListArchived()
{
    QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("old"), QStringLiteral("-c"),
                    writeFile(PipelineYaml), QStringLiteral("-y")})
                 .code,
             0);
    Run run = pando({QStringLiteral("pipelines"), QStringLiteral("archive"), QStringLiteral("old")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: pipelines archive old: not confirmed")),
             qPrintable(run.err));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("archive"), QStringLiteral("old"), QStringLiteral("-y")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.trimmed(),
             QStringLiteral("archived pipeline old; set it again to bring it back: pando pipelines set old -c FILE"));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("list")});
    QCOMPARE(run.code, 0);
    QVERIFY2(!run.out.contains(QRegularExpression(QStringLiteral("\\nold\\s"))), qPrintable(run.out));
    for (const QString &flag : {QStringLiteral("--include-archived"), QStringLiteral("-a")}) {
        run = pando({QStringLiteral("pipelines"), QStringLiteral("list"), flag});
        QCOMPARE(run.code, 0);
        QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("\\nold\\s.*archived: archived by user:admin"))),
                 qPrintable(run.out));
    }
    run = pando({QStringLiteral("pipelines"), QStringLiteral("show"), QStringLiteral("old")});
    QVERIFY2(run.out.contains(QStringLiteral("archived: archived by user:admin")), qPrintable(run.out));
    QCOMPARE(
        pando({QStringLiteral("pipelines"), QStringLiteral("archive"), QStringLiteral("nosuch"), QStringLiteral("-y")})
            .code,
        1);
    QCOMPARE(
        pando({QStringLiteral("pipelines"), QStringLiteral("rm"), QStringLiteral("old"), QStringLiteral("-y")}).code,
        0);
}

void TestPipelineCli::serviceMissing()
{
    test::TestInstall bare;
    QVERIFY2(bare.start(), qPrintable(bare.error));
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PANDO_SERVER"), bare.baseUrl());
    env.insert(QStringLiteral("PANDO_TOKEN"), bare.token);
    process.setProcessEnvironment(env);
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(m_binary, {QStringLiteral("pipelines"), QStringLiteral("list")});
    QVERIFY(finished.wait(30000));
    QCOMPARE(process.exitCode(), 1);
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(err.startsWith(QStringLiteral("pando: pipelines: the pipeline runner is not enabled")), qPrintable(err));
}

QTEST_GUILESS_MAIN(TestPipelineCli)
#include "tests/support/vocabtesting.h"
#include "tst_pipelinecli.moc"
