// How a build reads what the engine streams, without an engine: BuildKit's trace said as
// `docker build --progress=plain` says it (recorded from Debian's dockerd, and messages written
// here for what a recording cannot make happen at will), and buildImage() against a stand-in
// engine on a unix socket that answers POST /build as the Engine API documents it: a recorded
// BuildKit stream, a refusal of BuildKit (the classic builder then), a classic stream. The real
// engine's builds are tst_dockerbuildkit's and tst_dockerruntime's.
#include "adapters/kit/dockerapi/buildkittrace.h"
#include "adapters/kit/dockerapi/dockerbuild.h"
#include "adapters/kit/dockerapi/dockerpull.h"
#include "tests/support/component.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalServer>
#include <QLocalSocket>
#include <QMutex>
#include <QSemaphore>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QUrlQuery>
#include <algorithm>
#include <archive.h>
#include <archive_entry.h>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using pando::adapters::dockerapi::Builder;
using pando::adapters::dockerapi::BuildKitTrace;

namespace {

// protobuf's wire format, enough to write StatusResponse messages.
QByteArray varint(quint64 v)
{
    QByteArray out;
    while (v >= 0x80) {
        out.append(char((v & 0x7f) | 0x80));
        v >>= 7;
    }
    out.append(char(v));
    return out;
}
QByteArray field(int number, const QByteArray &bytes)
{
    return varint(quint64(number) << 3 | 2) + varint(quint64(bytes.size())) + bytes;
}
QByteArray number(int n, quint64 v)
{
    return varint(quint64(n) << 3) + varint(v);
}
QByteArray timestamp(qint64 seconds, qint64 nanos)
{
    return number(1, quint64(seconds)) + number(2, quint64(nanos));
}
struct V {
    QByteArray digest;
    QByteArray name;
    bool cached = false;
    qint64 startedMs = 0;
    qint64 completedMs = 0;
    QByteArray error;
};
QByteArray vertex(const V &v)
{
    QByteArray m = field(1, v.digest) + field(3, v.name);
    if (v.cached)
        m += number(4, 1);
    if (v.startedMs)
        m += field(5, timestamp(v.startedMs / 1000, (v.startedMs % 1000) * 1'000'000));
    if (v.completedMs)
        m += field(6, timestamp(v.completedMs / 1000, (v.completedMs % 1000) * 1'000'000));
    if (!v.error.isEmpty())
        m += field(7, v.error);
    return field(1, m).toBase64();
}
QByteArray log(const QByteArray &digest, const QByteArray &text)
{
    return field(3, field(1, digest) + number(3, 1) + field(4, text)).toBase64();
}
QByteArray status(const QByteArray &digest, const QByteArray &id, const QByteArray &name, bool completed)
{
    QByteArray m = field(1, id) + field(2, digest) + field(3, name);
    if (completed)
        m += field(8, timestamp(1796540048, 5));
    return field(2, m).toBase64();
}

QString dataFile(const QString &name)
{
    return test::sourceDir() + u"/tests/adapters/docker/data/"_s + name;
}

// What an engine's recorded JSON lines make BuildKitTrace say.
QStringList replay(const QString &name, std::optional<BuildKitTrace::Failure> *failure = nullptr)
{
    QStringList lines;
    BuildKitTrace trace([&lines](const QString &l) { lines << l; });
    QFile f(dataFile(name));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(f.fileName()));
    for (const QByteArray &line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value("id"_L1) == "moby.buildkit.trace"_L1 && !trace.feed(o.value("aux"_L1).toString().toLatin1()))
            qFatal("a recorded trace was not read");
    }
    trace.finish();
    if (failure)
        *failure = trace.failure();
    return lines;
}

// The files of a tar stream, by path.
QMap<QString, QByteArray> filesOf(const QByteArray &tar)
{
    QMap<QString, QByteArray> files;
    archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, tar.constData(), size_t(tar.size())) == ARCHIVE_OK) {
        archive_entry *entry = nullptr;
        while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
            QByteArray content(qsizetype(archive_entry_size(entry)), Qt::Uninitialized);
            archive_read_data(a, content.data(), size_t(content.size()));
            files.insert(QString::fromUtf8(archive_entry_pathname(entry)), content);
        }
    }
    archive_read_free(a);
    return files;
}

// An engine on a unix socket of its own: GET /images/NAME/json answers 404 but for the names in
// images; POST /build answers what build() says for its query; POST /images/create starts a pull
// and then stalls. Each request's path, query and
// body is kept.
class EngineStandIn : public QThread {
public:
    struct Received {
        QByteArray method;
        QString path;
        QUrlQuery query;
        QByteArray body;
    };
    using Answer = QPair<int, QByteArray>;

    EngineStandIn(const QString &socket, std::function<Answer(const QUrlQuery &)> build, QStringList images = {})
        : m_socket(socket), m_build(std::move(build)), m_images(std::move(images))
    {
        start();
        m_ready.acquire();
    }
    ~EngineStandIn() override
    {
        quit();
        wait();
    }
    QList<Received> received() const
    {
        QMutexLocker lock(&m_mutex);
        return m_received;
    }

protected:
    void run() override
    {
        QLocalServer server;
        if (!server.listen(m_socket))
            qFatal("the stand-in engine cannot listen: %s", qPrintable(server.errorString()));
        QObject::connect(&server, &QLocalServer::newConnection, &server, [this, &server] {
            while (QLocalSocket *socket = server.nextPendingConnection()) {
                auto buffer = std::make_shared<QByteArray>();
                QObject::connect(socket, &QLocalSocket::readyRead, socket, [this, socket, buffer] {
                    buffer->append(socket->readAll());
                    serve(socket, *buffer);
                });
                QObject::connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
        m_ready.release();
        exec();
    }

private:
    void serve(QLocalSocket *socket, QByteArray &buffer)
    {
        const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        const QList<QByteArray> head = buffer.left(headEnd).split('\n');
        qsizetype length = 0;
        for (const QByteArray &line : head)
            if (line.toLower().startsWith("content-length:"))
                length = line.mid(15).trimmed().toLongLong();
        if (buffer.size() < headEnd + 4 + length)
            return;
        const QList<QByteArray> requestLine = head.value(0).trimmed().split(' ');
        const QUrl url(QString::fromLatin1(requestLine.value(1)));
        Received r{requestLine.value(0), url.path(), QUrlQuery(url), buffer.mid(headEnd + 4, length)};
        buffer.remove(0, headEnd + 4 + length);
        Answer answer{404, R"({"message":"no such image"})"};
        const QString path = r.path.section(u'/', 2); // without /v1.xx/
        if (path == "images/create"_L1) {
            // A pull that starts and then reports nothing more, as behind a registry that stalls.
            {
                QMutexLocker lock(&m_mutex);
                m_received.append(r);
            }
            const QByteArray first = R"({"status":"Pulling from acme/slow"})"
                                     "\n";
            socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                          QByteArray::number(first.size(), 16) + "\r\n" + first + "\r\n");
            return;
        }
        if (path == "build"_L1)
            answer = m_build(r.query);
        else if (path.startsWith("images/"_L1) && path.endsWith("/json"_L1) &&
                 m_images.contains(path.mid(7).chopped(5)))
            answer = {200, R"({"Id":"sha256:1111"})"};
        {
            QMutexLocker lock(&m_mutex);
            m_received.append(r);
        }
        socket->write("HTTP/1.1 " + QByteArray::number(answer.first) +
                      " X\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                      QByteArray::number(answer.second.size()) + "\r\n\r\n" + answer.second);
        socket->disconnectFromServer();
    }

    QString m_socket;
    std::function<Answer(const QUrlQuery &)> m_build;
    QStringList m_images;
    QSemaphore m_ready;
    mutable QMutex m_mutex;
    QList<Received> m_received;
};

QByteArray recorded(const QString &name)
{
    QFile f(dataFile(name));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const QByteArray ClassicStream = R"({"stream":"Step 1/2 : FROM pando/busybox:latest\n"}
{"stream":" ---\u003e 7983fed11cf5\n"}
{"stream":"Step 2/2 : RUN true\n"}
{"stream":" ---\u003e Running in 0c1d\n"}
{"stream":" ---\u003e 5e6f7a8b9c0d\n"}
{"aux":{"ID":"sha256:5e6f7a8b9c0d1e2f"}}
{"stream":"Successfully built 5e6f7a8b9c0d\n"}
)";

} // namespace

class TestDockerBuild : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    // A context of dockerfile, built through the stand-in engine answering build().
    struct Built {
        Result<QString> result;
        QStringList progress;
        QList<EngineStandIn::Received> received;
    };
    Built build(const QByteArray &dockerfile, Builder builder,
                std::function<EngineStandIn::Answer(const QUrlQuery &)> answer, const QStringList &images = {})
    {
        const QString socket = m_dir.filePath(u"engine-%1.sock"_s.arg(++m_engines));
        EngineStandIn engine(socket, std::move(answer), images);
        QTemporaryDir context;
        QFile f(context.filePath(u"Dockerfile"_s));
        if (!f.open(QIODevice::WriteOnly) || f.write(dockerfile) != dockerfile.size())
            qFatal("cannot write the Dockerfile");
        f.close();
        BuildRequest request;
        request.contextDir = context.path();
        request.tag = u"pando-test/standin:1"_s;
        Built out;
        // The client blocks; the stand-in answers on its own thread.
        out.result = dockerapi::buildImage(
            dockerapi::DockerClient(socket), request, CancelToken(),
            [&out](const QString &line) { out.progress << line; }, builder);
        out.received = engine.received();
        return out;
    }
    int m_engines = 0;

private Q_SLOTS:
    // A build that failed at its third step, as Debian's dockerd 20.10 streamed it.
    void recordedFailureIsSaidAsPlainProgress()
    {
        std::optional<BuildKitTrace::Failure> failure;
        const QStringList lines = replay(u"buildkit-failed-run.jsonl"_s, &failure);
        const QStringList expected{
            u"#1 [internal] load remote build context"_s,
            u"#1 DONE 0.0s"_s,
            u"#2 copy /context /"_s,
            u"#2 DONE 0.1s"_s,
            u"#3 [internal] load metadata for docker.io/pando/busybox:latest"_s,
            u"#3 DONE 0.0s"_s,
            u"#4 [1/3] FROM docker.io/pando/busybox:latest"_s,
            u"#4 CACHED"_s,
            u"#5 [2/3] RUN echo one && echo two 1>&2 && echo three"_s,
            u"#5 one"_s,
            u"#5 two"_s,
            u"#5 three"_s,
            u"#5 DONE 0.2s"_s,
            u"#6 [3/3] RUN echo failing now; false"_s,
            u"#6 failing now"_s,
            u"#6 ERROR: executor failed running [/bin/sh -c echo failing now; false]: exit code: 1"_s,
        };
        QCOMPARE(lines, expected);
        QVERIFY(failure.has_value());
        QCOMPARE(failure->step, u"[3/3] RUN echo failing now; false"_s);
        QCOMPARE(failure->lastOutput, QStringList{u"failing now"_s});
    }

    // A build with a cache mount, as the same engine streamed it; the image is named last.
    void recordedCacheMountBuild()
    {
        std::optional<BuildKitTrace::Failure> failure;
        const QStringList lines = replay(u"buildkit-cache-mount.jsonl"_s, &failure);
        QVERIFY(!failure);
        const QStringList expected{
            u"#1 [internal] load remote build context"_s,
            u"#1 DONE 0.0s"_s,
            u"#2 copy /context /"_s,
            u"#2 DONE 0.0s"_s,
            u"#3 [internal] load metadata for docker.io/pando/busybox:latest"_s,
            u"#3 DONE 0.0s"_s,
            u"#4 [stage-0 1/3] FROM docker.io/pando/busybox:latest"_s,
            u"#4 DONE 0.0s"_s,
            u"#5 [stage-0 2/3] RUN --mount=type=cache,target=/cache echo hi > /cache/x && ls /cache && echo building"_s,
            u"#5 x"_s,
            u"#5 building"_s,
            u"#5 DONE 0.2s"_s,
            u"#6 [stage-0 3/3] COPY a.txt /a.txt"_s,
            u"#6 DONE 0.0s"_s,
            u"#7 exporting to image"_s,
            u"#7 exporting layers done"_s,
            u"#7 writing image sha256:bfb1e76c0547be12d861841cb7147367edbdb1f6adf4d5721ef1c29c66ed9fab done"_s,
            u"#7 DONE 0.0s"_s,
            u"#7 naming to docker.io/library/bktest:1 done"_s,
        };
        QCOMPARE(lines, expected);
    }

    // What a recording cannot make happen at will.
    void traceEdges()
    {
        QStringList lines;
        BuildKitTrace trace([&lines](const QString &l) { lines << l; });
        const qint64 t0 = 1796540048000;
        // Output in pieces, lines split across messages, a progress bar redrawn with \r.
        QVERIFY(trace.feed(vertex({"sha256:a", "[build 2/4] RUN make", false, t0})));
        QVERIFY(trace.feed(log("sha256:a", "compiling ma")));
        QVERIFY(trace.feed(log("sha256:a", "in.c\n10%\r55%\r100%\nlast")));
        // Pulled layers: a status is said once, when it completes.
        QVERIFY(trace.feed(vertex({"sha256:b", "[2/2] FROM docker.io/library/node:20", false, t0})));
        QVERIFY(trace.feed(status("sha256:b", "sha256:layer", "extracting", false)));
        QVERIFY(trace.feed(status("sha256:b", "sha256:layer", "extracting", true)));
        QVERIFY(trace.feed(status("sha256:b", "sha256:layer", "extracting", true)));
        // Cancelled because another step failed: not the failure the build is about.
        QVERIFY(trace.feed(vertex({"sha256:b", "", false, t0, t0 + 300, "context canceled"})));
        QVERIFY(trace.feed(vertex({"sha256:a", "", false, t0, t0 + 1500, "exit code: 2"})));
        // Seen again after it ended (BuildKit repeats vertexes): nothing more is said.
        QVERIFY(trace.feed(vertex({"sha256:a", "", false, t0, t0 + 1600})));
        // A step answered by the cache, never started.
        QVERIFY(trace.feed(vertex({"sha256:c", "[1/4] COPY . .", true})));
        // Not protobuf, not base64: refused, nothing said.
        QVERIFY(!trace.feed("not base64 !!"));
        QVERIFY(!trace.feed(QByteArray("\x0a\xff\xff\xff").toBase64()));
        trace.finish();
        const QStringList expected{u"#1 [build 2/4] RUN make"_s,
                                   u"#1 compiling main.c"_s,
                                   u"#1 10%\r55%\r100%"_s,
                                   u"#2 [2/2] FROM docker.io/library/node:20"_s,
                                   u"#2 extracting sha256:layer done"_s,
                                   u"#2 ERROR: context canceled"_s,
                                   u"#1 last"_s,
                                   u"#1 ERROR: exit code: 2"_s,
                                   u"#3 [1/4] COPY . ."_s,
                                   u"#3 CACHED"_s};
        QCOMPARE(lines, expected);
        QVERIFY(trace.failure().has_value());
        QCOMPARE(trace.failure()->step, u"[build 2/4] RUN make"_s);
        QCOMPARE(trace.failure()->lastOutput, QStringList({u"compiling main.c"_s, u"100%"_s, u"last"_s}));

        // Only the last lines of a step's output are kept for its failure.
        BuildKitTrace chatty({});
        QVERIFY(chatty.feed(vertex({"sha256:d", "[2/2] RUN seq 50", false, t0})));
        QByteArray many;
        for (int i = 1; i <= 50; ++i)
            many += QByteArray::number(i) + '\n';
        QVERIFY(chatty.feed(log("sha256:d", many)));
        QVERIFY(chatty.feed(vertex({"sha256:d", "", false, t0, t0 + 10, "exit code: 1"})));
        QCOMPARE(chatty.failure()->lastOutput.size(), BuildKitTrace::TailLines);
        QCOMPARE(chatty.failure()->lastOutput.last(), u"50"_s);
    }

    void builderFromTheEnvironment()
    {
        const QByteArray saved = qgetenv("DOCKER_BUILDKIT");
        const auto with = [](const char *value) {
            if (value)
                qputenv("DOCKER_BUILDKIT", value);
            else
                qunsetenv("DOCKER_BUILDKIT");
            return dockerapi::builderFromEnvironment();
        };
        QCOMPARE(with(nullptr), Builder::Auto);
        QCOMPARE(with("0"), Builder::Classic);
        QCOMPARE(with("false"), Builder::Classic);
        QCOMPARE(with("1"), Builder::BuildKit);
        QCOMPARE(with("TRUE"), Builder::BuildKit);
        QCOMPARE(with("maybe"), Builder::Auto);
        if (saved.isNull())
            qunsetenv("DOCKER_BUILDKIT");
        else
            qputenv("DOCKER_BUILDKIT", saved);
    }

    // The recorded failure through buildImage(): the failing instruction, where, its last output.
    void buildKitFailureNamesTheStep()
    {
        const QByteArray stream = recorded(u"buildkit-failed-run.jsonl"_s);
        const Built b = build("FROM pando/busybox:latest\nRUN echo one\nRUN echo failing now; false\n", Builder::Auto,
                              [&stream](const QUrlQuery &) {
                                  return EngineStandIn::Answer{200, stream};
                              });
        QVERIFY(!b.result);
        QCOMPARE(b.result.error().code, ErrorCode::Failed);
        QCOMPARE(b.result.error().where, u"Dockerfile, step 3/3 (RUN echo failing now; false)"_s);
        QCOMPARE(b.result.error().message,
                 u"executor failed running [/bin/sh -c echo failing now; false]: exit code: 1; its last output: "
                 "failing now"_s);
        QCOMPARE(b.received.size(), 1);
        QCOMPARE(b.received.first().query.queryItemValue(u"version"_s), u"2"_s);
        QVERIFY(b.progress.contains(u"#6 failing now"_s));
    }

    // An engine that cannot build with BuildKit: the classic builder, said in the output.
    void refusedBuildKitFallsBackToClassic()
    {
        const auto engine = [](const QUrlQuery &q) {
            if (q.queryItemValue(u"version"_s) == "2"_L1)
                return EngineStandIn::Answer{400, R"({"message":"buildkit not supported by daemon"})"};
            return EngineStandIn::Answer{200, ClassicStream};
        };
        const Built b = build("FROM pando/busybox:latest\nRUN true\n", Builder::Auto, engine);
        QVERIFY2(b.result, qPrintable(b.result ? QString() : b.result.error().text()));
        QCOMPARE(*b.result, u"sha256:5e6f7a8b9c0d1e2f"_s);
        QCOMPARE(b.received.size(), 2);
        QCOMPARE(b.received.at(1).query.queryItemValue(u"version"_s), u"1"_s);
        QCOMPARE(b.progress.value(0), u"the engine cannot build with BuildKit (buildkit not supported by daemon): "
                                      "building with the classic builder"_s);
        QVERIFY(b.progress.contains(u"Step 2/2 : RUN true"_s));

        // DOCKER_BUILDKIT=1 asked for BuildKit: no fallback, and the way out is said.
        const Built forced = build("FROM pando/busybox:latest\nRUN true\n", Builder::BuildKit, engine);
        QVERIFY(!forced.result);
        QCOMPARE(forced.received.size(), 1);
        QVERIFY2(forced.result.error().message.contains("buildkit not supported"_L1),
                 qPrintable(forced.result.error().text()));
        QVERIFY2(forced.result.error().hint.contains("DOCKER_BUILDKIT"_L1), qPrintable(forced.result.error().hint));

        // DOCKER_BUILDKIT=0: the classic builder at once.
        const Built classic = build("FROM pando/busybox:latest\nRUN true\n", Builder::Classic, engine);
        QVERIFY(classic.result);
        QCOMPARE(classic.received.size(), 1);
        QCOMPARE(classic.received.first().query.queryItemValue(u"version"_s), u"1"_s);
    }

    // `# syntax=docker/dockerfile:1` (what `docker init` writes) on an engine without that image:
    // the line becomes a comment in what is sent, the line count kept; with the image, or for
    // another frontend, the Dockerfile goes as it is.
    void syntaxDirectiveWithoutItsImage()
    {
        const auto ok = [](const QUrlQuery &) {
            return EngineStandIn::Answer{200, ClassicStream};
        };
        const QByteArray dockerfile = "# syntax=docker/dockerfile:1\n# escape=\\\nFROM pando/busybox:latest\n";
        const Built b = build(dockerfile, Builder::Auto, ok);
        QVERIFY(b.result);
        QCOMPARE(b.received.size(), 2); // the frontend image looked for, then the build
        QCOMPARE(b.received.first().path.section(u'/', 2), u"images/docker/dockerfile:1/json"_s);
        QCOMPARE(filesOf(b.received.last().body).value(u"Dockerfile"_s),
                 QByteArray("#\n# escape=\\\nFROM pando/busybox:latest\n"));
        QCOMPARE(b.progress.value(0), u"Dockerfile, line 1 asks for the Dockerfile frontend docker/dockerfile:1, which "
                                      "is not on the engine: building with the engine's built-in frontend"_s);

        const Built present = build(dockerfile, Builder::Auto, ok, {u"docker/dockerfile:1"_s});
        QCOMPARE(filesOf(present.received.last().body).value(u"Dockerfile"_s), dockerfile);
        QVERIFY(!present.progress.value(0).contains("asks for"_L1));

        const QByteArray custom = "#syntax = example.com/frontend:2\nFROM pando/busybox:latest\n";
        const Built other = build(custom, Builder::Auto, ok);
        QCOMPARE(other.received.size(), 1);
        QCOMPARE(filesOf(other.received.last().body).value(u"Dockerfile"_s), custom);

        // Not a directive once an instruction, a comment or a blank line came first.
        const QByteArray late = "FROM pando/busybox:latest\n# syntax=docker/dockerfile:1\n";
        const Built notFirst = build(late, Builder::Auto, ok);
        QCOMPARE(notFirst.received.size(), 1);
        QCOMPARE(filesOf(notFirst.received.last().body).value(u"Dockerfile"_s), late);

        // The classic builder reads the line as a comment: nothing is looked for.
        const Built classic = build(dockerfile, Builder::Classic, ok);
        QCOMPARE(classic.received.size(), 1);
        QCOMPARE(filesOf(classic.received.last().body).value(u"Dockerfile"_s), dockerfile);
    }
    // A credentialed pull that goes quiet is given up after its stall time, saying so.
    void stalledPullIsGivenUp()
    {
        const QString socket = m_dir.filePath(u"engine-stall.sock"_s);
        EngineStandIn engine(socket, [](const QUrlQuery &) { return EngineStandIn::Answer{200, ClassicStream}; });
        const dockerapi::DockerClient client(socket);
        QStringList progress;
        QElapsedTimer timer;
        timer.start();
        const auto pulled = dockerapi::pullImage(
            client, u"registry.example/acme/slow:1"_s, {u"registry.example"_s, u"robot"_s, "secret"}, CancelToken(),
            [&progress](const QString &line) { progress << line; }, 1000);
        QVERIFY(!pulled);
        QVERIFY2(timer.elapsed() < 10000, qPrintable(QString::number(timer.elapsed())));
        QCOMPARE(pulled.error().code, ErrorCode::Timeout);
        QCOMPARE(pulled.error().message,
                 u"pulling registry.example/acme/slow:1 stalled: the engine reported no progress for 1 s"_s);
        QCOMPARE(pulled.error().where, u"registry.example/acme/slow:1"_s);
        QVERIFY2(pulled.error().hint.contains(u"docker pull registry.example/acme/slow:1"_s),
                 qPrintable(pulled.error().hint));
        QCOMPARE(progress, (QStringList{u"pulling registry.example/acme/slow:1 from registry.example as robot"_s,
                                        u"Pulling from acme/slow"_s}));
    }
};

QTEST_GUILESS_MAIN(TestDockerBuild)
#include "tst_dockerbuild.moc"
