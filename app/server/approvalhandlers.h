#pragma once
// Approvals over the API: the requests the host policy and pipelines' approve steps raised, and
// deciding them. Deciding needs approvals.write on what the request holds back (the deploy's app
// or the run's pipeline); the approvers list and the rule that nobody approves their own request
// are the approval service's.

#include "routes.h"

namespace pando::server::approvalapi {

Reply listApprovals(Call &call);
Reply showApproval(Call &call);
Reply approve(Call &call);
Reply reject(Call &call);

// The object an approval holds back, for authorization: its deploy's app or its run's pipeline.
// An unknown approval gives an empty name.
core::authz::ObjectRef objectOf(core::Engine &engine, const QString &approvalId);

} // namespace pando::server::approvalapi
