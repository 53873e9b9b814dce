#include "core/planner/planner.h"

#include <QDir>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

QString cpusText(double cpus)
{
    return QString::number(cpus, 'g', 6);
}

QString runtimeName(const adapters::RuntimeCapabilities &caps)
{
    return caps.kind.isEmpty() ? u"the runtime"_s : u"runtime %1"_s.arg(caps.kind);
}

} // namespace

Result<adapters::ContainerSpec> planContainer(const AppSpec &spec, const HostPolicy &policy,
                                              const adapters::RuntimeCapabilities &caps, int port, QStringList *notes)
{
    const QString runtime = runtimeName(caps);
    QStringList said;
    const bool egress = spec.network.egress != AppSpec::Egress::None;
    if (!egress && !caps.canIsolateEgress) {
        return fail(ErrorCode::Invalid, u"egress none: %1 cannot cut a container off from the network"_s.arg(runtime),
                    u"network.egress"_s,
                    u"deploy to a runtime that isolates egress (docker), or set network.egress to all"_s);
    }

    if (!spec.run.volumes.isEmpty() && !caps.canMountVolumes)
        return fail(ErrorCode::Invalid, u"%1 cannot keep an app's volumes"_s.arg(runtime), u"run.volumes"_s,
                    u"deploy apps with volumes to docker or incus"_s);

    // Memory: the spec's amount, else the host default; either way no more than the policy
    // and the runtime allow. An explicit request over a cap is an error, a default is capped.
    const QString memoryPath = u"run.resources.memory"_s;
    qint64 memory = spec.run.memoryBytes;
    if (memory > 0) {
        if (policy.maxMemoryBytes > 0 && memory > policy.maxMemoryBytes) {
            return fail(ErrorCode::Invalid,
                        u"%1 is more than this host allows per app (%2)"_s.arg(formatMemory(memory),
                                                                               formatMemory(policy.maxMemoryBytes)),
                        memoryPath, u"ask for at most %1"_s.arg(formatMemory(policy.maxMemoryBytes)));
        }
        if (caps.maxMemoryBytes > 0 && memory > caps.maxMemoryBytes) {
            return fail(
                ErrorCode::Invalid,
                u"%1 is more than %2 has (%3)"_s.arg(formatMemory(memory), runtime, formatMemory(caps.maxMemoryBytes)),
                memoryPath, u"ask for at most %1"_s.arg(formatMemory(caps.maxMemoryBytes)));
        }
    } else if (policy.defaultMemoryBytes > 0) {
        memory = policy.defaultMemoryBytes;
        said.append(u"memory defaulted to %1 (host policy)"_s.arg(formatMemory(memory)));
        const qint64 cap = std::min(policy.maxMemoryBytes > 0 ? policy.maxMemoryBytes : memory,
                                    caps.maxMemoryBytes > 0 ? caps.maxMemoryBytes : memory);
        if (cap < memory) {
            memory = cap;
            said.append(u"memory lowered to %1, the most this host allows"_s.arg(formatMemory(memory)));
        }
    } else if (policy.maxMemoryBytes > 0) {
        memory = policy.maxMemoryBytes;
        said.append(u"memory limited to %1 (host policy)"_s.arg(formatMemory(memory)));
    } else {
        said.append(u"no memory limit"_s);
    }

    const QString cpusPath = u"run.resources.cpus"_s;
    double cpus = spec.run.cpus;
    if (cpus > 0) {
        if (policy.maxCpus > 0 && cpus > policy.maxCpus) {
            return fail(
                ErrorCode::Invalid,
                u"%1 CPUs is more than this host allows per app (%2)"_s.arg(cpusText(cpus), cpusText(policy.maxCpus)),
                cpusPath, u"ask for at most %1"_s.arg(cpusText(policy.maxCpus)));
        }
        if (caps.maxCpus > 0 && cpus > caps.maxCpus) {
            return fail(ErrorCode::Invalid,
                        u"%1 CPUs is more than %2 has (%3)"_s.arg(cpusText(cpus), runtime, cpusText(caps.maxCpus)),
                        cpusPath, u"ask for at most %1"_s.arg(cpusText(caps.maxCpus)));
        }
    } else if (policy.maxCpus > 0) {
        // Without a request the app would be unlimited, which the policy's cap forbids.
        cpus = caps.maxCpus > 0 ? std::min(policy.maxCpus, caps.maxCpus) : policy.maxCpus;
        said.append(u"cpus limited to %1 (host policy)"_s.arg(cpusText(cpus)));
    }

    adapters::ContainerSpec container;
    container.command = spec.run.command;
    container.env = containerEnv(spec, port);
    container.labels = spec.labels;
    container.port = port;
    container.memoryBytes = memory;
    container.cpus = cpus;
    container.egress = egress;
    for (const AppSpec::Run::Volume &volume : spec.run.volumes)
        container.volumes.append({volume.name, volume.path});
    if (notes)
        *notes += said;
    return container;
}

Result<Plan> makePlan(const AppSpec &spec, const HostPolicy &policy, const adapters::RuntimeCapabilities &caps,
                      const QString &checkoutDir)
{
    if (auto valid = validateAppSpec(spec); !valid)
        return std::unexpected(valid.error());
    if (checkoutDir.isEmpty() || !QDir::isAbsolutePath(checkoutDir))
        return fail(ErrorCode::Internal,
                    u"the checkout directory must be an absolute path, got \"%1\""_s.arg(checkoutDir));
    if (!caps.canBuild) {
        return fail(ErrorCode::Failed, u"%1 cannot build images"_s.arg(runtimeName(caps)), {},
                    u"deploy to a runtime that builds images from a Dockerfile (docker)"_s);
    }
    Plan plan;
    plan.app = spec.name;
    auto container = planContainer(spec, policy, caps, spec.run.port, &plan.notes);
    if (!container)
        return std::unexpected(container.error());
    plan.container = std::move(*container);

    if (spec.route.port != 0) {
        const QString routePath = u"route.port"_s;
        if (spec.route.port < policy.minRoutePort || spec.route.port > policy.maxRoutePort) {
            return fail(ErrorCode::Invalid,
                        u"%1 is outside the ports this host gives apps (%2-%3)"_s.arg(spec.route.port)
                            .arg(policy.minRoutePort)
                            .arg(policy.maxRoutePort),
                        routePath,
                        u"pick a port from %1 to %2, or leave route.port out"_s.arg(policy.minRoutePort)
                            .arg(policy.maxRoutePort));
        }
        if (policy.deniedRoutePorts.contains(spec.route.port)) {
            return fail(ErrorCode::Invalid, u"%1 is reserved on this host"_s.arg(spec.route.port), routePath,
                        u"pick another port, or leave route.port out"_s);
        }
    }

    // The spec's paths were checked not to climb out; resolve them against the checkout anyway
    // and refuse anything that still lands outside (a bug elsewhere must not become a leak).
    const QString root = QDir::cleanPath(checkoutDir);
    const QString contextDir = QDir::cleanPath(root + u'/' + spec.build.context);
    if (contextDir != root && !contextDir.startsWith(root + u'/'))
        return fail(ErrorCode::Invalid, u"resolves outside the repository"_s, u"build.context"_s);
    const QString dockerfile = QDir::cleanPath(spec.build.dockerfile);
    if (dockerfile == u".." || dockerfile.startsWith(u"../"_s) || QDir::isAbsolutePath(dockerfile))
        return fail(ErrorCode::Invalid, u"resolves outside the build context"_s, u"build.dockerfile"_s);
    plan.contextDir = contextDir;
    plan.dockerfile = dockerfile;

    plan.routePort = spec.route.port;
    plan.healthPath = spec.health.path;
    plan.healthTimeoutSeconds = spec.health.timeoutSeconds;
    plan.healthIntervalMs = spec.health.intervalMs;
    return plan;
}

QMap<QString, QString> containerEnv(const AppSpec &spec, int port)
{
    QMap<QString, QString> env = spec.run.env;
    if (port > 0 && !env.contains(u"PORT"_s))
        env.insert(u"PORT"_s, QString::number(port));
    return env;
}

} // namespace pando::core
