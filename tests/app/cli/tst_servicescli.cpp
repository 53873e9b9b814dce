// `pando services list|backup|rm`, `pando volumes backup` and the data question of `pando apps rm`, run as the built
// binary against an install served from this test process (fake services adapter). Prompts and
// progress are checked on a real pseudo-terminal.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"
#include "tests/support/vocabtesting.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace pando;

namespace {

struct TerminalRun {
    int code = -1; // -1: it crashed or timed out
    QByteArray output;
};

// Runs pando on a new pseudo-terminal (its stdin, stdout and stderr), writing answer once the
// output shows prompt. The server lives on this thread, so the wait spins the event loop.
TerminalRun runOnTerminal(const QStringList &args, const QProcessEnvironment &env, const QByteArray &prompt = {},
                          const QByteArray &answer = {}, int timeoutMs = 30000)
{
    QList<QByteArray> argStore{QFile::encodeName(test::pandoBinary())};
    for (const QString &arg : args)
        argStore << arg.toUtf8();
    QList<QByteArray> envStore;
    for (const QString &entry : env.toStringList())
        envStore << entry.toUtf8();
    std::vector<char *> argv;
    for (QByteArray &a : argStore)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char *> envp;
    for (QByteArray &e : envStore)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    TerminalRun run;
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0)
        return run;
    if (pid == 0) {
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);
    const auto drain = [&] {
        char buffer[4096];
        ssize_t n = 0;
        while ((n = ::read(master, buffer, sizeof buffer)) > 0)
            run.output.append(buffer, n);
    };
    QElapsedTimer clock;
    clock.start();
    bool answered = prompt.isEmpty();
    int status = 0;
    bool exited = false;
    while (!exited && clock.elapsed() < timeoutMs) {
        QTest::qWait(10);
        drain();
        if (!answered && run.output.contains(prompt)) {
            answered = ::write(master, answer.constData(), size_t(answer.size())) == answer.size();
        }
        exited = ::waitpid(pid, &status, WNOHANG) == pid;
    }
    drain();
    if (!exited) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    } else if (WIFEXITED(status)) {
        run.code = WEXITSTATUS(status);
    }
    ::close(master);
    return run;
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &content)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
}

} // namespace

class TestServicesCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void listTableAndJson();
    void backupWritesTheFile();
    void backupRefusesToOverwrite();
    void failedBackupLeavesNoFile();
    void backupShowsProgressOnATerminal();
    void volumeBackupWritesTheArchive();
    void volumeRestoreSendsTheArchive();
    void removeUsage();
    void removeDeclaredSlotIsRefused();
    void appsRmWithoutTerminalNamesBothFlags();
    void appsRmAsksOnATerminal();

private:
    test::CliRun pando(const QStringList &args);
    QProcessEnvironment env() const;
    void makeApp(const QString &name);

    test::TestInstall m_install;
    QTemporaryDir m_config;
    QTemporaryDir m_out;
};

QProcessEnvironment TestServicesCli::env() const
{
    return test::cliEnvironment(m_install.baseUrl(), m_install.token, m_config.path());
}

test::CliRun TestServicesCli::pando(const QStringList &args)
{
    return test::runCli(args, env());
}

void TestServicesCli::makeApp(const QString &name)
{
    const QByteArray spec = QStringLiteral("name: %1\n"
                                           "source:\n  repo: https://git.example/%1.git\n"
                                           "run:\n  port: %2\n"
                                           "health:\n  path: /api/v1/health\n"
                                           "services:\n"
                                           "  db: { kind: postgres, version: \"15\" }\n"
                                           "  cache: { kind: redis }\n")
                                .arg(name)
                                .arg(m_install.port)
                                .toUtf8();
    const core::Actor actor = core::Actor::system(QStringLiteral("test"));
    auto app = m_install.engine->createApp(spec, actor);
    QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
    auto deploy = m_install.engine->deploy(name, {}, actor);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : deploy.error().text()));
    const QString id = deploy->id;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto view = m_install.engine->deployView(id);
            return view && view->record.status == core::DeployStatus::Succeeded;
        }(),
        15000);
}

void TestServicesCli::initTestCase()
{
    QVERIFY2(QFile::exists(test::pandoBinary()), qPrintable(test::pandoBinary()));
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    makeApp(QStringLiteral("shop"));
}

void TestServicesCli::listTableAndJson()
{
    test::CliRun run = pando({QStringLiteral("services"), QStringLiteral("list")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QStringList lines = run.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines[0].simplified(), QStringLiteral("APP SLOT KIND VERSION STATUS VOLUME CREATED"));
    QVERIFY2(lines[2].simplified().startsWith(QLatin1String("shop db postgres 15 running pando-shop-db-data 2")),
             qPrintable(lines[2]));

    run = pando({QStringLiteral("services"), QStringLiteral("list"), QStringLiteral("shop"), QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QJsonArray services =
        QJsonDocument::fromJson(run.out.toUtf8()).object().value(QStringLiteral("services")).toArray();
    QCOMPARE(services.size(), 2);
    QCOMPARE(services[1].toObject().value(QStringLiteral("status")).toString(), QStringLiteral("running"));

    run = pando({QStringLiteral("services"), QStringLiteral("list"), QStringLiteral("nosuch")});
    QCOMPARE(run.code, 1);
}

void TestServicesCli::backupWritesTheFile()
{
    const QString file = m_out.filePath(QStringLiteral("db.sql"));
    const test::CliRun run = pando({QStringLiteral("services"), QStringLiteral("backup"), QStringLiteral("shop"),
                                    QStringLiteral("db"), QStringLiteral("--out"), file});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.startsWith(QStringLiteral("backed up shop/db to ") + file), qPrintable(run.out));
    const QByteArray expected =
        test::FakeServiceProvisioner::dump(QStringLiteral("shop"), QStringLiteral("db"), m_install.services->dumpSize);
    QVERIFY(readFile(file) == expected);
    QVERIFY(!QFile::exists(file + QStringLiteral(".partial")));
}

void TestServicesCli::backupRefusesToOverwrite()
{
    const QString file = m_out.filePath(QStringLiteral("keep.sql"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("precious\n");
    }
    const QStringList args{QStringLiteral("services"), QStringLiteral("backup"), QStringLiteral("shop"),
                           QStringLiteral("db"),       QStringLiteral("--out"),  file};
    test::CliRun run = pando(args);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("exists already")) && run.err.contains(QLatin1String("--force")),
             qPrintable(run.err));
    QCOMPARE(readFile(file), QByteArray("precious\n"));
    QVERIFY(!QFile::exists(file + QStringLiteral(".partial")));

    run = pando(args + QStringList{QStringLiteral("--force"), QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QJsonObject answer = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(answer.value(QStringLiteral("bytes")).toInteger(), qint64(m_install.services->dumpSize));
    QCOMPARE(readFile(file).size(), qsizetype(m_install.services->dumpSize));
}

void TestServicesCli::failedBackupLeavesNoFile()
{
    const QString file = m_out.filePath(QStringLiteral("none.sql"));
    const test::CliRun run = pando({QStringLiteral("services"), QStringLiteral("backup"), QStringLiteral("shop"),
                                    QStringLiteral("nosuch"), QStringLiteral("--out"), file});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.errLines().value(0).contains(QLatin1String("app shop has no service in slot nosuch")),
             qPrintable(run.err));
    QVERIFY(!QFile::exists(file));
    QVERIFY(!QFile::exists(file + QStringLiteral(".partial")));
}

void TestServicesCli::backupShowsProgressOnATerminal()
{
    const QString file = m_out.filePath(QStringLiteral("tty.rdb"));
    const TerminalRun run = runOnTerminal({QStringLiteral("services"), QStringLiteral("backup"), QStringLiteral("shop"),
                                           QStringLiteral("cache"), QStringLiteral("--out"), file},
                                          env());
    QVERIFY2(run.code == 0, run.output.constData());
    QVERIFY2(run.output.contains(" written"), run.output.constData());
    QVERIFY2(run.output.contains("backed up shop/cache to"), run.output.constData());
    QCOMPARE(readFile(file), test::FakeServiceProvisioner::dump(QStringLiteral("shop"), QStringLiteral("cache"),
                                                                m_install.services->dumpSize));
}

// `pando volumes backup`: the runtime's archive of the volume, read through the serving
// container at the spec's path, written whole; a volume the spec does not have is refused.
void TestServicesCli::volumeBackupWritesTheArchive()
{
    const QByteArray spec = QStringLiteral("name: notes\nsource:\n  repo: https://git.example/notes.git\n"
                                           "run:\n  port: %1\n  volumes:\n    - {name: data, path: /data}\n"
                                           "health:\n  path: /api/v1/health\n")
                                .arg(m_install.port)
                                .toUtf8();
    const core::Actor actor = core::Actor::system(QStringLiteral("test"));
    QVERIFY(m_install.engine->createApp(spec, actor));
    auto deploy = m_install.engine->deploy(QStringLiteral("notes"), {}, actor);
    QVERIFY2(deploy, qPrintable(deploy ? QString() : deploy.error().text()));
    const QString id = deploy->id;
    QTRY_VERIFY_WITH_TIMEOUT(m_install.engine->deployView(id)->record.status == core::DeployStatus::Succeeded, 15000);

    const QString file = m_out.filePath(QStringLiteral("notes-data.tar"));
    test::CliRun run = pando({QStringLiteral("volumes"), QStringLiteral("backup"), QStringLiteral("notes"),
                              QStringLiteral("data"), QStringLiteral("--out"), file, QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QJsonObject said = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(said.value(QStringLiteral("volume")).toString(), QStringLiteral("data"));
    const QByteArray expected = test::FakeRuntime::exportedVolume({QStringLiteral("v-notes-data"),
                                                                   m_install.engine->deployView(id)->record.containerId,
                                                                   QStringLiteral("/data")});
    QCOMPARE(readFile(file), expected);
    QCOMPARE(said.value(QStringLiteral("bytes")).toInteger(), expected.size());

    run = pando({QStringLiteral("volumes"), QStringLiteral("backup"), QStringLiteral("notes"), QStringLiteral("cache"),
                 QStringLiteral("--out"), m_out.filePath(QStringLiteral("cache.tar"))});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("app notes has no volume named cache")), qPrintable(run.all()));
    QVERIFY(!QFile::exists(m_out.filePath(QStringLiteral("cache.tar"))));
    QVERIFY(!QFile::exists(m_out.filePath(QStringLiteral("cache.tar.partial"))));
}

// `pando volumes restore`: the archive goes over the restore WebSocket, in several messages for a
// larger one, and the volume is made from exactly it; the app runs again. Not confirmed (no
// terminal, no --yes), a wrong archive, an unknown volume: a non-zero exit saying why, nothing
// restored.
void TestServicesCli::volumeRestoreSendsTheArchive()
{
    const QString volume = QStringLiteral("v-notes-data");
    const QString file = m_out.filePath(QStringLiteral("restore.tar"));
    // The fake's archive format, made large enough to go in many messages.
    const QByteArray archive =
        test::FakeRuntime::exportedVolume({volume, QStringLiteral("c0"), QStringLiteral("/data")}) +
        QByteArray(3 * 1024 * 1024 + 17, 'z');
    QVERIFY(writeFile(file, archive));

    test::CliRun run = pando({QStringLiteral("volumes"), QStringLiteral("restore"), QStringLiteral("notes"),
                              QStringLiteral("data"), QStringLiteral("--from"), file});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("--yes")), qPrintable(run.all()));
    QVERIFY(m_install.runtime->importedVolume(volume).isEmpty());

    run = pando({QStringLiteral("volumes"), QStringLiteral("restore"), QStringLiteral("notes"), QStringLiteral("data"),
                 QStringLiteral("--from"), file, QStringLiteral("--yes"), QStringLiteral("--json")});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    const QJsonObject said = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(said.value(QStringLiteral("bytes")).toInteger(), archive.size());
    QCOMPARE(said.value(QStringLiteral("app")).toObject().value(QStringLiteral("name")).toString(),
             QStringLiteral("notes"));
    QVERIFY(m_install.runtime->importedVolume(volume) == archive);
    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("volume.restore");
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines && lines->size() == 1);
    QCOMPARE(lines->first().outcome, QStringLiteral("success"));

    const QString text = m_out.filePath(QStringLiteral("notes.txt"));
    QVERIFY(writeFile(text, "not an archive\n"));
    run = pando({QStringLiteral("volumes"), QStringLiteral("restore"), QStringLiteral("notes"), QStringLiteral("data"),
                 QStringLiteral("--from"), text, QStringLiteral("--yes")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("not a tar archive")), qPrintable(run.all()));
    QVERIFY(m_install.runtime->importedVolume(volume) == archive);

    run = pando({QStringLiteral("volumes"), QStringLiteral("restore"), QStringLiteral("notes"), QStringLiteral("cache"),
                 QStringLiteral("--from"), file, QStringLiteral("--yes")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("app notes has no volume named cache")), qPrintable(run.all()));

    run = pando({QStringLiteral("volumes"), QStringLiteral("restore"), QStringLiteral("notes"), QStringLiteral("data"),
                 QStringLiteral("--from"), m_out.filePath(QStringLiteral("missing.tar")), QStringLiteral("--yes")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("missing.tar")), qPrintable(run.all()));
}

void TestServicesCli::removeUsage()
{
    test::CliRun run =
        pando({QStringLiteral("services"), QStringLiteral("rm"), QStringLiteral("shop"), QStringLiteral("cache")});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(QLatin1String("--keep-data")) && run.err.contains(QLatin1String("--delete-data")),
             qPrintable(run.err));
    run = pando({QStringLiteral("services"), QStringLiteral("rm"), QStringLiteral("shop"), QStringLiteral("cache"),
                 QStringLiteral("--keep-data"), QStringLiteral("--delete-data")});
    QCOMPARE(run.code, 2);
    run = pando({QStringLiteral("services"), QStringLiteral("backup"), QStringLiteral("shop"), QStringLiteral("db")});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.errLines().value(0).contains(QLatin1String("needs --out")), qPrintable(run.err));
}

void TestServicesCli::removeDeclaredSlotIsRefused()
{
    const test::CliRun run = pando({QStringLiteral("services"), QStringLiteral("rm"), QStringLiteral("shop"),
                                    QStringLiteral("cache"), QStringLiteral("--delete-data")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("the next deploy would provision it again")), qPrintable(run.err));
}

void TestServicesCli::appsRmWithoutTerminalNamesBothFlags()
{
    const test::CliRun run = pando({QStringLiteral("apps"), QStringLiteral("rm"), QStringLiteral("shop")});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QLatin1String("--keep-data")) && run.err.contains(QLatin1String("--delete-data")),
             qPrintable(run.err));
    QVERIFY(m_install.engine->app(QStringLiteral("shop")));
}

void TestServicesCli::appsRmAsksOnATerminal()
{
    makeApp(QStringLiteral("gone"));
    // An answer that is neither: nothing is removed.
    const QByteArray prompt = "keep or delete the data of its services (cache: redis, db: postgres)? [k/d]";
    TerminalRun run =
        runOnTerminal({QStringLiteral("apps"), QStringLiteral("rm"), QStringLiteral("gone")}, env(), prompt, "maybe\n");
    QVERIFY2(run.code == 1, run.output.constData());
    QVERIFY2(run.output.contains("nothing removed"), run.output.constData());
    QVERIFY(m_install.engine->app(QStringLiteral("gone")));

    run = runOnTerminal({QStringLiteral("apps"), QStringLiteral("rm"), QStringLiteral("gone")}, env(), prompt, "k\n");
    QVERIFY2(run.code == 0, run.output.constData());
    QVERIFY2(run.output.contains("removed gone"), run.output.constData());
    // Kept: the services are gone, their volumes and credentials are not.
    const test::CliRun list =
        pando({QStringLiteral("services"), QStringLiteral("list"), QStringLiteral("gone"), QStringLiteral("--json")});
    QVERIFY2(list.code == 0, qPrintable(list.all()));
    const QJsonArray services =
        QJsonDocument::fromJson(list.out.toUtf8()).object().value(QStringLiteral("services")).toArray();
    QCOMPARE(services.size(), 2);
    for (const QJsonValue &v : services) {
        QCOMPARE(v.toObject().value(QStringLiteral("status")).toString(), QStringLiteral("missing"));
        QVERIFY(!v.toObject().value(QStringLiteral("volume")).toString().isEmpty());
    }
}

QTEST_GUILESS_MAIN(TestServicesCli)
#include "tst_servicescli.moc"
