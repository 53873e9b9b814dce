// Engine: apps' volumes (AppSpec run.volumes) beyond a deploy: what removing an app does with
// them, and who gets volumes kept from a removed app back.
#include "core/engine/engineprivate.h"

#include <QDateTime>
#include <QJsonObject>
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

Result<ServiceBackupFile> Engine::backupVolumeToFile(const QString &app, const QString &volume,
                                                     const CancelToken &cancel, const Actor &actor)
{
    auto row = AppRepository(d->db).find(app);
    if (!row)
        return std::unexpected(row.error());
    // Where the serving container mounts it: its deploy's spec, else the app's.
    std::optional<DeployRecord> serving;
    if (!row->currentDeploy.isEmpty())
        if (auto found = DeployRepository(d->db).find(row->currentDeploy))
            serving = *found;
    auto spec = parseAppSpec((serving ? serving->specYaml : row->specYaml).toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    const auto &declared = spec->run.volumes;
    const auto mount = std::find_if(declared.cbegin(), declared.cend(),
                                    [&volume](const AppSpec::Run::Volume &v) { return v.name == volume; });
    if (mount == declared.cend())
        return fail(ErrorCode::NotFound, u"app %1 has no volume named %2"_s.arg(app, volume), u"run.volumes"_s,
                    u"pando apps show %1 lists its volumes"_s.arg(app));
    auto volumes = d->appVolumes(app);
    if (!volumes)
        return std::unexpected(volumes.error());
    const auto made = std::find_if(volumes->cbegin(), volumes->cend(),
                                   [&volume](const adapters::VolumeInfo &v) { return v.name == volume; });
    if (made == volumes->cend())
        return fail(ErrorCode::NotFound,
                    u"volume %1 of app %2 is made at its first deploy, and there was none"_s.arg(volume, app),
                    u"run.volumes"_s, u"deploy the app first"_s);
    const adapters::VolumeExport what{made->id, serving ? serving->containerId : QString(), mount->path};
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

} // namespace pando::core
