// The `pando` binary against an install served from this test process: exit codes, one-line
// errors, a deploy followed to its end, and an app reached through `apps forward`.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/component.h"
#include "tests/support/httpbackend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;

using Run = test::CliRun;

class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void usageErrors_data();
    void usageErrors();
    void missingSettings_data();
    void missingSettings();
    void wrongToken();
    void createWithBadSpec_data();
    void createWithBadSpec();
    void createListShow();
    void createFromStdin();
    void unknownApp();
    void edgeKeys();
    void appSettings();
    void deployWaitSucceeds();
    void execInTheApp();
    void deployWaitFails();
    void logsFollowUntilInterrupted();
    void loginAndAccounts();
    void appsForward();
    void sourceConnections();

private:
    Run pando(const QStringList &args, const QByteArray &input = {}, bool withServer = true, bool withToken = true);
    QString writeFile(const QByteArray &content);

    test::TestInstall m_install;
    QTemporaryDir m_config; // XDG_CONFIG_HOME: where `pando login` saves the session
    QString m_binary;
    QList<std::shared_ptr<QTemporaryFile>> m_files;
};

void TestCli::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(QStringLiteral("no pando binary at %1").arg(m_binary)));
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
}

Run TestCli::pando(const QStringList &args, const QByteArray &input, bool withServer, bool withToken)
{
    return test::runCli(args,
                        test::cliEnvironment(withServer ? m_install.baseUrl() : QString(),
                                             withToken ? m_install.token : QString(), m_config.path()),
                        input);
}

QString TestCli::writeFile(const QByteArray &content)
{
    auto file = std::make_shared<QTemporaryFile>();
    if (!file->open())
        return {};
    file->write(content);
    file->flush();
    m_files << file;
    return file->fileName();
}

void TestCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("nothing") << QStringList{} << QStringLiteral("pando: no command given");
    QTest::newRow("unknown command") << QStringList{QStringLiteral("frobnicate")}
                                     << QStringLiteral("pando: frobnicate: unknown command \"frobnicate\"");
    QTest::newRow("unknown subcommand") << QStringList{QStringLiteral("apps"), QStringLiteral("burn")}
                                        << QStringLiteral("pando: apps burn: unknown subcommand \"burn\"");
    QTest::newRow("missing name") << QStringList{QStringLiteral("apps"), QStringLiteral("show")}
                                  << QStringLiteral("pando: apps show: missing NAME");
    QTest::newRow("missing file") << QStringList{QStringLiteral("apps"), QStringLiteral("create")}
                                  << QStringLiteral("pando: apps create: needs --file");
    QTest::newRow("unknown option") << QStringList{QStringLiteral("apps"), QStringLiteral("list"),
                                                   QStringLiteral("--bogus")}
                                    << QStringLiteral("pando: --bogus: unknown option");
    QTest::newRow("option of another command")
        << QStringList{QStringLiteral("apps"), QStringLiteral("list"), QStringLiteral("--wait")}
        << QStringLiteral("pando: apps list: --wait does not apply to \"apps list\"");
    QTest::newRow("bad tail") << QStringList{QStringLiteral("logs"), QStringLiteral("x"), QStringLiteral("--tail"),
                                             QStringLiteral("many")}
                              << QStringLiteral("pando: --tail: must be a whole number, got \"many\"");
}

void TestCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = pando(args);
    QCOMPARE(run.code, 2);
    QCOMPARE(run.errLines().value(0), message);
    QVERIFY(run.err.contains(QStringLiteral("usage: pando")));
}

void TestCli::missingSettings_data()
{
    QTest::addColumn<bool>("withServer");
    QTest::addColumn<bool>("withToken");
    QTest::addColumn<QString>("flag");
    QTest::addColumn<QString>("env");
    QTest::newRow("no server") << false << true << QStringLiteral("--server") << QStringLiteral("PANDO_SERVER");
    QTest::newRow("no token") << true << false << QStringLiteral("--token-file") << QStringLiteral("PANDO_TOKEN");
}

void TestCli::missingSettings()
{
    QFETCH(bool, withServer);
    QFETCH(bool, withToken);
    QFETCH(QString, flag);
    QFETCH(QString, env);
    const Run run = pando({QStringLiteral("apps"), QStringLiteral("list")}, {}, withServer, withToken);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: ") + flag + QStringLiteral(": ")),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(flag) && run.err.contains(env), qPrintable(run.err));
}

void TestCli::wrongToken()
{
    const Run run = pando(
        {QStringLiteral("--token-file"), writeFile("pando_wrong\n"), QStringLiteral("apps"), QStringLiteral("list")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: Authorization: ")), qPrintable(run.err));
    // The token in argv still works, for now, and says why it should not be there.
    const Run inArgv = pando(
        {QStringLiteral("--token"), m_install.token, QStringLiteral("apps"), QStringLiteral("list")}, {}, true, false);
    QVERIFY2(inArgv.code == 0, qPrintable(inArgv.err));
    QVERIFY2(inArgv.err.contains(QStringLiteral("warning: --token")) &&
                 inArgv.err.contains(QStringLiteral("--token-file")),
             qPrintable(inArgv.err));
    QVERIFY2(!inArgv.err.contains(m_install.token), "the warning never repeats the token");
    const Run missing = pando({QStringLiteral("--token-file"), QStringLiteral("/nonexistent/token"),
                               QStringLiteral("apps"), QStringLiteral("list")},
                              {}, true, false);
    QCOMPARE(missing.code, 1);
    QVERIFY2(missing.err.contains(QStringLiteral("--token-file")), qPrintable(missing.err));
}

void TestCli::createWithBadSpec_data()
{
    QTest::addColumn<QByteArray>("spec");
    QTest::addColumn<QString>("prefix");
    QTest::newRow("malformed") << QByteArray("name: x\nsource: [unclosed\n") << QStringLiteral("pando: line ");
    QTest::newRow("bad port") << QByteArray(
                                     "name: badport\nsource:\n  repo: https://g.example/x.git\nrun:\n  port: 70000\n")
                              << QStringLiteral("pando: run.port: ");
    QTest::newRow("unknown field") << QByteArray(test::helloSpec(QStringLiteral("u")) + "colour: blue\n")
                                   << QStringLiteral("pando: colour: ");
}

void TestCli::createWithBadSpec()
{
    QFETCH(QByteArray, spec);
    QFETCH(QString, prefix);
    const Run run = pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), writeFile(spec)});
    QCOMPARE(run.code, 1);
    const QStringList lines = run.errLines();
    QVERIFY2(!lines.isEmpty() && lines[0].startsWith(prefix), qPrintable(run.err));
    // One line for the error, and at most one hint.
    QVERIFY2(lines.size() == 1 || (lines.size() == 2 && lines[1].startsWith(QStringLiteral("hint: "))),
             qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

void TestCli::createListShow()
{
    Run run = pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"),
                     writeFile(test::helloSpec(QStringLiteral("clihello")))});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.startsWith(QStringLiteral("created app clihello")), qPrintable(run.out));

    run = pando({QStringLiteral("apps"), QStringLiteral("list")});
    QCOMPARE(run.code, 0);
    QVERIFY(run.out.startsWith(QStringLiteral("NAME")));
    QVERIFY(run.out.contains(QStringLiteral("clihello")));

    run = pando({QStringLiteral("apps"), QStringLiteral("list"), QStringLiteral("--json")});
    QCOMPARE(run.code, 0);
    const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QVERIFY(json.value(QStringLiteral("apps")).isArray());

    run = pando({QStringLiteral("apps"), QStringLiteral("show"), QStringLiteral("clihello")});
    QCOMPARE(run.code, 0);
    QVERIFY(run.out.contains(QStringLiteral("url:")));
    QVERIFY(run.out.contains(QStringLiteral("status:")));

    // An app deployed from an image: its source is the image and when it is pulled.
    run = pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"),
                 writeFile("name: cliimage\nsource:\n  image: nginx:1.27\n  pull: missing\n")});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run = pando({QStringLiteral("apps"), QStringLiteral("show"), QStringLiteral("cliimage")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("source: +image nginx:1.27 \\(pull: missing\\)"))),
             qPrintable(run.out));
    run = pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"),
                 writeFile("name: cliimage2\nsource:\n  image: nginx:1.27\n  ref: main\n")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("source.ref")) &&
                 run.err.contains(QStringLiteral("an image source has no ref")),
             qPrintable(run.err));
}

void TestCli::createFromStdin()
{
    const Run run = pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), QStringLiteral("-")},
                          test::helloSpec(QStringLiteral("fromstdin")));
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QStringLiteral("fromstdin")), qPrintable(run.err));
}

// What members' apps may use: shown, changed one by one, a bad range refused (issue 12).
void TestCli::appSettings()
{
    const auto set = [this](const QString &key, const QString &value) {
        return pando({QStringLiteral("settings"), QStringLiteral("set"), key, value});
    };
    Run run = pando({QStringLiteral("settings"), QStringLiteral("show")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QStringLiteral("ssh-agent")) && run.out.contains(QStringLiteral("20000-29999")),
             qPrintable(run.out));
    run = set(QStringLiteral("ssh-agent"), QStringLiteral("on"));
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("ssh-agent is on")), qPrintable(run.out + run.err));
    run = set(QStringLiteral("member-ports"), QStringLiteral("none"));
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("member-ports is none")), qPrintable(run.out + run.err));
    run = pando({QStringLiteral("--json"), QStringLiteral("settings"), QStringLiteral("show")});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QStringLiteral("\"ssh_agent\": true")) &&
                 run.out.contains(QStringLiteral("\"member_ports\": \"none\"")) &&
                 run.out.contains(QStringLiteral("\"local_repositories\": false")),
             qPrintable(run.out));
    run = set(QStringLiteral("member-ports"), QStringLiteral("80-90"));
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("not a port range")), qPrintable(run.err));
    run = set(QStringLiteral("no-such-setting"), QStringLiteral("on"));
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("local-repositories")), qPrintable(run.err));
    // How long deploys' output is kept; previews of forks.
    run = pando({QStringLiteral("settings"), QStringLiteral("show")});
    QVERIFY2(run.out.contains(QStringLiteral("deploy-log-days:     90 days")), qPrintable(run.out));
    run = set(QStringLiteral("deploy-log-days"), QStringLiteral("30"));
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("deploy-log-days is 30 days")),
             qPrintable(run.out + run.err));
    run = set(QStringLiteral("deploy-log-days"), QStringLiteral("forever"));
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("deploy-log-days is forever")),
             qPrintable(run.out + run.err));
    for (const QString &bad : {QStringLiteral("0.5"), QStringLiteral("ninety"), QStringLiteral("99999")}) {
        run = set(QStringLiteral("deploy-log-days"), bad);
        QCOMPARE(run.code, 1);
        QVERIFY2(run.err.contains(QStringLiteral("deploy_log_days: must be a number of days from 1 to 3650")),
                 qPrintable(run.err));
    }
    run = set(QStringLiteral("preview-forks"), QStringLiteral("on"));
    QVERIFY2(run.code == 0 && run.out.contains(QStringLiteral("preview-forks is on")), qPrintable(run.out + run.err));
    QCOMPARE(set(QStringLiteral("preview-forks"), QStringLiteral("off")).code, 0);
    QCOMPARE(set(QStringLiteral("deploy-log-days"), QStringLiteral("90")).code, 0);
    QCOMPARE(set(QStringLiteral("ssh-agent"), QStringLiteral("off")).code, 0);
    QCOMPARE(set(QStringLiteral("member-ports"), QStringLiteral("20000-29999")).code, 0);
}

void TestCli::unknownApp()
{
    const Run run = pando({QStringLiteral("apps"), QStringLiteral("show"), QStringLiteral("nosuchapp")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).startsWith(QStringLiteral("pando: ")), qPrintable(run.err));
    QVERIFY2(run.err.contains(QStringLiteral("nosuchapp")), qPrintable(run.err));
}

void TestCli::edgeKeys()
{
    // What apps verify assertions with, as the install publishes it.
    auto jwks = m_install.engine->assertionKeys();
    QVERIFY(jwks);
    const QString kid =
        jwks->value(QStringLiteral("keys")).toArray().first().toObject().value(QStringLiteral("kid")).toString();
    QVERIFY(!kid.isEmpty());
    const Run json = pando({QStringLiteral("edge"), QStringLiteral("jwks"), QStringLiteral("--json")});
    QVERIFY2(json.code == 0, qPrintable(json.all()));
    QCOMPARE(QJsonDocument::fromJson(json.out.toUtf8()).object(), *jwks);
    const Run table = pando({QStringLiteral("edge"), QStringLiteral("jwks")});
    QVERIFY2(table.code == 0, qPrintable(table.all()));
    QVERIFY2(table.out.contains(kid) && table.out.contains(QStringLiteral("ES256")), qPrintable(table.out));

    // A new key signs from now on; both are listed, the new one first.
    const Run rotated = pando({QStringLiteral("edge"), QStringLiteral("rotate-key"), QStringLiteral("--json")});
    QVERIFY2(rotated.code == 0, qPrintable(rotated.all()));
    const QString newKid =
        QJsonDocument::fromJson(rotated.out.toUtf8()).object().value(QStringLiteral("kid")).toString();
    QVERIFY(!newKid.isEmpty() && newKid != kid);
    const Run after = pando({QStringLiteral("edge"), QStringLiteral("jwks")});
    QVERIFY2(after.out.indexOf(newKid) >= 0 && after.out.indexOf(newKid) < after.out.indexOf(kid),
             qPrintable(after.out));
}

void TestCli::deployWaitSucceeds()
{
    // The fake runtime's containers answer on 127.0.0.1:<run.port>: point that at this API so the
    // health probe finds a server.
    const QByteArray spec = QStringLiteral("name: deployme\n"
                                           "source:\n  repo: https://git.example/d.git\n"
                                           "run:\n  port: %1\n"
                                           "health:\n  path: /api/v1/health\n")
                                .arg(m_install.port)
                                .toUtf8();
    QCOMPARE(pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"), writeFile(spec)}).code, 0);
    const Run run = pando({QStringLiteral("deploy"), QStringLiteral("deployme"), QStringLiteral("--wait")});
    QVERIFY2(run.code == 0, qPrintable(run.out + run.err));
    QVERIFY2(run.out.contains(QStringLiteral("\n  build | built\n")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("✓ build")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("deployed deployme")), qPrintable(run.out));

    const Run listed = pando({QStringLiteral("deploys"), QStringLiteral("list"), QStringLiteral("deployme")});
    QCOMPARE(listed.code, 0);
    QVERIFY(listed.out.contains(QStringLiteral("succeeded")));

    // The spec as it was written, to edit and give back.
    const Run written = pando({QStringLiteral("apps"), QStringLiteral("spec"), QStringLiteral("deployme")});
    QVERIFY2(written.code == 0, qPrintable(written.err));
    QCOMPARE(written.out.toUtf8(), spec);

    // Watching a deploy that ended reports it at once; cancelling it is refused with its state.
    const QString id = QJsonDocument::fromJson(pando({QStringLiteral("apps"), QStringLiteral("show"),
                                                      QStringLiteral("deployme"), QStringLiteral("--json")})
                                                   .out.toUtf8())
                           .object()
                           .value(QStringLiteral("current_deploy"))
                           .toString();
    QVERIFY(!id.isEmpty());
    const Run watched = pando({QStringLiteral("deploys"), QStringLiteral("watch"), id});
    QVERIFY2(watched.code == 0 && watched.out.contains(QStringLiteral("deployed deployme")),
             qPrintable(watched.out + watched.err));
    const Run cancelled = pando({QStringLiteral("deploys"), QStringLiteral("cancel"), id});
    QCOMPARE(cancelled.code, 1);
    QVERIFY2(cancelled.err.contains(QStringLiteral("has already succeeded")), qPrintable(cancelled.err));
    const Run unknown = pando({QStringLiteral("deploys"), QStringLiteral("watch"), QStringLiteral("d000000000000")});
    QCOMPARE(unknown.code, 1);

    // One version so far: nothing to go back to (the engine's tests go back and forth).
    const Run back = pando({QStringLiteral("rollback"), QStringLiteral("deployme")});
    QCOMPARE(back.code, 1);
    QVERIFY2(back.err.contains(QStringLiteral("no earlier version")), qPrintable(back.err));
    const Run notOne = pando({QStringLiteral("rollback"), QStringLiteral("deployme"), QStringLiteral("--to"), id});
    QCOMPARE(notOne.code, 1);
    QVERIFY2(notOne.err.contains(QStringLiteral("is what deployme serves now")), qPrintable(notOne.err));
}

// `apps exec` against the fake runtime (tst_pandod runs it on Docker): input in, both streams
// out, the command's exit code as pando's; what cannot run is refused saying why.
void TestCli::execInTheApp()
{
    const auto exec = [this](const QStringList &command, const QByteArray &input = {}) {
        return pando(QStringList{QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("deployme"),
                                 QStringLiteral("--")} +
                         command,
                     input);
    };
    Run run = exec({QStringLiteral("cat")}, "line one\nline two\n");
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QCOMPARE(run.out, QStringLiteral("line one\nline two\n"));
    run = exec({QStringLiteral("migrate"), QStringLiteral("--all"), QStringLiteral("warn")});
    QCOMPARE(run.code, 0);
    QCOMPARE(run.out, QStringLiteral("ran: migrate --all warn\n"));
    QCOMPARE(run.err, QStringLiteral("warned\n"));
    run = exec({QStringLiteral("exit"), QStringLiteral("3")});
    QCOMPARE(run.code, 3);

    // Audited with the command's first word, never its arguments.
    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("app.exec");
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines && lines->size() >= 3);
    QString all;
    for (const core::AuditRecord &line : std::as_const(*lines))
        all += line.detail;
    QVERIFY2(all.contains(QStringLiteral("\"command\":\"migrate\"")) && !all.contains(QStringLiteral("--all")),
             qPrintable(all));

    run = pando({QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("deployme"), QStringLiteral("--")});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(QStringLiteral("missing NAME -- COMMAND")), qPrintable(run.err));
    run = pando({QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("nosuchapp"), QStringLiteral("--"),
                 QStringLiteral("ls")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("nosuchapp")), qPrintable(run.err));
    QCOMPARE(pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"),
                    writeFile(test::helloSpec(QStringLiteral("neverdeployed")))})
                 .code,
             0);
    run = pando({QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("neverdeployed"), QStringLiteral("--"),
                 QStringLiteral("ls")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("has no running version")), qPrintable(run.err));
    run = pando({QStringLiteral("apps"), QStringLiteral("exec"), QStringLiteral("deployme"), QStringLiteral("--tty"),
                 QStringLiteral("--"), QStringLiteral("sh")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("needs a terminal")), qPrintable(run.err));
}

void TestCli::deployWaitFails()
{
    QCOMPARE(pando({QStringLiteral("apps"), QStringLiteral("create"), QStringLiteral("-f"),
                    writeFile(test::helloSpec(QStringLiteral("buildfails")))})
                 .code,
             0);
    // What the build prints comes as it prints it, each line under its step, before the step's end.
    const Run run = pando({QStringLiteral("deploy"), QStringLiteral("buildfails"), QStringLiteral("--wait")});
    QCOMPARE(run.code, 1);
    const QStringList out = run.out.split(QLatin1Char('\n'));
    const qsizetype make = out.indexOf(QStringLiteral("  build | Step 2/2 : RUN make"));
    const qsizetype error = out.indexOf(QStringLiteral("  build | make: *** No rule to make target 'all'.  Stop."));
    const qsizetype failed = out.indexOf(QRegularExpression(QStringLiteral("^  ✗ build .*")));
    QVERIFY2(make > 0 && error > make && failed > error, qPrintable(run.out));
    // Then the one-line reason and where to read it again; the lines shown are not repeated.
    QStringList err = run.errLines();
    QCOMPARE(err.size(), 2);
    QVERIFY2(err.value(0).startsWith(QStringLiteral("pando: deploy d")) &&
                 err.value(0).contains(QStringLiteral("failed at step build")),
             qPrintable(run.out + run.err));
    QVERIFY2(err.value(1).contains(QStringLiteral("pando deploys log d")), qPrintable(run.err));

    // --quiet: the steps alone, and the build's last lines before the reason.
    const Run quiet = pando(
        {QStringLiteral("deploy"), QStringLiteral("buildfails"), QStringLiteral("--wait"), QStringLiteral("--quiet")});
    QCOMPARE(quiet.code, 1);
    QVERIFY2(!quiet.out.contains(QStringLiteral("build |")), qPrintable(quiet.out));
    QVERIFY2(quiet.out.contains(QStringLiteral("✗ build")), qPrintable(quiet.out));
    err = quiet.errLines();
    QCOMPARE(err.value(0), QStringLiteral("--- the last 3 lines of step build ---"));
    QCOMPARE(err.value(3), QStringLiteral("make: *** No rule to make target 'all'.  Stop."));
    const QString reason = err.value(5);
    QVERIFY2(reason.startsWith(QStringLiteral("pando: deploy d")) &&
                 reason.contains(QStringLiteral("failed at step build")),
             qPrintable(quiet.out + quiet.err));

    // The whole output, per step or with each line's step.
    const QString id = reason.section(QLatin1Char(' '), 2, 2).chopped(1);
    const Run log = pando(
        {QStringLiteral("deploys"), QStringLiteral("log"), id, QStringLiteral("--step"), QStringLiteral("build")});
    QVERIFY2(log.code == 0, qPrintable(log.err));
    QCOMPARE(log.out.trimmed().split(QLatin1Char('\n')).value(1), QStringLiteral("Step 2/2 : RUN make"));
    const Run all = pando({QStringLiteral("deploys"), QStringLiteral("log"), id});
    QVERIFY2(all.out.contains(QStringLiteral("build | make: *** No rule")), qPrintable(all.out));
    const Run unknown =
        pando({QStringLiteral("deploys"), QStringLiteral("log"), id, QStringLiteral("--step"), QStringLiteral("nope")});
    QCOMPARE(unknown.code, 1);
    QVERIFY2(unknown.err.contains(QStringLiteral("has no step nope")) && unknown.err.contains(QStringLiteral("build")),
             qPrintable(unknown.err));

    // A ref that does not exist is refused before a deploy is queued.
    const Run missing = pando({QStringLiteral("deploy"), QStringLiteral("buildfails"), QStringLiteral("--ref"),
                               QStringLiteral("missing"), QStringLiteral("--wait")});
    QCOMPARE(missing.code, 1);
    QCOMPARE(missing.errLines().size(), 1);
    QVERIFY2(missing.err.contains(QStringLiteral("missing")), qPrintable(missing.err));
}

void TestCli::logsFollowUntilInterrupted()
{
    // deployme runs after deployWaitSucceeds; the fake runtime has one line of log for it.
    const Run tail =
        pando({QStringLiteral("logs"), QStringLiteral("deployme"), QStringLiteral("--tail"), QStringLiteral("10")});
    QVERIFY2(tail.code == 0, qPrintable(tail.err));
    QVERIFY2(tail.out.contains(QStringLiteral("hello from the fake")), qPrintable(tail.out));

    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PANDO_SERVER"), m_install.baseUrl());
    env.insert(QStringLiteral("PANDO_TOKEN"), m_install.token);
    process.setProcessEnvironment(env);
    QSignalSpy finished(&process, &QProcess::finished);
    // The stream of an earlier command (deploy --wait) may not be closed on the server's side yet:
    // counting it as this one's would send SIGTERM before pando has its handler.
    QTRY_COMPARE_WITH_TIMEOUT(m_install.server->webSocketCount(), 0, 10000);
    process.start(m_binary, {QStringLiteral("logs"), QStringLiteral("deployme"), QStringLiteral("-f")});
    QTRY_COMPARE_WITH_TIMEOUT(m_install.server->webSocketCount(), 1, 10000);
    process.terminate(); // SIGTERM, handled like Ctrl-C
    QVERIFY(finished.wait(10000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 130);
    QTRY_COMPARE(m_install.server->webSocketCount(), 0);
}

void TestCli::loginAndAccounts()
{
    const QString session = m_config.path() + QStringLiteral("/pando/session");
    QFile::remove(session);
    const QByteArray password = QByteArray(test::TestInstall::Password) + '\n';

    // A wrong password fails and saves nothing.
    Run run = pando({QStringLiteral("login"), QStringLiteral("--username"), QStringLiteral("member")},
                    "not the password\n", true, false);
    QCOMPARE(run.code, 1);
    QVERIFY(!QFile::exists(session));

    run =
        pando({QStringLiteral("login"), QStringLiteral("--username"), QStringLiteral("member")}, password, true, false);
    QVERIFY2(run.code == 0, qPrintable(run.err));
    QVERIFY(run.out.contains(QLatin1String("logged in as member")));
    QVERIFY(QFile::exists(session));
    QCOMPARE(QFile::permissions(session),
             QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser);
    // The saved session is used when no token is given; a member may not list users.
    QCOMPARE(pando({QStringLiteral("apps"), QStringLiteral("list")}, {}, true, false).code, 0);
    run = pando({QStringLiteral("users"), QStringLiteral("list")}, {}, true, false);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("403")) || run.err.contains(QLatin1String("lacks")), qPrintable(run.err));
    // PANDO_TOKEN (the administrator's here) wins over the saved session.
    QCOMPARE(pando({QStringLiteral("users"), QStringLiteral("list")}).code, 0);

    run = pando({QStringLiteral("users"), QStringLiteral("create"), QStringLiteral("carol"), QStringLiteral("--role"),
                 QStringLiteral("viewer")},
                "carol's long password\n");
    QVERIFY2(run.code == 0, qPrintable(run.err));
    run = pando({QStringLiteral("users"), QStringLiteral("list")});
    QVERIFY2(run.out.contains(QRegularExpression(QStringLiteral("\\ncarol\\s+viewer\\s+no"))), qPrintable(run.out));
    QCOMPARE(pando({QStringLiteral("users"), QStringLiteral("disable"), QStringLiteral("carol")}).code, 0);

    run = pando({QStringLiteral("tokens"), QStringLiteral("create"), QStringLiteral("ci"), QStringLiteral("--scope"),
                 QStringLiteral("apps:read"), QStringLiteral("--scope"), QStringLiteral("deploys:write"),
                 QStringLiteral("--expires"), QStringLiteral("30d"), QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    const QJsonObject token = QJsonDocument::fromJson(run.out.toUtf8()).object();
    const QString secret = token.value(QStringLiteral("secret")).toString();
    const QString id = token.value(QStringLiteral("id")).toString();
    QVERIFY(secret.startsWith(QLatin1String("pando_")));
    QCOMPARE(token.value(QStringLiteral("scopes")).toArray().size(), 2);
    run = pando({QStringLiteral("tokens"), QStringLiteral("list")});
    QVERIFY(run.out.contains(id));
    QVERIFY(!run.out.contains(secret));
    const QString secretFile = writeFile(secret.toUtf8());
    QCOMPARE(pando({QStringLiteral("--token-file"), secretFile, QStringLiteral("apps"), QStringLiteral("list")}).code,
             0);
    QCOMPARE(pando({QStringLiteral("tokens"), QStringLiteral("revoke"), id}).code, 0);
    QCOMPARE(pando({QStringLiteral("--token-file"), secretFile, QStringLiteral("apps"), QStringLiteral("list")}).code,
             1);
    QFile::remove(session);
}

void TestCli::appsForward()
{
    // The app's stable route leads to a real HTTP backend (the fake router routes nothing itself).
    test::HttpBackend backend("fwd");
    auto created = m_install.engine->createApp(test::helloSpec(QStringLiteral("fwd")),
                                               core::Actor::system(QStringLiteral("test")));
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    QVERIFY(m_install.router->remove(QStringLiteral("fwd")));
    QVERIFY(m_install.router->ensure(QStringLiteral("fwd"), backend.port()));
    QVERIFY(m_install.router->setBackend(QStringLiteral("fwd"), QStringLiteral("127.0.0.1"), backend.port()));

    // Errors are said before anything listens, and exit 1.
    Run run = pando({QStringLiteral("apps"), QStringLiteral("forward"), QStringLiteral("nosuch")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("nosuch")), qPrintable(run.all()));
    QTcpServer holder;
    QVERIFY(holder.listen(QHostAddress::LocalHost, 0));
    run = pando({QStringLiteral("apps"), QStringLiteral("forward"), QStringLiteral("fwd"), QStringLiteral("--port"),
                 QString::number(holder.serverPort())});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QString::number(holder.serverPort())), qPrintable(run.all()));

    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PANDO_SERVER"), m_install.baseUrl());
    env.insert(QStringLiteral("PANDO_TOKEN"), m_install.token);
    process.setProcessEnvironment(env);
    QSignalSpy finished(&process, &QProcess::finished);
    QByteArray out;
    connect(&process, &QProcess::readyReadStandardOutput, this, [&] { out += process.readAllStandardOutput(); });
    process.start(m_binary, {QStringLiteral("apps"), QStringLiteral("forward"), QStringLiteral("fwd")});
    QTRY_VERIFY_WITH_TIMEOUT(out.contains('\n') || !finished.isEmpty(), 15000);
    static const QRegularExpression line(
        QStringLiteral("^Forwarding http://127\\.0\\.0\\.1:(\\d+) -> app fwd on (\\S+) \\(Ctrl\\+C to stop\\)\n$"));
    const QRegularExpressionMatch match = line.match(QString::fromUtf8(out));
    QVERIFY2(match.hasMatch(), out.constData());
    QCOMPARE(match.captured(2), m_install.baseUrl());

    // Plain HTTP on the local port reaches the backend through the server.
    QTcpSocket http;
    QByteArray answer;
    connect(&http, &QTcpSocket::readyRead, this, [&] { answer += http.readAll(); });
    http.connectToHost(QHostAddress::LocalHost, quint16(match.captured(1).toUInt()));
    QVERIFY(http.waitForConnected(5000));
    http.write("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello");
    QTRY_VERIFY_WITH_TIMEOUT(answer.endsWith("hello"), 10000);
    QVERIFY2(answer.contains("X-Backend: fwd"), answer.constData());
    http.disconnectFromHost();

    process.terminate(); // SIGTERM, handled like Ctrl-C
    QVERIFY(finished.wait(10000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 130);
}

// `pando connections`: a token goes in on standard input and never comes back; bad input is
// refused naming the field; a connection that does not cover an address says so; members see
// only what they are granted.
void TestCli::sourceConnections()
{
    const QString secret = QStringLiteral("ghp_cli-Token-0815");
    const Run added = pando({QStringLiteral("connections"), QStringLiteral("add"), QStringLiteral("github"),
                             QStringLiteral("--url"), QStringLiteral("https://github.com"), QStringLiteral("--kind"),
                             QStringLiteral("github"), QStringLiteral("--owner"), QStringLiteral("acme")},
                            secret.toUtf8() + "\n");
    QVERIFY2(added.code == 0, qPrintable(added.err));
    QVERIFY2(added.out.contains(QStringLiteral("added connection github (github at https://github.com, token)")),
             qPrintable(added.out));

    const Run listed = pando({QStringLiteral("--json"), QStringLiteral("connections"), QStringLiteral("list")});
    QCOMPARE(listed.code, 0);
    const QJsonArray all =
        QJsonDocument::fromJson(listed.out.toUtf8()).object().value(QStringLiteral("connections")).toArray();
    QCOMPARE(all.size(), 1);
    QCOMPARE(all.at(0).toObject().value(QStringLiteral("owner")).toString(), QStringLiteral("acme"));
    QVERIFY(!listed.out.contains(secret));
    const Run shown = pando({QStringLiteral("connections"), QStringLiteral("show"), QStringLiteral("github")});
    QCOMPARE(shown.code, 0);
    QVERIFY2(shown.out.contains(QStringLiteral("never tested")) && !shown.out.contains(secret), qPrintable(shown.out));

    const Run tested = pando({QStringLiteral("connections"), QStringLiteral("test"), QStringLiteral("github"),
                              QStringLiteral("https://github.com/acme/api.git")});
    QVERIFY2(tested.code == 0, qPrintable(tested.err));
    QVERIFY2(tested.out.contains(QStringLiteral("connection github reads https://github.com/acme/api.git")),
             qPrintable(tested.out));
    const Run other = pando({QStringLiteral("connections"), QStringLiteral("test"), QStringLiteral("github"),
                             QStringLiteral("https://github.com/evil/api.git")});
    QCOMPARE(other.code, 1);
    QVERIFY2(other.err.contains(QStringLiteral("does not cover")), qPrintable(other.err));

    // Bad input: named, and nothing is added.
    const Run plain =
        pando({QStringLiteral("connections"), QStringLiteral("add"), QStringLiteral("plain"), QStringLiteral("--url"),
               QStringLiteral("http://git.example.com"), QStringLiteral("--token-user"), QStringLiteral("me")},
              "token\n");
    QCOMPARE(plain.code, 1);
    QVERIFY2(plain.err.contains(QStringLiteral("plain http")) && plain.err.contains(QStringLiteral("url")),
             qPrintable(plain.err));
    const QString key = writeFile("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n");
    const Run badKey =
        pando({QStringLiteral("connections"), QStringLiteral("add"), QStringLiteral("key"), QStringLiteral("--url"),
               QStringLiteral("ssh://git.example.com"), QStringLiteral("--ssh-key"), key});
    QCOMPARE(badKey.code, 1);
    QVERIFY2(badKey.err.contains(QStringLiteral("ssh_key")), qPrintable(badKey.err));
    const Run noUrl = pando({QStringLiteral("connections"), QStringLiteral("add"), QStringLiteral("x")});
    QCOMPARE(noUrl.code, 2);
    QVERIFY2(noUrl.err.contains(QStringLiteral("--url")), qPrintable(noUrl.err));

    // A GitHub App: its ids and its key file; --kind is github unless given. Its key never comes back.
    QProcess genrsa;
    genrsa.start(QStringLiteral("openssl"),
                 {QStringLiteral("genrsa"), QStringLiteral("-traditional"), QStringLiteral("2048")});
    QVERIFY(genrsa.waitForFinished(30000));
    const QByteArray pem = genrsa.readAllStandardOutput();
    QVERIFY2(pem.startsWith("-----BEGIN RSA PRIVATE KEY-----"), "openssl made no RSA key");
    const QString appKey = writeFile(pem);
    const QStringList app{QStringLiteral("connections"),
                          QStringLiteral("add"),
                          QStringLiteral("gh-app"),
                          QStringLiteral("--url"),
                          QStringLiteral("https://github.com"),
                          QStringLiteral("--owner"),
                          QStringLiteral("umbrella"),
                          QStringLiteral("--github-app"),
                          QStringLiteral("812734"),
                          QStringLiteral("--installation")};
    const Run noKey = pando(app + QStringList{QStringLiteral("41002")});
    QCOMPARE(noKey.code, 1);
    QVERIFY2(noKey.err.contains(QStringLiteral("--app-key is missing")), qPrintable(noKey.err));
    const Run twoCredentials = pando(app + QStringList{QStringLiteral("41002"), QStringLiteral("--app-key"), appKey,
                                                       QStringLiteral("--ssh-key"), key});
    QCOMPARE(twoCredentials.code, 1);
    QVERIFY2(twoCredentials.err.contains(QStringLiteral("pass one")), qPrintable(twoCredentials.err));
    const Run notAnId = pando(app + QStringList{QStringLiteral("Iv1.8a61"), QStringLiteral("--app-key"), appKey});
    QCOMPARE(notAnId.code, 1);
    QVERIFY2(notAnId.err.contains(QStringLiteral("installation_id")), qPrintable(notAnId.err));
    const Run appAdded = pando(app + QStringList{QStringLiteral("41002"), QStringLiteral("--app-key"), appKey});
    QVERIFY2(appAdded.code == 0, qPrintable(appAdded.err));
    QVERIFY2(
        appAdded.out.contains(QStringLiteral("added connection gh-app (github at https://github.com, github-app)")),
        qPrintable(appAdded.out));
    const Run appShown = pando({QStringLiteral("connections"), QStringLiteral("show"), QStringLiteral("gh-app")});
    QVERIFY2(appShown.out.contains(QStringLiteral("812734")) && appShown.out.contains(QStringLiteral("41002")) &&
                 !appShown.out.contains(QStringLiteral("PRIVATE KEY")),
             qPrintable(appShown.out));
    QVERIFY(pando({QStringLiteral("connections"), QStringLiteral("rm"), QStringLiteral("gh-app")}).code == 0);
    QCOMPARE(QJsonDocument::fromJson(
                 pando({QStringLiteral("--json"), QStringLiteral("connections"), QStringLiteral("list")}).out.toUtf8())
                 .object()
                 .value(QStringLiteral("connections"))
                 .toArray()
                 .size(),
             1);

    // A registry: docker login's user and password; tested on an image or on its login alone
    // (the fake runtime's registry lets robot in with "right"), never on a repository.
    const Run registry = pando({u"connections"_s, u"add"_s, u"ghcr"_s, u"--kind"_s, u"registry"_s, u"--url"_s,
                                u"https://ghcr.io"_s, u"--token-user"_s, u"robot"_s},
                               "right\n");
    QVERIFY2(registry.code == 0, qPrintable(registry.err));
    QVERIFY2(registry.out.contains(u"added connection ghcr (registry at https://ghcr.io, token)"_s),
             qPrintable(registry.out));
    const Run digest = pando({u"connections"_s, u"test"_s, u"ghcr"_s, u"ghcr.io/acme/api:1.4"_s});
    QVERIFY2(digest.code == 0, qPrintable(digest.err));
    QVERIFY2(digest.out.contains(u"connection ghcr reads ghcr.io/acme/api:1.4: sha256:ffff"_s), qPrintable(digest.out));
    const Run login = pando({u"connections"_s, u"test"_s, u"ghcr"_s});
    QVERIFY2(login.code == 0 && login.out.contains(u"the registry accepts its login"_s), qPrintable(login.out));
    const Run asRepo = pando({u"connections"_s, u"test"_s, u"ghcr"_s, u"ghcr.io/acme/api"_s, u"main"_s});
    QCOMPARE(asRepo.code, 1);
    QVERIFY2(asRepo.err.contains(u"tag or digest goes in its reference"_s), qPrintable(asRepo.err));
    const Run noRepo = pando({u"connections"_s, u"test"_s, u"github"_s});
    QCOMPARE(noRepo.code, 1);
    QVERIFY2(noRepo.err.contains(u"name the repository"_s), qPrintable(noRepo.err));
    const Run keyForRegistry = pando({u"connections"_s, u"add"_s, u"reg-key"_s, u"--kind"_s, u"registry"_s, u"--url"_s,
                                      u"https://ghcr.io"_s, u"--ssh-key"_s, key, u"--known-hosts"_s, key});
    QCOMPARE(keyForRegistry.code, 1);
    QVERIFY2(keyForRegistry.err.contains(u"as docker login does"_s), qPrintable(keyForRegistry.err));
    QVERIFY(pando({u"connections"_s, u"rm"_s, u"ghcr"_s}).code == 0);

    // Members see a connection once granted; only administrators change them.
    const auto asMember = [this](const QStringList &args) {
        return test::runCli(args,
                            test::cliEnvironment(m_install.baseUrl(), m_install.tokens.value(QStringLiteral("member")),
                                                 m_config.path()));
    };
    QVERIFY(asMember({QStringLiteral("connections"), QStringLiteral("list")})
                .out.contains(QStringLiteral("no source connections")));
    const Run granted = pando({QStringLiteral("grants"), QStringLiteral("add"), QStringLiteral("connection/github"),
                               QStringLiteral("member"), QStringLiteral("user")});
    QVERIFY2(granted.code == 0, qPrintable(granted.err));
    QVERIFY(asMember({QStringLiteral("connections"), QStringLiteral("list")}).out.contains(QStringLiteral("github")));
    const Run memberRm = asMember({QStringLiteral("connections"), QStringLiteral("rm"), QStringLiteral("github")});
    QVERIFY(memberRm.code != 0);

    const Run removed = pando({QStringLiteral("connections"), QStringLiteral("rm"), QStringLiteral("github")});
    QVERIFY2(removed.code == 0, qPrintable(removed.err));
    const Run again = pando({QStringLiteral("connections"), QStringLiteral("rm"), QStringLiteral("github")});
    QCOMPARE(again.code, 1);
    QVERIFY2(again.err.contains(QStringLiteral("no connection named github")), qPrintable(again.err));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
