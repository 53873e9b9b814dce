#include "core/health/healthmonitor.h"

#include "core/deploy/healthprobe.h"
#include "core/deploy/servicestep.h"
#include "core/planner/planner.h"
#include "core/state/repositories.h"

#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::core::health {

namespace {

// How long a container asked to stop for its restart gets before it is killed.
constexpr int RestartStopSeconds = 5;

} // namespace

int probeDeadlineMs(const AppSpec::Health &health)
{
    return qBound(1000, health.everyMs, 5000);
}

HealthMonitor::HealthMonitor(Services &services, int probeThreads) : m_s(services)
{
    m_pool.setMaxThreadCount(qMax(1, probeThreads));
    m_pool.setObjectName(u"pando-health"_s);
}

HealthMonitor::~HealthMonitor()
{
    stop();
}

void HealthMonitor::start(int tickMs)
{
    m_periodic.start(tickMs, u"pando-health"_s, [this] { tick(); });
}

void HealthMonitor::stop()
{
    m_periodic.stop();
    m_pool.waitForDone();
}

int HealthMonitor::tick()
{
    const QList<Target> due = dueTargets();
    for (const Target &target : due)
        m_pool.start([this, target] { probe(target); });
    return int(due.size());
}

std::optional<AppHealth> HealthMonitor::health(const QString &app, const QString &deployId) const
{
    QMutexLocker lock(&m_mutex);
    const auto it = m_health.constFind(app);
    if (it == m_health.constEnd() || it->deployId != deployId)
        return std::nullopt;
    return *it;
}

void HealthMonitor::forget(const QString &app)
{
    QMutexLocker lock(&m_mutex);
    m_health.remove(app);
}

QList<HealthMonitor::Target> HealthMonitor::dueTargets()
{
    auto apps = AppRepository(m_s.db).list();
    if (!apps) {
        qWarning("health: listing apps: %s", qPrintable(apps.error().text()));
        return {};
    }
    const qint64 now = m_s.clock.nowMs();
    QList<Target> due;
    QSet<QString> names;
    {
        QMutexLocker lock(&m_mutex);
        for (const AppRecord &app : std::as_const(*apps)) {
            names.insert(app.name);
            if (app.currentDeploy.isEmpty() || m_inFlight.contains(app.name))
                continue;
            auto spec = parseAppSpec(app.specYaml.toUtf8());
            if (!spec)
                continue;
            const AppHealth known = m_health.value(app.name);
            if (known.deployId == app.currentDeploy && known.lastProbeMs >= 0 &&
                now - known.lastProbeMs < spec->health.everyMs)
                continue;
            due.append(Target{app.name, app.currentDeploy, {}, {}, *spec});
        }
        // Apps that are gone are forgotten.
        for (auto it = m_health.begin(); it != m_health.end();)
            it = names.contains(it.key()) ? std::next(it) : m_health.erase(it);
    }
    if (due.isEmpty())
        return {};
    // One listing for every app due: what serves, and where.
    auto containers = m_s.runtime.containers(m_s.labels());
    if (!containers) {
        qWarning("health: listing containers: %s", qPrintable(containers.error().text()));
        return {};
    }
    QList<Target> ready;
    for (Target &target : due) {
        for (const adapters::ContainerInfo &c : std::as_const(*containers)) {
            if (isServiceContainer(c) || c.labels.value(QLatin1String(adapters::LabelApp)) != target.app ||
                c.labels.value(QLatin1String(adapters::LabelDeploy)) != target.deployId)
                continue;
            // A container that does not run is the reconciler's, and its status says stopped.
            if (c.state == QLatin1String("running") && !c.address.isEmpty()) {
                target.containerId = c.id;
                target.address = c.address;
                auto deploy = DeployRepository(m_s.db).find(target.deployId);
                target.port = listeningPort(deploy ? deploy->port : 0, target.spec);
                ready.append(target);
            }
            break;
        }
    }
    QMutexLocker lock(&m_mutex);
    for (const Target &target : std::as_const(ready)) {
        AppHealth &known = m_health[target.app];
        if (known.deployId != target.deployId)
            known = AppHealth{target.deployId};
        known.lastProbeMs = now;
        m_inFlight.insert(target.app);
    }
    return ready;
}

void HealthMonitor::probe(const Target &target)
{
    const QString &path = target.spec.health.path;
    auto answer = probeOnce(target.address, target.port, path, probeDeadlineMs(target.spec.health));
    Status outcome;
    if (!answer)
        outcome = fail(answer.error().code, u"GET %1: %2"_s.arg(path, answer.error().message));
    else if (*answer < 200 || *answer >= 400)
        outcome = fail(ErrorCode::Failed, u"GET %1 answered %2"_s.arg(path).arg(*answer));
    record(target, outcome);
    QMutexLocker lock(&m_mutex);
    m_inFlight.remove(target.app);
}

void HealthMonitor::record(const Target &target, const Status &outcome)
{
    std::optional<EventType> event;
    QJsonObject data;
    bool restartNow = false;
    {
        QMutexLocker lock(&m_mutex);
        AppHealth &known = m_health[target.app];
        if (known.deployId != target.deployId)
            return; // a new deploy serves by now; this answer is about the old one
        if (outcome) {
            if (known.unhealthy)
                event = EventType::AppHealthy;
            known.unhealthy = false;
            known.failures = 0;
            known.reason.clear();
        } else {
            ++known.failures;
            known.reason = outcome.error().message;
            data = QJsonObject{{u"reason"_s, known.reason}, {u"failures"_s, known.failures}};
            if (!known.unhealthy && known.failures >= target.spec.health.failures) {
                known.unhealthy = true;
                event = EventType::AppUnhealthy;
            }
            // Restarted again only after as many failed probes again: a slow start is not a loop.
            if (known.unhealthy && known.failures >= target.spec.health.failures &&
                target.spec.run.restart != AppSpec::Run::Restart::Never) {
                restartNow = true;
                known.failures = 0;
            }
        }
    }
    if (event)
        m_s.publish(*event, target.app, target.deployId, data);
    if (restartNow)
        restart(target, outcome.error().message);
}

void HealthMonitor::restart(const Target &target, const QString &reason)
{
    const auto appLock = m_s.appLocks.lockFor(target.app);
    QMutexLocker locker(appLock.get());
    // Decided on a fresh read: a deploy may have switched, the app gone or someone stopped it
    // meanwhile.
    auto app = AppRepository(m_s.db).find(target.app);
    if (!app || app->currentDeploy != target.deployId || app->isHeldStopped())
        return;
    Status done = m_s.runtime.stop(target.containerId, RestartStopSeconds);
    if (done)
        done = m_s.runtime.start(target.containerId);
    const QJsonObject detail{{u"reason"_s, u"unhealthy"_s}, {u"probe"_s, reason}};
    if (auto audited = m_s.audit.record(Actor::system(u"health"_s), u"app.restart"_s, u"app/"_s + target.app,
                                        done ? u"success"_s : u"failure"_s, detail);
        !audited)
        qWarning("health: auditing the restart of %s: %s", qPrintable(target.app), qPrintable(audited.error().text()));
    if (!done) {
        qWarning("health: restarting %s: %s", qPrintable(target.app), qPrintable(done.error().text()));
        return;
    }
    m_s.publish(EventType::AppRestarted, target.app, target.deployId, detail);
    // The address may change when a container starts again; the route follows it.
    auto info = m_s.runtime.inspect(target.containerId);
    if (info && !info->address.isEmpty() && info->address != target.address)
        if (auto routed = m_s.router.setBackend(target.app, info->address, target.port); !routed)
            qWarning("health: routing %s to its restarted container: %s", qPrintable(target.app),
                     qPrintable(routed.error().text()));
}

} // namespace pando::core::health
