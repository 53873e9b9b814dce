#include "core/disklimit/disklimiter.h"

#include "core/disklimit/diskstates.h"
#include "core/spec/appspec.h"
#include "core/spec/specdisk.h"
#include "core/state/repositories.h"

#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::core::disklimit {

DiskLimiter::~DiskLimiter()
{
    stop();
}

void DiskLimiter::start(int intervalMs)
{
    m_periodic.start(intervalMs, u"pando-disklimit"_s, [this] {
        if (auto changes = check(); !changes)
            qWarning("disk limits: %s", qPrintable(changes.error().text()));
    });
}

void DiskLimiter::stop()
{
    m_periodic.stop();
}

Result<QStringList> DiskLimiter::check()
{
    QMutexLocker checkLock(&m_checkMutex);
    auto apps = AppRepository(m_s.db).list();
    if (!apps)
        return std::unexpected(apps.error());
    QStringList changes;
    for (const AppRecord &app : std::as_const(*apps)) {
        const auto appLock = m_s.appLocks.lockFor(app.name);
        QMutexLocker lock(appLock.get());
        checkApp(app.name, changes);
    }
    return changes;
}

void DiskLimiter::checkApp(const QString &name, QStringList &changes)
{
    // A fresh read under the app's lock: a deploy may have switched since the listing.
    auto app = AppRepository(m_s.db).find(name);
    if (!app)
        return;
    DiskStates states(m_s.db);
    auto known = states.find(name);
    if (!known)
        return;
    const std::optional<DiskState> before = *known;
    // A state that cannot be cleared is said in the changes; the next check tries again.
    auto clear = [&] {
        if (auto cleared = states.clear(name); !cleared)
            changes << u"clearing %1's disk state failed: %2"_s.arg(name, cleared.error().text());
    };
    if (app->currentDeploy.isEmpty()) {
        if (before)
            clear();
        return;
    }
    auto deploy = DeployRepository(m_s.db).find(app->currentDeploy);
    if (!deploy)
        return;
    auto spec = parseAppSpec((deploy->specYaml.isEmpty() ? app->specYaml : deploy->specYaml).toUtf8());
    if (!spec)
        return;
    // What was said about an earlier deploy, or about a limit the app no longer has, is done with.
    if (before && (before->deployId != app->currentDeploy || spec->run.diskBytes <= 0)) {
        clear();
        if (spec->run.diskBytes <= 0)
            return;
    } else if (spec->run.diskBytes <= 0) {
        return;
    }
    const bool sameDeploy = before && before->deployId == app->currentDeploy;
    if (sameDeploy && before->action == ActionStopped)
        return; // stopped already; release() or a new deploy ends it

    auto found = m_s.runtime.containers(m_s.labels(name, app->currentDeploy));
    if (!found || found->isEmpty() || found->first().state != QLatin1String("running"))
        return;
    const adapters::ContainerInfo container = found->first();
    auto used = m_s.runtime.diskUsage(container.id);
    if (!used) {
        changes << u"measuring %1's disk use failed: %2"_s.arg(name, used.error().text());
        return;
    }
    const qint64 limit = spec->run.diskBytes;
    if (*used <= limit) {
        if (sameDeploy) // warned before, back under now: told again if it goes over again
            clear();
        return;
    }
    if (sameDeploy)
        return; // warned already

    const bool stopIt = spec->run.diskPolicy == AppSpec::Run::DiskPolicy::Stop;
    DiskState state;
    state.app = name;
    state.deployId = app->currentDeploy;
    state.action = stopIt ? ActionStopped : ActionWarned;
    state.usedBytes = *used;
    state.limitBytes = limit;
    state.sinceMs = m_s.clock.nowMs();
    QString outcome = state.action;
    QString error;
    // Recorded before the stop: a reconciler pass between the two must find the app held.
    if (auto put = states.put(state); !put) {
        changes << u"recording %1's disk state failed: %2"_s.arg(name, put.error().text());
        return;
    }
    if (stopIt) {
        if (auto stopped = m_s.runtime.stop(container.id, 10); !stopped) {
            outcome = u"failure"_s;
            error = stopped.error().text();
            clear(); // not stopped: try again at the next check
        }
    }
    const QJsonObject data{{u"used_bytes"_s, *used},
                           {u"limit_bytes"_s, limit},
                           {u"policy"_s, diskPolicyName(spec->run.diskPolicy)},
                           {u"action"_s, outcome},
                           {u"container"_s, container.id}};
    m_s.publish(EventType::AppDiskExceeded, name, app->currentDeploy, data);
    QJsonObject detail = data;
    if (!error.isEmpty())
        detail.insert(u"error"_s, error);
    if (auto audited = m_s.audit.record(Actor::system(u"disklimit"_s), u"app.disk.exceed"_s, u"app/"_s + name,
                                        error.isEmpty() ? u"success"_s : u"failure"_s, detail);
        !audited)
        changes << u"auditing %1's disk use failed: %2"_s.arg(name, audited.error().text());
    changes << (error.isEmpty() ? u"%1 %2"_s.arg(state.action == ActionStopped ? u"stopped"_s : u"warned"_s,
                                                 name + u": "_s + state.reason().section(u": "_s, 1))
                                : u"stopping %1 failed: %2"_s.arg(name, error));
}

Status DiskLimiter::release(const QString &app)
{
    return DiskStates(m_s.db).clear(app);
}

} // namespace pando::core::disklimit
