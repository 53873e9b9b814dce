#include "resourcehandlers.h"

#include "pipelinehandlers.h"
#include "replies.h"

#include "core/engine/engine.h"
#include "core/pipelines/service/pipelineservice.h"

#include <QJsonArray>

namespace pando::server::resourceapi {

using core::pipelines::PipelineService;

namespace {
constexpr int DefaultVersionLimit = 50;
constexpr int MaxVersionLimit = 1000;
} // namespace

Reply listResources(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(pipelineapi::notEnabled());
    auto resources = s->resources(call.args.value(0));
    if (!resources)
        return errorReply(resources.error());
    QJsonArray list;
    for (const core::pipelines::ResourceView &r : std::as_const(*resources))
        list.append(r.toJson());
    return Reply{200, QJsonObject{{QStringLiteral("resources"), list}}};
}

Reply listVersions(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(pipelineapi::notEnabled());
    auto limit = intParam(call.request, QStringLiteral("limit"), DefaultVersionLimit, 1, MaxVersionLimit);
    if (!limit)
        return errorReply(limit.error());
    auto versions = s->resourceVersions(call.args.value(0), call.args.value(1), *limit);
    if (!versions)
        return errorReply(versions.error());
    QJsonArray list;
    for (const core::pipelines::ResourceVersionView &v : std::as_const(*versions))
        list.append(v.toJson());
    return Reply{200, QJsonObject{{QStringLiteral("versions"), list}}};
}

Reply pinVersion(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(pipelineapi::notEnabled());
    const QString example = QStringLiteral("{\"version\": {\"ref\": \"abc123\"}}");
    auto body = jsonObjectBody(call.request, {QStringLiteral("version")}, example);
    if (!body)
        return errorReply(body.error());
    const QJsonValue version = body->value(QStringLiteral("version"));
    if (!version.isObject())
        return errorReply(Error{ErrorCode::Invalid, QStringLiteral("must be a version object of strings"),
                                QStringLiteral("version"), QStringLiteral("send ") + example});
    auto pinned = s->pinResource(call.args.value(0), call.args.value(1), version.toObject(), call.actor);
    if (!pinned)
        return errorReply(pinned.error());
    return Reply{200, pinned->toJson()};
}

Reply unpinVersion(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(pipelineapi::notEnabled());
    if (auto unpinned = s->unpinResource(call.args.value(0), call.args.value(1), call.actor); !unpinned)
        return errorReply(unpinned.error());
    return Reply{204, {}};
}

Reply checkNow(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(pipelineapi::notEnabled());
    // No body checks from the newest version; {"from": {...}} from that one (fly check-resource --from).
    const QString example = QStringLiteral("{\"from\": {\"ref\": \"abc123\"}}");
    auto body = jsonObjectBody(call.request, {QStringLiteral("from")}, example);
    if (!body)
        return errorReply(body.error());
    const QJsonValue from = body->value(QStringLiteral("from"));
    if (!from.isUndefined() && !from.isObject())
        return errorReply(Error{ErrorCode::Invalid, QStringLiteral("must be a version object of strings"),
                                QStringLiteral("from"), QStringLiteral("send ") + example});
    if (auto asked = s->checkResource(call.args.value(0), call.args.value(1), from.toObject(), call.actor); !asked)
        return errorReply(asked.error());
    QJsonObject reply{{QStringLiteral("status"), QStringLiteral("checking")}};
    if (!from.toObject().isEmpty())
        reply.insert(QStringLiteral("from"), from);
    return Reply{202, reply};
}

} // namespace pando::server::resourceapi
