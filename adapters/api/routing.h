#pragma once
// The routing adapter interface: the stable address an app is reached at, and which running
// container it leads to. Switching a route's backend is what makes a redeploy seamless.
//
// Threading: every call may be made from any thread; implementations that run an event loop
// of their own hand the call over to it and return once it took effect.

#include "error.h"

#include <QHash>
#include <QString>
#include <QUrl>
#include <optional>

namespace pando::adapters {

struct Route {
    QString app;
    int port = 0;        // the stable port (loopback router)
    QUrl url;            // where people reach the app
    QString backendHost; // empty: no backend yet
    int backendPort = 0;
};

// What serves the routes, for `pando edge status`, GET /api/v1/edge and the desktop's status line.
struct RouterStatus {
    QString kind;               // "caddy", "in-process"
    bool running = true;        // it answers: apps are reachable through it
    bool outlivesPando = false; // apps keep answering while Pando is stopped
    qint64 pid = 0;             // its process, when it has one of its own
    int routes = 0;
    QString problem; // empty while it serves as it should; else what is wrong and what to do
};

class Router {
public:
    virtual ~Router() = default;

    // Creates the route or returns the existing one. requestedPort 0 picks a free port;
    // a taken port is ErrorCode::Conflict.
    virtual Result<Route> ensure(const QString &app, int requestedPort) = 0;
    // New connections go to host:port from now on; open ones finish where they started.
    virtual Status setBackend(const QString &app, const QString &host, int port) = 0;
    // Stops serving the route and frees its port; a missing route is not an error.
    virtual Status remove(const QString &app) = 0;
    virtual std::optional<Route> route(const QString &app) = 0;
    // Makes sure what serves the routes runs (an edge in its own process is started again with
    // the routes it had); an error when it cannot. Called on every reconciler pass.
    virtual Status check() { return {}; }
    virtual RouterStatus status() = 0;
};

// What every router checks before it routes app on requestedPort (0: any) among its routes: bad
// input is Invalid; the app's route (in routes) when it has one on that port (or any); Conflict
// when it is routed on another port or another app holds that one; null when a new route may be
// made.
Result<const Route *> routeToKeep(const QHash<QString, Route> &routes, const QString &app, int requestedPort);

} // namespace pando::adapters
