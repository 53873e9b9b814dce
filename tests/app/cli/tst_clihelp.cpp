// What `pando` says about itself, all read off its command tables: per-command help, "did you
// mean" for a mistyped command or flag, and the shell completion scripts, the bash one sourced
// in a real bash and asked what `pando ap<TAB>` completes to. No install is needed for any.

#include "tests/support/clirun.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;

class TestCliHelp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void commandHelp_data();
    void commandHelp();
    void helpWordIsHelpFlag();
    void everyCommandHasHelp();
    void unknownNamesSuggest_data();
    void unknownNamesSuggest();
    void bashCompletes_data();
    void bashCompletes();
    void zshScript();
    void fishScript();

private:
    test::CliRun pando(const QStringList &args);
    // Sources the bash script and prints COMPREPLY for the command line line (the cursor at its end).
    QStringList bashComplete(const QString &line);
    // Writes the completion script for shell to a file and returns its path.
    QString script(const QString &shell);

    QTemporaryDir m_dir;
    QString m_binary;
};

void TestCliHelp::initTestCase()
{
    m_binary = test::pandoBinary();
    QVERIFY2(QFile::exists(m_binary), qPrintable(u"no pando binary at %1"_s.arg(m_binary)));
    QVERIFY(m_dir.isValid());
}

test::CliRun TestCliHelp::pando(const QStringList &args)
{
    return test::runCli(args, test::cliEnvironment({}, {}, m_dir.path()));
}

void TestCliHelp::commandHelp_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("group") << QStringList{u"apps"_s, u"--help"_s}
                           << QStringList{u"usage: pando apps COMMAND"_s, u"apps create -f SPEC.yaml"_s,
                                          u"apps rm NAME"_s, u"apps start NAME"_s};
    QTest::newRow("subcommand") << QStringList{u"apps"_s, u"create"_s, u"--help"_s}
                                << QStringList{u"usage: pando apps create -f SPEC.yaml"_s, u"-f, --file SPEC.yaml"_s,
                                               u"(required)"_s, u"--server URL"_s};
    QTest::newRow("top-level command") << QStringList{u"deploy"_s, u"--help"_s}
                                       << QStringList{u"usage: pando deploy NAME [--ref REF] [--wait]"_s,
                                                      u"--ref REF"_s, u"--wait"_s};
    QTest::newRow("-h") << QStringList{u"logs"_s, u"-h"_s}
                        << QStringList{u"usage: pando logs NAME [-f] [--tail N]"_s, u"-f, --follow"_s};
    QTest::newRow("help word") << QStringList{u"help"_s, u"deploy"_s} << QStringList{u"usage: pando deploy NAME"_s};
    QTest::newRow("help of a group") << QStringList{u"help"_s, u"secrets"_s}
                                     << QStringList{u"secrets set [APP] NAME"_s, u"secrets rm"_s};
    QTest::newRow("overview") << QStringList{u"--help"_s}
                              << QStringList{u"usage: pando [--server URL]"_s, u"completion SHELL"_s,
                                             u"pando COMMAND --help"_s, u"exit status:"_s};
    // Help needs no arguments, flags or server: it is asked before any of them is checked.
    QTest::newRow("help despite missing arguments") << QStringList{u"grants"_s, u"add"_s, u"--help"_s}
                                                    << QStringList{u"usage: pando grants add OBJECT USER ROLE"_s};
}

void TestCliHelp::commandHelp()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, expected);
    const test::CliRun run = pando(args);
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    for (const QString &text : expected)
        QVERIFY2(run.out.contains(text), qPrintable(u"missing \"%1\" in:\n%2"_s.arg(text, run.out)));
}

void TestCliHelp::helpWordIsHelpFlag()
{
    QCOMPARE(pando({u"help"_s, u"apps"_s, u"rm"_s}).out, pando({u"apps"_s, u"rm"_s, u"--help"_s}).out);
    QCOMPARE(pando({u"help"_s}).out, pando({u"--help"_s}).out);
}

void TestCliHelp::everyCommandHasHelp()
{
    // Every command the overview lists answers --help with its own usage.
    const test::CliRun overview = pando({u"--help"_s});
    QStringList commands;
    bool inList = false;
    for (const QString &line : overview.out.split(u'\n')) {
        if (line == u"commands:"_s) {
            inList = true;
            continue;
        }
        if (inList && line.isEmpty())
            break;
        if (!inList || !line.startsWith(u"  "_s) || line.at(2) == u' ')
            continue;
        QStringList words;
        for (const QString &word : line.mid(2).section(u"  "_s, 0, 0).split(u' ', Qt::SkipEmptyParts)) {
            if (!word.at(0).isLower())
                break;
            words << word;
            if (words.size() == 2)
                break;
        }
        commands << words.join(u' ');
    }
    QVERIFY2(commands.size() > 40, qPrintable(overview.out));
    QVERIFY(commands.contains(u"apps create"_s) && commands.contains(u"deploy"_s));
    for (const QString &command : std::as_const(commands)) {
        const test::CliRun run = pando(command.split(u' ') + QStringList{u"--help"_s});
        QVERIFY2(run.code == 0, qPrintable(command + u": "_s + run.all()));
        QVERIFY2(run.out.startsWith(u"usage: pando "_s + command), qPrintable(command + u": "_s + run.out));
    }
}

void TestCliHelp::unknownNamesSuggest_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("first");
    QTest::addColumn<QString>("hint");
    QTest::newRow("command") << QStringList{u"deplyo"_s, u"web"_s} << u"pando: deplyo: unknown command \"deplyo\""_s
                             << u"hint: did you mean \"deploy\"?"_s;
    QTest::newRow("subcommand") << QStringList{u"apps"_s, u"creat"_s}
                                << u"pando: apps creat: unknown subcommand \"creat\""_s
                                << u"hint: did you mean \"create\"?"_s;
    QTest::newRow("flag") << QStringList{u"deploy"_s, u"web"_s, u"--wiat"_s} << u"pando: --wiat: unknown option"_s
                          << u"hint: did you mean \"--wait\"?"_s;
    QTest::newRow("nothing close") << QStringList{u"frobnicate"_s}
                                   << u"pando: frobnicate: unknown command \"frobnicate\""_s << QString();
    QTest::newRow("shell") << QStringList{u"completion"_s, u"tcsh"_s}
                           << u"pando: completion: no completion for \"tcsh\""_s << u"hint: give bash, zsh or fish"_s;
}

void TestCliHelp::unknownNamesSuggest()
{
    QFETCH(QStringList, args);
    QFETCH(QString, first);
    QFETCH(QString, hint);
    const test::CliRun run = pando(args);
    QCOMPARE(run.code, 2);
    QCOMPARE(run.errLines().value(0), first);
    if (hint.isEmpty())
        QVERIFY2(!run.errLines().value(1).startsWith(u"hint:"_s), qPrintable(run.err));
    else
        QCOMPARE(run.errLines().value(1), hint);
    QVERIFY2(run.err.contains(u"usage: pando"_s), qPrintable(run.err));
}

QString TestCliHelp::script(const QString &shell)
{
    const test::CliRun run = pando({u"completion"_s, shell});
    if (run.code != 0) {
        qWarning("%s", qPrintable(run.all()));
        return {};
    }
    const QString path = m_dir.filePath(u"pando."_s + shell);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(run.out.toUtf8());
    return path;
}

QStringList TestCliHelp::bashComplete(const QString &line)
{
    const QString path = script(u"bash"_s);
    if (path.isEmpty())
        return {u"(no script)"_s};
    // COMP_WORDS as bash splits the line; a line ending in a space completes an empty word.
    QStringList words = line.split(u' ');
    QString array;
    for (const QString &word : std::as_const(words))
        array += u" '"_s + word + u'\'';
    QProcess bash;
    bash.start(u"bash"_s, {u"-c"_s,
                           u"source \"$0\"; COMP_WORDS=(%1); COMP_CWORD=%2; _pando; "
                           u"printf '%s\\n' \"${COMPREPLY[@]}\""_s.arg(array)
                               .arg(words.size() - 1),
                           path});
    if (!bash.waitForFinished(10000) || bash.exitCode() != 0)
        return {u"(bash failed: %1)"_s.arg(QString::fromUtf8(bash.readAllStandardError()))};
    return QString::fromUtf8(bash.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
}

void TestCliHelp::bashCompletes_data()
{
    QTest::addColumn<QString>("line");
    QTest::addColumn<QStringList>("expected");
    QTest::addColumn<QStringList>("absent");
    QTest::newRow("command") << u"pando ap"_s << QStringList{u"apps"_s, u"approvals"_s} << QStringList{u"deploy"_s};
    QTest::newRow("subcommand") << u"pando apps cr"_s << QStringList{u"create"_s} << QStringList{u"list"_s};
    QTest::newRow("every subcommand") << u"pando pipelines "_s
                                      << QStringList{u"set"_s, u"list"_s, u"pause"_s, u"unpause"_s, u"rm"_s}
                                      << QStringList{u"apps"_s};
    QTest::newRow("flag") << u"pando deploy web --w"_s << QStringList{u"--wait"_s} << QStringList{u"--ref"_s};
    QTest::newRow("flags of the command and global ones")
        << u"pando apps create -"_s << QStringList{u"-f"_s, u"--file"_s, u"--json"_s, u"--server"_s}
        << QStringList{u"--wait"_s};
    QTest::newRow("-f is --follow for logs")
        << u"pando logs web --f"_s << QStringList{u"--follow"_s} << QStringList{u"--file"_s};
    QTest::newRow("a global flag's value is skipped")
        << u"pando --server http://h:1 ap"_s << QStringList{u"apps"_s} << QStringList{};
    QTest::newRow("a command flag's value is skipped")
        << u"pando pipelines set ci -c p.yml --y"_s << QStringList{u"--yes"_s} << QStringList{};
    QTest::newRow("after help") << u"pando help dep"_s << QStringList{u"deploy"_s, u"deploys"_s} << QStringList{};
    QTest::newRow("shells") << u"pando completion "_s << QStringList{u"bash"_s, u"zsh"_s, u"fish"_s} << QStringList{};
}

void TestCliHelp::bashCompletes()
{
    if (QStandardPaths::findExecutable(u"bash"_s).isEmpty())
        QFAIL("bash is not installed");
    QFETCH(QString, line);
    QFETCH(QStringList, expected);
    QFETCH(QStringList, absent);
    const QStringList got = bashComplete(line);
    for (const QString &word : expected)
        QVERIFY2(got.contains(word), qPrintable(u"%1 → %2"_s.arg(line, got.join(u' '))));
    for (const QString &word : absent)
        QVERIFY2(!got.contains(word), qPrintable(u"%1 → %2"_s.arg(line, got.join(u' '))));
}

void TestCliHelp::zshScript()
{
    const QString path = script(u"zsh"_s);
    QVERIFY(!path.isEmpty());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    QVERIFY(text.startsWith(u"#compdef pando\n"_s));
    QVERIFY(text.contains(u"compadd"_s));
    QVERIFY(text.contains(u"\"apps create\" \"-f --file\""_s));
    if (QStandardPaths::findExecutable(u"zsh"_s).isEmpty())
        QSKIP("zsh is not installed: the script's syntax is not checked");
    QProcess zsh;
    zsh.start(u"zsh"_s, {u"-n"_s, path});
    QVERIFY(zsh.waitForFinished(10000));
    QVERIFY2(zsh.exitCode() == 0, zsh.readAllStandardError().constData());
}

void TestCliHelp::fishScript()
{
    const QString path = script(u"fish"_s);
    QVERIFY(!path.isEmpty());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    QVERIFY(text.contains(u"complete -c pando -n __fish_use_subcommand -a apps"_s));
    QVERIFY(text.contains(
        u"complete -c pando -n '__fish_seen_subcommand_from apps; and __fish_seen_subcommand_from create' -l file -s f -r"_s));
    if (QStandardPaths::findExecutable(u"fish"_s).isEmpty())
        QSKIP("fish is not installed: the script's syntax is not checked");
    QProcess fish;
    fish.start(u"fish"_s, {u"-n"_s, path});
    QVERIFY(fish.waitForFinished(10000));
    QVERIFY2(fish.exitCode() == 0, fish.readAllStandardError().constData());
}

QTEST_GUILESS_MAIN(TestCliHelp)
#include "tst_clihelp.moc"
