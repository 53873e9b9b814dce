// Capacity against a fake runtime: what apps with a serving deploy commit (their request, or
// the policy's default; service slots), what a deploy is refused for at plan time with the
// figures, that the app's own serving version does not count against its redeploy, and that a
// runtime that cannot measure disk use refuses disk limits.
#include "core/capacity/capacity.h"
#include "core/state/repositories.h"
#include "tests/support/vocabtesting.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

constexpr qint64 Gi = 1024LL * 1024 * 1024;
constexpr qint64 Mi = 1024LL * 1024;

// Answers capabilities and room only: capacity asks nothing else.
class FakeRuntime : public adapters::Runtime {
public:
    QString kind = u"incus"_s;
    qint64 memory = 4 * Gi;
    double cpus = 4;
    qint64 disk = 10 * Gi;
    bool measuresDisk = false;

    adapters::RuntimeCapabilities capabilities() override
    {
        adapters::RuntimeCapabilities caps;
        caps.kind = kind;
        caps.maxMemoryBytes = memory;
        caps.maxCpus = cpus;
        caps.canMeasureDisk = measuresDisk;
        return caps;
    }
    Result<QList<adapters::RuntimeRoom>> rooms() override
    {
        adapters::RuntimeRoom room;
        room.kind = kind;
        room.cpus = cpus;
        room.memoryBytes = memory;
        room.memoryAvailableBytes = memory / 2;
        room.diskBytes = disk;
        room.disk = u"storage pool default (dir)"_s;
        room.canMeasureDisk = measuresDisk;
        return QList<adapters::RuntimeRoom>{room};
    }
    Status ping() override { return {}; }
    Result<QString> build(const adapters::BuildRequest &, const CancelToken &,
                          const std::function<void(const QString &)> &) override
    {
        return unused();
    }
    Result<QString> run(const adapters::ContainerSpec &) override { return unused(); }
    Result<adapters::ContainerInfo> inspect(const QString &) override { return unused(); }
    Result<QList<adapters::ContainerInfo>> containers(const adapters::Labels &) override { return unused(); }
    Status start(const QString &) override { return unused(); }
    Status stop(const QString &, int) override { return unused(); }
    Status remove(const QString &) override { return unused(); }
    Result<QList<adapters::ImageInfo>> images(const adapters::Labels &) override { return unused(); }
    Status removeImage(const QString &) override { return unused(); }
    Status logs(const QString &, int, bool, const CancelToken &,
                const std::function<void(const adapters::LogLine &)> &) override
    {
        return unused();
    }

private:
    static std::unexpected<Error> unused() { return fail(ErrorCode::Internal, u"not used by capacity"_s); }
};

QString specYaml(const QString &name, const QString &resources, const QString &extra = {})
{
    return u"name: %1\nsource:\n  repo: https://git.example/%1.git\nrun:\n  port: 8080\n  resources: %2\n%3"_s.arg(
        name, resources, extra);
}

} // namespace

class TestCapacity : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init()
    {
        m_tmp = std::make_unique<QTemporaryDir>();
        m_db = std::make_unique<Database>(
            DatabaseConfig::fromUrl(u"sqlite://"_s + m_tmp->path() + u"/pando.db"_s).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    }

    void committedSumsServingAppsAndTheirServices()
    {
        serve(u"one"_s, specYaml(u"one"_s, u"{ memory: 1Gi, cpus: 1.5 }"_s));
        // No request: the policy's default memory; two service slots on Docker.
        serve(u"two"_s,
              specYaml(u"two"_s, u"{ }"_s, u"services:\n  db: { kind: postgres }\n  cache: { kind: redis }\n"_s));
        serve(u"big"_s, specYaml(u"big"_s, u"{ memory: 2Gi, disk: 3Gi }"_s, u"runtime: docker\n"_s));
        // Created but never deployed: commits nothing.
        QVERIFY(
            AppRepository(*m_db).create(AppRecord{u"idle"_s, specYaml(u"idle"_s, u"{ memory: 8Gi }"_s), 0, {}, 1, 1}));

        HostPolicy policy;
        auto byKind = capacity::committed(*m_db, policy, u"incus"_s);
        QVERIFY2(byKind, qPrintable(byKind ? QString() : byKind.error().text()));
        const capacity::Commitment incus = byKind->value(u"incus"_s);
        QCOMPARE(incus.apps, 2);
        QCOMPARE(incus.memoryBytes, 1 * Gi + policy.defaultMemoryBytes);
        QCOMPARE(incus.cpus, 1.5);
        QCOMPARE(incus.services, 0);
        const capacity::Commitment docker = byKind->value(u"docker"_s);
        QCOMPARE(docker.apps, 1);
        QCOMPARE(docker.services, 2);
        QCOMPARE(docker.memoryBytes, 2 * Gi + 2 * policy.serviceMemoryBytes);
        QCOMPARE(docker.diskBytes, 3 * Gi);

        // The report puts the runtime's own figures beside them.
        FakeRuntime runtime;
        auto report = capacity::report(*m_db, runtime, policy);
        QVERIFY(report);
        QCOMPARE(report->size(), 1);
        QCOMPARE(report->first().room.memoryBytes, 4 * Gi);
        QCOMPARE(report->first().committed.apps, 2);
        QVERIFY(report->first().isDefault);
        const QJsonObject json = capacity::toJson(*report);
        const QJsonObject memory = json.value(u"runtimes"_s).toArray().first().toObject().value(u"memory"_s).toObject();
        QCOMPARE(memory.value(u"committed"_s).toInteger(), 1 * Gi + policy.defaultMemoryBytes);
        QCOMPARE(memory.value(u"available"_s).toInteger(), 2 * Gi);
    }

    void deploysInFlightCountAlready()
    {
        // A new app whose first deploy runs, and a serving app being redeployed with more: both
        // count what they are about to run, so a deploy planned beside them sees it.
        QVERIFY(AppRepository(*m_db).create(
            AppRecord{u"fresh"_s, specYaml(u"fresh"_s, u"{ memory: 1Gi }"_s), 0, {}, 1, 1}));
        QVERIFY(DeployRepository(*m_db).create(DeployRecord{.id = u"d-fresh"_s,
                                                            .app = u"fresh"_s,
                                                            .status = core::DeployStatus::Running,
                                                            .specYaml = specYaml(u"fresh"_s, u"{ memory: 1Gi }"_s)}));
        serve(u"grows"_s, specYaml(u"grows"_s, u"{ memory: 1Gi }"_s));
        QVERIFY(DeployRepository(*m_db).create(DeployRecord{.id = u"d-grows-2"_s,
                                                            .app = u"grows"_s,
                                                            .status = core::DeployStatus::Queued,
                                                            .specYaml = specYaml(u"grows"_s, u"{ memory: 2Gi }"_s)}));
        // Finished deploys that did not switch count nothing.
        QVERIFY(DeployRepository(*m_db).create(DeployRecord{.id = u"d-grows-failed"_s,
                                                            .app = u"grows"_s,
                                                            .status = core::DeployStatus::Failed,
                                                            .specYaml = specYaml(u"grows"_s, u"{ memory: 8Gi }"_s)}));

        auto byKind = capacity::committed(*m_db, HostPolicy{}, u"docker"_s);
        QVERIFY2(byKind, qPrintable(byKind ? QString() : byKind.error().text()));
        QCOMPARE(byKind->value(u"docker"_s).apps, 2);
        QCOMPARE(byKind->value(u"docker"_s).memoryBytes, 3 * Gi);
        // The app being planned never counts against itself.
        QCOMPARE(capacity::committed(*m_db, HostPolicy{}, u"docker"_s, u"grows"_s)->value(u"docker"_s).memoryBytes,
                 1 * Gi);
    }

    void aDeployPastTheRoomIsRefusedWithTheFigures()
    {
        // Three apps hold 3Gi of the runtime's 4Gi.
        for (const QString &name : {u"a"_s, u"b"_s, u"c"_s})
            serve(name, specYaml(name, u"{ memory: 1Gi, cpus: 1 }"_s));
        FakeRuntime runtime;
        HostPolicy policy;
        auto wants = parseAppSpec(specYaml(u"new"_s, u"{ memory: 2Gi }"_s).toUtf8());
        QVERIFY(wants);
        adapters::ContainerSpec planned;
        planned.memoryBytes = 2 * Gi;
        auto refused = capacity::checkRoom(*m_db, runtime, policy, u"new"_s, *wants, runtime.capabilities(), planned);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
        QCOMPARE(refused.error().where, u"run.resources.memory"_s);
        QCOMPARE(refused.error().message, u"asks 2Gi memory; incus has 4Gi, 3Gi committed to 3 apps: 1Gi free"_s);

        // 1Gi fits, and the plan is told what is left.
        planned.memoryBytes = 1 * Gi;
        auto fits = capacity::checkRoom(*m_db, runtime, policy, u"new"_s, *wants, runtime.capabilities(), planned);
        QVERIFY2(fits, qPrintable(fits ? QString() : fits.error().text()));
        QCOMPARE(*fits, u"incus: 4Gi of 4Gi memory committed with this app"_s);

        // CPUs the same way.
        planned.cpus = 1.5;
        auto cpus = capacity::checkRoom(*m_db, runtime, policy, u"new"_s, *wants, runtime.capabilities(), planned);
        QVERIFY(!cpus);
        QCOMPARE(cpus.error().where, u"run.resources.cpus"_s);
        QCOMPARE(cpus.error().message, u"asks 1.5 CPUs; incus has 4, 3 committed to 3 apps: 1 free"_s);
    }

    void theAppsOwnServingVersionDoesNotCount()
    {
        serve(u"a"_s, specYaml(u"a"_s, u"{ memory: 3Gi }"_s));
        FakeRuntime runtime;
        auto again = parseAppSpec(specYaml(u"a"_s, u"{ memory: 3500Mi }"_s).toUtf8());
        QVERIFY(again);
        adapters::ContainerSpec planned;
        planned.memoryBytes = 3500 * Mi;
        // A redeploy of a replaces it: 3.5Gi of 4Gi is fine.
        QVERIFY(capacity::checkRoom(*m_db, runtime, HostPolicy{}, u"a"_s, *again, runtime.capabilities(), planned));
        // Another app asking the same does not fit beside it.
        auto other = capacity::checkRoom(*m_db, runtime, HostPolicy{}, u"b"_s, *again, runtime.capabilities(), planned);
        QVERIFY(!other);
        QVERIFY2(other.error().message.contains(u"3Gi committed to 1 app: 1Gi free"_s),
                 qPrintable(other.error().text()));
    }

    void diskLimitsNeedARuntimeThatMeasures()
    {
        FakeRuntime runtime;
        auto wants = parseAppSpec(specYaml(u"d"_s, u"{ memory: 64Mi, disk: 1Gi }"_s).toUtf8());
        QVERIFY(wants);
        adapters::ContainerSpec planned;
        planned.memoryBytes = 64 * Mi;
        auto refused =
            capacity::checkRoom(*m_db, runtime, HostPolicy{}, u"d"_s, *wants, runtime.capabilities(), planned);
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"run.resources.disk"_s);
        QVERIFY2(refused.error().message.contains(u"the incus runtime cannot measure an app's disk use"_s),
                 qPrintable(refused.error().text()));

        // One that measures holds disk limits to its disk: 9Gi committed of 10Gi leaves no 2Gi.
        runtime.measuresDisk = true;
        serve(u"hog"_s, specYaml(u"hog"_s, u"{ memory: 64Mi, disk: 9Gi }"_s));
        auto big = parseAppSpec(specYaml(u"d"_s, u"{ memory: 64Mi, disk: 2Gi }"_s).toUtf8());
        QVERIFY(big);
        auto full = capacity::checkRoom(*m_db, runtime, HostPolicy{}, u"d"_s, *big, runtime.capabilities(), planned);
        QVERIFY(!full);
        QCOMPARE(full.error().message,
                 u"asks 2Gi disk; incus has 10Gi (storage pool default (dir)), 9Gi committed to 1 app: 1Gi free"_s);
        QVERIFY(capacity::checkRoom(*m_db, runtime, HostPolicy{}, u"d"_s, *wants, runtime.capabilities(), planned));
    }

private:
    // An app whose deploy serves, with the spec that deploy ran.
    void serve(const QString &name, const QString &yaml)
    {
        QVERIFY2(parseAppSpec(yaml.toUtf8()), qPrintable(yaml));
        QVERIFY(AppRepository(*m_db).create(AppRecord{name, yaml, 0, {}, 1, 1}));
        DeployRecord d;
        d.id = u"d-"_s + name;
        d.app = name;
        d.status = core::DeployStatus::Succeeded;
        d.specYaml = yaml;
        QVERIFY(DeployRepository(*m_db).create(d));
        QVERIFY(AppRepository(*m_db).setCurrentDeploy(name, d.id, 2));
    }

    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;
};

QTEST_GUILESS_MAIN(TestCapacity)
#include "tst_capacity.moc"
