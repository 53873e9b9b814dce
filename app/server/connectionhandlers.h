#pragma once
// Source connections over the API (core/sourceconn; /api/v1/source-connections, apart from
// /api/v1/connections, the devices connected to this install): the forges and the credentials that read
// private repositories. Listing and showing need apps.read and answer only the connections the
// caller may use (administrators all); adding, testing, removing and granting are install
// settings (settings.write). A credential goes in once and never comes back out: no answer,
// error or audit line holds one.

#include "routes.h"

namespace pando::server::connectionapi {

Reply listConnections(Call &call);
Reply showConnection(Call &call);
Reply addConnection(Call &call);
Reply removeConnection(Call &call);
Reply testConnection(Call &call);
// An OAuth connection (settings.write): begun with the connection's fields, the application's
// client_secret and the caller's loopback redirect_uri, or again for one there is; completed with
// the state and the code the forge sent to redirect_uri.
Reply beginAuthorization(Call &call);
Reply reauthorizeConnection(Call &call);
Reply completeAuthorization(Call &call);
// What the connection's forge API shows (apps.read, for whoever may use it): the repositories its
// token sees, and ?repo='s branches.
Reply connectionRepositories(Call &call);
Reply connectionBranches(Call &call);

} // namespace pando::server::connectionapi
