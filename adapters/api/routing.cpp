#include "routing.h"

#include <QRegularExpression>
#include <QSslCertificate>

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
