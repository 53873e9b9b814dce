#include "audithandlers.h"

#include "replies.h"

#include <QJsonArray>

namespace pando::server::auditapi {

Reply listAudit(Call &call)
{
    core::AuditRepository::Filter filter;
    filter.actor = queryParam(call.request, QStringLiteral("actor"));
    filter.action = queryParam(call.request, QStringLiteral("action"));
    filter.object = queryParam(call.request, QStringLiteral("object"));
    auto since = int64Param(call.request, QStringLiteral("since_ms"), 0, 0, std::numeric_limits<qint64>::max());
    auto until = int64Param(call.request, QStringLiteral("until_ms"), 0, 0, std::numeric_limits<qint64>::max());
    auto limit = intParam(call.request, QStringLiteral("limit"), 100, 1, 10000);
    for (const auto *param : {&since, &until})
        if (!*param)
            return errorReply(param->error());
    if (!limit)
        return errorReply(limit.error());
    filter.sinceMs = *since;
    filter.untilMs = *until;
    filter.limit = *limit;
    auto lines = call.engine.auditLines(filter);
    if (!lines)
        return errorReply(lines.error());
    QJsonArray list;
    for (const core::AuditRecord &line : std::as_const(*lines))
        list.append(core::toJson(line));
    return Reply{200, QJsonObject{{QStringLiteral("lines"), list}}};
}

Reply verifyAudit(Call &call)
{
    auto broken = call.engine.verifyAudit();
    if (!broken)
        return errorReply(broken.error());
    auto newest = call.engine.auditLines(core::AuditRepository::Filter{.limit = 1});
    const qint64 count = newest && !newest->isEmpty() ? newest->first().seq : 0;
    const auto &firstBroken = *broken;
    QJsonObject body{{QStringLiteral("ok"), !firstBroken.has_value()}, {QStringLiteral("lines"), count}};
    if (firstBroken)
        body.insert(QStringLiteral("first_broken"), *firstBroken);
    return Reply{200, body};
}

Reply listSinks(Call &call)
{
    auto sinks = call.engine.auditSinks();
    if (!sinks)
        return errorReply(sinks.error());
    QJsonArray list;
    for (const core::AuditSinkReport &sink : std::as_const(*sinks)) {
        QJsonObject item{{QStringLiteral("name"), sink.name},
                         {QStringLiteral("kind"), sink.kind},
                         {QStringLiteral("cursor"), sink.cursor},
                         {QStringLiteral("newest"), sink.newest},
                         {QStringLiteral("lag"), sink.lag},
                         {QStringLiteral("failures"), sink.failures},
                         {QStringLiteral("updated_ms"), sink.updatedMs}};
        item.insert(QStringLiteral("last_error"),
                    sink.lastError.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(sink.lastError));
        item.insert(QStringLiteral("last_delivery_ms"),
                    sink.lastDeliveryMs == 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(sink.lastDeliveryMs));
        list.append(item);
    }
    return Reply{200, QJsonObject{{QStringLiteral("sinks"), list}}};
}

} // namespace pando::server::auditapi
