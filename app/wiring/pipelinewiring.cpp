#include "pipelinewiring.h"

#include "adapters/resource/git/gitresourcetype.h"
#include "adapters/resource/registryimage/registryimageresourcetype.h"
#include "adapters/resource/s3/s3resourcetype.h"
#include "adapters/resource/semver/semverresourcetype.h"
#include "adapters/taskrunner/docker/dockertaskrunner.h"
#include "adapters/taskrunner/host/hosttaskrunner.h"
#include "adapters/varsource/vault/vaultvarsource.h"
#include "core/engine/enginewiring.h"
#include "core/engine/tokens.h"
#include "core/pipelines/resource/mockresourcetype.h"
#include "core/pipelines/resource/timeresourcetype.h"
#include "core/pipelines/sealbox/sealkey.h"

#include <QDir>

namespace pando::wiring {

namespace {
// What the pipeline runner's dependencies point at; owned by the service, released last.
struct Parts {
    std::unique_ptr<adapters::docker::DockerTaskRunner> containers;
    std::unique_ptr<adapters::host::HostTaskRunner> host;
    std::unique_ptr<core::BlobStore> blobs;
    std::unique_ptr<core::Workspace> workspace;
    std::shared_ptr<adapters::ResourceType> git;
    std::shared_ptr<adapters::ResourceType> s3;
    std::shared_ptr<adapters::ResourceType> semver;
    std::shared_ptr<adapters::ResourceType> registryImage;
    std::shared_ptr<adapters::ResourceType> dockerImage;
    std::shared_ptr<adapters::ResourceType> time;
    std::shared_ptr<adapters::ResourceType> mock;
};
} // namespace

Status installPipelines(core::Engine &engine, const PipelineWiringOptions &options)
{
    const QString data = engine.options().dataDir;
    auto parts = std::make_shared<Parts>();
    parts->containers = std::make_unique<adapters::docker::DockerTaskRunner>(options.dockerSocket);
    parts->host = std::make_unique<adapters::host::HostTaskRunner>();
    parts->blobs = std::make_unique<core::BlobStore>(data + QStringLiteral("/blobs"));
    parts->workspace = std::make_unique<core::Workspace>(data + QStringLiteral("/runs"));
    parts->git = std::make_shared<adapters::git::GitResourceType>(data + QStringLiteral("/cache/git"));
    parts->s3 = std::make_shared<adapters::s3::S3ResourceType>();
    parts->semver = std::make_shared<adapters::semver::SemverResourceType>(data + QStringLiteral("/cache/git"));
    parts->registryImage = std::make_shared<adapters::registryimage::RegistryImageResourceType>();
    parts->dockerImage = std::make_shared<adapters::registryimage::DockerImageResourceType>();
    parts->time = std::make_shared<core::pipelines::TimeResourceType>(core::wiringParts(engine).clock);
    parts->mock = std::make_shared<core::pipelines::MockResourceType>();

    auto sealKey = core::pipelines::keyfile::loadOrCreate(data + QStringLiteral("/seal.key"));
    if (!sealKey)
        return std::unexpected(sealKey.error());
    auto hashKey = core::detail::loadOrCreateKey(data + QStringLiteral("/hash.key"));
    if (!hashKey)
        return std::unexpected(hashKey.error());
    // Runs may have been cut off by a dead process: their work directories are stale.
    QDir(data + QStringLiteral("/runs")).removeRecursively();

    core::pipelines::JobRunnerDeps deps{core::wiringParts(engine).database,
                                        core::wiringParts(engine).clock,
                                        *engine.events(),
                                        *parts->containers,
                                        *parts->host,
                                        *parts->blobs,
                                        *parts->workspace,
                                        [parts](const QString &name) -> std::shared_ptr<adapters::ResourceType> {
                                            if (name == QLatin1String("git"))
                                                return parts->git;
                                            if (name == QLatin1String("s3"))
                                                return parts->s3;
                                            if (name == QLatin1String("semver"))
                                                return parts->semver;
                                            if (name == QLatin1String("registry-image"))
                                                return parts->registryImage;
                                            if (name == QLatin1String("docker-image"))
                                                return parts->dockerImage;
                                            if (name == QLatin1String("time"))
                                                return parts->time;
                                            if (name == QLatin1String("mock"))
                                                return parts->mock;
                                            return nullptr;
                                        },
                                        {},
                                        *hashKey,
                                        data + QStringLiteral("/task-caches"),
                                        engine.options().installId,
                                        &engine.approvals()};
    deps.openVarSource = [](const QString &type, const QJsonObject &config,
                            const QString &pipeline) -> Result<std::unique_ptr<adapters::VarSource>> {
        if (type == QLatin1String("vault"))
            return adapters::vault::openVaultSource(config, pipeline);
        return fail(ErrorCode::Invalid, QStringLiteral("var source type %1 is not supported").arg(type));
    };
    auto service = std::make_unique<core::pipelines::LocalPipelineService>(deps, core::wiringParts(engine).audit,
                                                                           *sealKey, options.service, parts);
    if (auto started = service->start(); !started)
        return started;
    engine.setPipelines(std::move(service));
    return {};
}

} // namespace pando::wiring
