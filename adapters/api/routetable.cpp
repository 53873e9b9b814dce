#include "routetable.h"

#include "oskit.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <algorithm>

#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters {

namespace {

QJsonObject routeEntry(const Route &route)
{
    QJsonObject entry{{u"app"_s, route.app}, {u"port"_s, route.port}};
    if (!route.backendHost.isEmpty()) {
        entry.insert(u"backendHost"_s, route.backendHost);
        entry.insert(u"backendPort"_s, route.backendPort);
    }
    return entry;
}

Result<Route> routeFromEntry(const QJsonObject &entry, const QString &where)
{
    Route route;
    route.app = entry.value(u"app"_s).toString();
    route.port = entry.value(u"port"_s).toInt();
    route.backendHost = entry.value(u"backendHost"_s).toString();
    route.backendPort = entry.value(u"backendPort"_s).toInt();
    if (route.app.isEmpty() || route.port < 1 || route.port > 65535 ||
        (!route.backendHost.isEmpty() && (route.backendPort < 1 || route.backendPort > 65535)))
        return fail(ErrorCode::Invalid, u"an app without a name, or a port out of range"_s, where);
    return route;
}

QJsonObject addressJson(const Address &address)
{
    return {{"host"_L1, address.host}, {"path"_L1, address.path}, {"tls"_L1, tlsModeName(address.tls)}};
}

Result<Address> addressFrom(const QJsonObject &object, const QString &where,
                            const std::function<Status(const Address &, const QString &)> &checkAddress)
{
    Address address;
    address.host = object.value("host"_L1).toString();
    address.path = object.value("path"_L1).toString(u"/"_s);
    const QString tls = object.value("tls"_L1).toString(u"auto"_s);
    if (tls == "auto"_L1)
        address.tls = TlsMode::Auto;
    else if (tls == "internal"_L1)
        address.tls = TlsMode::Internal;
    else if (tls == "off"_L1)
        address.tls = TlsMode::Off;
    else
        return fail(ErrorCode::Invalid, u"TLS mode \"%1\" is not auto, internal or off"_s.arg(tls), where + ".tls"_L1);
    if (address.host.isEmpty() || !address.path.startsWith(u'/'))
        return fail(ErrorCode::Invalid, u"an address needs a host and a path starting with \"/\""_s, where);
    if (checkAddress)
        if (auto checked = checkAddress(address, where); !checked)
            return std::unexpected(checked.error());
    return address;
}

} // namespace

Result<std::optional<QHash<QString, Route>>> withBackend(const QHash<QString, Route> &routes, const QString &app,
                                                         const QString &host, int port)
{
    if (port < 1 || port > 65535)
        return fail(ErrorCode::Invalid, u"backend port %1 is outside 1-65535"_s.arg(port), u"port"_s);
    if (host.isEmpty())
        return fail(ErrorCode::Invalid, u"backend host is empty"_s, u"host"_s);
    auto it = routes.constFind(app);
    if (it == routes.constEnd())
        return fail(ErrorCode::NotFound, u"app %1 has no route"_s.arg(app), u"app"_s, u"call ensure() first"_s);
    if (it->backendHost == host && it->backendPort == port)
        return std::nullopt;
    QHash<QString, Route> next = routes;
    next[app].backendHost = host;
    next[app].backendPort = port;
    return next;
}

Result<int> unheldPort(int requested, const QHash<QString, Route> &routes)
{
    QSet<int> held;
    for (const Route &route : routes)
        held.insert(route.port);
    for (int attempt = 0; attempt < 20; ++attempt) {
        int bound = 0;
        auto fd = bindLoopbackPort(requested, &bound);
        if (!fd)
            return std::unexpected(fd.error());
        ::close(*fd);
        if (!held.contains(bound))
            return bound;
    }
    return fail(ErrorCode::Unavailable, u"no free loopback port that no route holds"_s, u"port"_s);
}

Result<Route> ensureRoute(const QHash<QString, Route> &routes, const QString &app, int requestedPort,
                          const std::function<Result<int>(int requested)> &pickPort,
                          const std::function<Status(const QHash<QString, Route> &)> &apply,
                          const std::function<QUrl(const Route &)> &urlOf)
{
    auto kept = routeToKeep(routes, app, requestedPort);
    if (!kept)
        return std::unexpected(kept.error());
    if (const Route *existing = *kept)
        return *existing;
    // A port picked as free can be taken by another process before the router listens on it:
    // when any port would do, another one is picked (a few times) instead of failing.
    constexpr int Picks = 5;
    for (int pick = 1;; ++pick) {
        auto port = pickPort(requestedPort);
        if (!port)
            return std::unexpected(port.error());
        Route route;
        route.app = app;
        route.port = *port;
        if (urlOf)
            route.url = urlOf(route);
        QHash<QString, Route> next = routes;
        next.insert(app, route);
        auto applied = apply(next);
        if (applied)
            return route;
        const bool taken = applied.error().code == ErrorCode::Conflict && applied.error().where == u"port"_s;
        if (requestedPort != 0 || !taken || pick == Picks)
            return std::unexpected(applied.error());
    }
}

Result<std::optional<QHash<QString, Route>>> withAddresses(const QHash<QString, Route> &routes, const QString &app,
                                                           const AddressChange &change,
                                                           const std::function<QUrl(const Address &)> &urlOf)
{
    // The spec's domains and paths make the addresses, so errors point at those.
    const QString domains = u"route.domains"_s;
    if (!routes.contains(app))
        return fail(ErrorCode::NotFound, u"app %1 has no route"_s.arg(app), u"app"_s, u"call ensure() first"_s);
    for (qsizetype i = 0; i < change.addresses.size(); ++i)
        for (qsizetype j = 0; j < i; ++j)
            if (change.addresses[i].host == change.addresses[j].host &&
                change.addresses[i].path == change.addresses[j].path)
                return fail(ErrorCode::Invalid,
                            u"%1%2 is listed twice"_s.arg(change.addresses[i].host, change.addresses[i].path), domains);
    for (const Route &other : routes) {
        if (other.app == app)
            continue;
        for (const Address &mine : change.addresses)
            for (const Address &theirs : other.addresses)
                if (mine.overlaps(theirs))
                    return fail(ErrorCode::Conflict,
                                u"%1%2 is served for app %3"_s.arg(theirs.host, theirs.path, other.app), domains,
                                u"pick another name or path, or move %1 first"_s.arg(other.app));
    }
    QHash<QString, Route> next = routes;
    Route &route = next[app];
    // An earlier redirect stays while where it leads is still served (a change that redirects makes
    // them all lead to the new address); one to where the app no longer is goes.
    QList<MovedAddress> moved = route.moved;
    if (change.redirectMoved && !change.addresses.isEmpty()) {
        const QUrl to = urlOf(change.addresses.first());
        for (MovedAddress &m : moved)
            m.to = to;
        for (const Address &old : std::as_const(route.addresses))
            if (!change.addresses.contains(old))
                moved.append({old, to});
    } else {
        moved.removeIf([&](const MovedAddress &m) {
            return std::ranges::none_of(change.addresses, [&](const Address &a) { return urlOf(a) == m.to; });
        });
    }
    // An address taken (back) by a route no longer redirects, for this app or any other.
    const auto taken = [&change](const MovedAddress &m) {
        return std::ranges::any_of(change.addresses, [&m](const Address &a) { return a.overlaps(m.from); });
    };
    moved.removeIf(taken);
    for (Route &other : next)
        if (other.app != app)
            other.moved.removeIf(taken);
    route.addresses = change.addresses;
    route.moved = moved;
    route.signIn = change.signIn;
    if (next == routes)
        return std::nullopt;
    return next;
}

QByteArray routeTableJson(const QHash<QString, Route> &routes)
{
    QStringList names = routes.keys();
    names.sort();
    QJsonArray list;
    for (const QString &name : std::as_const(names)) {
        const Route &route = routes[name];
        QJsonArray addresses;
        for (const Address &address : route.addresses)
            addresses.append(addressJson(address));
        QJsonArray moved;
        for (const MovedAddress &m : route.moved) {
            QJsonObject entry = addressJson(m.from);
            entry.insert("to"_L1, m.to.toString(QUrl::FullyEncoded));
            moved.append(entry);
        }
        QJsonObject entry = routeEntry(route);
        entry.insert("addresses"_L1, addresses);
        entry.insert("moved"_L1, moved);
        if (route.signIn)
            entry.insert("signIn"_L1, true);
        list.append(entry);
    }
    return QJsonDocument(QJsonObject{{"routes"_L1, list}}).toJson(QJsonDocument::Indented);
}

Result<QHash<QString, Route>>
routeTableFromJson(const QByteArray &json,
                   const std::function<Status(const Address &, const QString &where)> &checkAddress)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return fail(ErrorCode::Invalid, u"not a route table: %1"_s.arg(parseError.errorString()),
                    u"offset %1"_s.arg(parseError.offset));
    QHash<QString, Route> routes;
    const QJsonArray list = document.object().value("routes"_L1).toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QJsonObject entry = list[i].toObject();
        const QString where = u"routes[%1]"_s.arg(i);
        auto read = routeFromEntry(entry, where);
        if (!read)
            return std::unexpected(read.error());
        Route route = *read;
        if (routes.contains(route.app))
            return fail(ErrorCode::Invalid, u"a second route of app %1"_s.arg(route.app), where);
        route.signIn = entry.value("signIn"_L1).toBool();
        const QJsonArray addresses = entry.value("addresses"_L1).toArray();
        for (qsizetype a = 0; a < addresses.size(); ++a) {
            auto address = addressFrom(addresses[a].toObject(), u"%1.addresses[%2]"_s.arg(where).arg(a), checkAddress);
            if (!address)
                return std::unexpected(address.error());
            route.addresses << *address;
        }
        const QJsonArray moved = entry.value("moved"_L1).toArray();
        for (qsizetype m = 0; m < moved.size(); ++m) {
            const QString movedWhere = u"%1.moved[%2]"_s.arg(where).arg(m);
            auto from = addressFrom(moved[m].toObject(), movedWhere, checkAddress);
            if (!from)
                return std::unexpected(from.error());
            const QUrl to(moved[m].toObject().value("to"_L1).toString(), QUrl::StrictMode);
            if (!to.isValid() || to.host().isEmpty())
                return fail(ErrorCode::Invalid, u"the redirect's target is not a URL"_s, movedWhere + ".to"_L1);
            route.moved << MovedAddress{*from, to};
        }
        routes.insert(route.app, route);
    }
    return routes;
}

} // namespace pando::adapters
