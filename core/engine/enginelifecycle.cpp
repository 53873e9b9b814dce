// Engine: stopping an app, and starting or restarting its serving version (`pando apps
// stop|start|restart`). A stop holds: the reconciler leaves the app stopped until a start, a
// restart or a new deploy.
#include "core/engine/engineprivate.h"

#include "core/disklimit/diskstates.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QThread>
#include <QTimeZone>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// A start the runtime accepted can still end at once (the command exits): the container is
// looked at for a moment so that "started" is never said of a container that is gone again.
constexpr int StartSettleMs = 1000;
constexpr int StartLookEveryMs = 100;
// How long the app's process is given to end after SIGTERM before it is killed, as `docker stop`.
constexpr int StopGraceSeconds = 10;

Error nothingServes(const QString &app, const QString &what)
{
    return Error{ErrorCode::Conflict, u"app \"%1\" has no deployed version to %2"_s.arg(app, what), app,
                 u"deploy it: pando deploy %1"_s.arg(app)};
}

} // namespace

Status Engine::Private::stillRunning(const QString &id, const QString &app)
{
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        auto info = runtime->inspect(id);
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

QString Engine::Private::stoppedReason(const AppRecord &app)
{
    if (!app.isHeldStopped())
        return {};
    return u"stopped by %1, %2"_s.arg(
        app.stoppedBy,
        QDateTime::fromMSecsSinceEpoch(app.stoppedMs, QTimeZone::utc()).toString(u"yyyy-MM-dd HH:mm 'UTC'"_s));
}

Result<AppView> Engine::stopApp(const QString &name, const Actor &actor)
{
    std::optional<Error> unaudit;
    Result<AppRecord> row = AppRepository(d->db).find(name);
    if (!row)
        return std::unexpected(row.error());
    {
        const auto lock = d->appLocks.lockFor(name);
        QMutexLocker locker(lock.get());
        AppRepository apps(d->db);
        row = apps.find(name);
        if (!row)
            return std::unexpected(row.error());
        if (row->currentDeploy.isEmpty())
            return std::unexpected(nothingServes(name, u"stop"_s));
        // Held before the stop: a reconciler pass in between must find it held, not start it.
        if (auto held = apps.setStopped(name, row->currentDeploy, actor.name, d->clock.nowMs()); !held)
            return std::unexpected(held.error());
        Status stopped;
        auto containers = d->runtime->containers(d->services.labels(name, row->currentDeploy));
        if (!containers)
            stopped = std::unexpected(containers.error());
        else if (!containers->isEmpty() && containers->first().state == QLatin1String("running"))
            stopped = d->runtime->stop(containers->first().id, StopGraceSeconds);
        // A stop that did not happen holds nothing: the app serves on as it did.
        if (!stopped)
            discardResult(apps.setStopped(name, {}, {}, d->clock.nowMs()), "the stop's own error is the one to tell");
        auto audited = d->audit.record(actor, u"app.stop"_s, u"app/"_s + name, stopped ? u"success"_s : u"failure"_s,
                                       QJsonObject{{u"deploy"_s, row->currentDeploy}});
        if (!stopped)
            return std::unexpected(stopped.error());
        d->health.forget(name);
        d->services.publish(EventType::AppStopped, name, row->currentDeploy, QJsonObject{{u"by"_s, actor.name}});
        if (!audited)
            unaudit = audited.error();
        row = apps.find(name);
        if (!row)
            return std::unexpected(row.error());
    }
    d->observer.invalidate();
    if (unaudit)
        return std::unexpected(unaudited(u"app %1 was stopped"_s.arg(name), *unaudit));
    return d->view(*row);
}

Result<AppView> Engine::startApp(const QString &name, const Actor &actor)
{
    return d->runAgain(name, actor, false);
}

Result<AppView> Engine::restartApp(const QString &name, const Actor &actor)
{
    return d->runAgain(name, actor, true);
}

Result<AppView> Engine::Private::runAgain(const QString &name, const Actor &actor, bool restart)
{
    const QString verb = restart ? u"restart"_s : u"start"_s;
    Result<AppRecord> row = AppRepository(db).find(name);
    if (!row)
        return std::unexpected(row.error());
    std::optional<Error> unaudit;
    {
        const auto lock = appLocks.lockFor(name);
        QMutexLocker locker(lock.get());
        AppRepository apps(db);
        row = apps.find(name);
        if (!row)
            return std::unexpected(row.error());
        if (row->currentDeploy.isEmpty())
            return std::unexpected(nothingServes(name, verb));
        const bool heldForDisk = disklimit::isHeldStopped(db, name, row->currentDeploy);
        const bool heldByPerson = row->isHeldStopped();
        if (auto released = diskLimiter.release(name); !released)
            return std::unexpected(released.error());
        if (heldByPerson)
            if (auto released = apps.setStopped(name, {}, {}, clock.nowMs()); !released)
                return std::unexpected(released.error());
        auto containers = runtime->containers(services.labels(name, row->currentDeploy));
        if (!containers)
            return std::unexpected(containers.error());
        Status started;
        // A container that is gone altogether is the reconciler's to make again.
        if (!containers->isEmpty()) {
            const adapters::ContainerInfo &c = containers->first();
            const bool running = c.state == QLatin1String("running");
            if (restart && running)
                started = runtime->stop(c.id, StopGraceSeconds);
            if (started && (restart || !running))
                started = runtime->start(c.id);
            if (started && (restart || !running))
                started = stillRunning(c.id, name);
        }
        auto audited = audit.record(actor, u"app."_s + verb, u"app/"_s + name, started ? u"success"_s : u"failure"_s,
                                    QJsonObject{{u"deploy"_s, row->currentDeploy},
                                                {u"was_held_for_disk"_s, heldForDisk},
                                                {u"was_stopped_by"_s, heldByPerson ? row->stoppedBy : QString()}});
        if (!started)
            return std::unexpected(started.error()); // its own error is the answer, whatever became of the line
        // What the health monitor found before is about the container as it was.
        health.forget(name);
        services.publish(restart ? EventType::AppRestarted : EventType::AppStarted, name, row->currentDeploy,
                         QJsonObject{{u"by"_s, actor.name}});
        if (!audited)
            unaudit = audited.error();
        row = apps.find(name);
        if (!row)
            return std::unexpected(row.error());
    }
    // The reconciler points the route at the container's address, which may have changed.
    if (auto changes = reconciler.pass(); !changes)
        qWarning("engine: reconciler pass after the %s of %s: %s", qPrintable(verb), qPrintable(name),
                 qPrintable(changes.error().text()));
    observer.invalidate();
    // Started, and it keeps running: the caller hears that it was, and that its line is missing.
    if (unaudit)
        return std::unexpected(unaudited(u"app %1 was %2ed"_s.arg(name, verb), *unaudit));
    return view(*row);
}

} // namespace pando::core
