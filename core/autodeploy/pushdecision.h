#pragma once
// What a verified delivery means for one app: deploy (and what), or not (and why). Pure: the
// engine records and acts on the answer.

#include "core/autodeploy/forgehook.h"
#include "core/spec/appspec.h"

#include <QString>

namespace pando::core::autodeploy {

struct PushDecision {
    enum class Action { Deploy, Ignore, Refuse };
    Action action = Action::Ignore;
    // Deploy: what to deploy — the pushed commit for a branch, the tag's name for a tag (an
    // annotated tag's push names the tag object; the tag resolves to its commit).
    QString ref;
    QString reason; // Ignore and Refuse: why, for people; Deploy: what was pushed
};

// Refuse when the payload's repository is not the app's (no address of it names the same host
// and path as source.repo); Ignore a ping, another event, a deleted ref, a ref the app does not
// follow, or any push while source.autodeploy is not push; else Deploy.
PushDecision decidePush(const AppSpec &spec, const HookEvent &event);

// Whether two repository addresses name the same repository: the same host and path (case
// aside, without ".git" and the forges' decorations), whatever the transport. Local paths and
// file:// addresses compare as paths.
bool sameRepository(const QString &a, const QString &b);

} // namespace pando::core::autodeploy
