#pragma once
// An app's secrets over the API (core/secrets): set a value, list names with their times and how
// each reaches the app, remove one. Values go in and never come back out: no answer, error,
// audit line or event holds one. Setting and removing need apps.write on the app (its owner, an
// operator or an administrator); listing needs apps.read, since names are no more secret than
// the spec that declares them.

#include "routes.h"

namespace pando::server::appsecretapi {

Reply listSecrets(Call &call);
Reply setSecret(Call &call);
Reply removeSecret(Call &call);

} // namespace pando::server::appsecretapi
