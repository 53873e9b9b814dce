#pragma once
// The deploy pipeline's part in an app's backing services (core/services): the plan-time check
// and provisioning before the app's container starts, plus what that container gets from them.
// Kept here so the runner and the reconciler (which recreates a crashed container) do the same.

#include "core/deploy/services.h"
#include "core/services/appservices.h"
#include "core/spec/appspec.h"

namespace pando::core {

// Refuses a spec with services when the install has no services adapter or the app's runtime
// is not the one services run on.
Status checkServicesPlan(const Services &s, const AppSpec &spec);
// Provisions the spec's slots (none: nothing to do, an empty result); seeds from checkoutDir
// (AppServices::provision; empty: none are loaded).
Result<ProvisionedServices> provisionServices(const Services &s, const QString &app, const AppSpec &spec,
                                              const CancelToken &cancel, const QString &checkoutDir = {});
// Adds the variables and networks to the container, and takes the variables out again.
void applyServices(const ProvisionedServices &provisioned, adapters::ContainerSpec &container);
void scrubServices(const ProvisionedServices &provisioned, adapters::ContainerSpec &container);
// Whether a container is a service's rather than one of the app's own.
bool isServiceContainer(const adapters::ContainerInfo &container);

} // namespace pando::core
