#pragma once
// Specgate: who may write a spec revision that touches what the host policy watches. For an app
// under approval (by name or environment), a revision that points it at a new source repository,
// changes its egress rule, raises its limits above the thresholds or turns auto-deploy on may be
// written only by an operator or an admin; the deploy still needs sign-off, this only keeps
// members from staging such a change.

#include "adapters/api/error.h"
#include "core/accounts/accounts.h"
#include "core/policy/policy.h"
#include "core/spec/appspec.h"

namespace pando::core::policy {

// Ok, or ErrorCode::Forbidden naming what the revision changed and the role it needs.
Status maySpecWrite(const Policy &policy, accounts::Role role, const AppSpec *current, const AppSpec &next,
                    const QString &appName);

} // namespace pando::core::policy
