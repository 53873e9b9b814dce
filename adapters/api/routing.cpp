#include "routing.h"

using namespace Qt::StringLiterals;

namespace pando::adapters {

QString tlsModeName(TlsMode mode)
{
    switch (mode) {
    case TlsMode::Auto:
        return u"auto"_s;
    case TlsMode::Internal:
        return u"internal"_s;
    case TlsMode::Off:
        return u"off"_s;
    }
    return {};
}

QUrl Address::url(int httpPort, int httpsPort) const
{
    QUrl url;
    const bool secure = tls != TlsMode::Off;
    url.setScheme(secure ? u"https"_s : u"http"_s);
    url.setHost(host);
    const int port = secure ? httpsPort : httpPort;
    if (port != (secure ? 443 : 80))
        url.setPort(port);
    url.setPath(path);
    return url;
}

bool Address::covers(const QString &requestPath) const
{
    return path == u"/" || requestPath == path || requestPath.startsWith(path + u'/');
}

bool Address::overlaps(const Address &other) const
{
    return host == other.host && (covers(other.path) || other.covers(path));
}

Status Router::setAddresses(const QString &app, const AddressChange &change)
{
    if (change.signIn)
        return fail(ErrorCode::Invalid,
                    u"app %1 is for people signed in to Pando, but this edge cannot ask Pando who they are"_s.arg(app),
                    u"route.auth"_s, u"run Pando with the Caddy edge (--edge caddy), or leave route.auth out"_s);
    if (change.addresses.isEmpty())
        return {};
    return fail(ErrorCode::Invalid,
                u"app %1 names domains, but this edge serves apps on loopback ports only"_s.arg(app),
                u"route.domains"_s, u"run Pando with the Caddy edge (--edge caddy), or leave route.domains out"_s);
}

Result<const Route *> routeToKeep(const QHash<QString, Route> &routes, const QString &app, int requestedPort)
{
    if (app.isEmpty())
        return fail(ErrorCode::Invalid, u"app name is empty"_s, u"app"_s);
    if (requestedPort < 0 || requestedPort > 65535)
        return fail(ErrorCode::Invalid, u"port %1 is outside 0-65535"_s.arg(requestedPort), u"port"_s);
    if (auto it = routes.constFind(app); it != routes.constEnd()) {
        if (requestedPort != 0 && requestedPort != it->port)
            return fail(ErrorCode::Conflict,
                        u"app %1 is already routed on port %2, not %3"_s.arg(app).arg(it->port).arg(requestedPort),
                        u"port"_s, u"remove the route first to move it"_s);
        return &*it;
    }
    for (const Route &other : routes)
        if (requestedPort != 0 && other.port == requestedPort)
            return fail(ErrorCode::Conflict, u"port %1 is already in use"_s.arg(requestedPort), u"port"_s,
                        u"app %1 is routed on it; pick another port"_s.arg(other.app));
    return nullptr;
}

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

} // namespace pando::adapters
