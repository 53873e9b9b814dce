// The engine's side of an app's backing services (core/services): the adapter set before
// start(), listing, backups and removal, and what an app's removal does with their data.

#include "core/engine/engineprivate.h"

#include <QDateTime>

using namespace Qt::StringLiterals;

namespace pando::core {

void Engine::setServiceProvisioner(std::shared_ptr<adapters::ServiceProvisioner> provisioner)
{
    d->serviceProvisioner = std::move(provisioner);
}

void Engine::Private::openServices()
{
    if (!serviceProvisioner || !seal)
        return;
    appServices = std::make_unique<AppServices>(ServiceStore(db, *seal, clock), *serviceProvisioner, options.installId);
    services.appServices = appServices.get();
}

Status Engine::Private::checkServiceData(const QString &app, Engine::ServiceData data)
{
    if (data != Engine::ServiceData::Ask || !appServices)
        return {};
    auto any = appServices->hasAny(app);
    if (!any)
        return std::unexpected(any.error());
    if (!*any)
        return {};
    return fail(
        ErrorCode::Invalid, u"app %1 has services with data; say whether to keep or delete it"_s.arg(app),
        u"app/"_s + app,
        u"pando apps rm %1 --keep-data (or --delete-data); in the API, ?service_data=keep or delete"_s.arg(app));
}

Status Engine::Private::removeServicesOf(const JobRecord &job)
{
    if (!appServices)
        return {};
    const bool deleteData = payloadValue(job, u"service_data"_s) == u"delete";
    return appServices->removeAll(job.key, deleteData);
}

Result<QList<ServiceView>> Engine::services(const QString &app)
{
    if (!d->appServices)
        return fail(ErrorCode::Unavailable, u"this install has no services adapter"_s);
    if (!app.isEmpty())
        if (auto row = AppRepository(d->db).find(app); !row) {
            // An app removed with its data kept still lists what is left of it.
            auto left = d->appServices->list(app);
            if (!left || left->isEmpty())
                return std::unexpected(row.error());
            return left;
        }
    return d->appServices->list(app);
}

Result<qint64> Engine::backupService(const QString &app, const QString &slot, QIODevice &out, const CancelToken &cancel,
                                     const std::function<void(qint64 bytes)> &progress, const Actor &actor)
{
    if (!d->appServices)
        return fail(ErrorCode::Unavailable, u"this install has no services adapter"_s);
    auto written = d->appServices->backup(app, slot, out, cancel, progress);
    if (auto audited = d->audit.record(
            actor, u"service.backup"_s, u"app/%1/service/%2"_s.arg(app, slot), written ? u"success"_s : u"failure"_s,
            written ? QJsonObject{{u"bytes"_s, double(*written)}} : QJsonObject{{u"error"_s, written.error().text()}});
        !audited)
        qWarning("backup of %s/%s: auditing it failed: %s", qPrintable(app), qPrintable(slot),
                 qPrintable(audited.error().text()));
    return written;
}

QString Engine::backupFileName(const QString &app, const QString &slot, const QString &kind) const
{
    const QString stamp = QDateTime::fromMSecsSinceEpoch(d->clock.nowMs()).toUTC().toString(u"yyyyMMdd-HHmmss"_s);
    // What a dump of kind is: SQL text for the databases, Redis's RDB file.
    const QString extension = kind == u"redis" ? u"rdb"_s : u"sql"_s;
    return u"%1-%2-%3.%4"_s.arg(app, slot, stamp, extension);
}

Status Engine::removeService(const QString &app, const QString &slot, bool deleteData, const Actor &actor)
{
    if (!d->appServices)
        return fail(ErrorCode::Unavailable, u"this install has no services adapter"_s);
    auto views = d->appServices->list(app);
    if (!views)
        return std::unexpected(views.error());
    const bool known =
        std::any_of(views->cbegin(), views->cend(), [&](const ServiceView &v) { return v.slot == slot; });
    if (!known)
        return fail(ErrorCode::NotFound, u"app %1 has no service in slot %2"_s.arg(app, slot), u"services."_s + slot);
    // Not while a deploy of the app switches or the reconciler works on it.
    const auto lock = d->appLocks.lockFor(app);
    QMutexLocker locker(lock.get());
    auto removed = d->appServices->remove(app, slot, deleteData);
    if (auto audited = d->audit.record(
            actor, u"service.remove"_s, u"app/%1/service/%2"_s.arg(app, slot), removed ? u"success"_s : u"failure"_s,
            QJsonObject{{u"delete_data"_s, deleteData}, {u"error"_s, removed ? QString() : removed.error().text()}});
        !audited)
        qWarning("removing %s/%s: auditing it failed: %s", qPrintable(app), qPrintable(slot),
                 qPrintable(audited.error().text()));
    if (removed)
        d->services.publish(EventType::ServiceRemoved, app, {},
                            QJsonObject{{u"slot"_s, slot}, {u"delete_data"_s, deleteData}});
    return removed;
}

} // namespace pando::core
