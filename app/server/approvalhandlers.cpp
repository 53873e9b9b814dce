#include "approvalhandlers.h"

#include "replies.h"

#include "core/pipelines/service/pipelineservice.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::approvalapi {

namespace {

Reply decide(Call &call, bool approveIt)
{
    auto body = jsonObjectBody(call.request, {u"reason"_s}, uR"({"reason": "checked the plan"})"_s);
    if (!body)
        return errorReply(body.error());
    const QJsonValue reason = body->value(u"reason"_s);
    if (!reason.isUndefined() && !reason.isString())
        return invalid(u"reason must be a string"_s, u"body.reason"_s);
    // The approval service holds the reason to its length.
    auto decided = call.engine.decideApproval(call.args.value(0), core::Approver{call.actor, call.principal.role},
                                              approveIt, reason.toString());
    if (!decided) {
        Error e = decided.error();
        if (e.where == u"reason"_s)
            e.where = u"body.reason"_s;
        return errorReply(e);
    }
    return Reply{200, decided->toJson()};
}

} // namespace

core::authz::ObjectRef objectOf(core::Engine &engine, const QString &approvalId)
{
    auto found = engine.approvals().find(approvalId);
    if (!found)
        return {core::authz::ObjectKind::App, {}, {}};
    const auto &approval = *found;
    if (!approval)
        return {core::authz::ObjectKind::App, {}, {}};
    return engine.approvalSubject(approval->object);
}

Reply listApprovals(Call &call)
{
    auto limit = intParam(call.request, u"limit"_s, 100, 1, 1000);
    if (!limit)
        return errorReply(limit.error());
    QString status = queryParam(call.request, u"status"_s);
    auto list = call.engine.approvalsVisibleTo(call.principal, status, *limit);
    if (!list) {
        Error e = list.error();
        if (e.where == u"status"_s)
            e.where = u"query.status"_s;
        return errorReply(e);
    }
    QJsonArray out;
    for (const core::ApprovalRecord &approval : std::as_const(*list)) {
        QJsonObject o = approval.toJson();
        o.remove(u"plan"_s); // the list is for overviews; show one for its plan
        out.append(o);
    }
    return Reply{200, QJsonObject{{u"approvals"_s, out}}};
}

Reply showApproval(Call &call)
{
    auto found = call.engine.approvals().find(call.args.value(0));
    if (!found)
        return errorReply(found.error());
    const auto &approval = *found;
    if (!approval)
        return errorReply(Error{ErrorCode::NotFound, u"no approval %1"_s.arg(call.args.value(0)), u"id"_s,
                                u"list them with `pando approvals list`"_s});
    return Reply{200, approval->toJson()};
}

Reply approve(Call &call)
{
    return decide(call, true);
}

Reply reject(Call &call)
{
    return decide(call, false);
}

} // namespace pando::server::approvalapi
