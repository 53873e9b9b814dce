#pragma once
// An app's backing services over the API (core/services): list them, stream a backup of one,
// remove one. Listing needs apps.read; a backup holds the service's whole data, so it needs
// apps.write on the app like removal (its owner, an operator or an administrator). No answer,
// error or audit line holds a service's password.

#include "routes.h"

namespace pando::server::serviceapi {

Reply listAllServices(Call &call);
Reply listAppServices(Call &call);
// The dump as application/octet-stream, written first to a file in the install's data
// directory and streamed from there.
Reply backupService(Call &call);
Reply backupVolume(Call &call);
// ?data=keep|delete is required; a slot the app's spec still declares is refused (409).
Reply removeService(Call &call);

} // namespace pando::server::serviceapi
