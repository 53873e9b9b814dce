#include "specgate.h"

#include "core/spec/specautodeploy.h"

using namespace Qt::StringLiterals;

namespace pando::core::policy {

Status maySpecWrite(const Policy &policy, accounts::Role role, const AppSpec *current, const AppSpec &next,
                    const QString &appName)
{
    if (role == accounts::Role::Admin || role == accounts::Role::Operator)
        return {};
    if (!policy.appRequiresApproval(current, next, appName))
        return {};
    QStringList changes = policy.gatedChanges(current, next);
    // Deploys on push still wait for sign-off, but who may have every push ask for one is the
    // same people who may stage the other gated changes.
    const auto off = AppSpec::Source::AutoDeploy::Mode::Off;
    if (next.source.autodeploy.mode != off && (!current || current->source.autodeploy.mode == off))
        changes << u"auto-deploy turns on (%1)"_s.arg(autoDeployModeName(next.source.autodeploy.mode));
    if (changes.isEmpty())
        return {};
    return fail(ErrorCode::Forbidden,
                u"a %1 may not write this revision of an app under approval: %2"_s.arg(accounts::roleName(role),
                                                                                       changes.join(u"; "_s)),
                u"app/"_s + appName, u"ask an operator or an admin to make this change"_s);
}

} // namespace pando::core::policy
