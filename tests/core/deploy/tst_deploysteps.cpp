// The deploy's steps one at a time, against in-memory adapters and a real SQLite state: plan
// refuses a name the runtime cannot take and hands its plan on, start hands the container on
// and refuses one without an address, switch routes to it and makes it the app's deploy, a
// StepRecorder left open records its step as interrupted, health trusts an answer only while
// its container still runs, and the runner's loop stops a cancelled deploy between steps with
// nothing of it left behind.
#include "core/deploy/deploylogfeed.h"
#include "core/deploy/deployrunner.h"
#include "core/deploy/deploysteps.h"
#include "core/deploy/steplog.h"
#include "core/deploy/steprecorder.h"
#include "core/state/repositories.h"
#include "tests/support/vocabtesting.h"

#include <QDir>
#include <QFile>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <optional>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

class FakeRuntime : public adapters::Runtime {
public:
    int maxNameLength = 0;
    QString address = u"10.0.0.7"_s;
    int blankInspects = 0;             // the next inspects see the container running without its address yet
    std::optional<QList<int>> exposed; // none: this runtime cannot tell
    QList<adapters::ContainerSpec> started;
    QStringList removed;

    adapters::RuntimeCapabilities capabilities() override
    {
        adapters::RuntimeCapabilities caps;
        caps.kind = u"fake"_s;
        caps.maxNameLength = maxNameLength;
        return caps;
    }
    Status ping() override { return {}; }
    Result<QString> build(const adapters::BuildRequest &, const CancelToken &,
                          const std::function<void(const QString &)> &) override
    {
        return u"sha256:built"_s;
    }
    Result<QString> run(const adapters::ContainerSpec &spec) override
    {
        started << spec;
        adapters::ContainerInfo info;
        info.id = u"c%1"_s.arg(started.size());
        info.name = spec.name;
        info.labels = spec.labels;
        info.state = u"running"_s;
        info.address = address;
        m_containers.insert(info.id, info);
        return info.id;
    }
    Result<adapters::ContainerInfo> inspect(const QString &id) override
    {
        if (!m_containers.contains(id))
            return fail(ErrorCode::NotFound, u"no container %1"_s.arg(id));
        adapters::ContainerInfo info = m_containers.value(id);
        if (blankInspects > 0) {
            --blankInspects;
            info.address.clear();
        }
        return info;
    }
    Result<QList<adapters::ContainerInfo>> containers(const adapters::Labels &filter) override
    {
        QList<adapters::ContainerInfo> list;
        for (const adapters::ContainerInfo &info : std::as_const(m_containers)) {
            bool all = true;
            for (auto it = filter.cbegin(); it != filter.cend(); ++it)
                all = all && info.labels.value(it.key()) == it.value();
            if (all)
                list << info;
        }
        return list;
    }
    void setState(const QString &id, const QString &state, int exitCode = 0)
    {
        m_containers[id].state = state;
        m_containers[id].exitCode = exitCode;
    }
    Status start(const QString &) override { return {}; }
    Status stop(const QString &, int) override { return {}; }
    Status remove(const QString &id) override
    {
        removed << id;
        m_containers.remove(id);
        return {};
    }
    Result<QList<adapters::ImageInfo>> images(const adapters::Labels &) override
    {
        return QList<adapters::ImageInfo>{};
    }
    Status removeImage(const QString &) override { return {}; }
    Result<QList<int>> exposedPorts(const QString &imageId) override
    {
        if (!exposed)
            return adapters::Runtime::exposedPorts(imageId);
        return *exposed;
    }
    Status logs(const QString &, int, bool, const CancelToken &,
                const std::function<void(const adapters::LogLine &)> &) override
    {
        return {};
    }

private:
    QHash<QString, adapters::ContainerInfo> m_containers;
};

class FakeRouter : public adapters::Router {
public:
    QString backend;

    Result<adapters::Route> ensure(const QString &app, int requestedPort) override
    {
        adapters::Route route;
        route.app = app;
        route.port = requestedPort != 0 ? requestedPort : 41000;
        route.url = QUrl(u"http://127.0.0.1:%1"_s.arg(route.port));
        return route;
    }
    Status setBackend(const QString &, const QString &host, int port) override
    {
        backend = u"%1:%2"_s.arg(host).arg(port);
        return {};
    }
    Status remove(const QString &) override { return {}; }
    std::optional<adapters::Route> route(const QString &) override { return std::nullopt; }
    adapters::RouterStatus status() override { return {.kind = QStringLiteral("fake")}; }
};

// Checks out a tree with a Dockerfile; cancels `cancelOnCheckout` as it does (a person pressing
// cancel while the fetch runs).
class FakeSource : public adapters::SourceProvider {
public:
    CancelToken *cancelOnCheckout = nullptr;

    Status checkUrl(const QString &) override { return {}; }
    Result<QString> resolve(const QString &, const QString &, const adapters::SourceAccess &, const CancelToken &,
                            const std::function<void(const QString &)> &) override
    {
        return u"0123456789abcdef0123456789abcdef01234567"_s;
    }
    Result<adapters::SourceCheckout> checkout(const QString &, const QString &, const QString &workRoot,
                                              const adapters::SourceAccess &, const CancelToken &,
                                              const std::function<void(const QString &)> &) override
    {
        const QString dir = workRoot + u"/checkout"_s;
        QDir().mkpath(dir);
        QFile dockerfile(dir + u"/Dockerfile"_s);
        if (!dockerfile.open(QIODevice::WriteOnly))
            return fail(ErrorCode::Internal, u"cannot write the Dockerfile"_s);
        dockerfile.write("FROM scratch\nEXPOSE 8080\n");
        if (cancelOnCheckout != nullptr)
            cancelOnCheckout->cancel();
        return adapters::SourceCheckout{u"0123456789abcdef0123456789abcdef01234567"_s, dir};
    }
};

// Answers every request with 200 on its own thread (the health step blocks the test's).
class OkServer {
public:
    OkServer()
    {
        m_context.moveToThread(&m_thread);
        m_thread.start();
        QMetaObject::invokeMethod(
            &m_context,
            [this] {
                m_server = new QTcpServer;
                QObject::connect(m_server, &QTcpServer::newConnection, m_server, [this] {
                    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
                        QObject::connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                            socket->readAll();
                            socket->write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                            socket->disconnectFromHost();
                        });
                        QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                    }
                });
                m_port = m_server->listen(QHostAddress::LocalHost, 0) ? m_server->serverPort() : 0;
            },
            Qt::BlockingQueuedConnection);
    }
    ~OkServer()
    {
        QMetaObject::invokeMethod(
            &m_context, [this] { delete m_server; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    int port() const { return m_port; }

private:
    QThread m_thread;
    QObject m_context;
    QTcpServer *m_server = nullptr;
    int m_port = 0;
};

const QString SpecYaml = u"name: hello\nsource:\n  repo: https://git.example/hello.git\nrun:\n  port: 8080\n"_s;

QString errorOf(const Result<StepEnd> &ended)
{
    return ended ? QString() : ended.error().text();
}

} // namespace

class TestDeploySteps : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;
    ManualClock m_clock;
    EventBus m_events;
    std::unique_ptr<AuditLog> m_audit;
    AppLocks m_locks;
    std::unique_ptr<FakeRuntime> m_runtimePtr;
    std::unique_ptr<FakeRouter> m_routerPtr;
    FakeSource m_source;
    std::unique_ptr<Services> m_services;
    CancelToken m_cancel;

    // A queued deploy of the app "hello", with the app created beside it.
    DeployRecord queue(const QString &specYaml = SpecYaml)
    {
        const DeployRecord deploy{.id = u"d0123456789ab"_s,
                                  .app = u"hello"_s,
                                  .status = core::DeployStatus::Queued,
                                  .specYaml = specYaml,
                                  .createdMs = m_clock.nowMs()};
        const bool created = AppRepository(*m_db).create(AppRecord{u"hello"_s, specYaml, 0, {}, 1, 1}) &&
                             DeployRepository(*m_db).create(deploy);
        if (!created)
            qFatal("creating the app and its deploy failed");
        return deploy;
    }
    // A run as the runner hands it to the steps, with the spec fetch would have parsed and a
    // checkout with a Dockerfile.
    std::unique_ptr<DeployRun> runAfterFetch(const QString &specYaml = SpecYaml,
                                             const QByteArray &dockerfileText = "FROM scratch\n")
    {
        const DeployRecord deploy = queue(specYaml); // before the app is read: it creates the app
        auto run =
            std::make_unique<DeployRun>(*m_services, deploy, AppRepository(*m_db).find(u"hello"_s).value(), m_cancel);
        run->spec = *parseAppSpec(specYaml.toUtf8());
        run->checkoutDir = m_tmp->filePath(u"checkout"_s);
        QDir().mkpath(run->checkoutDir);
        QFile dockerfile(run->checkoutDir + u"/Dockerfile"_s);
        if (!dockerfile.open(QIODevice::WriteOnly))
            qFatal("cannot write the Dockerfile");
        dockerfile.write(dockerfileText);
        return run;
    }

private Q_SLOTS:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        m_db = std::make_unique<Database>(
            DatabaseConfig::fromUrl(u"sqlite://"_s + m_tmp->path() + u"/pando.db"_s).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_audit = std::make_unique<AuditLog>(*m_db, m_clock);
        m_runtimePtr = std::make_unique<FakeRuntime>();
        m_routerPtr = std::make_unique<FakeRouter>();
        m_source.cancelOnCheckout = nullptr;
        m_cancel = CancelToken();
        m_services.reset(new Services{.db = *m_db,
                                      .runtime = *m_runtimePtr,
                                      .router = *m_routerPtr,
                                      .source = m_source,
                                      .clock = m_clock,
                                      .events = m_events,
                                      .audit = *m_audit,
                                      .policy = HostPolicy{},
                                      .dataDir = m_tmp->path(),
                                      .installId = u"test-install"_s,
                                      .retireGraceMs = 0,
                                      .appLocks = m_locks});
    }

    void planRefusesANameTheRuntimeCannotTake()
    {
        m_runtimePtr->maxNameLength = 10;
        auto run = runAfterFetch();
        auto planned = deploysteps::plan(*run);
        QVERIFY(!planned);
        QCOMPARE(planned.error().code, ErrorCode::Invalid);
        QCOMPARE(planned.error().where, u"name"_s);
        QVERIFY2(planned.error().message.contains(u"at most 10 characters"_s), qPrintable(planned.error().message));
    }

    void planHandsItsPlanOn()
    {
        auto run = runAfterFetch();
        auto planned = deploysteps::plan(*run);
        QVERIFY2(planned, qPrintable(errorOf(planned)));
        QVERIFY(!planned->hold);
        QCOMPARE(run->plan.container.port, 8080);
        QCOMPARE(run->plan.dockerfile, u"Dockerfile"_s);
        QCOMPARE(planned->detail, run->plan.notes.join(u"; "_s));
    }

    // The container's port: run.port, else the one the image exposes (the Dockerfile's EXPOSE
    // first, or the Dockerfile alone where the runtime cannot tell); $PORT says it to the app.
    void buildSettlesThePort_data()
    {
        QTest::addColumn<QString>("run");       // the spec's run section
        QTest::addColumn<QVariant>("exposed");  // QList<int>, or nothing: the runtime cannot tell
        QTest::addColumn<QByteArray>("expose"); // the Dockerfile's EXPOSE line
        QTest::addColumn<int>("port");          // 0: the build fails
        QTest::addColumn<QString>("env");       // $PORT in the container
        QTest::addColumn<QString>("detail");    // in the step's line, or the error

        const QString noPort = u"run:\n  env: { A: b }\n"_s;
        QTest::newRow("run.port as the image exposes")
            << u"run:\n  port: 8080\n"_s << QVariant::fromValue(QList<int>{8080}) << QByteArray() << 8080 << u"8080"_s
            << QString();
        QTest::newRow("run.port the image does not expose")
            << u"run:\n  port: 8080\n"_s << QVariant::fromValue(QList<int>{3000}) << QByteArray() << 8080 << u"8080"_s
            << u"the image exposes 3000, but run.port is 8080: the app must listen on 8080"_s;
        QTest::newRow("no run.port: the one the image exposes")
            << noPort << QVariant::fromValue(QList<int>{3000}) << QByteArray() << 3000 << u"3000"_s
            << u"port 3000, which the image exposes"_s;
        QTest::newRow("no run.port: the Dockerfile's of several")
            << noPort << QVariant::fromValue(QList<int>{80, 3000}) << QByteArray("EXPOSE 3000/tcp\n") << 3000
            << u"3000"_s << u"port 3000 of the 80, 3000 the image exposes; run.port picks another"_s;
        QTest::newRow("no run.port: the lowest of a base image's")
            << noPort << QVariant::fromValue(QList<int>{80, 443}) << QByteArray() << 80 << u"80"_s
            << u"port 80 of the 80, 443"_s;
        QTest::newRow("no run.port, the runtime cannot tell: the Dockerfile's")
            << noPort << QVariant() << QByteArray("EXPOSE 5000\n") << 5000 << u"5000"_s
            << u"port 5000, which the image exposes"_s;
        QTest::newRow("no run.port, none exposed")
            << noPort << QVariant::fromValue(QList<int>{}) << QByteArray() << 0 << QString()
            << u"run.port: the spec names no port, and the image exposes none"_s;
        QTest::newRow("PORT the spec sets is kept")
            << u"run:\n  env: { PORT: \"9999\" }\n"_s << QVariant::fromValue(QList<int>{3000}) << QByteArray() << 3000
            << u"9999"_s << u"port 3000"_s;
    }

    void buildSettlesThePort()
    {
        QFETCH(QString, run);
        QFETCH(QVariant, exposed);
        QFETCH(QByteArray, expose);
        QFETCH(int, port);
        QFETCH(QString, env);
        QFETCH(QString, detail);
        if (exposed.isValid())
            m_runtimePtr->exposed = exposed.value<QList<int>>();
        const QString spec = u"name: hello\nsource:\n  repo: https://git.example/hello.git\n"_s + run;
        auto deploy = runAfterFetch(spec, "FROM scratch\n" + expose);
        QVERIFY(deploysteps::detect(*deploy));
        QVERIFY(deploysteps::plan(*deploy));
        auto built = deploysteps::build(*deploy);
        if (port == 0) {
            QVERIFY(!built);
            QCOMPARE(built.error().text(), detail);
            QVERIFY2(built.error().hint.contains(u"EXPOSE"_s), qPrintable(built.error().hint));
            return;
        }
        QVERIFY2(built, qPrintable(errorOf(built)));
        if (detail.isEmpty())
            QCOMPARE(built->detail, u"sha256:built"_s);
        else
            QVERIFY2(built->detail.contains(detail), qPrintable(built->detail));
        QCOMPARE(deploy->plan.container.port, port);
        QCOMPARE(deploy->plan.container.env.value(u"PORT"_s), env);
        QCOMPARE(DeployRepository(*m_db).find(deploy->deploy.id)->port, port);
        QVERIFY(deploysteps::start(*deploy));
        QCOMPARE(m_runtimePtr->started.last().port, port);
    }

    void startHandsTheContainerOnAndSavesIt()
    {
        auto run = runAfterFetch();
        QVERIFY(deploysteps::plan(*run));
        run->deploy.imageId = u"sha256:built"_s;
        auto started = deploysteps::start(*run);
        QVERIFY2(started, qPrintable(errorOf(started)));
        QCOMPARE(m_runtimePtr->started.size(), 1);
        QCOMPARE(m_runtimePtr->started.first().image, u"sha256:built"_s);
        QCOMPARE(m_runtimePtr->started.first().name, containerName(u"hello"_s, run->deploy.id));
        QCOMPARE(run->container.address, u"10.0.0.7"_s);
        QCOMPARE(started->detail, u"c1 at 10.0.0.7:8080"_s);
        // Saved as it happened: a restart finds the container to settle.
        QCOMPARE(DeployRepository(*m_db).find(run->deploy.id)->containerId, u"c1"_s);
    }

    void startWaitsForTheAddressOfARunningContainer()
    {
        m_runtimePtr->blankInspects = 3;
        auto run = runAfterFetch();
        QVERIFY(deploysteps::plan(*run));
        auto started = deploysteps::start(*run);
        QVERIFY2(started, qPrintable(started ? QString() : started.error().text()));
        QCOMPARE(run->container.address, u"10.0.0.7"_s);
    }

    void startRefusesARunningContainerWithoutAnAddress()
    {
        m_runtimePtr->address.clear();
        auto run = runAfterFetch();
        QVERIFY(deploysteps::plan(*run));
        auto started = deploysteps::start(*run);
        QVERIFY(!started);
        QCOMPARE(started.error().message, u"the container has no address"_s);
    }

    // An exited container's address can go to another container at once, which may answer:
    // health counts an answer only while its own container still runs.
    void healthTrustsAnAnswerOnlyWhileItsContainerRuns()
    {
        OkServer answerer;
        QVERIFY(answerer.port() != 0);
        m_runtimePtr->address = u"127.0.0.1"_s;
        auto run = runAfterFetch();
        QVERIFY(deploysteps::plan(*run));
        run->plan.container.port = answerer.port();
        run->plan.healthIntervalMs = 10;
        QVERIFY(deploysteps::start(*run));
        auto healthy = deploysteps::health(*run);
        QVERIFY2(healthy, qPrintable(errorOf(healthy)));

        m_runtimePtr->setState(run->deploy.containerId, u"exited"_s, 3);
        auto answeredByAnother = deploysteps::health(*run);
        QVERIFY(!answeredByAnother);
        QCOMPARE(answeredByAnother.error().message, u"the container stopped (exited, exit code 3)"_s);

        // Restarted at a new address: what answered at the old one was not it.
        m_runtimePtr->setState(run->deploy.containerId, u"running"_s);
        run->container.address = u"127.0.0.2"_s;
        auto moved = deploysteps::health(*run);
        QVERIFY(!moved);
        QVERIFY2(moved.error().message.startsWith(u"the container restarted"_s), qPrintable(errorOf(moved)));
    }

    void switchRoutesToTheNewContainer()
    {
        auto run = runAfterFetch();
        QVERIFY(deploysteps::plan(*run));
        QVERIFY(deploysteps::start(*run));
        auto switched = deploysteps::switchTraffic(*run);
        QVERIFY2(switched, qPrintable(errorOf(switched)));
        QCOMPARE(m_routerPtr->backend, u"10.0.0.7:8080"_s);
        QCOMPARE(switched->detail, u"http://127.0.0.1:41000"_s);
        QCOMPARE(AppRepository(*m_db).find(u"hello"_s)->currentDeploy, run->deploy.id);
        QCOMPARE(AppRepository(*m_db).find(u"hello"_s)->routePort, 41000);
        // The runner says the deploy succeeded once it has recorded this step's end.
        QVERIFY(switched->live);
        QCOMPARE(DeployRepository(*m_db).find(run->deploy.id)->status, core::DeployStatus::Queued);
    }

    // Whoever learns that a deploy succeeded (the CLI's --wait, the desktop's deploy view) finds
    // every step up to the switch ended, not the switch still running, and the retire that
    // follows it recorded as running, so that a follower waits for its end.
    void aSucceededDeployHasEndedItsSwitch()
    {
        OkServer answerer;
        QVERIFY(answerer.port() != 0);
        m_runtimePtr->address = u"127.0.0.1"_s;
        const DeployRecord queued = queue(
            u"name: hello\nsource:\n  repo: https://git.example/hello.git\nrun:\n  port: %1\n"_s.arg(answerer.port()));
        QList<core::DeployStepStatus> switchWhenSucceeded;
        QList<core::DeployStepStatus> retireWhenSucceeded;
        QObject receiver;
        connect(&m_events, &EventBus::published, &receiver, [&](const Event &event) {
            if (event.type != EventType::DeploySucceeded)
                return;
            QCOMPARE(DeployRepository(*m_db).find(queued.id)->status, core::DeployStatus::Succeeded);
            const auto steps = DeployRepository(*m_db).steps(queued.id);
            QVERIFY(steps);
            for (const StepRecord &step : *steps)
                if (step.name == u"switch"_s)
                    switchWhenSucceeded << step.status;
                else if (step.name == u"retire"_s)
                    retireWhenSucceeded << step.status;
        });
        auto ran = DeployRunner(*m_services).run(queued.id, m_cancel);
        QVERIFY2(ran, qPrintable(ran ? QString() : ran.error().text()));
        QCOMPARE(switchWhenSucceeded, QList<core::DeployStepStatus>{core::DeployStepStatus::Succeeded});
        QCOMPARE(retireWhenSucceeded, QList<core::DeployStepStatus>{core::DeployStepStatus::Running});
        QCOMPARE(DeployRepository(*m_db).steps(queued.id)->last().status, core::DeployStepStatus::Succeeded);
    }

    // A process that died in a succeeded deploy's retire left the step running: the job claimed
    // again ends it, without announcing the deploy a second time.
    void aRetireCutOffIsEndedWithoutAnotherAnnouncement()
    {
        DeployRecord deploy = queue();
        deploy.status = core::DeployStatus::Succeeded;
        deploy.finishedMs = 1234;
        QVERIFY(DeployRepository(*m_db).update(deploy));
        StepRecord cut; // as a process killed in the retire leaves it
        cut.deployId = deploy.id;
        cut.seq = 0;
        cut.name = u"retire"_s;
        cut.status = core::DeployStepStatus::Running;
        QVERIFY(DeployRepository(*m_db).addStep(cut));
        QList<EventType> published;
        QObject receiver;
        connect(&m_events, &EventBus::published, &receiver,
                [&published](const Event &event) { published << event.type; });
        auto settled = DeployRunner(*m_services).settleInterrupted(deploy.id);
        QVERIFY2(settled, qPrintable(settled ? QString() : settled.error().text()));
        const DeployRecord after = DeployRepository(*m_db).find(deploy.id).value();
        QCOMPARE(after.status, core::DeployStatus::Succeeded);
        QCOMPARE(after.finishedMs, 1234);
        const auto steps = DeployRepository(*m_db).steps(deploy.id);
        QVERIFY(steps && steps->size() == 1);
        QCOMPARE(steps->at(0).status, core::DeployStepStatus::Succeeded);
        QCOMPARE(steps->at(0).detail, u"finished when Pando started again"_s);
        QVERIFY(!published.contains(EventType::DeploySucceeded));
    }

    void aStepLeftOpenIsRecordedAsInterrupted()
    {
        DeployRecord deploy = queue();
        {
            StepRecorder open(*m_services, deploy, 0, u"build"_s);
            StepRecorder done(*m_services, deploy, 1, u"start"_s);
            done.succeed(u"fine"_s);
        }
        auto steps = DeployRepository(*m_db).steps(deploy.id);
        QVERIFY(steps);
        QCOMPARE(steps->size(), 2);
        QCOMPARE(steps->at(0).status, core::DeployStepStatus::Failed);
        QCOMPARE(steps->at(0).detail, u"interrupted"_s);
        QCOMPARE(steps->at(1).status, core::DeployStepStatus::Succeeded);
    }

    // A step's output is kept in order, split into lines, and read back per step or whole.
    void stepOutputIsKeptInOrder()
    {
        const DeployRecord deploy = queue();
        {
            StepLog build(*m_db, m_clock, nullptr, deploy.id, 3);
            build.add(u"Step 1/2 : FROM scratch\n"_s);
            build.add(u"two\nlines"_s, true);
            StepLog health(*m_db, m_clock, nullptr, deploy.id, 5);
            health.add(u"giving up"_s);
        }
        DeployRepository deploys(*m_db);
        auto build = deploys.stepLog(deploy.id, 3, 0, 100);
        QVERIFY(build);
        QCOMPARE(build->size(), 3);
        QCOMPARE(build->at(0).text, u"Step 1/2 : FROM scratch"_s);
        QCOMPARE(build->at(1).text, u"two"_s);
        QVERIFY(build->at(2).stderrStream);
        QCOMPARE(build->at(2).line, 3);
        auto after = deploys.stepLog(deploy.id, 3, 2, 100);
        QVERIFY(after && after->size() == 1 && after->first().text == u"lines"_s);
        auto all = deploys.stepLog(deploy.id, -1, 0, 100);
        QVERIFY(all && all->size() == 4 && all->last().seq == 5);
    }

    // A step that prints more than StepLog keeps loses its middle, never its end (a build's
    // error is in its last lines), and says how much it left out.
    void longOutputKeepsItsEnd()
    {
        const DeployRecord deploy = queue();
        const int total = StepLog::MaxLines * 3;
        {
            StepLog log(*m_db, m_clock, nullptr, deploy.id, 0);
            for (int i = 1; i <= total; ++i)
                log.add(u"line %1"_s.arg(i));
        }
        auto kept = DeployRepository(*m_db).stepLog(deploy.id, 0, 0, 100000);
        QVERIFY(kept);
        QCOMPARE(kept->size(), StepLog::MaxLines);
        QCOMPARE(kept->at(StepLog::HeadLines - 1).text, u"line %1"_s.arg(StepLog::HeadLines));
        const int left = total - StepLog::MaxLines + 1;
        QCOMPARE(kept->at(StepLog::HeadLines).text, u"… %1 lines left out …"_s.arg(left));
        // Numbers are the order printed: the note takes the last left-out line's, the tail keeps
        // its own, so a reader following with `after` never sees a number twice.
        QCOMPARE(kept->at(StepLog::HeadLines).line, StepLog::HeadLines + left);
        QCOMPARE(kept->at(StepLog::HeadLines + 1).line, StepLog::HeadLines + left + 1);
        QCOMPARE(kept->last().text, u"line %1"_s.arg(total));
        QCOMPARE(kept->last().line, total);
    }

    // A follower that joins while a step prints gets, from the store, the feed's answer and its
    // callback together, every line kept exactly once, numbered as the store numbers them; and
    // the feed holds nothing once the step is over.
    void aLiveFollowerMissesNoLine()
    {
        const DeployRecord deploy = queue();
        DeployLogFeed feed;
        const int total = StepLog::MaxLines * 2;
        QMap<int, QString> seen;
        quint64 joinedId = 0;
        {
            StepLog log(*m_db, m_clock, &feed, deploy.id, 0);
            for (int i = 1; i <= total; ++i) {
                log.add(u"line %1"_s.arg(i));
                if (i == StepLog::HeadLines + 250) {
                    // Joined first, the store read after: what is printed between is in one of them.
                    DeployLogFeed::Joined joined = feed.join(deploy.id, [&seen](const QList<StepLogLine> &lines) {
                        for (const StepLogLine &line : lines)
                            seen.insert(line.line, line.text);
                    });
                    joinedId = joined.id;
                    auto stored = DeployRepository(*m_db).stepLog(deploy.id, 0, 0, 100000);
                    QVERIFY(stored);
                    for (const StepLogLine &line : std::as_const(*stored))
                        seen.insert(line.line, line.text);
                    for (const StepLogLine &line : std::as_const(joined.unstored))
                        seen.insert(line.line, line.text);
                    QCOMPARE(seen.size(), i);
                }
            }
        }
        feed.leave(joinedId);
        QCOMPARE(seen.size(), total);
        QCOMPARE(seen.lastKey(), total);
        for (auto it = seen.cbegin(); it != seen.cend(); ++it)
            QCOMPARE(it.value(), u"line %1"_s.arg(it.key()));
        QCOMPARE(feed.unstoredCount(), 0);
        // What the store kept carries the numbers the follower saw.
        auto kept = DeployRepository(*m_db).stepLog(deploy.id, 0, 0, 100000);
        QVERIFY(kept);
        for (const StepLogLine &line : std::as_const(*kept))
            if (!line.text.startsWith(u"…"_s))
                QCOMPARE(seen.value(line.line), line.text);
    }

    void aDeployCancelledDuringFetchStopsAfterIt()
    {
        const DeployRecord queued = queue();
        m_source.cancelOnCheckout = &m_cancel;
        DeployRunner runner(*m_services);
        auto ran = runner.run(queued.id, m_cancel);
        QVERIFY(!ran);
        QCOMPARE(ran.error().code, ErrorCode::Cancelled);
        auto deploy = DeployRepository(*m_db).find(queued.id);
        QCOMPARE(deploy->status, core::DeployStatus::Cancelled);
        QVERIFY(deploy->failedStep.isEmpty()); // no step failed: it was stopped between two
        auto steps = DeployRepository(*m_db).steps(queued.id);
        QCOMPARE(steps->size(), 1);
        QCOMPARE(steps->first().name, u"fetch"_s);
        QCOMPARE(steps->first().status, core::DeployStepStatus::Succeeded);
        QVERIFY(m_runtimePtr->started.isEmpty());
        // The checkout goes with the run.
        QVERIFY(!QDir(m_tmp->filePath(u"work/hello/checkout"_s)).exists());
    }
};

QTEST_GUILESS_MAIN(TestDeploySteps)
#include "tst_deploysteps.moc"
