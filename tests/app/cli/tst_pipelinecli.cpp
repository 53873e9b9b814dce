// `pando pipelines|secrets` against an install served from this test process, with an in-memory
// pipeline service: confirmation before a change, pipeline files set, checked and formatted,
// pausing, archiving and removing, and secrets read from standard input only. Jobs and runs:
// tst_runcli.

#include "tests/app/cli/scriptedpipeline.h"
#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"

#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryFile>
#include <QTest>

using namespace pando;

namespace {

using Run = test::CliRun;

using test::ScriptedPipelineYaml;

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
    void secretsFromStdin();
    void removeNeedsConfirmation();
    void archiveAndListArchived();
    void instanceGroupActions();
    void serviceMissing();

private:
    Run pando(const QStringList &args, const QByteArray &input = {});
    QProcessEnvironment environment() const;
    QString writeFile(const QByteArray &content);

    test::TestInstall m_install;
    QTemporaryDir m_config; // XDG_CONFIG_HOME: no saved login session of the user running the tests
    QString m_binary;
    QList<std::shared_ptr<QTemporaryFile>> m_files;
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
    QTest::newRow("set without config") << QStringList{QStringLiteral("pipelines"), QStringLiteral("set"),
                                                       QStringLiteral("ci")}
                                        << QStringLiteral("pando: pipelines set: needs --config");
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
    const QString config = writeFile(ScriptedPipelineYaml);
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
    const QString config = writeFile(ScriptedPipelineYaml);
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
    const QString changed = writeFile(ScriptedPipelineYaml + "- name: extra\n");
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
                    writeFile(ScriptedPipelineYaml), QStringLiteral("-y")})
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
                    writeFile(ScriptedPipelineYaml), QStringLiteral("-y")})
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

// As fly's --all: every instance of an instance group paused, unpaused or archived (asked once),
// each told as it goes; other pipelines are left alone; bad use is named.
void TestPipelineCli::instanceGroupActions()
{
    const QString config = writeFile(ScriptedPipelineYaml);
    for (const QString &n : {QStringLiteral("1"), QStringLiteral("2")})
        QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("set"), QStringLiteral("grp"), QStringLiteral("-c"),
                        config, QStringLiteral("-i"), QStringLiteral("n=") + n, QStringLiteral("--unpaused"),
                        QStringLiteral("-y")})
                     .code,
                 0);
    const auto state = [this](const QString &name) {
        return pando({QStringLiteral("pipelines"), QStringLiteral("show"), name}).out;
    };
    Run run =
        pando({QStringLiteral("pipelines"), QStringLiteral("pause"), QStringLiteral("grp"), QStringLiteral("--all")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out.split(u'\n', Qt::SkipEmptyParts),
             (QStringList{QStringLiteral("paused grp/n:1"), QStringLiteral("paused grp/n:2")}));
    QVERIFY2(state(QStringLiteral("grp/n:2")).contains(QStringLiteral("paused: by user:admin")),
             qPrintable(state(QStringLiteral("grp/n:2"))));
    QVERIFY2(state(QStringLiteral("ci")).contains(QStringLiteral("state           active")) ||
                 !state(QStringLiteral("ci")).contains(QStringLiteral("paused")),
             qPrintable(state(QStringLiteral("ci"))));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("unpause"), QStringLiteral("grp"), QStringLiteral("-a")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(!state(QStringLiteral("grp/n:1")).contains(QStringLiteral("paused")),
             qPrintable(state(QStringLiteral("grp/n:1"))));

    // Archiving asks once for the whole group.
    run =
        pando({QStringLiteral("pipelines"), QStringLiteral("archive"), QStringLiteral("grp"), QStringLiteral("--all")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.startsWith(QStringLiteral("pando: pipelines archive grp --all: not confirmed")),
             qPrintable(run.err));
    QVERIFY(!state(QStringLiteral("grp/n:1")).contains(QStringLiteral("archived")));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("archive"), QStringLiteral("grp"), QStringLiteral("--all"),
                 QStringLiteral("-y")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(state(QStringLiteral("grp/n:1")).contains(QStringLiteral("archived: archived by user:admin")),
             qPrintable(state(QStringLiteral("grp/n:1"))));
    QVERIFY(state(QStringLiteral("grp/n:2")).contains(QStringLiteral("archived:")));
    QVERIFY(!state(QStringLiteral("ci")).contains(QStringLiteral("archived")));

    // What is wrong is named.
    run = pando({QStringLiteral("pipelines"), QStringLiteral("pause")});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("missing NAME")) && run.err.contains(QStringLiteral("--all")),
             qPrintable(run.err));
    run = pando(
        {QStringLiteral("pipelines"), QStringLiteral("pause"), QStringLiteral("grp/n:1"), QStringLiteral("--all")});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("not an instance's")) && run.err.contains(QStringLiteral("give grp")),
             qPrintable(run.err));
    run = pando({QStringLiteral("pipelines"), QStringLiteral("pause"), QStringLiteral("grp"), QStringLiteral("--all")});
    QCOMPARE(run.code, 1); // archived instances are no longer in the group's list
    QVERIFY2(run.err.contains(QStringLiteral("no pipeline is an instance of grp")), qPrintable(run.err));
    for (const QString &n : {QStringLiteral("grp/n:1"), QStringLiteral("grp/n:2")})
        QCOMPARE(pando({QStringLiteral("pipelines"), QStringLiteral("rm"), n, QStringLiteral("-y")}).code, 0);
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
#include "tst_pipelinecli.moc"
