// Engine: apps' volumes (AppSpec run.volumes) beyond a deploy: what removing an app does with
// them, and who gets volumes kept from a removed app back.
#include "core/engine/engineprivate.h"

#include "core/deploy/servicestep.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryFile>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::core {

Result<QList<adapters::VolumeInfo>> Engine::Private::appVolumes(const QString &app)
{
    return runtime->volumes(services.labels(app));
}

Status Engine::Private::removeVolumesOf(const JobRecord &job)
{
    if (payloadValue(job, u"service_data"_s) != u"delete")
        return {};
    auto volumes = appVolumes(job.key);
    if (!volumes)
        return std::unexpected(volumes.error());
    for (const adapters::VolumeInfo &volume : std::as_const(*volumes)) {
        if (auto removed = runtime->removeVolume(volume.id); !removed)
            return fail(removed.error().code,
                        u"removing volume %1 of %2: %3"_s.arg(volume.name, job.key, removed.error().message));
    }
    return {};
}

Status Engine::Private::checkKeptVolumes(const QString &app, const Actor &actor)
{
    if (policy::hasInstallAuthority(actor))
        return {};
    auto volumes = appVolumes(app);
    if (!volumes)
        return std::unexpected(volumes.error());
    if (volumes->isEmpty())
        return {};
    QStringList names;
    for (const adapters::VolumeInfo &volume : std::as_const(*volumes))
        names << volume.name;
    return fail(ErrorCode::Conflict,
                u"the name %1 holds volumes kept from a removed app (%2); only an administrator may make an app of "
                "this name again (and get their files)"_s.arg(app, names.join(u", "_s)),
                u"name"_s, u"pick another name, or ask an administrator"_s);
}

Result<Engine::Private::AppVolume> Engine::Private::findAppVolume(const QString &app, const QString &volume)
{
    auto row = AppRepository(db).find(app);
    if (!row)
        return std::unexpected(row.error());
    // Where the serving container mounts it: its deploy's spec, else the app's.
    DeployRecord serving;
    if (!row->currentDeploy.isEmpty())
        if (auto found = DeployRepository(db).find(row->currentDeploy))
            serving = *found;
    auto spec = parseAppSpec((serving.id.isEmpty() ? row->specYaml : serving.specYaml).toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    const auto &declared = spec->run.volumes;
    const auto mount = std::find_if(declared.cbegin(), declared.cend(),
                                    [&volume](const AppSpec::Run::Volume &v) { return v.name == volume; });
    if (mount == declared.cend())
        return fail(ErrorCode::NotFound, u"app %1 has no volume named %2"_s.arg(app, volume), u"run.volumes"_s,
                    u"pando apps show %1 lists its volumes"_s.arg(app));
    auto volumes = appVolumes(app);
    if (!volumes)
        return std::unexpected(volumes.error());
    const auto made = std::find_if(volumes->cbegin(), volumes->cend(),
                                   [&volume](const adapters::VolumeInfo &v) { return v.name == volume; });
    if (made == volumes->cend())
        return fail(ErrorCode::NotFound,
                    u"volume %1 of app %2 is made at its first deploy, and there was none"_s.arg(volume, app),
                    u"run.volumes"_s, u"deploy the app first"_s);
    return AppVolume{*made, *mount, serving};
}

Result<ServiceBackupFile> Engine::backupVolumeToFile(const QString &app, const QString &volume,
                                                     const CancelToken &cancel, const Actor &actor)
{
    auto found = d->findAppVolume(app, volume);
    if (!found)
        return std::unexpected(found.error());
    const adapters::VolumeExport what{found->volume.id, found->serving.containerId, found->mount.path};
    const QString stamp = QDateTime::fromMSecsSinceEpoch(d->clock.nowMs()).toUTC().toString(u"yyyyMMdd-HHmmss"_s);
    return d->backupToFile(
        u"volume"_s, u"%1-%2-%3.tar"_s.arg(app, volume, stamp), [&](QIODevice &out) -> Result<qint64> {
            auto written = d->runtime->exportVolume(what, out, cancel);
            auto audited = d->audit.record(actor, u"volume.backup"_s, u"app/%1/volume/%2"_s.arg(app, volume),
                                           written ? u"success"_s : u"failure"_s,
                                           written ? QJsonObject{{u"bytes"_s, double(*written)}}
                                                   : QJsonObject{{u"error"_s, written.error().text()}});
            if (!written)
                return written; // its own error is the answer, whatever became of the line
            if (!audited)
                return std::unexpected(audited.error());
            return written;
        });
}

Result<Engine::Private::AppVolume> Engine::Private::findRestorableVolume(const QString &app, const QString &volume)
{
    auto found = findAppVolume(app, volume);
    if (!found)
        return std::unexpected(found.error());
    if (found->serving.id.isEmpty() || found->serving.imageId.isEmpty())
        return fail(ErrorCode::Conflict,
                    u"app %1 has no deployed version to restore volume %2 under"_s.arg(app, volume), u"app/"_s + app,
                    u"deploy it: pando deploy %1"_s.arg(app));
    return found;
}

Status Engine::checkVolumeRestore(const QString &app, const QString &volume)
{
    auto found = d->findRestorableVolume(app, volume);
    if (!found)
        return std::unexpected(found.error());
    return {};
}

Result<std::unique_ptr<QTemporaryFile>> Engine::uploadFile()
{
    auto file = std::make_unique<QTemporaryFile>(QDir(d->options.dataDir).filePath(u"restore-backup-XXXXXX.partial"_s));
    if (!file->open())
        return fail(ErrorCode::Internal, u"cannot make a file for the archive: %1"_s.arg(file->errorString()),
                    d->options.dataDir);
    return file;
}

Result<AppView> Engine::restoreVolumeFromFile(const QString &app, const QString &volume, const QString &archivePath,
                                              const CancelToken &cancel, const Actor &actor)
{
    const QString object = u"app/%1/volume/%2"_s.arg(app, volume);
    // Every attempt that reached the volume is audited; its own error is the answer whatever
    // became of the line.
    const auto audited = [&](const Status &done, QJsonObject details) -> Status {
        if (!done)
            details.insert(u"error"_s, done.error().text());
        auto recorded =
            d->audit.record(actor, u"volume.restore"_s, object, done ? u"success"_s : u"failure"_s, details);
        if (!done)
            return done;
        if (!recorded)
            return std::unexpected(unaudited(u"volume %1 of %2 was restored"_s.arg(volume, app), recorded.error()));
        return {};
    };
    // Not while a deploy of the app switches or the reconciler works on it.
    const auto lock = d->appLocks.lockFor(app);
    QMutexLocker locker(lock.get());
    auto found = d->findRestorableVolume(app, volume);
    if (!found)
        return std::unexpected(found.error());
    const DeployRecord &serving = found->serving;
    const adapters::VolumeImport what{found->volume.id, archivePath, serving.imageId, found->volume.labels};
    if (auto valid = d->runtime->checkVolumeArchive(what); !valid)
        return std::unexpected(audited(valid, {}).error());
    // A deploy under way would start a container mounting the volume while it is made again.
    auto unfinished = DeployRepository(d->db).unfinished();
    if (!unfinished)
        return std::unexpected(unfinished.error());
    for (const DeployRecord &other : std::as_const(*unfinished))
        if (other.app == app)
            return fail(ErrorCode::Conflict, u"deploy %1 of app %2 is under way"_s.arg(other.id, app), u"app/"_s + app,
                        u"restore once it ended: pando deploys watch %1"_s.arg(other.id));

    // The files as they are, put back when the restore fails.
    auto before = d->backupToFile(u"restore"_s, {}, [&](QIODevice &out) {
        return d->runtime->exportVolume({found->volume.id, serving.containerId, found->mount.path}, out, cancel);
    });
    if (!before)
        return std::unexpected(
            audited(fail(before.error().code,
                         u"cannot keep the volume's files before the restore: %1"_s.arg(before.error().message),
                         before.error().where, before.error().hint),
                    {})
                .error());
    bool keepBefore = false;
    const auto dropBefore = qScopeGuard([&] {
        if (!keepBefore)
            QFile::remove(before->path);
    });

    // Nothing may mount the volume while it is made again: the app's containers go, and the
    // reconciler's recreation below runs the serving version again.
    Status restored;
    if (auto containers = d->runtime->containers(d->services.labels(app)); !containers)
        restored = std::unexpected(containers.error());
    else
        for (const adapters::ContainerInfo &c : std::as_const(*containers))
            if (restored && !isServiceContainer(c))
                restored = d->runtime->remove(c.id);
    const bool touched = bool(restored); // the volume is made again from here
    if (touched)
        restored = d->runtime->importVolume(what, cancel);
    Status putBack;
    if (!restored && touched) {
        adapters::VolumeImport back = what;
        back.archivePath = before->path;
        putBack = d->runtime->importVolume(back, CancelToken());
        if (!putBack) {
            // Kept where an administrator finds it, under a name that says what it is.
            const QString stamp =
                QDateTime::fromMSecsSinceEpoch(d->clock.nowMs()).toUTC().toString(u"yyyyMMdd-HHmmss"_s);
            const QString kept =
                QDir(d->options.dataDir).filePath(u"%1-%2-before-restore-%3.tar"_s.arg(app, volume, stamp));
            keepBefore = QFile::rename(before->path, kept);
            putBack = fail(putBack.error().code,
                           u"%1; putting the files back failed too (%2), and they are kept in %3"_s.arg(
                               restored.error().message, putBack.error().message, keepBefore ? kept : before->path),
                           restored.error().where,
                           u"restore that file: pando volumes restore %1 %2 --from FILE"_s.arg(app, volume));
        }
    }
    d->health.forget(app);
    auto changes = d->reconciler.passOf(app);
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    Status running;
    if (!changes) {
        running = std::unexpected(changes.error());
    } else if (!row->isHeldStopped()) {
        auto containers = d->runtime->containers(d->services.labels(app, row->currentDeploy));
        if (!containers)
            running = std::unexpected(containers.error());
        else if (containers->isEmpty())
            running = fail(ErrorCode::Failed, u"app %1 was not run again: %2"_s.arg(app, changes->join(u"; "_s)),
                           u"app/"_s + app, u"see pando apps show %1; the reconciler tries again"_s.arg(app));
        else
            running = d->stillRunning(containers->first().id, app);
    }
    d->observer.invalidate();
    const QJsonObject details{{u"deploy"_s, serving.id}, {u"running_again"_s, bool(running)}};
    if (!restored)
        return std::unexpected(
            audited(putBack ? fail(restored.error().code,
                                   (touched ? u"%1; the volume's files from before the restore are back"_s
                                            : u"%1; the volume was not touched"_s)
                                       .arg(restored.error().message),
                                   restored.error().where, restored.error().hint)
                            : putBack,
                    details)
                .error());
    if (auto recorded = audited({}, details); !recorded)
        return std::unexpected(recorded.error());
    if (!running)
        return fail(running.error().code, u"volume %1 was restored, but %2"_s.arg(volume, running.error().message),
                    running.error().where, running.error().hint);
    return d->view(*row);
}

} // namespace pando::core
