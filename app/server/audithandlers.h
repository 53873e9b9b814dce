#pragma once
// The audit log over the API: lines narrowed by actor, action, object and time, and the chain's
// verification.

#include "routes.h"

namespace pando::server::auditapi {

Reply listAudit(Call &call);
Reply verifyAudit(Call &call);

} // namespace pando::server::auditapi
