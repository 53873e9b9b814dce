#pragma once
// The REST handlers of a pipeline's resources: each one's last check and pin, the versions
// checks found, pinning and unpinning a version, and checking now. Who may do which is the route
// table's (handlers.cpp) and core's decision; these parse, call the PipelineService, serialise.

#include "routes.h"

namespace pando::server::resourceapi {

Reply listResources(Call &call);
Reply listVersions(Call &call);
Reply pinVersion(Call &call);
Reply unpinVersion(Call &call);
Reply checkNow(Call &call);

} // namespace pando::server::resourceapi
