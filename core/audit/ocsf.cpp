#include "ocsf.h"

#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

constexpr int kClassUid = 6003;
constexpr int kCategoryUid = 6;

std::pair<int, QString> activityOf(const QString &action)
{
    // "app.create" → "create"; "tokens.revoke" → "revoke"; an action without a dot is its verb.
    const QString verb = action.section(u'.', -1).toLower();
    static const QStringList creates = {u"create"_s, u"add"_s, u"register"_s};
    static const QStringList reads = {u"get"_s, u"list"_s, u"show"_s, u"read"_s, u"view"_s};
    static const QStringList deletes = {u"delete"_s, u"remove"_s, u"revoke"_s, u"destroy"_s};
    if (creates.contains(verb))
        return {1, u"Create"_s};
    if (reads.contains(verb))
        return {2, u"Read"_s};
    if (deletes.contains(verb))
        return {4, u"Delete"_s};
    return {3, u"Update"_s};
}

} // namespace

QJsonObject ocsfEvent(const AuditRecord &line)
{
    const auto [activityId, activityName] = activityOf(line.action);
    const bool success = line.outcome == u"success"_s;
    const bool denied = line.outcome == u"denied"_s;

    QJsonObject event;
    event.insert(u"class_uid"_s, kClassUid);
    event.insert(u"class_name"_s, u"API Activity"_s);
    event.insert(u"category_uid"_s, kCategoryUid);
    event.insert(u"category_name"_s, u"Application Activity"_s);
    event.insert(u"activity_id"_s, activityId);
    event.insert(u"activity_name"_s, activityName);
    event.insert(u"type_uid"_s, kClassUid * 100 + activityId);
    event.insert(u"type_name"_s, QString(u"API Activity: "_s + activityName));
    event.insert(u"time"_s, line.timeMs);
    event.insert(u"severity_id"_s, success ? 1 : denied ? 3 : 2);
    event.insert(u"severity"_s, success ? u"Informational"_s : denied ? u"Medium"_s : u"Low"_s);
    event.insert(u"status_id"_s, success ? 1 : 2);
    event.insert(u"status"_s, success ? u"Success"_s : u"Failure"_s);
    if (!success)
        event.insert(u"status_detail"_s, line.outcome);
    event.insert(u"message"_s, QString(line.actor + u' ' + line.action + u' ' + line.object + u": "_s + line.outcome));

    QJsonObject user{{u"name"_s, line.actor}};
    const bool system = line.actor.startsWith(u"system"_s);
    user.insert(u"type_id"_s, system ? 3 : 1);
    user.insert(u"type"_s, system ? u"System"_s : u"User"_s);
    event.insert(u"actor"_s, QJsonObject{{u"user"_s, user}});

    QJsonObject api{{u"operation"_s, line.action}};
    if (!line.requestId.isEmpty())
        api.insert(u"request"_s, QJsonObject{{u"uid"_s, line.requestId}});
    event.insert(u"api"_s, api);

    QJsonObject resource{{u"uid"_s, line.object}};
    const qsizetype slash = line.object.indexOf(u'/');
    if (slash > 0) {
        resource.insert(u"type"_s, line.object.left(slash));
        resource.insert(u"name"_s, line.object.mid(slash + 1));
    } else {
        resource.insert(u"name"_s, line.object);
    }
    event.insert(u"resources"_s, QJsonArray{resource});

    QHostAddress address;
    // A source may carry a port ("10.0.0.7:51234"); only a bare address is an ip.
    if (address.setAddress(line.source))
        event.insert(u"src_endpoint"_s, QJsonObject{{u"ip"_s, address.toString()}});
    else
        event.insert(u"src_endpoint"_s, QJsonObject{{u"name"_s, line.source}});
    event.insert(u"cloud"_s, QJsonObject{{u"provider"_s, u"self-hosted"_s}});

    QJsonObject metadata{{u"version"_s, u"1.1.0"_s},
                         {u"product"_s, QJsonObject{{u"name"_s, u"Pando"_s}, {u"vendor_name"_s, u"Pando"_s}}},
                         {u"uid"_s, line.hash},
                         {u"log_name"_s, u"audit"_s},
                         {u"sequence"_s, line.seq}};
    if (!line.requestId.isEmpty())
        metadata.insert(u"correlation_uid"_s, line.requestId);
    event.insert(u"metadata"_s, metadata);

    QJsonObject unmapped{{u"seq"_s, line.seq}, {u"hash"_s, line.hash}, {u"prevHash"_s, line.prevHash}};
    if (!line.detail.isEmpty()) {
        const QJsonDocument doc = QJsonDocument::fromJson(line.detail.toUtf8());
        if (doc.isObject())
            unmapped.insert(u"detail"_s, doc.object());
        else
            unmapped.insert(u"detail"_s, line.detail);
    }
    event.insert(u"unmapped"_s, unmapped);
    return event;
}

} // namespace pando::core
