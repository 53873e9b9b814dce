// The engine's side of an app's backing services (core/services): the adapter set before
// start(), listing, backups and removal, and what an app's removal does with their data.

#include "core/engine/engineprivate.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryFile>

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
    if (data != Engine::ServiceData::Ask)
        return {};
    bool services = false;
    if (appServices) {
        auto any = appServices->hasAny(app);
        if (!any)
            return std::unexpected(any.error());
        services = *any;
    }
    auto volumes = appVolumes(app);
    if (!volumes)
        return std::unexpected(volumes.error());
    if (!services && volumes->isEmpty())
        return {};
    const QString what = services && !volumes->isEmpty() ? u"services and volumes"_s
                         : services                      ? u"services"_s
                                                         : u"volumes"_s;
    return fail(
        ErrorCode::Invalid, u"app %1 has %2 with data; say whether to keep or delete it"_s.arg(app, what),
        u"app/"_s + app,
        u"pando apps rm %1 --keep-data (or --delete-data); in the API, ?service_data=keep or delete"_s.arg(app));
}

Status Engine::Private::removeServicesOf(const JobRecord &job)
{
    if (!appServices)
        return {};
    const bool deleteData = payloadValue(job, u"service_data"_s) == u"delete";
    if (!deleteData) {
        // Kept for the app's owners (its grants still stand until the teardown is done), not for
        // whoever next picks the name.
        auto grants = authz::GrantRepository(db).list(authz::ObjectKind::App, job.key);
        if (!grants)
            return std::unexpected(grants.error());
        QStringList owners;
        for (const authz::Grant &grant : std::as_const(*grants))
            if (grant.role == u"owner" && !owners.contains(grant.userId))
                owners.append(grant.userId);
        if (auto kept = appServices->markKept(job.key, owners); !kept)
            return kept;
    }
    return appServices->removeAll(job.key, deleteData);
}

Status Engine::Private::checkKeptServiceData(const QString &app, const Actor &actor)
{
    if (!appServices)
        return {};
    auto any = appServices->hasAny(app);
    if (!any)
        return std::unexpected(any.error());
    if (!*any || policy::hasInstallAuthority(actor))
        return {};
    auto owners = appServices->keptOwners(app);
    if (!owners)
        return std::unexpected(owners.error());
    if (!actor.userId.isEmpty() && owners->contains(actor.userId))
        return {};
    return fail(ErrorCode::Conflict,
                u"the name %1 holds service data kept from a removed app; only that app's owners or an administrator "
                "may make an app of this name again (and get the data back)"_s.arg(app),
                u"name"_s,
                u"pick another name, or ask an administrator to delete the kept data (pando services rm %1 SLOT "
                "--delete-data)"_s.arg(app));
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
    auto views = d->appServices->list(app);
    if (!views)
        return views;
    // The variables each gives, as its app's spec names them.
    QHash<QString, AppSpec> specs;
    for (ServiceView &view : *views) {
        if (!specs.contains(view.app))
            if (auto row = AppRepository(d->db).find(view.app))
                if (auto spec = parseAppSpec(row->specYaml.toUtf8()))
                    specs.insert(view.app, *spec);
        if (auto spec = specs.constFind(view.app); spec != specs.cend() && spec->services.contains(view.slot))
            view.env = connectionEnvNames(view.slot, spec->services.value(view.slot));
    }
    return views;
}

Result<ServiceView> Engine::Private::runningService(const QString &app, const QString &slot)
{
    auto views = appServices->list(app);
    if (!views)
        return std::unexpected(views.error());
    const auto view =
        std::find_if(views->cbegin(), views->cend(), [&](const ServiceView &v) { return v.slot == slot; });
    if (view == views->cend())
        return fail(ErrorCode::NotFound, u"app %1 has no service in slot %2"_s.arg(app, slot), u"services."_s + slot,
                    u"pando services list %1 names its slots"_s.arg(app));
    // A dump is taken by the service's own client tools, in its container.
    if (view->status() != u"running")
        return fail(ErrorCode::Conflict,
                    u"the %1 service in slot %2 of app %3 is %4: a backup needs it running"_s.arg(view->kind, slot, app,
                                                                                                  view->status()),
                    u"services."_s + slot, u"deploy the app to start its services again"_s);
    return *view;
}

Result<qint64> Engine::backupService(const QString &app, const QString &slot, QIODevice &out, const CancelToken &cancel,
                                     const std::function<void(qint64 bytes)> &progress, const Actor &actor)
{
    if (!d->appServices)
        return fail(ErrorCode::Unavailable, u"this install has no services adapter"_s);
    if (auto running = d->runningService(app, slot); !running)
        return std::unexpected(running.error());
    auto written = d->appServices->backup(app, slot, out, cancel, progress);
    auto audited = d->audit.record(
        actor, u"service.backup"_s, u"app/%1/service/%2"_s.arg(app, slot), written ? u"success"_s : u"failure"_s,
        written ? QJsonObject{{u"bytes"_s, double(*written)}} : QJsonObject{{u"error"_s, written.error().text()}});
    if (!written)
        return written; // its own error is the answer, whatever became of the line
    // A dump nobody audited is not handed out: the caller drops it, and nothing was changed.
    if (!audited)
        return std::unexpected(audited.error());
    return written;
}

namespace {

// A backup a killed process left behind (older than any backup takes) is removed by the next one.
void removeStaleBackups(const QString &dir)
{
    const QDateTime before = QDateTime::currentDateTimeUtc().addDays(-1);
    const QFileInfoList stale = QDir(dir).entryInfoList({u"*-backup-*.partial"_s}, QDir::Files | QDir::NoSymLinks);
    for (const QFileInfo &file : stale)
        if (file.lastModified().toUTC() < before)
            QFile::remove(file.filePath());
}

} // namespace

Result<ServiceBackupFile> Engine::Private::backupToFile(const QString &kind, const QString &fileName,
                                                        const std::function<Result<qint64>(QIODevice &out)> &write)
{
    // On disk in the data directory, not in memory: a backup may be larger than the server's
    // RAM. QTemporaryFile makes it 0600.
    const QString dir = options.dataDir;
    removeStaleBackups(dir);
    QTemporaryFile out(QDir(dir).filePath(kind + u"-backup-XXXXXX.partial"_s));
    if (!out.open())
        return fail(ErrorCode::Internal, u"cannot make a file for the backup: %1"_s.arg(out.errorString()), dir);
    auto written = write(out);
    if (!written)
        return std::unexpected(written.error()); // the file goes with `out`
    if (!out.flush())
        return fail(ErrorCode::Internal, u"cannot write the backup: %1"_s.arg(out.errorString()), out.fileName());
    // From here the caller owns the file.
    out.setAutoRemove(false);
    const QString path = out.fileName();
    out.close();
    return ServiceBackupFile{path, fileName, *written};
}

Result<ServiceBackupFile> Engine::backupServiceToFile(const QString &app, const QString &slot,
                                                      const CancelToken &cancel, const Actor &actor)
{
    if (!d->appServices)
        return fail(ErrorCode::Unavailable, u"this install has no services adapter"_s);
    auto running = d->runningService(app, slot);
    if (!running)
        return std::unexpected(running.error());
    return d->backupToFile(u"service"_s, backupFileName(app, slot, running->kind),
                           [&](QIODevice &out) { return backupService(app, slot, out, cancel, {}, actor); });
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
    // Not while a deploy of the app switches or the reconciler works on it, nor while the spec
    // changes under the check below.
    const auto lock = d->appLocks.lockFor(app);
    QMutexLocker locker(lock.get());
    // A slot the spec declares would be provisioned again by the next deploy (with its old data,
    // or empty with new credentials), under an app whose container still uses it.
    if (auto row = AppRepository(d->db).find(app)) {
        auto spec = parseAppSpec(row->specYaml.toUtf8());
        if (spec && spec->services.contains(slot))
            return fail(ErrorCode::Conflict,
                        u"app %1's spec still declares the service in slot %2: the next deploy would provision it "
                        "again"_s.arg(app, slot),
                        u"services."_s + slot,
                        u"remove the slot from the spec (pando apps update %1 -f SPEC) and deploy first, or remove "
                        "the app (pando apps rm %1)"_s.arg(app));
    }
    auto views = d->appServices->list(app);
    if (!views)
        return std::unexpected(views.error());
    const bool known =
        std::any_of(views->cbegin(), views->cend(), [&](const ServiceView &v) { return v.slot == slot; });
    if (!known)
        return fail(ErrorCode::NotFound, u"app %1 has no service in slot %2"_s.arg(app, slot), u"services."_s + slot);
    auto removed = d->appServices->remove(app, slot, deleteData);
    auto audited = d->audit.record(
        actor, u"service.remove"_s, u"app/%1/service/%2"_s.arg(app, slot), removed ? u"success"_s : u"failure"_s,
        QJsonObject{{u"delete_data"_s, deleteData}, {u"error"_s, removed ? QString() : removed.error().text()}});
    if (!removed)
        return removed; // its own error is the answer, whatever became of the line
    d->services.publish(EventType::ServiceRemoved, app, {},
                        QJsonObject{{u"slot"_s, slot}, {u"delete_data"_s, deleteData}});
    if (!audited)
        return std::unexpected(
            unaudited(deleteData ? u"the service in slot %1 of app %2 and its data were removed"_s.arg(slot, app)
                                 : u"the service in slot %1 of app %2 was removed (its data kept)"_s.arg(slot, app),
                      audited.error()));
    return {};
}

} // namespace pando::core
