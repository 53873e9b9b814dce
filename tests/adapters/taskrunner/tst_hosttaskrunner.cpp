// HostTaskRunner against real processes: argv stays literal, the environment is minimal,
// output streams as it comes, and a timeout or cancel ends the whole process group.

#include "adapters/taskrunner/host/hosttaskrunner.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <csignal>
#include <thread>

using namespace Qt::StringLiterals;
using pando::CancelToken;
using pando::ErrorCode;
using pando::adapters::OutputChunk;
using pando::adapters::TaskResult;
using pando::adapters::TaskSpec;
using pando::adapters::host::HostTaskRunner;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

namespace {

struct Captured {
    QByteArray out;
    QByteArray err;
    QList<qint64> chunkTimes;
    std::function<void(const OutputChunk &)> sink()
    {
        return [this](const OutputChunk &chunk) {
            (chunk.stderrStream ? err : out) += chunk.data;
            chunkTimes.append(QDateTime::currentMSecsSinceEpoch());
        };
    }
};

// True while a process with this id exists and is not a zombie.
bool processAlive(qint64 pid)
{
    QFile stat(u"/proc/%1/stat"_s.arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray text = stat.readAll();
    const qsizetype paren = text.lastIndexOf(')');
    return paren > 0 && paren + 2 < text.size() && text.at(paren + 2) != 'Z';
}

} // namespace

class TestHostTaskRunner : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void argvIsLiteral();
    void shellWhenAsked();
    void environmentIsMinimal();
    void stdinIsWrittenThenClosed();
    void largeStdinToACommandThatIgnoresIt();
    void outputStreamsBeforeExit();
    void signalExitCode();
    void timeoutKillsTheWholeGroup();
    void timeoutEscalatesToSigkill();
    void cancelKillsTheWholeGroup();
    void leftoverChildrenAreEnded();
    void mountsAreSymlinks();
    void missingCommand();
    void missingWorkDir();

private:
    TaskSpec spec(const QStringList &argv) const
    {
        TaskSpec s;
        s.argv = argv;
        s.workDir = m_dir->path();
        return s;
    }
    std::unique_ptr<QTemporaryDir> m_dir;
    HostTaskRunner m_runner;
};

void TestHostTaskRunner::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_runner.setKillGraceMs(2000);
}

void TestHostTaskRunner::argvIsLiteral()
{
    Captured c;
    const QString marker = m_dir->filePath(u"marker"_s);
    QFile(marker).open(QIODevice::WriteOnly);
    auto r = m_runner.run(spec({u"echo"_s, u"hello;rm -f "_s + marker, u"$HOME"_s, u"`id`"_s}), {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out, QByteArray("hello;rm -f " + marker.toUtf8() + " $HOME `id`\n"));
    QVERIFY(QFile::exists(marker));
    QCOMPARE(r->imageDigest, QString());
}

void TestHostTaskRunner::shellWhenAsked()
{
    Captured c;
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"echo out; echo err >&2; exit 3"_s}), {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 3);
    QVERIFY(!r->timedOut);
    QCOMPARE(c.out, QByteArray("out\n"));
    QCOMPARE(c.err, QByteArray("err\n"));
    QVERIFY(r->finishedMs >= r->startedMs);
}

void TestHostTaskRunner::environmentIsMinimal()
{
    qputenv("PANDO_TEST_SECRET_TOKEN", "s3cret");
    Captured c;
    TaskSpec s = spec({u"env"_s});
    s.env.insert(u"GREETING"_s, u"hello world"_s);
    auto r = m_runner.run(s, {}, c.sink());
    qunsetenv("PANDO_TEST_SECRET_TOKEN");
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QVERIFY2(!c.out.contains("PANDO_TEST_SECRET_TOKEN"), c.out.constData());
    QVERIFY(!c.out.contains("s3cret"));
    QVERIFY(c.out.contains("GREETING=hello world\n"));
    QVERIFY(c.out.contains(QByteArray("HOME=" + QDir(m_dir->path()).absolutePath().toUtf8() + '\n')));
    QVERIFY(c.out.contains(QByteArray("PATH=" + HostTaskRunner::defaultPath().toUtf8() + '\n')));

    TaskSpec bad = spec({u"true"_s});
    bad.env.insert(u"A=B"_s, u"x"_s);
    auto refused = m_runner.run(bad, {}, {});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
}

void TestHostTaskRunner::stdinIsWrittenThenClosed()
{
    Captured c;
    TaskSpec s = spec({u"cat"_s});
    QByteArray data;
    for (int i = 0; i < 40000; ++i)
        data += "line " + QByteArray::number(i) + '\n'; // larger than any pipe buffer
    s.stdinData = data;
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out.size(), data.size());
    QCOMPARE(c.out, data);
}

void TestHostTaskRunner::largeStdinToACommandThatIgnoresIt()
{
    TaskSpec s = spec({u"true"_s});
    s.stdinData = QByteArray(4 << 20, 'x');
    auto r = m_runner.run(s, {}, {});
    PANDO_VERIFY_OK(r); // no SIGPIPE in the test process, no hang
    QCOMPARE(r->exitCode, 0);
}

void TestHostTaskRunner::outputStreamsBeforeExit()
{
    Captured c;
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"echo first; sleep 1; echo second"_s}), {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(c.out, QByteArray("first\nsecond\n"));
    QVERIFY(c.chunkTimes.size() >= 2);
    QVERIFY2(r->finishedMs - c.chunkTimes.first() >= 700,
             qPrintable(u"first chunk %1 ms before the end"_s.arg(r->finishedMs - c.chunkTimes.first())));
}

void TestHostTaskRunner::signalExitCode()
{
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"kill -9 $$"_s}), {}, {});
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 128 + SIGKILL);
    QVERIFY(!r->timedOut);
}

void TestHostTaskRunner::timeoutKillsTheWholeGroup()
{
    Captured c;
    TaskSpec s = spec({u"sh"_s, u"-c"_s, u"sleep 100 & echo $!; sleep 100"_s});
    // Long enough for a loaded machine to start the shell and print the grandchild's id.
    s.timeoutMs = 1500;
    QElapsedTimer t;
    t.start();
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QVERIFY(t.elapsed() < 6000);
    QVERIFY(r->timedOut);
    QCOMPARE(r->exitCode, -1);
    const qint64 grandchild = c.out.trimmed().toLongLong();
    QVERIFY(grandchild > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!processAlive(grandchild), 3000);
}

void TestHostTaskRunner::timeoutEscalatesToSigkill()
{
    m_runner.setKillGraceMs(300);
    TaskSpec s = spec({u"sh"_s, u"-c"_s, u"trap '' TERM; while true; do sleep 0.1; done"_s});
    s.timeoutMs = 300;
    QElapsedTimer t;
    t.start();
    auto r = m_runner.run(s, {}, {});
    PANDO_VERIFY_OK(r);
    QVERIFY(r->timedOut);
    QVERIFY(t.elapsed() >= 550);
    QVERIFY(t.elapsed() < 4000);
}

void TestHostTaskRunner::cancelKillsTheWholeGroup()
{
    Captured c;
    CancelToken cancel;
    // Cancel once the shell has printed its grandchild's id, however slow the machine is.
    std::atomic<bool> printed = false;
    std::atomic<qint64> cancelledAt = 0;
    QElapsedTimer t;
    t.start();
    std::thread canceller([cancel, &printed, &cancelledAt, &t] {
        for (int waited = 0; !printed && waited < 20000; waited += 20)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        cancelledAt = t.elapsed();
        cancel.cancel();
    });
    const auto sink = [&c, &printed, capture = c.sink()](const OutputChunk &chunk) {
        capture(chunk);
        printed = c.out.endsWith('\n');
    };
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"sleep 100 & echo $!; sleep 100"_s}), cancel, sink);
    const qint64 returnedAt = t.elapsed();
    canceller.join();
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Cancelled);
    QVERIFY2(returnedAt - cancelledAt < 5000, QByteArray::number(returnedAt - cancelledAt).constData());
    const qint64 grandchild = c.out.trimmed().toLongLong();
    QVERIFY(grandchild > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!processAlive(grandchild), 3000);

    CancelToken already;
    already.cancel();
    auto early = m_runner.run(spec({u"true"_s}), already, {});
    QVERIFY(!early);
    QCOMPARE(early.error().code, ErrorCode::Cancelled);
}

void TestHostTaskRunner::leftoverChildrenAreEnded()
{
    // The command returns at once but leaves a background child holding stdout.
    Captured c;
    QElapsedTimer t;
    t.start();
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"sleep 100 & echo $!; exit 0"_s}), {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QVERIFY(t.elapsed() < 3000);
    const qint64 child = c.out.trimmed().toLongLong();
    QVERIFY(child > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!processAlive(child), 3000);
}

void TestHostTaskRunner::mountsAreSymlinks()
{
    QTemporaryDir input;
    QFile file(input.filePath(u"greeting.txt"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("hi from an input\n");
    file.close();

    TaskSpec s = spec({u"cat"_s, u"inputs/src/greeting.txt"_s});
    s.mounts.append({input.path(), u"inputs/src"_s, true});
    Captured c;
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out, QByteArray("hi from an input\n"));
    QVERIFY(!QFileInfo(m_dir->filePath(u"inputs/src"_s)).isSymLink()); // removed after the run

    TaskSpec outside = spec({u"true"_s});
    outside.mounts.append({input.path(), u"../elsewhere"_s, false});
    auto refused = m_runner.run(outside, {}, {});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
}

void TestHostTaskRunner::missingCommand()
{
    auto r = m_runner.run(spec({u"pando-no-such-command"_s}), {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::NotFound);
    QVERIFY(r.error().message.contains(u"pando-no-such-command"_s));
}

void TestHostTaskRunner::missingWorkDir()
{
    TaskSpec s = spec({u"true"_s});
    s.workDir = m_dir->filePath(u"nope"_s);
    auto r = m_runner.run(s, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Invalid);
}

QTEST_GUILESS_MAIN(TestHostTaskRunner)
#include "tst_hosttaskrunner.moc"
