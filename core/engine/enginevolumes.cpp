// Engine: apps' volumes (AppSpec run.volumes) beyond a deploy: what removing an app does with
// them, and who gets volumes kept from a removed app back.
#include "core/engine/engineprivate.h"

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

} // namespace pando::core
