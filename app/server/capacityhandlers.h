#pragma once
// Capacity over the API: each runtime's room beside what apps and services committed on it
// (core/capacity), the edge that serves the apps (docs/edge.md), and starting an app again
// after Pando stopped it (core/disklimit).

#include "routes.h"

namespace pando::server::capacityapi {

Reply showCapacity(Call &call);
Reply showEdge(Call &call);
// GET /api/v1/edge/ca: the install CA's root, for people to trust (docs/edge.md).
Reply showEdgeCa(Call &call);
Reply startApp(Call &call);
Reply stopApp(Call &call);
Reply restartApp(Call &call);

} // namespace pando::server::capacityapi
