// IncusRuntime against a real incusd: instances from converted Docker images, their network,
// environment, logs, exit codes and clean-up, builds, and what bad input gets. Every instance
// the test makes carries dev.pando.test=<unique value> and is removed by it at the end.
#include "adapters/runtime/docker/dockerruntime.h"
#include "adapters/runtime/incus/imageconvert.h"
#include "adapters/runtime/incus/incusruntime.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/incus/incusharness.h"
#include "tests/support/component.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <thread>

using namespace pando;
using namespace pando::adapters;
using pando::adapters::incus::IncusOptions;
using pando::adapters::incus::IncusRuntime;
using pando::test::IncusHarness;

namespace {

const QString TestLabel = QStringLiteral("dev.pando.test");

QByteArray httpGet(const QString &address, int port, const QByteArray &path, int timeoutMs = 10000)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        QTcpSocket socket;
        socket.connectToHost(address, quint16(port));
        if (socket.waitForConnected(1000)) {
            socket.write("GET " + path + " HTTP/1.0\r\nHost: test\r\n\r\n");
            QByteArray reply;
            while (socket.waitForReadyRead(2000))
                reply += socket.readAll();
            if (reply.startsWith("HTTP/1.0 200") || reply.startsWith("HTTP/1.1 200"))
                return reply;
        }
        QThread::msleep(50);
    }
    return {};
}

} // namespace

class TestIncusRuntime : public QObject {
    Q_OBJECT

private:
    IncusRuntime m_runtime;
    QString m_run;
    QString m_base;

    Labels labels(const QString &app = QStringLiteral("test")) const
    {
        return {{TestLabel, m_run}, {QString::fromLatin1(LabelApp), app}};
    }
    QString name(const QString &what) const { return QStringLiteral("pando-test-") + what + u'-' + m_run; }

    ContainerSpec spec(const QString &what, const QString &script)
    {
        ContainerSpec s;
        s.name = name(what);
        s.image = m_base;
        s.command = {QStringLiteral("sh"), QStringLiteral("-c"), script};
        s.labels = labels(what);
        s.port = 8080;
        return s;
    }

    QStringList allLogs(const QString &id)
    {
        QStringList out;
        discardResult(m_runtime.logs(id, -1, false, CancelToken(), [&out](const LogLine &l) { out << l.text; }),
                      "the lines are what the tests compare");
        return out;
    }

    bool waitState(const QString &id, const QString &state, int timeoutMs = 15000)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            auto info = m_runtime.inspect(id);
            if (info && info->state == state)
                return true;
            QThread::msleep(100);
        }
        return false;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(IncusHarness::available(&why), why);
        PANDO_REQUIRE_COMPONENT(test::DockerHarness::available(&why), why);
        m_run = QString::number(QRandomGenerator::global()->generate() % 1000000);
        auto base = IncusHarness::ensureBaseImage();
        QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
        m_base = *base;
    }

    void cleanupTestCase()
    {
        if (m_run.isEmpty())
            return;
        if (auto left = m_runtime.containers({{TestLabel, m_run}}))
            for (const ContainerInfo &c : *left)
                discardResult(m_runtime.remove(c.id), "clean-up: a leftover shows in the next test");
        if (auto images = m_runtime.images({{TestLabel, m_run}}))
            for (const ImageInfo &i : *images)
                discardResult(m_runtime.removeImage(i.id), "clean-up: a leftover shows in the next test");
    }

    void capabilities()
    {
        QVERIFY(m_runtime.ping());
        const RuntimeCapabilities caps = m_runtime.capabilities();
        QCOMPARE(caps.kind, QStringLiteral("incus"));
        QVERIFY(caps.canBuild);
        QVERIFY(!caps.canIsolateEgress);
        QVERIFY(caps.maxCpus >= 1);
        QVERIFY(caps.maxMemoryBytes > 0);

        // The room GET /capacity shows: the host's CPUs and memory, the default pool's disk.
        auto rooms = m_runtime.rooms();
        QVERIFY2(rooms, qPrintable(rooms ? QString() : rooms.error().text()));
        QCOMPARE(rooms->size(), 1);
        const RuntimeRoom &room = rooms->first();
        QCOMPARE(room.kind, QStringLiteral("incus"));
        QCOMPARE(room.cpus, caps.maxCpus);
        QCOMPARE(room.memoryBytes, caps.maxMemoryBytes);
        QVERIFY(room.memoryAvailableBytes > 0 && room.memoryAvailableBytes <= room.memoryBytes);
        QVERIFY2(room.disk.startsWith(QLatin1String("storage pool default")), qPrintable(room.disk));
        QVERIFY(room.diskBytes > 0);
        QVERIFY(room.diskAvailableBytes > 0 && room.diskAvailableBytes <= room.diskBytes);
        QVERIFY(!room.canMeasureDisk);
    }

    void runsServesLogsAndIsRemoved()
    {
        ContainerSpec s =
            spec(QStringLiteral("web"), QStringLiteral("echo \"ready with $GREETING\"; echo served >/www/probe.txt; "
                                                       "(sleep 2; echo later) & exec httpd -f -p 8080 -h /www"));
        s.env = {{QStringLiteral("GREETING"), QStringLiteral("it's a \"quoted\" $value")}};
        s.memoryBytes = 256LL * 1024 * 1024;
        s.cpus = 0.5;
        auto id = m_runtime.run(s);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
        QCOMPARE(*id, s.name);

        auto info = m_runtime.inspect(*id);
        QVERIFY2(info, qPrintable(info ? QString() : info.error().text()));
        QCOMPARE(info->state, QStringLiteral("running"));
        QVERIFY2(!info->address.isEmpty(), "run() returns once the instance has an address");
        QCOMPARE(info->labels.value(TestLabel), m_run);
        QCOMPARE(info->labels.value(QString::fromLatin1(LabelApp)), QStringLiteral("web"));
        QVERIFY(info->image.startsWith(m_base.left(12)));

        // Reached from this host at its bridge address, serving what the app wrote.
        const QByteArray reply = httpGet(info->address, 8080, "/probe.txt");
        QVERIFY2(reply.contains("served"), reply.constData());

        // The limits reached the instance's config.
        auto instance = m_runtime.client().instance(*id);
        QVERIFY(instance);
        QCOMPARE(instance->config.value(QStringLiteral("limits.memory")), QStringLiteral("268435456B"));
        QCOMPARE(instance->config.value(QStringLiteral("limits.cpu.allowance")), QStringLiteral("50ms/100ms"));

        // Logs: the environment arrived unchanged, a follow sees the later line.
        QTRY_VERIFY_WITH_TIMEOUT(allLogs(*id).contains(QStringLiteral("ready with it's a \"quoted\" $value")), 5000);
        CancelToken cancel;
        QStringList followed;
        std::thread follower([&] {
            discardResult(m_runtime.logs(*id, 0, true, cancel, [&](const LogLine &l) { followed << l.text; }),
                          "the lines followed are what the test compares");
        });
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 5000 && !allLogs(*id).contains(QStringLiteral("later")))
            QThread::msleep(50);
        QThread::msleep(400);
        cancel.cancel();
        follower.join();
        QVERIFY2(allLogs(*id).contains(QStringLiteral("later")), qPrintable(allLogs(*id).join(u'|')));
        QVERIFY2(followed.contains(QStringLiteral("later")), qPrintable(followed.join(u'|')));
        QVERIFY2(!followed.contains(QStringLiteral("served")) && followed.size() == 1, qPrintable(followed.join(u'|')));

        auto listed =
            m_runtime.containers({{TestLabel, m_run}, {QString::fromLatin1(LabelApp), QStringLiteral("web")}});
        QVERIFY(listed);
        QCOMPARE(listed->size(), 1);
        QCOMPARE(listed->first().address, info->address);

        // A command in the running instance: its output apart by stream, its exit code; input
        // fed while it runs, and its end; a terminal's one stream, with the size asked for.
        QByteArray out, err;
        const auto collect = [&out, &err](int stream, QByteArrayView data) {
            (stream == 2 ? err : out) += data;
        };
        auto code = m_runtime.exec(*id,
                                   {{QStringLiteral("sh"), QStringLiteral("-c"),
                                     QStringLiteral("echo to-out; echo to-err >&2; cat /www/probe.txt; exit 3")}},
                                   CancelToken(), nullptr, collect);
        QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
        QCOMPARE(*code, 3);
        QCOMPARE(out, QByteArray("to-out\nserved\n"));
        QCOMPARE(err, QByteArray("to-err\n"));
        out.clear();
        err.clear();
        code = m_runtime.exec(
            *id, {{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("tr a-z A-Z")}}, CancelToken(),
            [](std::shared_ptr<ExecInput> in) {
                in->write("fed ");
                in->write(QByteArray(100000, 'x'));
                in->write("\n");
                in->closeInput();
            },
            collect);
        QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
        QCOMPARE(*code, 0);
        QCOMPARE(out, "FED " + QByteArray(100000, 'X') + "\n");
        out.clear();
        ExecRequest terminal{{QStringLiteral("sh"), QStringLiteral("-c"),
                              QStringLiteral("test -t 0 && echo a-terminal; stty size; exit 0")}};
        terminal.tty = true;
        terminal.columns = 101;
        terminal.rows = 33;
        code = m_runtime.exec(*id, terminal, CancelToken(), nullptr, collect);
        QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
        QCOMPARE(*code, 0);
        QVERIFY2(out.contains("a-terminal") && out.contains("33 101"), out.constData());
        auto missing = m_runtime.exec(*id, {{QStringLiteral("/no/such/program")}}, CancelToken(), nullptr, collect);
        QVERIFY2(missing, qPrintable(missing ? QString() : missing.error().text()));
        QCOMPARE(*missing, 127);
        QVERIFY2(err.contains("/no/such/program: "), err.constData());

        // A clean stop: httpd gets SIGTERM through Pando's init and the instance stops quickly.
        QElapsedTimer stopTimer;
        stopTimer.start();
        QVERIFY(m_runtime.stop(*id, 10));
        QVERIFY2(stopTimer.elapsed() < 8000, "SIGTERM reached the app");
        QCOMPARE(m_runtime.inspect(*id)->state, QStringLiteral("exited"));
        auto restarted = m_runtime.start(*id);
        QVERIFY2(restarted, qPrintable(restarted ? QString() : restarted.error().text()));
        QCOMPARE(m_runtime.inspect(*id)->state, QStringLiteral("running"));
        QVERIFY2(httpGet(m_runtime.inspect(*id)->address, 8080, "/probe.txt").contains("served"), "serves again");

        // Not in a stopped instance.
        QVERIFY(m_runtime.stop(*id, 10));
        auto stopped = m_runtime.exec(*id, {{QStringLiteral("true")}}, CancelToken(), nullptr, collect);
        QVERIFY(!stopped);
        QCOMPARE(stopped.error().code, ErrorCode::Conflict);

        QVERIFY(m_runtime.remove(*id));
        auto gone = m_runtime.inspect(*id);
        QVERIFY(!gone);
        QCOMPARE(gone.error().code, ErrorCode::NotFound);
        QVERIFY(m_runtime.remove(*id)); // a missing instance is not an error
    }

    void keepsTheExitCode()
    {
        auto id = m_runtime.run(spec(QStringLiteral("exits"), QStringLiteral("echo bye; exit 3")));
        QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
        QVERIFY(waitState(*id, QStringLiteral("exited")));
        auto info = m_runtime.inspect(*id);
        QVERIFY(info);
        QCOMPARE(info->exitCode, 3);
        QVERIFY(allLogs(*id).contains(QStringLiteral("bye")));
        // A command that does not exist: 127, and the shell's words in the log.
        auto missing = m_runtime.run(spec(QStringLiteral("missing"), QStringLiteral("exec /no/such/program")));
        QVERIFY(missing);
        QVERIFY(waitState(*missing, QStringLiteral("exited")));
        QCOMPARE(m_runtime.inspect(*missing)->exitCode, 127);
        QVERIFY(m_runtime.remove(*id));
        QVERIFY(m_runtime.remove(*missing));
    }

    void putsFilesBeforeTheAppStarts()
    {
        // What the app reads at its start is there already; the contents are nowhere in the config.
        ContainerSpec s = spec(QStringLiteral("files"),
                               QStringLiteral("cat /run/secrets/token >/www/token.txt; ls -ln /run/secrets/token; "
                                              "exec httpd -f -p 8080 -h /www"));
        s.files.insert(QStringLiteral("/run/secrets/token"), ContainerFile{"s3cret-value\n", 0400, 0, 0});
        s.files.insert(QStringLiteral("/etc/app/settings.conf"), ContainerFile{"mode=fast\n", 0644, 0, 0});
        auto id = m_runtime.run(s);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
        auto info = m_runtime.inspect(*id);
        QVERIFY(info);
        QVERIFY(httpGet(info->address, 8080, "/token.txt").contains("s3cret-value"));
        QTRY_VERIFY_WITH_TIMEOUT(allLogs(*id).join(u'\n').contains(QStringLiteral("-r--------")), 5000);
        auto instance = m_runtime.client().instance(*id);
        QVERIFY(instance);
        for (auto it = instance->config.begin(); it != instance->config.end(); ++it)
            QVERIFY2(!it.value().contains(QStringLiteral("s3cret")), qPrintable(it.key()));
        QVERIFY(m_runtime.remove(*id));

        ContainerSpec climbing = spec(QStringLiteral("climb"), QStringLiteral("sleep 60"));
        climbing.files.insert(QStringLiteral("relative/path"), ContainerFile{"x", 0400, 0, 0});
        auto refused = m_runtime.run(climbing);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
        QVERIFY(!m_runtime.inspect(climbing.name));
    }

    void refusesNamesIncusRejects_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("starts with a digit") << QStringLiteral("1web");
        QTest::newRow("underscore") << QStringLiteral("my_web");
        QTest::newRow("dot") << QStringLiteral("my.web");
        QTest::newRow("trailing hyphen") << QStringLiteral("web-");
        QTest::newRow("64 characters") << QString(64, u'a');
        QTest::newRow("empty") << QString();
    }

    void refusesNamesIncusRejects()
    {
        QFETCH(QString, name);
        ContainerSpec s = spec(QStringLiteral("x"), QStringLiteral("sleep 60"));
        s.name = name;
        auto id = m_runtime.run(s);
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Invalid);
        QVERIFY2(id.error().text().contains(QStringLiteral("Incus instance name")), qPrintable(id.error().text()));
        auto listed = m_runtime.containers({{TestLabel, m_run}, {QString::fromLatin1(LabelApp), QStringLiteral("x")}});
        QVERIFY(listed && listed->isEmpty());
    }

    void refusesWhatItCannotKeep()
    {
        ContainerSpec s = spec(QStringLiteral("noegress"), QStringLiteral("sleep 60"));
        s.egress = false;
        auto id = m_runtime.run(s);
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Invalid);
        QVERIFY(id.error().text().contains(QStringLiteral("egress")));

        ContainerSpec unknownImage = spec(QStringLiteral("noimage"), QStringLiteral("sleep 60"));
        unknownImage.image = QString(64, u'0');
        auto failed = m_runtime.run(unknownImage);
        QVERIFY(!failed);
        QVERIFY2(!m_runtime.inspect(unknownImage.name), "nothing is left behind");
    }

    void startTimeoutLeavesNothingBehind()
    {
        // A start that cannot finish in time (1 ms): the runtime gives up, waits for Incus to
        // settle, and removes what was made.
        IncusRuntime impatient(IncusOptions{.startTimeoutMs = 1});
        ContainerSpec s = spec(QStringLiteral("slow"), QStringLiteral("exec httpd -f -p 8080 -h /www"));
        auto id = impatient.run(s);
        QVERIFY(!id);
        QCOMPARE(id.error().code, ErrorCode::Timeout);
        QThread::msleep(500);
        auto left = m_runtime.inspect(s.name);
        QVERIFY2(!left, qPrintable(left ? left->state : QString()));
        QCOMPARE(left.error().code, ErrorCode::NotFound);
    }

    void removeWaitsForAStartIncusStillRuns()
    {
        // What a deploy that gave up on a slow start leaves: Incus still starting the instance,
        // and refusing to stop or delete it meanwhile. remove() waits for the start, then removes.
        ContainerSpec s = spec(QStringLiteral("busy"), QStringLiteral("exec httpd -f -p 8080 -h /www"));
        auto id = m_runtime.run(s);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
        incusapi::IncusClient client;
        QVERIFY(client.changeState(*id, QStringLiteral("stop"), 0, true));
        httpkit::Request start;
        start.method = "PUT";
        start.path = QStringLiteral("/1.0/instances/") + *id + QStringLiteral("/state");
        start.body = "{\"action\": \"start\", \"timeout\": 30}";
        auto asked = client.call(start); // not waited for: the start runs on in Incus
        QVERIFY2(asked && asked->operation, qPrintable(asked ? QString() : asked.error().text()));
        auto removed = m_runtime.remove(*id);
        QVERIFY2(removed, qPrintable(removed ? QString() : removed.error().text()));
        auto left = m_runtime.inspect(*id);
        QVERIFY2(!left, qPrintable(left ? left->state : QString()));
        QCOMPARE(left.error().code, ErrorCode::NotFound);
    }

    void buildsFromADockerfile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("site")));
        QFile page(dir.filePath(QStringLiteral("site/index.html")));
        QVERIFY(page.open(QIODevice::WriteOnly) && page.write("built for incus\n") > 0);
        page.close();
        QFile dockerfile(dir.filePath(QStringLiteral("Dockerfile")));
        QVERIFY(dockerfile.open(QIODevice::WriteOnly));
        // The image's own command, environment and working directory are what the instance runs.
        dockerfile.write(
            "FROM pando/busybox:latest\n"
            "COPY site /srv/site\n"
            "ENV WHO=\"the image\"\n"
            "WORKDIR /srv/site\n"
            "CMD [\"sh\", \"-c\", \"echo \\\"started by $WHO in $(pwd)\\\"; exec httpd -f -p 8080 -h .\"]\n");
        dockerfile.close();

        BuildRequest request;
        request.contextDir = dir.path();
        request.dockerfile = QStringLiteral("Dockerfile");
        request.tag = QStringLiteral("pando/incus-test:") + m_run;
        request.labels = {{TestLabel, m_run}};
        QStringList progress;
        auto image = m_runtime.build(request, CancelToken(), [&progress](const QString &l) { progress << l; });
        QVERIFY2(image, qPrintable(image ? QString() : image.error().text()));
        QVERIFY(progress.contains(QStringLiteral("importing the image into Incus")));

        auto images = m_runtime.images({{TestLabel, m_run}});
        QVERIFY(images);
        QCOMPARE(images->size(), 1);
        QCOMPARE(images->first().id, *image);
        QVERIFY(images->first().tags.contains(request.tag));

        // Docker keeps its copy under the same tag: building the same tree again comes from its
        // cache, and the Incus image is tagged again rather than made anew.
        adapters::docker::DockerRuntime docker;
        auto cleanDocker = qScopeGuard([&] {
            discardResult(docker.removeImage(request.tag), "clean-up: a leftover shows in the next test");
            discardResult(docker.removeImage(request.tag + QStringLiteral("-again")),
                          "clean-up: a leftover shows in the next test");
        });
        QVERIFY(docker.imageId(request.tag));
        BuildRequest again = request;
        again.tag = request.tag + QStringLiteral("-again");
        QStringList againProgress;
        auto same = m_runtime.build(again, CancelToken(), [&againProgress](const QString &l) { againProgress << l; });
        QVERIFY2(same, qPrintable(same ? QString() : same.error().text()));
        QCOMPARE(*same, *image);
        QVERIFY2(againProgress.last().endsWith(QLatin1String("(unchanged)")), qPrintable(againProgress.join(u'|')));
        images = m_runtime.images({{TestLabel, m_run}});
        QCOMPARE(images->size(), 1);
        QCOMPARE(images->first().tags, (QStringList{request.tag, again.tag}));
        // Untagging one leaves the image to the other.
        QVERIFY(m_runtime.removeImage(again.tag));
        QCOMPARE(m_runtime.images({{TestLabel, m_run}})->first().tags, QStringList{request.tag});

        ContainerSpec s;
        s.name = name(QStringLiteral("built"));
        s.image = *image;
        s.labels = labels(QStringLiteral("built"));
        s.port = 8080;
        auto id = m_runtime.run(s);
        QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
        auto info = m_runtime.inspect(*id);
        QVERIFY(info);
        QVERIFY2(httpGet(info->address, 8080, "/index.html").contains("built for incus"), "the image's CMD serves");
        QTRY_VERIFY_WITH_TIMEOUT(allLogs(*id).contains(QStringLiteral("started by the image in /srv/site")), 5000);

        // The spec's environment wins over the image's.
        ContainerSpec overridden = s;
        overridden.name = name(QStringLiteral("built2"));
        overridden.env = {{QStringLiteral("WHO"), QStringLiteral("the spec")}};
        auto id2 = m_runtime.run(overridden);
        QVERIFY(id2);
        QTRY_VERIFY_WITH_TIMEOUT(allLogs(*id2).contains(QStringLiteral("started by the spec in /srv/site")), 5000);

        QVERIFY(m_runtime.remove(*id));
        QVERIFY(m_runtime.remove(*id2));
        QVERIFY(m_runtime.removeImage(request.tag));
        QVERIFY(m_runtime.images({{TestLabel, m_run}})->isEmpty());
        QVERIFY(m_runtime.removeImage(request.tag)); // a missing image is not an error
    }

    void buildFailureSaysWhy()
    {
        QTemporaryDir dir;
        QFile dockerfile(dir.filePath(QStringLiteral("Dockerfile")));
        QVERIFY(dockerfile.open(QIODevice::WriteOnly));
        dockerfile.write("FROM pando/busybox:latest\nRUN exit 7\n");
        dockerfile.close();
        BuildRequest request;
        request.contextDir = dir.path();
        request.dockerfile = QStringLiteral("Dockerfile");
        request.tag = QStringLiteral("pando/incus-fail:") + m_run;
        request.labels = {{TestLabel, m_run}};
        auto image = m_runtime.build(request, CancelToken(), {});
        QVERIFY(!image);
        QVERIFY2(image.error().text().contains(QStringLiteral("7")), qPrintable(image.error().text()));
        QVERIFY(m_runtime.images({{TestLabel, m_run}})->isEmpty());
    }

    void initQuotesEveryWord()
    {
        const QStringList argv{QStringLiteral("echo"), QStringLiteral("it's"), QStringLiteral("$(rm -rf /)"),
                               QStringLiteral("a b")};
        QCOMPARE(incus::shellQuote(argv), QStringLiteral("'echo' 'it'\\''s' '$(rm -rf /)' 'a b'"));
        auto id = m_runtime.run([&] {
            ContainerSpec s = spec(QStringLiteral("argv"), {});
            s.command = {
                QStringLiteral("sh"), QStringLiteral("-c"),         QStringLiteral("echo \"[$1][$2]\"; exit 0"),
                QStringLiteral("sh"), QStringLiteral("it's $(id)"), QStringLiteral("a  b")};
            return s;
        }());
        QVERIFY(id);
        QVERIFY(waitState(*id, QStringLiteral("exited")));
        QVERIFY2(allLogs(*id).contains(QStringLiteral("[it's $(id)][a  b]")), qPrintable(allLogs(*id).join(u'|')));
        QVERIFY(m_runtime.remove(*id));
    }
};

QTEST_GUILESS_MAIN(TestIncusRuntime)
#include "tst_incusruntime.moc"
