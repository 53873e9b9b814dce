#include "granthandlers.h"

#include "pipelinehandlers.h"
#include "replies.h"

#include "core/accounts/accountservice.h"
#include "core/authz/authz.h"
#include "core/pipelines/service/pipelineservice.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::grantapi {

namespace {

using core::authz::Grant;
using core::authz::GrantRepository;
using core::authz::ObjectKind;

QStringList validRoles(ObjectKind kind)
{
    return kind == ObjectKind::App ? QStringList{u"owner"_s, u"deployer"_s, u"viewer"_s}
                                   : QStringList{u"owner"_s, u"operator"_s, u"viewer"_s};
}

QString objectText(ObjectKind kind, const QString &name)
{
    return core::authz::objectKindName(kind) + u'/' + name;
}

// The object the URL names must exist: a grant on nothing would pass to the next object of that
// name.
Status checkObject(Call &call, ObjectKind kind, const QString &name)
{
    if (kind == ObjectKind::App) {
        auto app = call.engine.app(name);
        if (!app)
            return std::unexpected(app.error());
        return {};
    }
    core::pipelines::PipelineService *pipelines = call.engine.pipelines();
    if (!pipelines)
        return std::unexpected(pipelineapi::notEnabled());
    auto pipeline = pipelines->pipeline(name);
    if (!pipeline)
        return std::unexpected(pipeline.error());
    return {};
}

Result<core::accounts::AccountService *> accountService(Call &call)
{
    core::accounts::AccountService *accounts = call.engine.accounts();
    if (!accounts)
        return fail(ErrorCode::Unavailable, u"this install has no accounts"_s, call.request.url.path(),
                    u"start pandod with accounts"_s);
    return accounts;
}

// The user a grant names, by username; an unknown one is NotFound naming it.
Result<core::accounts::User> grantee(Call &call, const QString &username, const QString &where)
{
    auto accounts = accountService(call);
    if (!accounts)
        return std::unexpected(accounts.error());
    auto user = (*accounts)->user(username);
    if (!user && user.error().code == ErrorCode::NotFound)
        return fail(ErrorCode::NotFound, u"there is no user \"%1\""_s.arg(username), where,
                    u"pando users list shows the users"_s);
    return user;
}

Status checkRole(ObjectKind kind, const QString &role, const QString &where)
{
    if (core::authz::isValidGrantRole(kind, role))
        return {};
    return fail(ErrorCode::Invalid,
                u"\"%1\" is not a grant role for a %2"_s.arg(role, core::authz::objectKindName(kind)), where,
                u"the roles are: %1"_s.arg(validRoles(kind).join(u", "_s)));
}

QJsonObject grantJson(const Grant &grant, const QString &username)
{
    return QJsonObject{{u"object"_s, objectText(grant.kind, grant.object)},
                       {u"user"_s, username},
                       {u"role"_s, grant.role},
                       {u"createdMs"_s, grant.createdMs}};
}

Reply list(Call &call, ObjectKind kind)
{
    const QString name = call.args.value(0);
    if (auto exists = checkObject(call, kind, name); !exists)
        return errorReply(exists.error());
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto grants = GrantRepository(call.engine.database()).list(kind, name);
    if (!grants)
        return errorReply(grants.error());
    auto users = (*accounts)->users();
    if (!users)
        return errorReply(users.error());
    QHash<QString, QString> usernames;
    for (const core::accounts::User &user : std::as_const(*users))
        usernames.insert(user.id, user.username);
    QJsonArray array;
    for (const Grant &grant : std::as_const(*grants))
        array.append(grantJson(grant, usernames.value(grant.userId, grant.userId)));
    return Reply{200, QJsonObject{{u"object"_s, objectText(kind, name)}, {u"grants"_s, array}}};
}

Reply add(Call &call, ObjectKind kind)
{
    const QString name = call.args.value(0);
    // Only the grant itself: the object is the URL's, never a field of the body.
    auto body = jsonObjectBody(call.request, {u"user"_s, u"role"_s},
                               u"{\"user\":\"bob\",\"role\":\"%1\"}"_s.arg(validRoles(kind).value(1)));
    if (!body)
        return errorReply(body.error());
    for (const QString &field : {u"user"_s, u"role"_s}) {
        const QJsonValue value = body->value(field);
        if (value.isUndefined())
            return invalid(u"is missing"_s, field);
        if (!value.isString() || value.toString().isEmpty())
            return invalid(u"must be a non-empty string"_s, field);
    }
    const QString username = body->value(u"user"_s).toString();
    const QString role = body->value(u"role"_s).toString();
    if (auto checked = checkRole(kind, role, u"role"_s); !checked)
        return errorReply(checked.error());
    if (auto exists = checkObject(call, kind, name); !exists)
        return errorReply(exists.error());
    auto user = grantee(call, username, u"user"_s);
    if (!user)
        return errorReply(user.error());

    GrantRepository grants(call.engine.database());
    auto held = grants.roles(kind, name, user->id);
    if (!held)
        return errorReply(held.error());
    const Grant grant{kind, name, user->id, role, call.engine.clock().nowMs()};
    if (held->contains(role)) {
        // Nothing changes, so nothing is audited; the answer says so.
        return Reply{200, grantJson(grant, user->username)};
    }
    if (auto added = grants.add(grant); !added)
        return errorReply(added.error());
    if (auto audited = call.engine.audit().record(call.actor, u"grant.add"_s, objectText(kind, name), u"success"_s,
                                                  QJsonObject{{u"user"_s, user->username}, {u"role"_s, role}});
        !audited)
        return errorReply(audited.error());
    return Reply{201, grantJson(grant, user->username)};
}

Reply remove(Call &call, ObjectKind kind)
{
    const QString name = call.args.value(0);
    const QString username = call.args.value(1);
    const QString role = call.args.value(2);
    if (auto checked = checkRole(kind, role, u"path.role"_s); !checked)
        return errorReply(checked.error());
    if (auto exists = checkObject(call, kind, name); !exists)
        return errorReply(exists.error());
    auto user = grantee(call, username, u"path.user"_s);
    if (!user)
        return errorReply(user.error());
    GrantRepository grants(call.engine.database());
    auto held = grants.roles(kind, name, user->id);
    if (!held)
        return errorReply(held.error());
    if (!held->contains(role))
        return errorReply(Error{ErrorCode::NotFound,
                                u"%1 holds no %2 grant on %3"_s.arg(user->username, role, objectText(kind, name)),
                                u"path"_s, u"pando grants list %1 shows the grants"_s.arg(objectText(kind, name))});
    if (auto removed = grants.remove(kind, name, user->id, role); !removed)
        return errorReply(removed.error());
    if (auto audited = call.engine.audit().record(call.actor, u"grant.remove"_s, objectText(kind, name), u"success"_s,
                                                  QJsonObject{{u"user"_s, user->username}, {u"role"_s, role}});
        !audited)
        return errorReply(audited.error());
    return Reply{204, {}};
}

} // namespace

Reply listAppGrants(Call &call)
{
    return list(call, ObjectKind::App);
}

Reply addAppGrant(Call &call)
{
    return add(call, ObjectKind::App);
}

Reply removeAppGrant(Call &call)
{
    return remove(call, ObjectKind::App);
}

Reply listPipelineGrants(Call &call)
{
    // Without the runner every pipeline route answers 503, whatever the request holds.
    if (!call.engine.pipelines())
        return errorReply(pipelineapi::notEnabled());
    return list(call, ObjectKind::Pipeline);
}

Reply addPipelineGrant(Call &call)
{
    // Without the runner every pipeline route answers 503, whatever the request holds.
    if (!call.engine.pipelines())
        return errorReply(pipelineapi::notEnabled());
    return add(call, ObjectKind::Pipeline);
}

Reply removePipelineGrant(Call &call)
{
    // Without the runner every pipeline route answers 503, whatever the request holds.
    if (!call.engine.pipelines())
        return errorReply(pipelineapi::notEnabled());
    return remove(call, ObjectKind::Pipeline);
}

} // namespace pando::server::grantapi
