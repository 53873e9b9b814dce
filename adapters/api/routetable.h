#pragma once
// What the routers that keep their own route table share (the Caddy, Traefik and Cloudflare
// edges): how a route is made and its backend switched, the rules by which an app's addresses
// change, and the table as they write it down beside their configuration (read back when Pando
// starts again).

#include "adapters/api/error.h"
#include "adapters/api/routing.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QUrl>
#include <functional>
#include <optional>

namespace pando::adapters {

// The route table with app's backend switched to host:port, for a router's setBackend(): Invalid
// for a bad backend, NotFound when app has no route, nullopt when it already leads there.
Result<std::optional<QHash<QString, Route>>> withBackend(const QHash<QString, Route> &routes, const QString &app,
                                                         const QString &host, int port);

// A 127.0.0.1 port (requested, or any) that nothing listens on and no route in routes holds, for
// a router that promises a route's port before anything listens on it (Traefik, Cloudflare);
// Conflict when something listens on the requested one.
Result<int> unheldPort(int requested, const QHash<QString, Route> &routes);

// A router's ensure() after its checks: app's route when routeToKeep() keeps it, else a new one
// on the port pickPort gives for requestedPort (with the URL urlOf gives, when set), put in place
// through apply. With requestedPort 0, a port apply finds taken (Conflict at "port") is picked
// again, up to five times.
Result<Route> ensureRoute(const QHash<QString, Route> &routes, const QString &app, int requestedPort,
                          const std::function<Result<int>(int requested)> &pickPort,
                          const std::function<Status(const QHash<QString, Route> &)> &apply,
                          const std::function<QUrl(const Route &)> &urlOf = {});

// The route table with app's addresses as change says, for a router's setAddresses(): NotFound
// when app has no route; Invalid when an address is listed twice; Conflict (at route.domains,
// naming the other app) when another app serves an address that overlaps one of them; nullopt
// when nothing changes. An address the app no longer lists redirects to urlOf(the first new one)
// when the change asks for it (earlier redirects follow to the new place), else it is dropped
// (with the earlier redirects that lead to an address it drops); an address taken (back) by a
// route stops redirecting, for this app and every other.
Result<std::optional<QHash<QString, Route>>> withAddresses(const QHash<QString, Route> &routes, const QString &app,
                                                           const AddressChange &change,
                                                           const std::function<QUrl(const Address &)> &urlOf);

// The table as JSON: apps by name, each with its port, backend, addresses, moved addresses and
// whether people must sign in. URLs are not kept: each router knows its own.
QByteArray routeTableJson(const QHash<QString, Route> &routes);
// Read back: Invalid, with where ("routes[2].addresses[0].tls"), for anything it would not have
// written; checkAddress (optional) adds a router's own rules for an address.
Result<QHash<QString, Route>>
routeTableFromJson(const QByteArray &json,
                   const std::function<Status(const Address &, const QString &where)> &checkAddress = {});

} // namespace pando::adapters
