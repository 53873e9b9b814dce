#pragma once
// The audit log over the API: lines narrowed by actor, action, object and time, the chain's
// verification, and how far each audit sink is behind.

#include "routes.h"

namespace pando::server::auditapi {

Reply listAudit(Call &call);
Reply verifyAudit(Call &call);
Reply listSinks(Call &call);

} // namespace pando::server::auditapi
