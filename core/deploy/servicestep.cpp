#include "core/deploy/servicestep.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Status checkServicesPlan(const Services &s, const AppSpec &spec)
{
    if (spec.services.isEmpty())
        return {};
    if (s.appServices == nullptr)
        return fail(ErrorCode::Invalid, u"this install cannot provision services"_s, u"services"_s,
                    u"start pandod with Docker reachable; services run on Docker"_s);
    // The app's own runtime (the spec's, or the install's default).
    auto caps = s.runtime.capabilitiesOf(spec.runtime);
    if (!caps)
        return std::unexpected(caps.error());
    return s.appServices->checkPlan(spec, caps->kind);
}

Result<ProvisionedServices> provisionServices(const Services &s, const QString &app, const AppSpec &spec,
                                              const CancelToken &cancel, const QString &checkoutDir)
{
    if (spec.services.isEmpty())
        return ProvisionedServices{};
    if (auto ok = checkServicesPlan(s, spec); !ok)
        return std::unexpected(ok.error());
    return s.appServices->provision(
        app, spec, cancel, [](const QString &) {}, checkoutDir);
}

void applyServices(const ProvisionedServices &provisioned, adapters::ContainerSpec &container)
{
    container.env.insert(provisioned.env);
    for (const QString &network : provisioned.networks)
        if (!container.networks.contains(network))
            container.networks.append(network);
}

void scrubServices(const ProvisionedServices &provisioned, adapters::ContainerSpec &container)
{
    for (auto it = provisioned.env.cbegin(); it != provisioned.env.cend(); ++it)
        container.env.remove(it.key());
}

bool isServiceContainer(const adapters::ContainerInfo &container)
{
    return container.labels.contains(QLatin1String(adapters::LabelService));
}

} // namespace pando::core
