#pragma once
// The API's route table: every route the server answers, with the permission it needs and the
// handler that serves it. Routes are registered only from this table, and the table is checked at
// compile time so that a route without a known permission cannot exist.

#include "core/engine/engine.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <span>
#include <string_view>

namespace pando::server {

// Permissions a route may require. The admin token holds them all; roles come later.
namespace permission {
inline constexpr std::string_view Public = "public";
inline constexpr std::string_view AppsRead = "apps.read";
inline constexpr std::string_view AppsWrite = "apps.write";
inline constexpr std::string_view DeploysWrite = "deploys.write";
inline constexpr std::string_view LogsRead = "logs.read";
inline constexpr std::string_view PipelinesRead = "pipelines.read";   // pipelines, runs, secret names
inline constexpr std::string_view PipelinesWrite = "pipelines.write"; // set, pause, remove; secrets
inline constexpr std::string_view RunsWrite = "runs.write";           // trigger and abort runs
inline constexpr std::string_view AuditRead = "audit.read";
inline constexpr std::string_view All[] = {Public,        AppsRead,       AppsWrite, DeploysWrite, LogsRead,
                                           PipelinesRead, PipelinesWrite, RunsWrite, AuditRead};
} // namespace permission

// What a handler may read of the request. A copy: handlers run on the server's worker threads,
// after Qt's request object is gone.
struct RequestData {
    QString method;
    QUrl url;
    QByteArray body;
    QByteArray contentType;
    QByteArray authorization;
    QString peer; // the client's address
};

// What a handler gets: the engine, the request, the path's {placeholders} in order and who asks.
struct Call {
    core::Engine &engine;
    const RequestData &request;
    QStringList args;
    core::Actor actor;
};

struct Reply {
    int status = 200;
    QJsonObject body;
};

using Handler = Reply (*)(Call &call);

struct RouteDef {
    std::string_view method;     // "GET", "POST", "PUT", "DELETE"
    std::string_view path;       // "/api/v1/apps/{name}": {x} matches one non-empty segment
    std::string_view permission; // one of permission::All
    bool webSocket = false;      // served over a WebSocket after the upgrade
    Handler handler = nullptr;   // for WebSocket routes: answers a plain GET without upgrade
};

// The table, in the order routes are matched.
std::span<const RouteDef> routeDefs();

struct RouteMatch {
    const RouteDef *route = nullptr; // the route for this method and path, if any
    bool pathKnown = false;          // some route has this path (with another method)
    QStringList args;
};
RouteMatch matchRoute(const QString &method, const QString &path);

constexpr bool isKnownPermission(std::string_view p)
{
    for (std::string_view known : permission::All) {
        if (known == p)
            return true;
    }
    return false;
}

} // namespace pando::server
