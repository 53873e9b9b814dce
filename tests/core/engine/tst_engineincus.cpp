// The deploy pipeline end to end with `runtime: incus`: real git, Docker's builder, a real
// incusd, the loopback router and SQLite, through the RuntimeSet pandod uses. The guarantees are
// Docker's: the health check before the switch, the old version serving when the new one fails,
// crashed instances restarted, orphans removed, logs streamed, nothing left after removal.

#include "adapters/runtime/incus/incusruntime.h"
#include "adapters/runtime/set/runtimeset.h"
#include "core/deploy/services.h"
#include "core/logstream/loghub.h"
#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/incus/incusharness.h"
#include "tests/support/component.h"
#include "tests/support/tarfiles.h"
#include "tests/support/vocabtesting.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <atomic>
#include <thread>

using namespace pando;
using namespace pando::test;

class TestEngineIncus : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void deployServes();
    void logsAreStreamed();
    void commandsRunInTheInstance();
    void redeployDropsNoRequest();
    void replacedInstanceGoes();
    void unchangedCommitReusesItsImage();
    void failedHealthKeepsOldVersion();
    void crashedInstanceIsRestarted();
    void unownedInstanceIsRemoved();
    void whatIncusCannotDoIsRefusedAtPlan();
    void volumesOutliveInstances();
    void removalLeavesNothingBehind();

private:
    QString deployAndWait(const QString &app, const QString &ref = {});
    QUrl appUrl(const QString &app);
    adapters::Labels installLabels(const QString &app = {}, const QString &deploy = {}) const
    {
        return m_fx->installLabels(app, deploy);
    }

    std::unique_ptr<EngineFixture> m_fx;
    std::shared_ptr<adapters::incus::IncusRuntime> m_incus;
    QString m_repo;
};

namespace {
const QString IncusLine = QStringLiteral("runtime: incus\n");
}

void TestEngineIncus::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), QStringLiteral("Docker Engine: ") + why);
    PANDO_REQUIRE_COMPONENT(IncusHarness::available(&why), QStringLiteral("Incus: ") + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), QStringLiteral("git"));
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    m_incus = std::make_shared<adapters::incus::IncusRuntime>();
    m_fx->makeRuntime = [this](const std::shared_ptr<adapters::docker::DockerRuntime> &docker) {
        auto set = std::make_shared<adapters::RuntimeSet>();
        set->add(QStringLiteral("docker"), docker);
        set->add(QStringLiteral("incus"), m_incus);
        return set;
    };
    QVERIFY(m_fx->git().isValid());
    m_repo = m_fx->git().createRepository(QStringLiteral("hello"));
    QVERIFY(!m_repo.isEmpty());
    QVERIFY(!m_fx->git().commit(QStringLiteral("hello"), QStringLiteral("main"), helloApp("v1")).isEmpty());
    QVERIFY(m_fx->start());
}

void TestEngineIncus::cleanupTestCase()
{
    if (!m_fx)
        return;
    const adapters::Labels mine = installLabels();
    m_fx.reset();
    if (auto left = m_incus->containers(mine))
        for (const auto &c : *left)
            discardResult(m_incus->remove(c.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
    if (auto volumes = m_incus->volumes(mine))
        for (const auto &v : *volumes)
            discardResult(m_incus->removeVolume(v.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
    if (auto images = m_incus->images(mine))
        for (const auto &i : *images)
            discardResult(m_incus->removeImage(i.id),
                          "best-effort clean-up; a leftover carries only this test's install label");
}

QString TestEngineIncus::deployAndWait(const QString &app, const QString &ref)
{
    auto deploy = m_fx->engine().deploy(app, ref, core::Actor{});
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    return m_fx->waitDeploy(deploy->id).record.id;
}

QUrl TestEngineIncus::appUrl(const QString &app)
{
    auto view = m_fx->engine().app(app);
    return view ? QUrl(view->url) : QUrl();
}

void TestEngineIncus::deployServes()
{
    auto created = m_fx->engine().createApp(helloSpec(QStringLiteral("hello"), m_repo, IncusLine), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    QCOMPARE(created->spec.runtime, QStringLiteral("incus"));

    const QString id = deployAndWait(QStringLiteral("hello"));
    auto view = m_fx->engine().deployView(id);
    QVERIFY(view);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));
    QVERIFY2(view->record.containerId.startsWith(QLatin1String("incus:pando-hello-")),
             qPrintable(view->record.containerId));
    QVERIFY(view->record.imageId.startsWith(QLatin1String("incus:")));

    const HttpAnswer answer = httpGet(appUrl(QStringLiteral("hello")));
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.trimmed(), QByteArray("v1"));

    // It runs in Incus, labelled, and not in Docker.
    auto instances = m_incus->containers(installLabels(QStringLiteral("hello"), id));
    QVERIFY(instances);
    QCOMPARE(instances->size(), 1);
    QCOMPARE(instances->first().state, QStringLiteral("running"));
    QCOMPARE(m_fx->docker().containers(installLabels(QStringLiteral("hello")))->size(), 0);
    // The limit the spec asked for (64Mi) is the instance's.
    auto instance = m_incus->client().instance(instances->first().id);
    QVERIFY(instance);
    QCOMPARE(instance->config.value(QStringLiteral("limits.memory")), QStringLiteral("67108864B"));
}

void TestEngineIncus::logsAreStreamed()
{
    core::LogHub *hub = m_fx->engine().logs();
    QVERIFY(hub);
    auto subscription = hub->subscribe(QStringLiteral("hello"), 100);
    QSignalSpy lines(subscription.get(), &core::LogSubscription::line);
    // The app's instance writes to its console; exec a write there and see it arrive.
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    QVERIFY(app);
    auto instances = m_incus->containers(installLabels(QStringLiteral("hello"), app->record.currentDeploy));
    QVERIFY(instances && instances->size() == 1);
    auto written = m_incus->client().exec(
        instances->first().id,
        {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo streamed-line >/dev/console")}, 10000);
    QVERIFY2(written && written->exitCode == 0,
             qPrintable(written ? QString::fromUtf8(written->err) : written.error().text()));
    auto seen = [&lines] {
        for (const QList<QVariant> &args : std::as_const(lines))
            if (args.first().value<adapters::LogLine>().text == QLatin1String("streamed-line"))
                return true;
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(seen(), 10000);
}

// `pando apps exec` on Incus: the command runs in the instance the app serves from, attached,
// and is audited as on Docker.
void TestEngineIncus::commandsRunInTheInstance()
{
    QByteArray out;
    auto code = m_fx->engine().exec(
        QStringLiteral("hello"),
        {{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("cat; hostname; exit 4")}}, core::Actor{},
        CancelToken(),
        [](std::shared_ptr<adapters::ExecInput> input) {
            input->write("typed\n");
            input->closeInput();
        },
        [&out](int, QByteArrayView data) { out += data; });
    QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
    QCOMPARE(*code, 4);
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    QVERIFY(app);
    auto serving = m_incus->containers(installLabels(QStringLiteral("hello"), app->record.currentDeploy));
    QVERIFY(serving && serving->size() == 1);
    QCOMPARE(out, "typed\n" + serving->first().id.toUtf8() + "\n");
    core::AuditRepository::Filter filter;
    filter.action = QStringLiteral("app.exec");
    auto lines = m_fx->engine().auditLines(filter);
    QVERIFY(lines && !lines->isEmpty());
    QCOMPARE(lines->first().object, QStringLiteral("app/hello"));
}

void TestEngineIncus::redeployDropsNoRequest()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    QVERIFY(!m_fx->git().commit(QStringLiteral("hello"), QStringLiteral("main"), helloApp("v2")).isEmpty());
    std::atomic_bool stop = false;
    std::atomic_int ok = 0;
    std::atomic_int failed = 0;
    std::thread poller([&] {
        while (!stop)
            (httpGet(url, 5000).status == 200 ? ok : failed)++;
    });
    const QString id = deployAndWait(QStringLiteral("hello"));
    QTest::qWait(500);
    stop = true;
    poller.join();
    auto view = m_fx->engine().deployView(id);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));
    QVERIFY2(failed == 0, qPrintable(QStringLiteral("%1 of %2 requests failed").arg(int(failed)).arg(ok + failed)));
    QVERIFY(ok > 10);
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));
}

// Its own function, so that a slow delete does not eat the redeploy's time budget.
void TestEngineIncus::replacedInstanceGoes()
{
    // The old instance goes in seconds, but Incus's delete has been seen to take over a minute when
    // a machine's disk is busy (the engine waits 60 s, and Incus finishes the operation anyway).
    QTRY_COMPARE_WITH_TIMEOUT(m_incus->containers(installLabels(QStringLiteral("hello")))->size(), 1, 180000);
}

void TestEngineIncus::unchangedCommitReusesItsImage()
{
    // A redeploy of the commit that serves builds nothing: the image is used again.
    auto serving = m_fx->engine().deployView(m_fx->engine().app(QStringLiteral("hello"))->record.currentDeploy);
    QVERIFY(serving);
    const QString id = deployAndWait(QStringLiteral("hello"));
    auto view = m_fx->engine().deployView(id);
    QVERIFY2(view->record.status == core::DeployStatus::Succeeded, qPrintable(view->record.error));
    QCOMPARE(view->record.commit, serving->record.commit);
    QCOMPARE(view->record.imageId, serving->record.imageId);
    QString buildDetail;
    for (const auto &step : std::as_const(view->steps))
        if (step.name == QLatin1String("build"))
            buildDetail = step.detail;
    QVERIFY2(buildDetail.contains(QStringLiteral("built by %1 from the same commit").arg(serving->record.id)),
             qPrintable(buildDetail));
    // The image carries this deploy's tag too, so it stays while this version serves.
    auto images = m_incus->images(installLabels());
    QVERIFY(images);
    bool tagged = false;
    for (const auto &image : std::as_const(*images))
        tagged = tagged || image.tags.contains(core::imageTag(QStringLiteral("hello"), id));
    QVERIFY(tagged);
    QCOMPARE(httpGet(appUrl(QStringLiteral("hello"))).body.trimmed(), QByteArray("v2"));
}

void TestEngineIncus::failedHealthKeepsOldVersion()
{
    const QUrl url = appUrl(QStringLiteral("hello"));
    GitFiles files = helloApp("v3");
    files[QStringLiteral("Dockerfile")].content =
        "FROM pando/busybox:latest\nCMD [\"/bin/sh\", \"-c\", \"echo giving up; exit 3\"]\n";
    QVERIFY(!m_fx->git().commit(QStringLiteral("hello"), QStringLiteral("broken-health"), files).isEmpty());
    const QString id = deployAndWait(QStringLiteral("hello"), QStringLiteral("broken-health"));
    auto view = m_fx->engine().deployView(id);
    QCOMPARE(view->record.status, core::DeployStatus::Failed);
    QVERIFY2(view->record.failedStep == QLatin1String("health"), qPrintable(view->record.error));
    QVERIFY2(view->record.error.contains(QLatin1String("exit code 3")), qPrintable(view->record.error));
    QVERIFY2(view->record.error.contains(QLatin1String("giving up")), qPrintable(view->record.error));
    QCOMPARE(httpGet(url).body.trimmed(), QByteArray("v2"));
    QCOMPARE(m_incus->containers(installLabels(QStringLiteral("hello"), id))->size(), 0);
    QVERIFY(m_incus->images(installLabels())->size() >= 1);
    auto images = m_incus->images(installLabels());
    for (const auto &image : std::as_const(*images))
        QVERIFY2(!image.tags.contains(core::imageTag(QStringLiteral("hello"), id)),
                 "the failed version's image is gone");
}

void TestEngineIncus::crashedInstanceIsRestarted()
{
    auto app = m_fx->engine().app(QStringLiteral("hello"));
    auto instances = m_incus->containers(installLabels(QStringLiteral("hello"), app->record.currentDeploy));
    QCOMPARE(instances->size(), 1);
    const QString name = instances->first().id;
    QVERIFY(m_incus->stop(name, 0));
    QCOMPARE(m_incus->inspect(name)->state, QStringLiteral("exited"));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY(changes);
    QVERIFY2(changes->join(QLatin1Char('\n')).contains(QLatin1String("restarted hello")),
             qPrintable(changes->join(QLatin1Char('\n'))));
    QCOMPARE(m_incus->inspect(name)->state, QStringLiteral("running"));
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(appUrl(QStringLiteral("hello"))).status, 200, 10000);

    // Gone altogether: recreated from the same image.
    QVERIFY(m_incus->remove(name));
    changes = m_fx->engine().reconcileOnce();
    QVERIFY2(changes && changes->join(QLatin1Char('\n')).contains(QLatin1String("recreated hello")),
             qPrintable(changes ? changes->join(QLatin1Char('\n')) : changes.error().text()));
    QTRY_COMPARE_WITH_TIMEOUT(httpGet(appUrl(QStringLiteral("hello"))).body.trimmed(), QByteArray("v2"), 10000);
}

void TestEngineIncus::unownedInstanceIsRemoved()
{
    auto base = IncusHarness::ensureBaseImage();
    QVERIFY(base);
    adapters::ContainerSpec spec;
    spec.name = QStringLiteral("pando-ghost-") + m_fx->installId();
    spec.image = *base;
    spec.command = {QStringLiteral("sleep"), QStringLiteral("300")};
    spec.labels = installLabels(QStringLiteral("ghost"), QStringLiteral("d000000000000"));
    spec.labels.insert(QLatin1String(adapters::LabelManaged), QStringLiteral("true"));
    auto id = m_incus->run(spec);
    QVERIFY2(id, qPrintable(id ? QString() : id.error().text()));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY(changes);
    QCOMPARE(m_incus->inspect(*id).error().code, ErrorCode::NotFound);
    QCOMPARE(httpGet(appUrl(QStringLiteral("hello"))).status, 200);
}

void TestEngineIncus::whatIncusCannotDoIsRefusedAtPlan()
{
    // No egress isolation on Incus: the plan says so and nothing is built.
    auto created = m_fx->engine().createApp(
        helloSpec(QStringLiteral("quiet"), m_repo, IncusLine + QStringLiteral("network:\n  egress: none\n")),
        core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const QString id = deployAndWait(QStringLiteral("quiet"));
    auto view = m_fx->engine().deployView(id);
    QCOMPARE(view->record.status, core::DeployStatus::Failed);
    QCOMPARE(view->record.failedStep, QStringLiteral("plan"));
    QVERIFY2(view->record.error.contains(QLatin1String("incus")), qPrintable(view->record.error));
    QVERIFY(m_fx->engine().removeApp(QStringLiteral("quiet"), core::Actor{}));

    // A name Incus would refuse for the instance: said at plan, with the longest name that fits.
    const QString longName = QString(50, u'a');
    created = m_fx->engine().createApp(helloSpec(longName, m_repo, IncusLine), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const QString longId = deployAndWait(longName);
    view = m_fx->engine().deployView(longId);
    QCOMPARE(view->record.failedStep, QStringLiteral("plan"));
    QVERIFY2(view->record.error.contains(QLatin1String("at most 63 characters")), qPrintable(view->record.error));
    QVERIFY(m_fx->engine().removeApp(longName, core::Actor{}));

    // An unknown runtime is a spec error naming the field.
    auto typo = m_fx->engine().createApp(helloSpec(QStringLiteral("typo"), m_repo, QStringLiteral("runtime: incsu\n")),
                                         core::Actor{});
    QVERIFY(!typo);
    QCOMPARE(typo.error().where, QStringLiteral("runtime"));
    QVERIFY2(typo.error().hint.contains(QLatin1String("incus")), qPrintable(typo.error().hint));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("quiet")) && !m_fx->engine().app(longName), 60000);
}

// An app's run.volumes on Incus: a custom storage volume of its own, labelled, which each new
// instance mounts again (the app appends to /data/boots at every start and serves the file), and
// which goes when the app is removed with its data.
void TestEngineIncus::volumesOutliveInstances()
{
    const auto counting = [](const QByteArray &version) {
        GitFiles files = helloApp(version);
        files.insert(QStringLiteral("Dockerfile"),
                     GitFile{"FROM pando/busybox:latest\nCOPY www /www\nEXPOSE 8080\n"
                             "CMD [\"/bin/sh\", \"-c\", \"echo " +
                             version +
                             " >> /data/boots && cp /data/boots /www/index.html && exec /bin/httpd -f -p 8080 -h "
                             "/www\"]\n"});
        files.insert(QStringLiteral("www/index.html"), GitFile{version + "\n"});
        return files;
    };
    QVERIFY(!m_fx->git().createRepository(QStringLiteral("notes")).isEmpty());
    QVERIFY(!m_fx->git().commit(QStringLiteral("notes"), QStringLiteral("main"), counting("v1")).isEmpty());
    const QByteArray spec = QStringLiteral("name: notes\nruntime: incus\nsource:\n  repo: %1\nrun:\n  port: 8080\n"
                                           "  resources: { memory: 64Mi }\n  volumes:\n"
                                           "    - {name: data, path: /data, size: 64Mi}\nhealth:\n  timeout: 20s\n")
                                .arg(m_fx->git().url(QStringLiteral("notes")))
                                .toUtf8();
    auto created = m_fx->engine().createApp(spec, core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
    const auto served = [this] {
        return httpGet(appUrl(QStringLiteral("notes"))).body;
    };

    auto first = m_fx->engine().deployView(deployAndWait(QStringLiteral("notes")));
    QVERIFY(first);
    QVERIFY2(first->record.status == core::DeployStatus::Succeeded, qPrintable(first->record.error));
    QCOMPARE(served(), QByteArray("v1\n"));
    auto made = m_incus->volumes(installLabels(QStringLiteral("notes")));
    QVERIFY2(made, qPrintable(made ? QString() : made.error().text()));
    QCOMPARE(made->size(), 1);
    QCOMPARE(made->first().name, QStringLiteral("data"));
    QCOMPARE(m_fx->docker().volumes(installLabels(QStringLiteral("notes")))->size(), 0); // not Docker's

    QVERIFY(!m_fx->git().commit(QStringLiteral("notes"), QStringLiteral("main"), counting("v2")).isEmpty());
    auto second = m_fx->engine().deployView(deployAndWait(QStringLiteral("notes")));
    QVERIFY(second);
    QVERIFY2(second->record.status == core::DeployStatus::Succeeded, qPrintable(second->record.error));
    QCOMPARE(served(), QByteArray("v1\nv2\n"));

    // Its backup is Incus's volume backup tarball, the files under backup/volume/; the backup
    // Incus made for it is gone again.
    auto backup = m_fx->engine().backupVolumeToFile(QStringLiteral("notes"), QStringLiteral("data"), CancelToken(),
                                                    core::Actor{});
    QVERIFY2(backup, qPrintable(backup ? QString() : backup.error().text()));
    const auto removeBackup = qScopeGuard([&backup] { QFile::remove(backup->path); });
    const QMap<QString, QByteArray> files = tarFiles(backup->path);
    QVERIFY2(files.contains(QStringLiteral("backup/index.yaml")), qPrintable(files.keys().join(u' ')));
    QCOMPARE(files.value(QStringLiteral("backup/volume/boots")), QByteArray("v1\nv2\n"));
    const QString volumeId = made->first().id;

    // Restored from that tarball: two starts since are gone, the one after the restore counts,
    // and the volume is still the app's.
    for (int i = 0; i < 2; ++i) {
        auto restarted = m_fx->engine().restartApp(QStringLiteral("notes"), core::Actor{});
        QVERIFY2(restarted, qPrintable(restarted ? QString() : restarted.error().text()));
    }
    QTRY_COMPARE_WITH_TIMEOUT(served(), QByteArray("v1\nv2\nv2\nv2\n"), 20000);
    auto restored = m_fx->engine().restoreVolumeFromFile(QStringLiteral("notes"), QStringLiteral("data"), backup->path,
                                                         CancelToken(), core::Actor{});
    QVERIFY2(restored, qPrintable(restored ? QString() : restored.error().text()));
    QTRY_COMPARE_WITH_TIMEOUT(served(), QByteArray("v1\nv2\nv2\n"), 20000);
    auto again = m_incus->volumes(installLabels(QStringLiteral("notes")));
    QVERIFY(again);
    QCOMPARE(again->size(), 1);
    QCOMPARE(again->first().id, volumeId);
    QCOMPARE(again->first().name, QStringLiteral("data"));
    auto left =
        m_incus->client().get(QStringLiteral("/1.0/storage-pools/default/volumes/custom/%1/backups").arg(volumeId));
    QVERIFY2(left, qPrintable(left ? QString() : left.error().text()));
    QVERIFY2(left->toArray().isEmpty(), qPrintable(QString::fromUtf8(QJsonDocument(left->toArray()).toJson())));

    QVERIFY(m_fx->engine().removeApp(QStringLiteral("notes"), core::Actor{}, core::Engine::ServiceData::Delete));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("notes")), 60000);
    auto gone = m_incus->volumes(installLabels(QStringLiteral("notes")));
    QVERIFY(gone);
    QVERIFY(gone->isEmpty());
}

void TestEngineIncus::removalLeavesNothingBehind()
{
    QVERIFY(m_fx->engine().removeApp(QStringLiteral("hello"), core::Actor{}));
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(QStringLiteral("hello")), 60000);
    QCOMPARE(m_incus->containers(installLabels(QStringLiteral("hello")))->size(), 0);
    auto images = m_incus->images(installLabels());
    QVERIFY(images);
    for (const auto &image : std::as_const(*images))
        for (const QString &tag : image.tags)
            QVERIFY2(!tag.startsWith(QLatin1String("pando/hello:")), qPrintable(tag));
    QVERIFY(!m_fx->router().route(QStringLiteral("hello")));
}

QTEST_GUILESS_MAIN(TestEngineIncus)
#include "tst_engineincus.moc"
