// Builds with BuildKit through the real engine's API (DockerRuntime's default where the engine
// has it): what `docker init` Dockerfiles use (cache and bind mounts, `# syntax=`), the output as
// `docker build --progress=plain` says it, failures that name the instruction with its last
// output, a missing base image or context file with a hint, .dockerignore, cancel. The classic
// builder's behaviour is tst_dockerruntime's; the stream reading without an engine is
// tst_dockerbuild's. Every object the test creates carries dev.pando.test=<unique value>.
#include "tests/adapters/docker/dockerruntimetest.h"
#include "tests/support/httpbackend.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>
#include <algorithm>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using pando::test::unusedPort;

namespace {

bool hasLine(const QStringList &lines, const QString &pattern)
{
    const QRegularExpression re(pattern);
    return std::any_of(lines.cbegin(), lines.cend(), [&re](const QString &l) { return re.match(l).hasMatch(); });
}

} // namespace

class TestDockerBuildKit : public pando::test::DockerRuntimeTest {
    Q_OBJECT

    QString tag(const QString &what) const { return u"pando-test/bk-%1:"_s.arg(what) + m_run; }
    static QString errorOf(const Result<QString> &r)
    {
        return r ? QString() : r.error().text() + u" / "_s + r.error().hint;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_runtime.setBuilder(dockerapi::Builder::BuildKit);
        beginRun();
    }

    void cleanupTestCase()
    {
        if (!m_run.isEmpty())
            removeRunObjects();
    }

    // What `docker init` writes for a Go or Node project: a syntax line, cache mounts, bind mounts
    // of context files, a named build stage copied from. Built as written, labelled, and nothing
    // left beside the image (BuildKit keeps its cache to itself).
    void dockerInitStyleDockerfile()
    {
        const QByteArray dockerfile = "# syntax=docker/dockerfile:1\n"
                                      "ARG BASE=pando/busybox:latest\n"
                                      "FROM ${BASE} AS build\n"
                                      "WORKDIR /src\n"
                                      "RUN --mount=type=cache,target=/root/.cache \\\n"
                                      "    --mount=type=bind,source=hello.txt,target=/src/hello.txt \\\n"
                                      "    cp /src/hello.txt /out.txt && echo cached >> /root/.cache/runs && "
                                      "echo built-" +
                                      m_run.toUtf8() +
                                      "\n"
                                      "FROM ${BASE} AS final\n"
                                      "COPY --from=build /out.txt /app/out.txt\n"
                                      "EXPOSE 8080\n"
                                      "CMD [\"cat\", \"/app/out.txt\"]\n";
        QStringList progress;
        QList<QPair<QString, qint64>> leftovers;
        auto id = buildContext(dockerfile, tag(u"init"_s), &progress, {}, {}, &leftovers);
        QVERIFY2(id, qPrintable(errorOf(id) + u'\n' + progress.join(u'\n')));
        QVERIFY(id->startsWith("sha256:"_L1));
        QVERIFY2(
            progress.value(0).startsWith("Dockerfile, line 1 asks for the Dockerfile frontend docker/dockerfile:1"_L1),
            qPrintable(progress.join(u'\n')));
        QVERIFY2(hasLine(progress, u"^#\\d+ \\[build 3/3\\] RUN --mount=type=cache"_s),
                 qPrintable(progress.join(u'\n')));
        QVERIFY2(hasLine(progress, u"^#\\d+ built-%1$"_s.arg(m_run)), qPrintable(progress.join(u'\n')));
        QVERIFY2(hasLine(progress, u"^#\\d+ \\[final 2/2\\] COPY --from=build"_s), qPrintable(progress.join(u'\n')));
        QVERIFY(leftovers.isEmpty());

        auto images = m_runtime.images(labels(u"ctx"_s));
        QVERIFY(images);
        QCOMPARE(images->size(), 1);
        QCOMPARE(images->first().id, *id);
        auto ports = m_runtime.exposedPorts(*id);
        QVERIFY(ports);
        QCOMPARE(*ports, QList<int>{8080});

        // The image holds what the bind-mounted context file held.
        ContainerSpec spec;
        spec.name = name(u"init"_s);
        spec.image = *id;
        spec.labels = labels();
        auto cid = m_runtime.run(spec);
        QVERIFY2(cid, qPrintable(cid ? QString() : cid.error().text()));
        QTRY_VERIFY_WITH_TIMEOUT(m_runtime.inspect(*cid) && m_runtime.inspect(*cid)->state == "exited"_L1, 10000);
        const auto logs = allLogs(*cid);
        QVERIFY(!logs.isEmpty());
        QCOMPARE(logs.first().text, u"hello from the context"_s);

        // Again: every step from BuildKit's cache, the same image.
        QStringList again;
        auto rebuilt = buildContext(dockerfile, tag(u"init"_s), &again);
        QVERIFY2(rebuilt, qPrintable(errorOf(rebuilt)));
        QCOMPARE(*rebuilt, *id);
        QVERIFY2(hasLine(again, u"^#\\d+ CACHED$"_s), qPrintable(again.join(u'\n')));
    }

    // BuildKit's own cache is the engine's, not in any image: a cache mount's 2 MiB show in what
    // builderCache() reports (pando capacity), and go when pruned.
    void builderCacheCountsCacheMounts()
    {
        auto before = m_runtime.builderCache();
        QVERIFY2(before, qPrintable(before ? QString() : before.error().text()));
        const QString cacheId = u"pando-test-"_s + m_run;
        const QString marker = u"filled-"_s + m_run; // records are described by their command
        auto id = buildContext("FROM pando/busybox:latest\nRUN --mount=type=cache,id=" + cacheId.toUtf8() +
                                   ",target=/cache dd if=/dev/urandom of=/cache/blob bs=1024 count=2048 && "
                                   "echo filled-" +
                                   m_run.toUtf8() + "\n",
                               tag(u"cachemount"_s));
        QVERIFY2(id, qPrintable(errorOf(id)));
        auto after = m_runtime.builderCache();
        QVERIFY2(after, qPrintable(after ? QString() : after.error().text()));
        QVERIFY2(after->bytes >= before->bytes + 2 * 1024 * 1024,
                 qPrintable(u"%1 -> %2 bytes"_s.arg(before->bytes).arg(after->bytes)));
        QVERIFY(after->records > before->records);
        QVERIFY(after->reclaimableBytes <= after->bytes);

        // The cache mount's record, pruned by id: nothing else of the engine's (the step's own
        // record goes the way of every build's).
        const auto cacheRecords = [this, &marker] {
            QStringList ids;
            auto df = m_runtime.client().get(u"/system/df"_s);
            for (const QJsonValue record : df ? df->json().object().value("BuildCache"_L1).toArray() : QJsonArray())
                if (record.toObject().value("Type"_L1) == "exec.cachemount"_L1 &&
                    record.toObject().value("Description"_L1).toString().contains(marker))
                    ids << record.toObject().value("ID"_L1).toString();
            return ids;
        };
        const QStringList ours = cacheRecords();
        QVERIFY2(!ours.isEmpty(), "the cache mount is a record of its own");
        for (const QString &record : ours) { // one id per call, as the engine takes them
            dockerapi::Request prune;
            prune.method = "POST";
            prune.path = u"/build/prune"_s;
            prune.addQuery(u"filters"_s, u"{\"id\":[\"%1\"]}"_s.arg(record));
            prune.timeoutMs = 60000;
            QVERIFY(m_runtime.client().call(prune));
        }
        QCOMPARE(cacheRecords(), QStringList());
    }

    // In a Dockerfile of several stages, BuildKit counts the steps of each stage, and the stage is
    // named.
    void failingStepNamesItAndItsLastOutput()
    {
        QStringList progress;
        auto id = buildContext("FROM pando/busybox:latest AS app\nRUN echo preparing\n"
                               "RUN echo first line && echo doomed && exit 3\n"
                               "FROM pando/busybox:latest\nCOPY --from=app /etc/hostname /copied\n",
                               tag(u"bad"_s), &progress);
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Failed);
        QCOMPARE(id.error().where, u"Dockerfile, stage app, step 3/3 (RUN echo first line && echo doomed && exit 3)"_s);
        QVERIFY2(id.error().message.contains("exit code: 3"_L1) &&
                     id.error().message.endsWith("its last output: doomed"_L1),
                 qPrintable(errorOf(id)));
        QVERIFY2(hasLine(progress, u"^#\\d+ first line$"_s) && hasLine(progress, u"^#\\d+ ERROR: "_s),
                 qPrintable(progress.join(u'\n')));
    }

    void badDockerfileNamesTheLine()
    {
        auto id = buildContext("FROM pando/busybox:latest\nFROBNICATE now\n", tag(u"bad"_s));
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Failed);
        QCOMPARE(id.error().where, u"Dockerfile, line 2"_s);
        QVERIFY2(id.error().message.contains("unknown instruction"_L1, Qt::CaseInsensitive), qPrintable(errorOf(id)));
    }

    // A FROM naming an image the engine does not have and cannot pull (a registry on a closed
    // loopback port) says which image, and how to get it onto the engine.
    void missingBaseImageIsNamed()
    {
        const QString image = u"127.0.0.1:%1/pando-test/absent:1"_s.arg(unusedPort());
        auto id = buildContext("FROM " + image.toUtf8() + "\nRUN true\n", tag(u"bad"_s));
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Failed);
        QCOMPARE(id.error().where, u"Dockerfile (FROM %1)"_s.arg(image));
        QVERIFY2(id.error().message.startsWith(u"the base image %1 is not on the Docker engine"_s.arg(image)),
                 qPrintable(errorOf(id)));
        QVERIFY2(id.error().hint.contains(u"docker pull %1"_s.arg(image)), qPrintable(id.error().hint));
    }

    // Another frontend than Docker's own is not replaced: its image is named.
    void missingFrontendImageIsNamed()
    {
        const QString image = u"127.0.0.1:%1/pando-test/frontend:1"_s.arg(unusedPort());
        auto id = buildContext("# syntax=" + image.toUtf8() + "\nFROM pando/busybox:latest\n", tag(u"bad"_s));
        QVERIFY(!id);
        QVERIFY2(id.error().message.contains(u"asks for the frontend image %1"_s.arg(image)), qPrintable(errorOf(id)));
        QVERIFY2(id.error().hint.contains("remove the # syntax line"_L1), qPrintable(id.error().hint));
    }

    // Newer syntax than the engine's built-in frontend knows, asked for with a syntax line whose
    // image is not there: the hint says what was built with and how to provide the frontend.
    void newerSyntaxWithoutItsFrontend()
    {
        auto id = buildContext("# syntax=docker/dockerfile:1.4\nFROM pando/busybox:latest\nRUN <<EOF\necho hi\nEOF\n",
                               tag(u"bad"_s));
        QVERIFY(!id);
        QVERIFY2(id.error().hint.contains("docker/dockerfile:1.4, which is not on the engine"_L1),
                 qPrintable(errorOf(id)));
    }

    void missingContextFileHasAHint()
    {
        auto id = buildContext("FROM pando/busybox:latest\nCOPY package.json /app/\n", tag(u"bad"_s));
        QVERIFY(!id);
        QCOMPARE(id.error().where, u"Dockerfile, step 2/2 (COPY package.json /app/)"_s);
        QVERIFY2(id.error().message.contains("not found"_L1), qPrintable(errorOf(id)));
        QVERIFY2(id.error().hint.contains(".dockerignore"_L1), qPrintable(id.error().hint));
    }

    // What .dockerignore leaves out stays out, as with `docker build`.
    void dockerignoreKeepsFilesOut()
    {
        const QMap<QString, QByteArray> files{{u".dockerignore"_s, "*.env\nsecrets/\n"},
                                              {u"prod.env"_s, "TOKEN=secret\n"},
                                              {u"secrets/key.pem"_s, "key\n"}};
        auto id = buildContext("FROM pando/busybox:latest\nCOPY . /app/\n"
                               "RUN test ! -e /app/prod.env && test ! -e /app/secrets && test -e /app/hello.txt\n",
                               tag(u"ignored"_s), nullptr, {}, files);
        QVERIFY2(id, qPrintable(errorOf(id)));
    }

    // Either builder: the request's connection closes and the engine stops the build.
    void cancelledBuild()
    {
        CancelToken cancel;
        std::thread canceller([cancel] {
            std::this_thread::sleep_for(std::chrono::milliseconds(800));
            cancel.cancel();
        });
        QElapsedTimer timer;
        timer.start();
        auto id = buildContext("FROM pando/busybox:latest\nRUN sleep 20\n", tag(u"slow"_s), nullptr, cancel);
        canceller.join();
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Cancelled);
        QVERIFY(timer.elapsed() < 5000);
    }
};

QTEST_GUILESS_MAIN(TestDockerBuildKit)
#include "tst_dockerbuildkit.moc"
