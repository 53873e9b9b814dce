// Grants, ownership and request decisions: the engine's door to core/authz's GrantService, and the
// pipeline runner's set and remove with the owner grant and clean-up around them.

#include "core/engine/engineprivate.h"

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

Error noPipelineRunner()
{
    return Error{ErrorCode::Unavailable, u"the pipeline runner is not enabled"_s, u"pipelines"_s,
                 u"this install runs without the pipeline runner; enable it in pandod's configuration"_s};
}

} // namespace

Status Engine::Private::checkGrantObject(authz::ObjectKind kind, const QString &name)
{
    if (kind == authz::ObjectKind::Connection) {
        auto store = connectionStore();
        if (!store)
            return std::unexpected(store.error());
        if (auto connection = store->find(name); !connection)
            return std::unexpected(connection.error());
        return {};
    }
    if (kind == authz::ObjectKind::App) {
        if (auto app = AppRepository(db).find(name); !app)
            return std::unexpected(app.error());
        return {};
    }
    if (!pipelines)
        return std::unexpected(noPipelineRunner());
    if (auto pipeline = pipelines->pipeline(name); !pipeline)
        return std::unexpected(pipeline.error());
    return {};
}

Result<accounts::User> Engine::Private::grantee(const QString &username)
{
    if (!accounts)
        return fail(ErrorCode::Unavailable, u"this install has no accounts"_s, u"accounts"_s,
                    u"start pandod with accounts"_s);
    auto user = accounts->user(username);
    if (!user && user.error().code == ErrorCode::NotFound)
        return fail(ErrorCode::NotFound, u"there is no user \"%1\""_s.arg(username), u"user"_s,
                    u"pando users list shows the users"_s);
    return user;
}

Result<QList<authz::GrantView>> Engine::grants(authz::ObjectKind kind, const QString &object)
{
    if (auto exists = d->checkGrantObject(kind, object); !exists)
        return std::unexpected(exists.error());
    if (!d->accounts)
        return fail(ErrorCode::Unavailable, u"this install has no accounts"_s, u"accounts"_s,
                    u"start pandod with accounts"_s);
    auto users = d->accounts->users();
    if (!users)
        return std::unexpected(users.error());
    return d->grants.list(kind, object, *users);
}

Result<authz::GrantChange> Engine::addGrant(authz::ObjectKind kind, const QString &object, const QString &username,
                                            const QString &role, const Actor &actor)
{
    if (auto checked = authz::checkGrantRole(kind, role); !checked)
        return std::unexpected(checked.error());
    if (auto exists = d->checkGrantObject(kind, object); !exists)
        return std::unexpected(exists.error());
    auto user = d->grantee(username);
    if (!user)
        return std::unexpected(user.error());
    return d->grants.add(kind, object, *user, role, actor);
}

Status Engine::removeGrant(authz::ObjectKind kind, const QString &object, const QString &username, const QString &role,
                           const Actor &actor)
{
    if (auto checked = authz::checkGrantRole(kind, role); !checked)
        return checked;
    if (auto exists = d->checkGrantObject(kind, object); !exists)
        return exists;
    auto user = d->grantee(username);
    if (!user)
        return std::unexpected(user.error());
    return d->grants.remove(kind, object, *user, role, actor);
}

Result<authz::Decision> Engine::authorize(const accounts::Principal &principal, std::string_view permission,
                                          const authz::ObjectRef &object, const Actor &actor, const QString &route)
{
    return d->grants.authorize(principal, permission, object, actor, route);
}

void Engine::setAuthzOptions(const authz::AuthzOptions &options)
{
    d->grants.setOptions(options);
}

Result<authz::Visibility> Engine::visibility(const accounts::Principal &principal)
{
    return authz::Authorizer(d->db, d->grants.options()).visibility(principal);
}

authz::ObjectRef Engine::approvalSubject(const QString &approvalObject)
{
    using authz::ObjectKind;
    const QString kind = approvalObject.section(u'/', 0, 0);
    const QString id = approvalObject.section(u'/', 1);
    if (kind == u"run"_s) {
        if (d->pipelines)
            if (auto tree = d->pipelines->runTree(id))
                return {ObjectKind::Pipeline, tree->run.pipeline, {}};
        return {ObjectKind::Pipeline, {}, {}};
    }
    if (kind == u"deploy"_s)
        if (auto deploy = deployView(id))
            return {ObjectKind::App, deploy->record.app, {}};
    return {ObjectKind::App, {}, {}};
}

Result<QList<ApprovalRecord>> Engine::approvalsVisibleTo(const accounts::Principal &principal, const QString &status,
                                                         int limit)
{
    auto visible = visibility(principal);
    if (!visible)
        return std::unexpected(visible.error());
    constexpr int Page = 200;
    QList<ApprovalRecord> out;
    for (int offset = 0; out.size() < limit; offset += Page) {
        auto page = d->approvals.list(status, Page, offset);
        if (!page)
            return std::unexpected(page.error());
        for (ApprovalRecord &approval : *page)
            if (out.size() < limit && visible->sees(approvalSubject(approval.object)))
                out.append(std::move(approval));
        if (page->size() < Page)
            break;
    }
    return out;
}

authz::ObjectRef Engine::subjectOf(const Event &event)
{
    using authz::ObjectKind;
    if (isApprovalEvent(event.type))
        return approvalSubject(event.data.value(u"object"_s).toString());
    if (isRunEvent(event.type) || isPipelineEvent(event.type))
        return {ObjectKind::Pipeline, event.data.value(u"pipeline"_s).toString(), {}};
    if (!event.app.isEmpty())
        return {ObjectKind::App, event.app, {}};
    return {};
}

Result<pipelines::SetPipelineResult> Engine::setPipeline(const QString &name, const QByteArray &configYaml,
                                                         const QByteArray &varsYaml,
                                                         const pipelines::SetPipelineOptions &options,
                                                         const Actor &actor)
{
    if (!d->pipelines)
        return std::unexpected(noPipelineRunner());
    auto result = d->pipelines->setPipeline(name, configYaml, varsYaml, options, actor);
    if (!result || !result->created || options.dryRun)
        return result;
    if (auto owned = d->grants.grantOwner(authz::ObjectKind::Pipeline, name, actor); !owned) {
        // Nothing half-created: a pipeline nobody owns could be managed only by operators.
        if (auto undone = d->pipelines->removePipeline(name, Actor::system(u"grants"_s)); !undone)
            qWarning("engine: removing pipeline %s after its owner grant failed: %s", qPrintable(name),
                     qPrintable(undone.error().text()));
        return std::unexpected(owned.error());
    }
    return result;
}

Result<pipelines::SetPipelineResult> Engine::setPipeline(const QString &name, const QByteArray &configYaml,
                                                         const QByteArray &varsYaml, bool dryRun, const Actor &actor)
{
    return setPipeline(name, configYaml, varsYaml, pipelines::SetPipelineOptions{.dryRun = dryRun}, actor);
}

Result<pipelines::PipelineView> Engine::renamePipeline(const accounts::Principal &principal, const QString &from,
                                                       const QString &to, const Actor &actor)
{
    if (!d->pipelines)
        return std::unexpected(noPipelineRunner());
    auto decision = authorize(principal, authz::permission::PipelinesWrite, {authz::ObjectKind::Pipeline, {}, {}},
                              actor, u"pipeline.rename %1 to %2"_s.arg(from, to));
    if (!decision)
        return std::unexpected(decision.error());
    if (!*decision)
        return fail(ErrorCode::Forbidden, decision->reason, u"name"_s);
    return d->pipelines->renamePipeline(from, to, actor);
}

Status Engine::removePipeline(const QString &name, const Actor &actor)
{
    if (!d->pipelines)
        return std::unexpected(noPipelineRunner());
    if (auto removed = d->pipelines->removePipeline(name, actor); !removed)
        return removed;
    // A new pipeline of the same name must not inherit who could act on this one.
    return d->grants.clear(authz::ObjectKind::Pipeline, name);
}

} // namespace pando::core
