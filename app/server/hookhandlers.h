#pragma once
// Deploy on push over the API (core/autodeploy, docs/autodeploy.md). The webhook itself
// (POST /api/v1/hooks/{name}) is public: forges hold no bearer token, and the delivery's
// signature, checked by the engine against the app's secret, is its authorization. Reading an
// app's webhook and its deliveries needs apps.read; making a new secret apps.write.

#include "routes.h"

namespace pando::server::hookapi {

Reply receive(Call &call);
Reply show(Call &call);
Reply newSecret(Call &call);
// POST /api/v1/apps/{name}/hook/register: the webhook registered on the app's forge, with a new secret.
Reply registerOnForge(Call &call);
// GET /api/v1/apps/{name}/previews and DELETE /api/v1/apps/{name}/previews/{number}: the app's
// preview deployments, one per pull request, and removing one now.
Reply listPreviews(Call &call);
Reply removePreview(Call &call);

} // namespace pando::server::hookapi
