#pragma once
// Accounts over the API: the one-time bootstrap of the first administrator, login sessions,
// users (administrators only) and API tokens (each user their own; administrators everyone's).
// Every route answers 503 while the engine has no account service.

#include "routes.h"

namespace pando::server::accountapi {

Reply bootstrap(Call &call);
Reply login(Call &call);
Reply logout(Call &call);
Reply listUsers(Call &call);
Reply createUser(Call &call);
Reply disableUser(Call &call);
Reply listTokens(Call &call);
Reply createToken(Call &call);
Reply revokeToken(Call &call);

} // namespace pando::server::accountapi
