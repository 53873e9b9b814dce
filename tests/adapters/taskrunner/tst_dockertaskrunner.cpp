// DockerTaskRunner against the real engine and the locally imported pando/busybox image:
// exit codes, split streams, mounts, stdin, a missing image, and that no container outlives
// a run, a timeout or a cancel. Also measures a trivial run against the raw Engine API floor.

#include "adapters/taskrunner/docker/dockertaskrunner.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <thread>

using namespace Qt::StringLiterals;
using pando::CancelToken;
using pando::ErrorCode;
using pando::adapters::Mount;
using pando::adapters::OutputChunk;
using pando::adapters::TaskSpec;
using pando::adapters::docker::DockerTaskRunner;
using pando::test::DockerHarness;

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

qint64 median(QList<qint64> values)
{
    std::sort(values.begin(), values.end());
    return values.isEmpty() ? 0 : values.at(values.size() / 2);
}

} // namespace

class TestDockerTaskRunner : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void exitCodes_data();
    void exitCodes();
    void stdoutAndStderrSplit();
    void outputStreamsBeforeExit();
    void environmentWorkDirUser();
    void mountsReadOnlyAndReadWrite();
    void stdinIsWrittenThenClosed();
    void missingImage();
    void timeoutRemovesTheContainer();
    void cancelRemovesTheContainer();
    void imageDigest();
    void anArtifactBecomesAnImage();
    void overheadAgainstTheRawApi();

private:
    TaskSpec spec(const QStringList &argv) const
    {
        TaskSpec s;
        s.image = DockerHarness::baseImage();
        s.argv = argv;
        s.labels.insert(u"pando.test"_s, m_label);
        return s;
    }
    int containersLeft() const;

    DockerTaskRunner m_runner;
    QString m_imageId;
    QString m_label = u"taskrunner-%1"_s.arg(QCoreApplication::applicationPid());
};

void TestDockerTaskRunner::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), why);
    auto image = DockerHarness::ensureBaseImage();
    PANDO_VERIFY_OK(image);
    m_imageId = *image;
}

int TestDockerTaskRunner::containersLeft() const
{
    const QString filter = u"{\"label\":[\"pando.test=%1\"]}"_s.arg(m_label);
    auto listed = m_runner.client().get(u"/containers/json"_s, {{u"all"_s, u"1"_s}, {u"filters"_s, filter}});
    if (!listed)
        return -1;
    return int(listed->json().array().size());
}

void TestDockerTaskRunner::cleanup()
{
    QCOMPARE(containersLeft(), 0);
}

void TestDockerTaskRunner::exitCodes_data()
{
    QTest::addColumn<QStringList>("argv");
    QTest::addColumn<int>("exitCode");
    QTest::newRow("true") << QStringList{u"true"_s} << 0;
    QTest::newRow("false") << QStringList{u"false"_s} << 1;
    QTest::newRow("exit 7") << QStringList{u"sh"_s, u"-c"_s, u"exit 7"_s} << 7;
    QTest::newRow("literal argv") << QStringList{u"sh"_s, u"-c"_s, u"exit 3"_s, u";exit 9"_s} << 3;
}

void TestDockerTaskRunner::exitCodes()
{
    QFETCH(QStringList, argv);
    QFETCH(int, exitCode);
    auto r = m_runner.run(spec(argv), {}, {});
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, exitCode);
    QVERIFY(!r->timedOut);
    QCOMPARE(r->imageDigest, m_imageId);
}

void TestDockerTaskRunner::stdoutAndStderrSplit()
{
    Captured c;
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"echo out; echo err >&2; printf partial"_s}), {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out, QByteArray("out\npartial"));
    QCOMPARE(c.err, QByteArray("err\n"));
}

void TestDockerTaskRunner::outputStreamsBeforeExit()
{
    Captured c;
    auto r = m_runner.run(spec({u"sh"_s, u"-c"_s, u"echo first; sleep 1; echo second"_s}), {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(c.out, QByteArray("first\nsecond\n"));
    QVERIFY(!c.chunkTimes.isEmpty());
    QVERIFY2(r->finishedMs - c.chunkTimes.first() >= 700,
             qPrintable(u"first chunk %1 ms before the end"_s.arg(r->finishedMs - c.chunkTimes.first())));
}

void TestDockerTaskRunner::environmentWorkDirUser()
{
    Captured c;
    TaskSpec s = spec({u"sh"_s, u"-c"_s, u"echo \"$GREETING\"; pwd; id -u"_s});
    s.env.insert(u"GREETING"_s, u"hello; world"_s);
    s.workDir = u"/tmp"_s;
    s.user = u"65534"_s;
    s.memoryBytes = 64 << 20;
    s.cpus = 0.5;
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out, QByteArray("hello; world\n/tmp\n65534\n"));
}

void TestDockerTaskRunner::mountsReadOnlyAndReadWrite()
{
    QTemporaryDir input, outputDir;
    QFile file(input.filePath(u"in.txt"_s));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("from the host\n");
    file.close();

    Captured c;
    TaskSpec s = spec({u"sh"_s, u"-c"_s, u"cat /in/in.txt > /out/copy.txt && cat /in/in.txt"_s});
    s.mounts.append(Mount{input.path(), u"/in"_s, true});
    s.mounts.append(Mount{outputDir.path(), u"/out"_s, false});
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out, QByteArray("from the host\n"));
    QFile copy(outputDir.filePath(u"copy.txt"_s));
    QVERIFY(copy.open(QIODevice::ReadOnly));
    QCOMPARE(copy.readAll(), QByteArray("from the host\n"));

    Captured denied;
    TaskSpec ro = spec({u"sh"_s, u"-c"_s, u"echo x > /in/new.txt"_s});
    ro.mounts.append(Mount{input.path(), u"/in"_s, true});
    auto refused = m_runner.run(ro, {}, denied.sink());
    PANDO_VERIFY_OK(refused);
    QVERIFY(refused->exitCode != 0);
    QVERIFY(denied.err.contains("Read-only"));
    QVERIFY(!QFile::exists(input.filePath(u"new.txt"_s)));
}

void TestDockerTaskRunner::stdinIsWrittenThenClosed()
{
    QByteArray data;
    for (int i = 0; i < 20000; ++i)
        data += "stdin line " + QByteArray::number(i) + '\n';
    Captured c;
    TaskSpec s = spec({u"cat"_s});
    s.stdinData = data;
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(r->exitCode, 0);
    QCOMPARE(c.out.size(), data.size());
    QCOMPARE(c.out, data);
}

void TestDockerTaskRunner::missingImage()
{
    TaskSpec s = spec({u"true"_s});
    s.image = u"pando/no-such-image:never"_s;
    auto r = m_runner.run(s, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::NotFound);
    QVERIFY2(r.error().message.contains(u"is not in the local Docker engine"_s), qPrintable(r.error().message));
    QVERIFY(r.error().message.contains(u"pando/no-such-image:never"_s));
    QVERIFY(!r.error().hint.isEmpty());
}

void TestDockerTaskRunner::timeoutRemovesTheContainer()
{
    TaskSpec s = spec({u"sleep"_s, u"100"_s});
    s.timeoutMs = 1000;
    QElapsedTimer t;
    t.start();
    auto r = m_runner.run(s, {}, {});
    PANDO_VERIFY_OK(r);
    QVERIFY(r->timedOut);
    QCOMPARE(r->exitCode, -1);
    QVERIFY(t.elapsed() < 10000);
}

void TestDockerTaskRunner::cancelRemovesTheContainer()
{
    CancelToken cancel;
    std::thread canceller([cancel] {
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        cancel.cancel();
    });
    QElapsedTimer t;
    t.start();
    auto r = m_runner.run(spec({u"sleep"_s, u"100"_s}), cancel, {});
    canceller.join();
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Cancelled);
    QVERIFY(t.elapsed() < 10000);
}

void TestDockerTaskRunner::imageDigest()
{
    auto digest = m_runner.imageDigest(DockerHarness::baseImage());
    PANDO_VERIFY_OK(digest);
    QCOMPARE(*digest, m_imageId);
    auto missing = m_runner.imageDigest(u"pando/no-such-image:never"_s);
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
}

// What a registry-image get leaves (rootfs/ and metadata.json) made into an image: the task
// runs in it with the metadata's env exactly as written and as its user; an entry whose value
// would start another Dockerfile instruction is left out; an artifact without an image is said.
void TestDockerTaskRunner::anArtifactBecomesAnImage()
{
    QTemporaryDir artifact;
    QVERIFY(QDir().mkpath(artifact.filePath(u"rootfs/bin"_s)));
    QVERIFY(QDir().mkpath(artifact.filePath(u"rootfs/tmp"_s)));
    QVERIFY(QFile::copy(u"/bin/busybox"_s, artifact.filePath(u"rootfs/bin/busybox"_s)));
    QVERIFY(QFile::link(u"busybox"_s, artifact.filePath(u"rootfs/bin/sh"_s)));
    QVERIFY(QFile::link(u"busybox"_s, artifact.filePath(u"rootfs/bin/id"_s)));
    const QJsonObject metadata{
        {u"env"_s, QJsonArray{u"PATH=/bin"_s, u"GREETING=say \"hi\" to $HOME \\o/"_s, u"SNEAKY=a\nUSER 0"_s}},
        {u"user"_s, u"4242"_s}};
    QFile file(artifact.filePath(u"metadata.json"_s));
    QVERIFY(file.open(QIODevice::WriteOnly) && file.write(QJsonDocument(metadata).toJson()) > 0);
    file.close();
    const QString tag = u"pando/test-artifact-image:%1"_s.arg(QCoreApplication::applicationPid());
    auto image = m_runner.importArtifactImage(artifact.path(), tag, {});
    PANDO_VERIFY_OK(image);
    const auto removeImage = qScopeGuard([&] {
        pando::adapters::dockerapi::Request r;
        r.method = "DELETE";
        r.path = u"/images/"_s + tag;
        r.addQuery(u"force"_s, u"1"_s);
        (void)m_runner.client().call(r);
    });
    Captured c;
    TaskSpec s = spec({u"sh"_s, u"-c"_s, u"echo \"$GREETING\"; echo \"[$SNEAKY]\"; id -u"_s});
    s.image = tag;
    auto r = m_runner.run(s, {}, c.sink());
    PANDO_VERIFY_OK(r);
    QCOMPARE(c.out, QByteArray("say \"hi\" to $HOME \\o/\n[]\n4242\n"));

    QTemporaryDir empty;
    auto none = m_runner.importArtifactImage(empty.path(), tag, {});
    QVERIFY(!none);
    QVERIFY2(none.error().hint.contains(u"registry-image"_s), qPrintable(none.error().text()));

    // Swept when older than asked and unused (this test's own repository, so that no other
    // test's image goes): a week keeps it, none removes it.
    const QString repository = tag.section(u':', 0, 0);
    auto kept = m_runner.removeStaleArtifactImages(repository, qint64{7} * 24 * 3600 * 1000);
    PANDO_VERIFY_OK(kept);
    QCOMPARE(*kept, 0);
    QVERIFY(m_runner.imageDigest(tag));
    auto swept = m_runner.removeStaleArtifactImages(repository, -1000);
    PANDO_VERIFY_OK(swept);
    QCOMPARE(*swept, 1);
    QCOMPARE(m_runner.imageDigest(tag).error().code, ErrorCode::NotFound);
}

void TestDockerTaskRunner::overheadAgainstTheRawApi()
{
    const auto &client = m_runner.client();
    // The floor: the four Engine API calls any container run needs, made directly.
    auto rawRound = [&]() -> qint64 {
        QElapsedTimer t;
        t.start();
        const QJsonObject body{{u"Image"_s, DockerHarness::baseImage()},
                               {u"Cmd"_s, QJsonArray{u"true"_s}},
                               {u"Labels"_s, QJsonObject{{u"pando.test"_s, m_label}}}};
        auto created = client.post(u"/containers/create"_s, {}, QJsonDocument(body).toJson(QJsonDocument::Compact));
        if (!created)
            return -1;
        const QString id = created->json().object().value(u"Id"_s).toString();
        const bool ok =
            client.post(u"/containers/"_s + id + u"/start"_s) && client.post(u"/containers/"_s + id + u"/wait"_s);
        pando::adapters::dockerapi::Request remove;
        remove.method = "DELETE";
        remove.path = u"/containers/"_s + id;
        remove.addQuery(u"force"_s, u"1"_s);
        const bool removed = client.call(remove).has_value();
        return ok && removed ? t.elapsed() : -1;
    };
    auto runnerRound = [&]() -> qint64 {
        QElapsedTimer t;
        t.start();
        auto r = m_runner.run(spec({u"true"_s}), {}, {});
        return r && r->exitCode == 0 ? t.elapsed() : -1;
    };
    const int rounds = 10;
    QList<qint64> raw, runner;
    for (int i = 0; i < rounds; ++i) {
        // Alternate which goes first so the engine's background cleanup of the previous
        // container burdens both alike.
        if (i % 2 == 0) {
            raw.append(rawRound());
            runner.append(runnerRound());
        } else {
            runner.append(runnerRound());
            raw.append(rawRound());
        }
        QVERIFY(raw.last() >= 0);
        QVERIFY(runner.last() >= 0);
    }
    const qint64 floorMs = median(raw);
    const qint64 runnerMs = median(runner);
    qInfo("trivial container, median of %d: raw Engine API (create+start+wait+remove) %lld ms, "
          "DockerTaskRunner %lld ms (%.2fx)",
          rounds, floorMs, runnerMs, floorMs > 0 ? double(runnerMs) / double(floorMs) : 0.0);
}

QTEST_GUILESS_MAIN(TestDockerTaskRunner)
#include "tst_dockertaskrunner.moc"
