#pragma once
// Package policy: the host's rules deciding whether a deploy needs sign-off before it runs. Rules
// match the app by name (glob), by its `environment` label, or by what changed between the spec
// being served and the new one (a new source repository, a change to the egress rule, resource
// limits raised above a threshold). The policy is read from JSON; every error names the path it was found at.
//
// Threading: a Policy is a value; decide() is const and may be called from any thread.

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace pando::core::policy {

struct Decision {
    bool needsApproval = false;
    QStringList reasons; // one line per rule that matched, for the approval's summary
};

// The file looks like:
//   { "apps": ["billing-*", "auth"],
//     "environments": ["prod", "production"],
//     "changes": { "newSourceRepo": true, "egress": true, "memoryAbove": "2Gi", "cpusAbove": 2 } }
// Every key is optional; unknown keys are refused so a typo does not silently weaken the policy.
struct Policy {
    QStringList appGlobs;     // '*' and '?' wildcards, whole-name match
    QStringList environments; // values of the spec label `environment`, compared exactly
    bool newSourceRepo = false;
    bool egress = false;         // network.egress differs from the serving spec's, either way
    qint64 memoryAboveBytes = 0; // 0: no memory rule
    double cpusAbove = 0;        // 0: no cpu rule

    // The app is under approval whatever changed: its name or environment matches. Both the
    // serving and the new spec's environment count, so dropping the label does not dodge the rule.
    bool appRequiresApproval(const AppSpec *current, const AppSpec &next, const QString &appName) const;
    // What changed that the change rules watch; empty when nothing did. A first deploy (current
    // null) has no "new repository" and no egress change, but limits above the thresholds count.
    QStringList gatedChanges(const AppSpec *current, const AppSpec &next) const;
    // Both of the above.
    Decision decide(const AppSpec *current, const AppSpec &next, const QString &appName) const;
    bool isEmpty() const;
};

// Errors: ErrorCode::Invalid with `where` set to the key path ("changes.memoryAbove").
Result<Policy> parsePolicy(const QByteArray &json);
// Reads and parses the file; errors name the file and the key path.
Result<Policy> loadPolicy(const QString &path);

// A glob with '*' and '?' matched against the whole name.
bool globMatches(const QString &glob, const QString &name);

} // namespace pando::core::policy
