#include "granthandlers.h"

#include "pipelinehandlers.h"
#include "replies.h"

#include "core/authz/grantservice.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::grantapi {

namespace {

using core::authz::ObjectKind;

QString objectText(ObjectKind kind, const QString &name)
{
    return core::authz::ObjectRef{kind, name, {}}.text();
}

QJsonObject grantJson(const core::authz::GrantView &view)
{
    return QJsonObject{{u"object"_s, objectText(view.grant.kind, view.grant.object)},
                       {u"user"_s, view.username},
                       {u"role"_s, view.grant.role},
                       {u"createdMs"_s, view.grant.createdMs}};
}

// The role check answers first, naming where the role came from (body or path).
std::optional<Reply> refuseRole(ObjectKind kind, const QString &role, const QString &where)
{
    auto checked = core::authz::checkGrantRole(kind, role);
    if (checked)
        return std::nullopt;
    Error error = checked.error();
    error.where = where;
    return errorReply(error);
}

Reply list(Call &call, ObjectKind kind)
{
    const QString name = call.args.value(0);
    auto grants = call.engine.grants(kind, name);
    if (!grants)
        return errorReply(grants.error());
    QJsonArray array;
    for (const core::authz::GrantView &view : std::as_const(*grants))
        array.append(grantJson(view));
    return Reply{200, QJsonObject{{u"object"_s, objectText(kind, name)}, {u"grants"_s, array}}};
}

Reply add(Call &call, ObjectKind kind)
{
    // Only the grant itself: the object is the URL's, never a field of the body.
    auto body =
        jsonObjectBody(call.request, {u"user"_s, u"role"_s},
                       u"{\"user\":\"bob\",\"role\":\"%1\"}"_s.arg(core::authz::grantRoles(kind).value(1, u"user"_s)));
    if (!body)
        return errorReply(body.error());
    for (const QString &field : {u"user"_s, u"role"_s}) {
        const QJsonValue value = body->value(field);
        if (value.isUndefined())
            return invalid(u"is missing"_s, field);
        if (!value.isString() || value.toString().isEmpty())
            return invalid(u"must be a non-empty string"_s, field);
    }
    const QString role = body->value(u"role"_s).toString();
    if (auto refused = refuseRole(kind, role, u"role"_s))
        return *refused;
    auto change = call.engine.addGrant(kind, call.args.value(0), body->value(u"user"_s).toString(), role, call.actor);
    if (!change)
        return errorReply(change.error());
    // An unchanged grant is 200: nothing was added, nothing audited.
    return Reply{change->created ? 201 : 200, grantJson(change->grant)};
}

Reply remove(Call &call, ObjectKind kind)
{
    const QString role = call.args.value(2);
    if (auto refused = refuseRole(kind, role, u"path.role"_s))
        return *refused;
    auto removed = call.engine.removeGrant(kind, call.args.value(0), call.args.value(1), role, call.actor);
    if (!removed) {
        Error error = removed.error();
        // The user is named by the path here, not by a body field.
        if (error.where == u"user")
            error.where = u"path.user"_s;
        return errorReply(error);
    }
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

Reply listConnectionGrants(Call &call)
{
    return list(call, ObjectKind::Connection);
}

Reply addConnectionGrant(Call &call)
{
    return add(call, ObjectKind::Connection);
}

Reply removeConnectionGrant(Call &call)
{
    return remove(call, ObjectKind::Connection);
}

} // namespace pando::server::grantapi
