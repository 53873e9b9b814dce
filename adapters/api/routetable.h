#pragma once
// What the routers that serve addresses share (the Caddy and Traefik edges): the rules by which
// an app's addresses change, and the route table as they write it down beside their
// configuration (routes.json, read back when Pando starts again).

#include "adapters/api/error.h"
#include "adapters/api/routing.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QUrl>
#include <functional>
#include <optional>

namespace pando::adapters {

// The route table with app's addresses as change says, for a router's setAddresses(): NotFound
// when app has no route; Invalid when an address is listed twice; Conflict (at route.domains,
// naming the other app) when another app serves an address that overlaps one of them; nullopt
// when nothing changes. An address the app no longer lists redirects to urlOf(the first new one)
// when the change asks for it (earlier redirects follow to the new place), and an address taken
// (back) by a route stops redirecting, for this app and every other.
Result<std::optional<QHash<QString, Route>>> withAddresses(const QHash<QString, Route> &routes, const QString &app,
                                                           const AddressChange &change,
                                                           const std::function<QUrl(const Address &)> &urlOf);

// The table as JSON: apps by name, each with its port, backend, addresses, moved addresses and
// whether people must sign in. URLs are not kept: each router knows its own.
QByteArray routeTableJson(const QHash<QString, Route> &routes);
// Read back: Invalid, with where ("routes[2].addresses[0].tls"), for anything it would not have
// written; checkAddress (optional) adds a router's own rules for an address.
Result<QHash<QString, Route>> routeTableFromJson(
    const QByteArray &json, const std::function<Status(const Address &, const QString &where)> &checkAddress = {});

} // namespace pando::adapters
