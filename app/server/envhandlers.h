#pragma once
// An app's environment over the API (docs/api.md): what its container finds there and from where
// (GET; values of run.env's and Pando's only), and run.env changed as a new spec revision that
// keeps the rest of the spec's text (PATCH; the spec's writers only, as PUT /api/v1/apps/{name}).

#include "routes.h"

namespace pando::server::envapi {

Reply showEnv(Call &call);
Reply changeEnv(Call &call);

} // namespace pando::server::envapi
