#pragma once
// The API's route table: every route the server answers, with the permission it needs and the
// handler that serves it. Routes are registered only from this table, and the table is checked at
// compile time so that a route without a known permission cannot exist.

#include "app/server/connectionlimits.h"
#include "core/accounts/accounts.h"
#include "core/authz/authz.h"
#include "core/engine/engine.h"

#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

class QThreadPool;

namespace pando::server {

namespace detail {
class ServerState;
class WebSocketSession;
} // namespace detail

// Permissions a route may require: authz's (core/authz/authz.h decides who holds them).
namespace permission = core::authz::permission;

// Which URL argument names the object a route acts on, so that object-level checks (grants,
// token owners) happen in one place before the handler runs. The first {placeholder} is the
// argument; object IDs in a body never count. Undeclared exists only to make a route that says
// nothing fail the compile-time check.
enum class ObjectArg {
    Undeclared,
    None,     // no object (lists, creation, install-wide settings)
    App,      // {name} is an app
    Pipeline, // {name} is a pipeline
    Deploy,   // {id} is a deploy: its app
    Run,      // {id} is a run: its pipeline
    Token,    // {id} is an API token: its user
    Approval, // {id} is an approval: the app or pipeline of what it holds back
};

// What a handler may read of the request. A copy: handlers run on the server's worker threads,
// after Qt's request object is gone.
struct RequestData {
    QString method;
    QUrl url;
    QByteArray body;
    QByteArray contentType;
    QByteArray authorization;
    QString peer;         // the client's address
    QByteArray cookie;    // the Cookie header (read by GET /api/v1/edge/auth only)
    QByteArray assertion; // an X-Pando-Assertion header the request came with (edge auth refuses it)
    // What the edge says of the request it asks about or passes on (the edge routes and the
    // sign-in page only; anyone may send them, so they decide nothing about who asks).
    struct Forwarded {
        QByteArray method; // X-Forwarded-Method
        QByteArray uri;    // X-Forwarded-Uri
        QByteArray host;   // X-Forwarded-Host
        QByteArray proto;  // X-Forwarded-Proto
        QByteArray client; // X-Forwarded-For
    } forwarded;
    QByteArray accept; // Accept
    QByteArray origin; // Origin
    // The headers forges sign and name their deliveries with (X-GitHub-*, X-Gitlab-*, X-Hub-*,
    // ...; every X- header and Idempotency-Key), names lower-cased. Read by the webhook alone.
    QMap<QByteArray, QByteArray> forgeHeaders;
};

// What a handler gets: the engine, the request, the path's {placeholders} in order and who asks.
struct Call {
    core::Engine &engine;
    const RequestData &request;
    QStringList args;
    core::Actor actor;
    core::accounts::Principal principal;         // who asks (empty for public routes)
    const detail::ServerState *server = nullptr; // the serving ApiServer's live state
};

// A body streamed from a file instead of JSON (a service's backup): the server opens the file on
// its own thread when it writes the answer and sends it in chunks, never whole in memory. The
// file is removed when the last Reply holding it goes (an open file keeps being read after).
struct FileBody {
    QString path;
    QByteArray contentType;
    QByteArray disposition; // Content-Disposition
    FileBody() = default;
    FileBody(const FileBody &) = delete;
    FileBody &operator=(const FileBody &) = delete;
    ~FileBody();
};

struct Reply {
    int status = 200;
    QJsonObject body;
    std::shared_ptr<FileBody> file; // set: the body is this file, not JSON
    QByteArray contentType;         // set: the body is content (the edge's sign-in page), not JSON
    QByteArray content;
    // Headers beside Content-Type and X-Request-Id (the edge's X-Pando-Assertion, Cache-Control).
    QList<std::pair<QByteArray, QByteArray>> headers;
};

using Handler = Reply (*)(Call &call);

// What a WebSocket stream gets once its socket is upgraded, authenticated and authorized.
struct StreamCall {
    core::Engine &engine;
    detail::WebSocketSession &session;   // the socket; connections made with it as context end with it
    QUrl url;                            // with the query the stream reads
    QStringList args;                    // the path's {placeholders} in order
    QThreadPool &pool;                   // for store reads off the server's thread
    core::accounts::Principal principal; // who asks, as authorized at the upgrade
    core::Actor actor;                   // the same, as the audit log names it
    const ConnectionLimits *limits = nullptr;
    detail::ServerState *server = nullptr; // the serving ApiServer's live state
};
using StreamHandler = void (*)(StreamCall &call);

struct RouteDef {
    std::string_view method;     // "GET", "POST", "PUT", "DELETE"
    std::string_view path;       // "/api/v1/apps/{name}": {x} matches one non-empty segment; or a
                                 // well-known URL (/.well-known/jwks.json) that clients expect there
    std::string_view permission; // one of permission::All
    ObjectArg object = ObjectArg::Undeclared;
    bool webSocket = false;         // served over a WebSocket after the upgrade
    Handler handler = nullptr;      // for WebSocket routes: answers a plain GET without upgrade
    StreamHandler stream = nullptr; // WebSocket routes only: serves the socket after the upgrade
    // WebSocket routes only, optional: asked before the upgrade, once the route is authorized; an
    // answer other than 200 refuses the upgrade with that answer, so that a client learns that
    // the object is missing (404) or not ready (409) as HTTP, the way a 401 or 403 comes then too.
    Handler beforeUpgrade = nullptr;
};

// The table, in the order routes are matched.
std::span<const RouteDef> routeDefs();

struct RouteMatch {
    const RouteDef *route = nullptr; // the route for this method and path, if any
    bool pathKnown = false;          // some route has this path (with another method)
    QStringList args;                // each decoded once: "a%2Fb" is the one argument "a/b"
};
// Matches a request target's path as it came over the wire (QUrl::FullyEncoded): it is split at
// its slashes before the segments are decoded, so an encoded slash stays inside its argument.
RouteMatch matchRoute(const QString &method, const QString &encodedPath);

// Whether the route's handler waits on another host (a git remote): it runs on the server's
// network pool, apart from the routes that must stay responsive.
bool reachesOut(const RouteDef &route);

// A body whose Content-Type the route does not take, as the 415 answer: JSON routes take
// application/json (or application/*+json) only, the AppSpec routes YAML or JSON. Forms and
// text/plain, which a web page may send anywhere without asking, never reach a handler.
std::optional<Reply> refuseBodyType(const RouteDef &route, const RequestData &request);

constexpr bool isKnownPermission(std::string_view p)
{
    return core::authz::permission::isKnown(p);
}

} // namespace pando::server
