#include "routing.h"

#include "oskit.h"

#include <QRegularExpression>
#include <QSet>
#include <QSslCertificate>

#include <unistd.h>

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

Status Router::setChallengeAnswers(const QList<ChallengeAnswer> & /*answers*/)
{
    return fail(ErrorCode::Invalid, u"this edge gets its certificates itself"_s, u"edge-certificates"_s);
}

Status Router::setCertificates(const QList<ServedCertificate> & /*certificates*/)
{
    return fail(ErrorCode::Invalid, u"this edge gets its certificates itself"_s, u"edge-certificates"_s);
}

CertificateState certificateStateOf(const QString &host, const QByteArray &chainPem)
{
    CertificateState state;
    state.host = host;
    const QList<QSslCertificate> chain = QSslCertificate::fromData(chainPem, QSsl::Pem);
    if (chain.isEmpty())
        return state;
    const QStringList issuer = chain.first().issuerInfo(QSslCertificate::CommonName);
    state.issuer = issuer.isEmpty() ? chain.first().issuerDisplayName() : issuer.first();
    state.notAfter = chain.first().expiryDate();
    return state;
}

Status checkAppName(const QString &app)
{
    static const QRegularExpression label(uR"(^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\z)"_s);
    if (!label.match(app).hasMatch())
        return fail(ErrorCode::Invalid, u"app name \"%1\" is not a DNS label (a-z, 0-9, -)"_s.arg(app), u"app"_s);
    return {};
}

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

Status checkAddressSyntax(const Address &address, const QString &hostWhere, const QString &pathWhere)
{
    static const QRegularExpression host(
        uR"(^(\*\.)?([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\z)"_s);
    // Unreserved and sub-delims, ':', '@' and escapes: no backtick to end a rule's string.
    static const QRegularExpression path(uR"(^(/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+\z)"_s);
    if (address.host.size() > 253 || !host.match(address.host).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a lower-case host name (or *.name for a wildcard)"_s.arg(address.host), hostWhere);
    if (address.host.startsWith(u"*."_s) && !address.host.mid(2).contains(u'.'))
        return fail(ErrorCode::Invalid, u"wildcard \"%1\" covers a whole top-level domain"_s.arg(address.host),
                    hostWhere);
    if (address.path != u"/"_s && (address.path.size() > 1024 || !path.match(address.path).hasMatch()))
        return fail(ErrorCode::Invalid,
                    u"path \"%1\" is not \"/\" or \"/segment/...\" without a trailing slash"_s.arg(address.path),
                    pathWhere);
    return {};
}

QString escapeRe2(const QString &text)
{
    static const QString special = uR"(\.+*?()|[]{}^$)"_s;
    QString escaped;
    for (const QChar c : text) {
        if (special.contains(c))
            escaped += u'\\';
        escaped += c;
    }
    return escaped;
}

} // namespace pando::adapters
