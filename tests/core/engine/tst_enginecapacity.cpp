// Capacity and disk limits end to end on real parts (git, Docker, SQLite): a deploy that would
// take Docker past its memory is refused at its plan step with the figures and builds nothing,
// while a redeploy of the app holding the memory goes through; an app that writes past its disk
// limit is stopped, told (event, audit line, status reason) and left stopped by the reconciler
// until started again; one under its limit keeps running, and one with diskPolicy warn is told
// once and keeps running. An app a person stops stays stopped, also across a restart of Pando,
// until it is started, restarted or deployed again.

#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QJsonDocument>
#include <QMutex>
#include <QTest>

using namespace pando;
using namespace pando::test;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 Mi = 1024LL * 1024;

// Writes 20 MiB into its writable layer on its first start (a restart keeps the file, as an app's
// data is kept, rather than rewriting it under a check that measures it), then serves.
GitFiles writerApp()
{
    GitFiles files;
    files.insert(u"Dockerfile"_s, GitFile{"FROM pando/busybox:latest\nCOPY www /www\nEXPOSE 8080\n"
                                          "CMD [\"/bin/sh\", \"-c\", \"[ -f /fill ] || dd if=/dev/zero of=/fill "
                                          "bs=1048576 count=20 2>/dev/null; sync; "
                                          "exec /bin/httpd -f -p 8080 -h /www\"]\n"});
    files.insert(u"www/index.html"_s, GitFile{"ok\n"});
    return files;
}

QByteArray spec(const QString &name, const QString &repo, const QString &resources)
{
    return u"name: %1\nsource:\n  repo: %2\n  ref: main\nrun:\n  port: 8080\n  resources: %3\n"
           u"health:\n  path: /\n  timeout: 30s\n"_s.arg(name, repo, resources)
               .toUtf8();
}

} // namespace

class TestEngineCapacity : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aDeployPastDockersMemoryIsRefusedAtPlan();
    void anAppPastItsDiskLimitIsStoppedAndStaysStopped();
    void aStoppedAppStaysStoppedUntilStartedOrDeployed();

private:
    core::DeployView deployAndWait(const QString &app);
    QString containerState(const QString &app);

    // Declared before the engine: its threads publish into them until the engine is gone.
    QMutex m_eventsMutex;
    QList<core::Event> m_events;
    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
};

void TestEngineCapacity::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    QVERIFY(m_fx->git().isValid());
    m_repo = m_fx->git().createRepository(u"writer"_s);
    QVERIFY(!m_repo.isEmpty());
    QVERIFY(!m_fx->git().commit(u"writer"_s, u"main"_s, writerApp()).isEmpty());
    // The tests run the reconciler and the disk check themselves.
    QVERIFY(m_fx->start({}, [](core::EngineOptions &o) {
        o.reconcileIntervalMs = 0;
        o.diskCheckIntervalMs = 0;
    }));
    connect(
        m_fx->engine().events(), &core::EventBus::published, this,
        [this](const core::Event &event) {
            QMutexLocker lock(&m_eventsMutex);
            m_events << event;
        },
        Qt::DirectConnection);
}

void TestEngineCapacity::cleanupTestCase()
{
    m_fx.reset();
}

core::DeployView TestEngineCapacity::deployAndWait(const QString &app)
{
    auto deploy = m_fx->engine().deploy(app, {}, core::Actor{u"user:alice"_s, {}, {}});
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    return m_fx->waitDeploy(deploy->id);
}

QString TestEngineCapacity::containerState(const QString &app)
{
    auto view = m_fx->engine().app(app);
    if (!view)
        return u"no app"_s;
    auto found = m_fx->docker().containers(m_fx->installLabels(app, view->record.currentDeploy));
    if (!found || found->isEmpty())
        return u"no container"_s;
    return found->first().state;
}

void TestEngineCapacity::aDeployPastDockersMemoryIsRefusedAtPlan()
{
    const qint64 total = m_fx->docker().capabilities().maxMemoryBytes;
    QVERIFY2(total > 256 * Mi, "Docker reports no memory total");
    // Each asks 60% of what Docker has: one fits, two do not.
    const qint64 asks = (total * 6 / 10) / Mi * Mi;
    const QString resources = u"{ memory: %1Mi }"_s.arg(asks / Mi);
    QVERIFY(m_fx->engine().createApp(spec(u"roomy"_s, m_repo, resources), core::Actor{}));
    QVERIFY(m_fx->engine().createApp(spec(u"crowded"_s, m_repo, resources), core::Actor{}));

    const core::DeployView roomy = deployAndWait(u"roomy"_s);
    QVERIFY2(roomy.record.status == core::DeployStatus::Succeeded, qPrintable(roomy.record.error));

    auto capacity = m_fx->engine().capacity();
    QVERIFY2(capacity, qPrintable(capacity ? QString() : capacity.error().text()));
    QCOMPARE(capacity->size(), 1);
    const core::capacity::RuntimeCapacity docker = capacity->first();
    QCOMPARE(docker.room.kind, u"docker"_s);
    QCOMPARE(docker.room.memoryBytes, total);
    QVERIFY(docker.room.cpus > 0);
    QVERIFY2(docker.room.diskBytes > 0 && docker.room.diskAvailableBytes > 0, qPrintable(docker.room.note));
    QVERIFY(docker.room.canMeasureDisk);
    QCOMPARE(docker.committed.apps, 1);
    QCOMPARE(docker.committed.memoryBytes, asks);

    const core::DeployView crowded = deployAndWait(u"crowded"_s);
    QCOMPARE(crowded.record.status, core::DeployStatus::Failed);
    QCOMPARE(crowded.record.failedStep, u"plan"_s);
    const QString expected = u"asks %1 memory; docker has %2, %1 committed to 1 app: %3 free"_s.arg(
        core::formatMemory(asks), core::formatMemory(total), core::formatMemory(total - asks));
    QVERIFY2(crowded.record.error.contains(expected), qPrintable(crowded.record.error + u" / "_s + expected));
    for (const core::StepRecord &step : crowded.steps)
        QVERIFY2(step.name != u"build"_s, "a refused deploy was built");
    auto images = m_fx->docker().images({});
    QVERIFY(images);
    for (const adapters::ImageInfo &image : *images)
        for (const QString &tag : image.tags)
            QVERIFY2(!tag.startsWith(u"pando/crowded:"_s), qPrintable(tag));

    // A redeploy of roomy replaces what it holds: its own version does not count against it.
    const core::DeployView again = deployAndWait(u"roomy"_s);
    QVERIFY2(again.record.status == core::DeployStatus::Succeeded, qPrintable(again.record.error));

    // Make room for the next test.
    QVERIFY(m_fx->engine().removeApp(u"roomy"_s, core::Actor{}, core::Engine::ServiceData::Delete));
    QVERIFY(m_fx->engine().removeApp(u"crowded"_s, core::Actor{}, core::Engine::ServiceData::Delete));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(u"roomy"_s) && !m_fx->engine().app(u"crowded"_s), 60000);
}

void TestEngineCapacity::anAppPastItsDiskLimitIsStoppedAndStaysStopped()
{
    // Each writes 20 MiB: hog may write 10 MiB (stop), tidy 50 MiB, loud 10 MiB (warn).
    QVERIFY(m_fx->engine().createApp(spec(u"hog"_s, m_repo, u"{ memory: 64Mi, disk: 10Mi }"_s), core::Actor{}));
    QVERIFY(m_fx->engine().createApp(spec(u"tidy"_s, m_repo, u"{ memory: 64Mi, disk: 50Mi }"_s), core::Actor{}));
    QVERIFY(m_fx->engine().createApp(spec(u"loud"_s, m_repo, u"{ memory: 64Mi, disk: 10Mi, diskPolicy: warn }"_s),
                                     core::Actor{}));
    for (const QString &app : {u"hog"_s, u"tidy"_s, u"loud"_s}) {
        const core::DeployView d = deployAndWait(app);
        QVERIFY2(d.record.status == core::DeployStatus::Succeeded, qPrintable(app + u": "_s + d.record.error));
    }
    // What Docker measures for tidy (SizeRw): the 20 MiB it wrote, under its 50 MiB.
    const QString tidyDeploy = m_fx->engine().app(u"tidy"_s)->record.currentDeploy;
    auto tidyContainers = m_fx->docker().containers(m_fx->installLabels(u"tidy"_s, tidyDeploy));
    QVERIFY(tidyContainers && !tidyContainers->isEmpty());
    auto used = m_fx->docker().diskUsage(tidyContainers->first().id);
    QVERIFY2(used, qPrintable(used ? QString() : used.error().text()));
    QVERIFY2(*used >= 20 * Mi && *used < 50 * Mi, qPrintable(QString::number(*used)));

    auto changes = m_fx->engine().checkDiskLimits();
    QVERIFY2(changes, qPrintable(changes ? QString() : changes.error().text()));
    const QString said = changes->join(u'\n');
    QVERIFY2(said.contains(u"stopped hog"_s) && said.contains(u"warned loud"_s) && !said.contains(u"tidy"_s),
             qPrintable(said));

    QCOMPARE(containerState(u"hog"_s), u"exited"_s);
    QCOMPARE(containerState(u"tidy"_s), u"running"_s);
    QCOMPARE(containerState(u"loud"_s), u"running"_s);
    auto hog = m_fx->engine().app(u"hog"_s);
    QVERIFY(hog);
    QCOMPARE(hog->status, core::AppStatus::Stopped);
    QVERIFY2(hog->statusReason.startsWith(u"stopped: wrote "_s) &&
                 hog->statusReason.endsWith(u"over its disk limit of 10Mi"_s),
             qPrintable(hog->statusReason));
    QVERIFY2(m_fx->engine().app(u"loud"_s)->statusReason.startsWith(u"warned: "_s),
             qPrintable(m_fx->engine().app(u"loud"_s)->statusReason));
    QVERIFY(m_fx->engine().app(u"tidy"_s)->statusReason.isEmpty());

    // Told: one event each for hog and loud, and audit lines.
    {
        QMutexLocker lock(&m_eventsMutex);
        QStringList told;
        for (const core::Event &e : std::as_const(m_events))
            if (e.type == core::EventType::AppDiskExceeded)
                told << e.app + u'/' + e.data.value(u"action"_s).toString();
        told.sort();
        QCOMPARE(told, (QStringList{u"hog/stopped"_s, u"loud/warned"_s}));
    }
    core::AuditRepository::Filter filter;
    filter.action = u"app.disk.exceed"_s;
    auto lines = m_fx->engine().auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 2);

    // The reconciler does not fight it; a second check tells nobody again.
    auto reconciled = m_fx->engine().reconcileOnce();
    QVERIFY(reconciled);
    QVERIFY2(!reconciled->join(u'\n').contains(u"hog"_s), qPrintable(reconciled->join(u'\n')));
    QCOMPARE(containerState(u"hog"_s), u"exited"_s);
    auto second = m_fx->engine().checkDiskLimits();
    QVERIFY(second);
    QVERIFY2(second->isEmpty(), qPrintable(second->join(u'\n')));

    // An explicit start runs it again; still over its limit, the next check stops it again.
    auto started = m_fx->engine().startApp(u"hog"_s, core::Actor{u"user:alice"_s, {}, {}});
    QVERIFY2(started, qPrintable(started ? QString() : started.error().text()));
    QCOMPARE(containerState(u"hog"_s), u"running"_s);
    QVERIFY(m_fx->engine().app(u"hog"_s)->statusReason.isEmpty());
    auto third = m_fx->engine().checkDiskLimits();
    QVERIFY(third);
    QVERIFY2(third->join(u'\n').contains(u"stopped hog"_s), qPrintable(third->join(u'\n')));
    QCOMPARE(containerState(u"hog"_s), u"exited"_s);

    // A new deploy starts with a clean slate (and is stopped again at the next check).
    const core::DeployView redeploy = deployAndWait(u"hog"_s);
    QVERIFY2(redeploy.record.status == core::DeployStatus::Succeeded, qPrintable(redeploy.record.error));
    QCOMPARE(containerState(u"hog"_s), u"running"_s);
    QVERIFY(m_fx->engine().app(u"hog"_s)->statusReason.isEmpty());
}

void TestEngineCapacity::aStoppedAppStaysStoppedUntilStartedOrDeployed()
{
    const core::Actor alice{u"alice"_s, {}, {}};
    core::Engine *engine = &m_fx->engine();
    auto never = engine->stopApp(u"nothing"_s, alice);
    QVERIFY(!never);
    QCOMPARE(never.error().code, ErrorCode::NotFound);
    QVERIFY(engine->createApp(spec(u"pausable"_s, m_repo, u"{}"_s), core::Actor{}));
    auto undeployed = engine->stopApp(u"pausable"_s, alice);
    QVERIFY(!undeployed);
    QCOMPARE(undeployed.error().code, ErrorCode::Conflict);
    QVERIFY2(undeployed.error().hint.contains(u"pando deploy pausable"_s), qPrintable(undeployed.error().hint));

    const core::DeployView first = deployAndWait(u"pausable"_s);
    QVERIFY2(first.record.status == core::DeployStatus::Succeeded, qPrintable(first.record.error));
    const QUrl url(engine->app(u"pausable"_s)->url);
    QCOMPARE(httpGet(url).status, 200);

    auto stopped = engine->stopApp(u"pausable"_s, alice);
    QVERIFY2(stopped, qPrintable(stopped ? QString() : stopped.error().text()));
    QCOMPARE(stopped->status, core::AppStatus::Stopped);
    QVERIFY2(stopped->statusReason.startsWith(u"stopped by alice, 20"_s) && stopped->statusReason.endsWith(u" UTC"_s),
             qPrintable(stopped->statusReason));
    QCOMPARE(containerState(u"pausable"_s), u"exited"_s);
    QVERIFY(httpGet(url, 1000).status != 200);
    {
        QMutexLocker lock(&m_eventsMutex);
        const bool told = std::ranges::any_of(m_events, [](const core::Event &e) {
            return e.type == core::EventType::AppStopped && e.app == u"pausable"_s &&
                   e.data.value(u"by"_s).toString() == u"alice"_s;
        });
        QVERIFY(told);
    }
    core::AuditRepository::Filter filter;
    filter.action = u"app.stop"_s;
    auto lines = engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);
    QCOMPARE(lines->first().actor, u"alice"_s);
    QCOMPARE(lines->first().outcome, u"success"_s);

    // Neither the reconciler nor a restart of Pando starts it again.
    auto reconciled = engine->reconcileOnce();
    QVERIFY(reconciled);
    QVERIFY2(!reconciled->join(u'\n').contains(u"pausable"_s), qPrintable(reconciled->join(u'\n')));
    const QString dataDir = m_fx->dataDir();
    m_fx->stop();
    QVERIFY(m_fx->start(dataDir, [](core::EngineOptions &o) {
        o.reconcileIntervalMs = 0;
        o.diskCheckIntervalMs = 0;
    }));
    engine = &m_fx->engine();
    QVERIFY(engine->reconcileOnce());
    QCOMPARE(containerState(u"pausable"_s), u"exited"_s);
    QCOMPARE(engine->app(u"pausable"_s)->status, core::AppStatus::Stopped);
    // Stopping it again holds it as it is.
    QVERIFY(engine->stopApp(u"pausable"_s, alice));

    // A start runs it and ends the hold.
    auto started = engine->startApp(u"pausable"_s, alice);
    QVERIFY2(started, qPrintable(started ? QString() : started.error().text()));
    QCOMPARE(started->status, core::AppStatus::Running);
    QVERIFY(started->statusReason.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(QUrl(engine->app(u"pausable"_s)->url)).status, 200, 10000);

    // A restart stops and starts the same container; it also runs a stopped one.
    auto before = m_fx->docker().inspect(engine->app(u"pausable"_s)->lastDeploy->containerId);
    QVERIFY(before);
    auto restarted = engine->restartApp(u"pausable"_s, alice);
    QVERIFY2(restarted, qPrintable(restarted ? QString() : restarted.error().text()));
    QCOMPARE(restarted->status, core::AppStatus::Running);
    auto after = m_fx->docker().inspect(before->id);
    QVERIFY(after);
    QCOMPARE(after->state, u"running"_s);
    QVERIFY2(after->startedAt != before->startedAt, qPrintable(after->startedAt));
    QVERIFY(engine->stopApp(u"pausable"_s, alice));
    auto restartedStopped = engine->restartApp(u"pausable"_s, alice);
    QVERIFY2(restartedStopped, qPrintable(restartedStopped ? QString() : restartedStopped.error().text()));
    QCOMPARE(containerState(u"pausable"_s), u"running"_s);

    // A new deploy of a stopped app serves: the hold was about the version it stopped.
    QVERIFY(engine->stopApp(u"pausable"_s, alice));
    const core::DeployView second = deployAndWait(u"pausable"_s);
    QVERIFY2(second.record.status == core::DeployStatus::Succeeded, qPrintable(second.record.error));
    QCOMPARE(containerState(u"pausable"_s), u"running"_s);
    QVERIFY(engine->reconcileOnce());
    QCOMPARE(containerState(u"pausable"_s), u"running"_s);
    QCOMPARE(engine->app(u"pausable"_s)->status, core::AppStatus::Running);
}

QTEST_GUILESS_MAIN(TestEngineCapacity)
#include "tst_enginecapacity.moc"
