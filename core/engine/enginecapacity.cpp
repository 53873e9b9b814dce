// Engine: capacity, the edge, disk limits and starting an app again.
#include "core/engine/engineprivate.h"

#include "core/disklimit/diskstates.h"

#include <QElapsedTimer>
#include <QThread>

using namespace Qt::StringLiterals;

namespace pando::core {

Result<QList<capacity::RuntimeCapacity>> Engine::capacity()
{
    return capacity::report(d->db, *d->runtime, d->options.policy);
}

adapters::RouterStatus Engine::edge()
{
    return d->router->status();
}

QList<adapters::CertificateState> Engine::edgeCertificates(const authz::Visibility &visibility)
{
    QSet<QString> hosts;
    auto apps = AppRepository(d->db).list();
    if (apps)
        for (const AppRecord &app : std::as_const(*apps))
            if (visibility.seesApp(app.name))
                if (auto route = d->router->route(app.name))
                    for (const adapters::Address &address : std::as_const(route->addresses))
                        hosts.insert(address.host);
    QList<adapters::CertificateState> seen;
    for (const adapters::CertificateState &certificate : d->router->certificates())
        if (hosts.contains(certificate.host))
            seen.append(certificate);
    return seen;
}

QByteArray Engine::edgeInstallCa()
{
    return d->router->installCa();
}

Result<QStringList> Engine::checkDiskLimits()
{
    auto changes = d->diskLimiter.check();
    d->observer.invalidate();
    return changes;
}

QString Engine::Private::diskStatusReason(const AppRecord &app)
{
    auto state = disklimit::DiskStates(db).find(app.name);
    if (!state)
        return {};
    const auto &held = *state;
    if (!held || held->deployId != app.currentDeploy || app.currentDeploy.isEmpty())
        return {};
    return held->reason();
}

namespace {

// A start the runtime accepted can still end at once (the command exits): the container is
// looked at for a moment so that "started" is never said of a container that is gone again.
constexpr int StartSettleMs = 1000;
constexpr int StartLookEveryMs = 100;

Status stillRunning(adapters::Runtime &runtime, const QString &id, const QString &app)
{
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        auto info = runtime.inspect(id);
        if (!info)
            return std::unexpected(info.error());
        if (info->state != QLatin1String("running"))
            return fail(
                ErrorCode::Failed,
                u"app %1 did not start: its container is %2 (exit code %3)"_s.arg(app, info->state).arg(info->exitCode),
                u"app/"_s + app, u"see why in its log: pando logs %1"_s.arg(app));
        if (timer.elapsed() >= StartSettleMs)
            return {};
        QThread::msleep(StartLookEveryMs);
    }
}

} // namespace

Result<AppView> Engine::startApp(const QString &name, const Actor &actor)
{
    auto row = AppRepository(d->db).find(name);
    if (!row)
        return std::unexpected(row.error());
    std::optional<Error> unaudit;
    {
        const auto lock = d->appLocks.lockFor(name);
        QMutexLocker locker(lock.get());
        row = AppRepository(d->db).find(name);
        if (!row)
            return std::unexpected(row.error());
        if (row->currentDeploy.isEmpty())
            return fail(ErrorCode::Conflict, u"app \"%1\" has no deployed version to start"_s.arg(name), name,
                        u"deploy it: pando deploy %1"_s.arg(name));
        const bool held = disklimit::isHeldStopped(d->db, name, row->currentDeploy);
        if (auto released = d->diskLimiter.release(name); !released)
            return std::unexpected(released.error());
        auto containers = d->runtime->containers(d->services.labels(name, row->currentDeploy));
        if (!containers)
            return std::unexpected(containers.error());
        QString outcome = u"success"_s;
        Status started;
        // A container that is gone altogether is the reconciler's to make again.
        if (!containers->isEmpty() && containers->first().state != QLatin1String("running")) {
            started = d->runtime->start(containers->first().id);
            if (started)
                started = stillRunning(*d->runtime, containers->first().id, name);
        }
        if (!started)
            outcome = u"failure"_s;
        auto audited = d->audit.record(actor, u"app.start"_s, u"app/"_s + name, outcome,
                                       QJsonObject{{u"deploy"_s, row->currentDeploy}, {u"was_held_for_disk"_s, held}});
        if (!started)
            return std::unexpected(started.error()); // its own error is the answer, whatever became of the line
        // What the health monitor found before is about the container as it was.
        d->health.forget(name);
        d->services.publish(EventType::AppStarted, name, row->currentDeploy);
        if (!audited)
            unaudit = audited.error();
    }
    // The reconciler points the route at the container's address, which may have changed.
    if (auto changes = d->reconciler.pass(); !changes)
        qWarning("engine: reconciler pass after starting %s: %s", qPrintable(name), qPrintable(changes.error().text()));
    d->observer.invalidate();
    // Started, and it keeps running: the caller hears that it was, and that its line is missing.
    if (unaudit)
        return std::unexpected(unaudited(u"app %1 was started"_s.arg(name), *unaudit));
    return d->view(*row);
}

} // namespace pando::core
