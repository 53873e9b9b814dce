#pragma once
// Per-object grants over the API: who holds owner, deployer or viewer on an app, and owner,
// operator or viewer on a pipeline (core/authz decides with them), and user on a source
// connection. Listing and changing them needs apps.write on the app, resp. pipelines.write on the
// pipeline: its owner, an operator or an administrator; a connection's are install settings. The
// object is the URL's; every change leaves an audit line (grant.add / grant.remove on app/NAME,
// pipeline/NAME or connection/NAME, the user and role in its detail).

#include "routes.h"

namespace pando::server::grantapi {

Reply listAppGrants(Call &call);
Reply addAppGrant(Call &call);
Reply removeAppGrant(Call &call);
Reply listPipelineGrants(Call &call);
Reply addPipelineGrant(Call &call);
Reply removePipelineGrant(Call &call);
Reply listConnectionGrants(Call &call);
Reply addConnectionGrant(Call &call);
Reply removeConnectionGrant(Call &call);

} // namespace pando::server::grantapi
