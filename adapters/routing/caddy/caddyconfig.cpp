#include "caddyconfig.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::adapters::caddy {

namespace {

constexpr auto ServerPrefix = "pando:"_L1;
constexpr auto HttpServer = "pando-edge:http"_L1;
constexpr auto HttpsServer = "pando-edge:https"_L1;

QString dialAddress(const QString &host, int port)
{
    return host.contains(u':') ? u"[%1]:%2"_s.arg(host).arg(port) : u"%1:%2"_s.arg(host).arg(port);
}

// "host:port" or "[v6]:port" back into its parts; port 0 when it is not one.
std::pair<QString, int> splitDial(const QString &dial)
{
    const qsizetype colon = dial.lastIndexOf(u':');
    if (colon <= 0)
        return {};
    QString host = dial.left(colon);
    if (host.startsWith(u'[') && host.endsWith(u']'))
        host = host.mid(1, host.size() - 2);
    return {host, dial.mid(colon + 1).toInt()};
}

QString listenAddress(const QString &host, int port)
{
    if (host.isEmpty())
        return u":%1"_s.arg(port);
    return dialAddress(host, port);
}

QJsonObject unavailable(const QString &body)
{
    return {{"handler"_L1, "static_response"_L1}, {"status_code"_L1, 503}, {"body"_L1, body}};
}

// A reverse_proxy handler to pandod's API, which answers only to the names it knows: the request
// carries the API's own host:port, not the app's.
QJsonObject toPando(const IdentityCheck &identity)
{
    QJsonObject proxy{{"handler"_L1, "reverse_proxy"_L1},
                      {"upstreams"_L1, QJsonArray{QJsonObject{{"dial"_L1, identity.dial}}}}};
    if (!identity.caFile.isEmpty()) {
        QJsonObject tls{{"root_ca_pem_files"_L1, QJsonArray{identity.caFile}}};
        if (!identity.tlsName.isEmpty())
            tls.insert("server_name"_L1, identity.tlsName);
        proxy.insert("transport"_L1, QJsonObject{{"protocol"_L1, "http"_L1}, {"tls"_L1, tls}});
    }
    return proxy;
}

QJsonObject setHeaders(const QJsonObject &headers)
{
    return {{"request"_L1, QJsonObject{{"set"_L1, headers}}}};
}

// Asks pandod whether the request's credential may reach app (GET /api/v1/edge/auth): on a 2xx
// the request goes on with the assertion pandod minted (replacing any the client sent, which
// pandod refuses anyway); any other answer goes back to the client as it is.
QJsonObject askPando(const QString &app, const IdentityCheck &identity)
{
    QJsonObject ask = toPando(identity);
    ask.insert("rewrite"_L1, QJsonObject{{"method"_L1, "GET"_L1}, {"uri"_L1, u"/api/v1/edge/auth?app=%1"_s.arg(app)}});
    ask.insert("headers"_L1, setHeaders({{"Host"_L1, QJsonArray{"{http.reverse_proxy.upstream.hostport}"_L1}},
                                         {"X-Forwarded-Method"_L1, QJsonArray{"{http.request.method}"_L1}},
                                         {"X-Forwarded-Uri"_L1, QJsonArray{"{http.request.uri}"_L1}}}));
    const QJsonObject passAssertion{
        {"handler"_L1, "headers"_L1},
        {"request"_L1,
         QJsonObject{{"set"_L1, QJsonObject{{"X-Pando-Assertion"_L1,
                                             QJsonArray{"{http.reverse_proxy.header.X-Pando-Assertion}"_L1}}}}}}};
    ask.insert(
        "handle_response"_L1,
        QJsonArray{QJsonObject{{"match"_L1, QJsonObject{{"status_code"_L1, QJsonArray{2}}}},
                               {"routes"_L1, QJsonArray{QJsonObject{{"handle"_L1, QJsonArray{passAssertion}}}}}}});
    return ask;
}

// One of pandod's sign-in and sign-out pages (at path on the app's host, at pandoPath on pandod's
// API), on the app's own host so that the session cookie it sets or clears is that host's.
QJsonObject pandoPage(QLatin1StringView path, QLatin1StringView pandoPath, const QString &app,
                      const IdentityCheck &identity)
{
    QJsonObject page = toPando(identity);
    page.insert("rewrite"_L1, QJsonObject{{"uri"_L1, u"%1?app=%2&{http.request.uri.query}"_s.arg(pandoPath, app)}});
    page.insert("headers"_L1, setHeaders({{"Host"_L1, QJsonArray{"{http.reverse_proxy.upstream.hostport}"_L1}},
                                          {"X-Forwarded-Host"_L1, QJsonArray{"{http.request.hostport}"_L1}},
                                          {"X-Forwarded-Proto"_L1, QJsonArray{"{http.request.scheme}"_L1}}}));
    return {{"match"_L1, QJsonArray{QJsonObject{{"path"_L1, QJsonArray{path, QString(path + u"/*"_s)}}}}},
            {"handle"_L1, QJsonArray{page}},
            {"terminal"_L1, true}};
}

// The app's backend, or a 503 that says it has none yet. An app for people signed in to Pando
// gets the sign-in page and the check first (caddyconfig.h).
QJsonObject appHandler(const Route &route, const IdentityCheck &identity)
{
    if (route.backendHost.isEmpty())
        return unavailable(u"%1 has no running version yet\n"_s.arg(route.app));
    QJsonObject proxy{
        {"handler"_L1, "reverse_proxy"_L1},
        {"upstreams"_L1, QJsonArray{QJsonObject{{"dial"_L1, dialAddress(route.backendHost, route.backendPort)}}}}};
    if (!route.signIn)
        return proxy;
    if (identity.dial.isEmpty())
        return unavailable(u"%1 is for people signed in to Pando, and Pando is not serving its API\n"_s.arg(route.app));
    // The person's Pando credential stays with Pando; the app's own cookies and Authorization go on.
    proxy.insert(
        "headers"_L1,
        QJsonObject{
            {"request"_L1,
             QJsonObject{
                 {"replace"_L1,
                  QJsonObject{{"Cookie"_L1, QJsonArray{QJsonObject{
                                                {"search_regexp"_L1, R"re((^|;\s*)pando_session=[^;]*(;\s*|$))re"_L1},
                                                {"replace"_L1, "$1"_L1}}}},
                              {"Authorization"_L1,
                               QJsonArray{QJsonObject{{"search_regexp"_L1, R"re(^[Bb]earer\s+pando(sess)?_\S*$)re"_L1},
                                                      {"replace"_L1, ""_L1}}}}}}}}});
    const QJsonObject checked{{"handle"_L1, QJsonArray{askPando(route.app, identity), proxy}}};
    return {{"handler"_L1, "subroute"_L1},
            {"routes"_L1,
             QJsonArray{pandoPage(QLatin1StringView(SignInPath), "/api/v1/edge/sign-in"_L1, route.app, identity),
                        pandoPage(QLatin1StringView(SignOutPath), "/api/v1/edge/sign-out"_L1, route.app, identity),
                        checked}}};
}

// The app's backend in a handler appHandler() made: its reverse_proxy (last in a subroute).
QJsonObject backendHandler(const QJsonObject &handler)
{
    if (handler.value("handler"_L1).toString() != "subroute"_L1)
        return handler;
    const QJsonArray handle = handler.value("routes"_L1).toArray().last().toObject().value("handle"_L1).toArray();
    return handle.isEmpty() ? QJsonObject{} : handle.last().toObject();
}

QJsonObject redirectHandler(const QString &location)
{
    return {{"handler"_L1, "static_response"_L1},
            {"status_code"_L1, 308},
            {"headers"_L1, QJsonObject{{"Location"_L1, QJsonArray{location}}}}};
}

QJsonObject matcher(const Address &address)
{
    QJsonObject match{{"host"_L1, QJsonArray{address.host}}};
    if (address.path != u"/")
        match.insert("path"_L1, QJsonArray{address.path, QString(address.path + u"/*"_s)});
    return match;
}

QJsonObject routeOf(const Address &address, const QJsonObject &handler)
{
    return {{"match"_L1, QJsonArray{matcher(address)}}, {"handle"_L1, QJsonArray{handler}}, {"terminal"_L1, true}};
}

// Exact names before wildcards, longer paths before shorter, then by name: the first route that
// matches is the one that serves, and the order never depends on a hash's.
bool servesFirst(const Address &a, const Address &b)
{
    const bool aWild = a.host.startsWith(u"*."_s);
    const bool bWild = b.host.startsWith(u"*."_s);
    if (aWild != bWild)
        return !aWild;
    if (a.path.size() != b.path.size())
        return a.path.size() > b.path.size();
    return std::pair(a.host, a.path) < std::pair(b.host, b.path);
}

// Where a moved address sends a request: the new address, with the rest of the request's URI
// when the path did not change.
QString locationFor(const MovedAddress &moved)
{
    QUrl base = moved.to;
    if (base.path() == moved.from.path || (base.path().isEmpty() && moved.from.path == u"/")) {
        base.setPath({});
        return base.toString(QUrl::StripTrailingSlash) + u"{http.request.uri}"_s;
    }
    return moved.to.toString();
}

// Whether the address a moved one leads to serves: plain HTTP and the install's CA at once (Caddy
// issues from its own CA as it loads), an ACME name once its certificate exists.
bool serves(const QHash<QString, Route> &routes, const QUrl &to,
            const std::function<bool(const QString &)> &hasCertificate)
{
    for (const Route &route : routes)
        for (const Address &address : route.addresses)
            if (address.host == to.host() && address.tls == TlsMode::Auto)
                return !hasCertificate || hasCertificate(address.host);
    return true;
}

struct Entry {
    Address address;
    QJsonObject handler;
};

QJsonArray routesArray(QList<Entry> entries)
{
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) { return servesFirst(a.address, b.address); });
    QJsonArray routes;
    for (const Entry &entry : std::as_const(entries))
        routes.append(routeOf(entry.address, entry.handler));
    return routes;
}

// What a request no route matched gets (Caddy's own answer would be an empty 200).
QJsonObject noAppHere()
{
    return {{"handle"_L1, QJsonArray{QJsonObject{{"handler"_L1, "static_response"_L1},
                                                 {"status_code"_L1, 404},
                                                 {"body"_L1, "no app is served at this address\n"_L1}}}}};
}

// The CA's HTTP-01 requests, answered with what Pando says, ahead of the redirect to HTTPS.
QJsonArray challengeRoutes(const QList<ChallengeAnswer> &answers)
{
    QJsonArray routes;
    for (const ChallengeAnswer &answer : answers)
        routes.append(QJsonObject{
            {"match"_L1, QJsonArray{QJsonObject{
                             {"host"_L1, QJsonArray{answer.host}},
                             {"path"_L1, QJsonArray{QString(u"/.well-known/acme-challenge/"_s + answer.token)}}}}},
            {"handle"_L1,
             QJsonArray{QJsonObject{{"handler"_L1, "static_response"_L1},
                                    {"status_code"_L1, 200},
                                    {"headers"_L1, QJsonObject{{"Content-Type"_L1, QJsonArray{"text/plain"_L1}}}},
                                    {"body"_L1, answer.keyAuthorization}}}},
            {"terminal"_L1, true}});
    return routes;
}

} // namespace

bool movesSettled(const QHash<QString, Route> &routes, const std::function<bool(const QString &)> &hasCertificate)
{
    for (const Route &route : routes)
        for (const MovedAddress &moved : route.moved)
            if (!serves(routes, moved.to, hasCertificate))
                return false;
    return true;
}

QByteArray renderConfig(const ConfigInput &input)
{
    const EdgeSite &site = input.site;
    QJsonObject servers;
    QList<Entry> secure;
    QList<Entry> plain;
    QStringList autoHosts;
    QStringList internalHosts;
    for (const Route &route : input.routes) {
        const QJsonObject handler = appHandler(route, input.identity);
        QJsonObject server;
        server.insert("listen"_L1, QJsonArray{u"127.0.0.1:%1"_s.arg(route.port)});
        server.insert("automatic_https"_L1, QJsonObject{{"disable"_L1, true}});
        server.insert("routes"_L1, QJsonArray{QJsonObject{{"handle"_L1, QJsonArray{handler}}}});
        servers.insert(ServerPrefix + route.app, server);
        for (const Address &address : route.addresses) {
            if (address.tls == TlsMode::Off) {
                plain.append({address, handler});
                continue;
            }
            secure.append({address, handler});
            QStringList &hosts = address.tls == TlsMode::Auto ? autoHosts : internalHosts;
            if (!hosts.contains(address.host))
                hosts.append(address.host);
        }
        for (const MovedAddress &moved : route.moved) {
            // Until the new address serves, the old one still serves the app.
            const QJsonObject handle =
                serves(input.routes, moved.to, input.hasCertificate) ? redirectHandler(locationFor(moved)) : handler;
            (moved.from.tls == TlsMode::Off ? plain : secure).append({moved.from, handle});
            if (moved.from.tls != TlsMode::Off) {
                QStringList &hosts = moved.from.tls == TlsMode::Auto ? autoHosts : internalHosts;
                if (!hosts.contains(moved.from.host))
                    hosts.append(moved.from.host);
            }
        }
    }
    // HTTP requests for names served over TLS go to HTTPS.
    QStringList secureHosts = autoHosts + internalHosts;
    secureHosts.sort();
    const QString httpsAuthority =
        site.httpsPort == 443 ? u"{http.request.host}"_s : u"{http.request.host}:%1"_s.arg(site.httpsPort);
    const bool pandoIssues = site.certificates == CertificateSource::Pando;
    autoHosts.sort();
    if (!secure.isEmpty()) {
        QJsonArray routes = routesArray(secure);
        routes.append(noAppHere());
        QJsonObject automaticHttps{{"disable_redirects"_L1, true}};
        if (pandoIssues && !autoHosts.isEmpty())
            automaticHttps.insert("skip_certificates"_L1, QJsonArray::fromStringList(autoHosts));
        servers.insert(HttpsServer,
                       QJsonObject{{"listen"_L1, QJsonArray{listenAddress(site.listenHost, site.httpsPort)}},
                                   {"routes"_L1, routes},
                                   {"automatic_https"_L1, automaticHttps}});
    }
    if (!secure.isEmpty() || !plain.isEmpty()) {
        QJsonArray routes = pandoIssues ? challengeRoutes(input.challenges) : QJsonArray();
        for (const QJsonValue route : routesArray(plain))
            routes.append(route);
        if (!secureHosts.isEmpty())
            routes.append(QJsonObject{
                {"match"_L1, QJsonArray{QJsonObject{{"host"_L1, QJsonArray::fromStringList(secureHosts)}}}},
                {"handle"_L1, QJsonArray{redirectHandler(u"https://"_s + httpsAuthority + u"{http.request.uri}"_s)}},
                {"terminal"_L1, true}});
        routes.append(noAppHere());
        servers.insert(HttpServer, QJsonObject{{"listen"_L1, QJsonArray{listenAddress(site.listenHost, site.httpPort)}},
                                               {"routes"_L1, routes}});
    }

    QJsonObject http;
    http.insert("http_port"_L1, site.httpPort);
    http.insert("https_port"_L1, site.httpsPort);
    // A load waits for old servers' requests at most this long; longer ones are cut.
    http.insert("grace_period"_L1, "10s"_L1);
    http.insert("servers"_L1, servers);
    QJsonObject apps{{"http"_L1, http}};

    QJsonArray policies;
    internalHosts.sort();
    if (!autoHosts.isEmpty() && !pandoIssues) {
        QJsonObject issuer{{"module"_L1, "acme"_L1}};
        if (!site.acmeDirectory.isEmpty())
            issuer.insert("ca"_L1, site.acmeDirectory);
        if (!site.acmeEmail.isEmpty())
            issuer.insert("email"_L1, site.acmeEmail);
        if (!site.acmeRootFile.isEmpty())
            issuer.insert("trusted_roots_pem_files"_L1, QJsonArray{site.acmeRootFile});
        if (site.acmeChallenge == u"http-01")
            issuer.insert("challenges"_L1, QJsonObject{{"tls-alpn"_L1, QJsonObject{{"disabled"_L1, true}}}});
        else if (site.acmeChallenge == u"tls-alpn-01")
            issuer.insert("challenges"_L1, QJsonObject{{"http"_L1, QJsonObject{{"disabled"_L1, true}}}});
        policies.append(
            QJsonObject{{"subjects"_L1, QJsonArray::fromStringList(autoHosts)}, {"issuers"_L1, QJsonArray{issuer}}});
    }
    if (!internalHosts.isEmpty())
        policies.append(QJsonObject{{"subjects"_L1, QJsonArray::fromStringList(internalHosts)},
                                    {"issuers"_L1, QJsonArray{QJsonObject{{"module"_L1, "internal"_L1},
                                                                          {"ca"_L1, QLatin1String(InstallCaId)}}}}});
    QJsonObject tls;
    if (!policies.isEmpty()) {
        QJsonObject automation{{"policies"_L1, policies}};
        if (site.renewCheckSeconds > 0)
            automation.insert("renew_interval"_L1, u"%1s"_s.arg(site.renewCheckSeconds));
        tls.insert("automation"_L1, automation);
    }
    if (pandoIssues && !input.certificates.isEmpty()) {
        QJsonArray loaded;
        for (const ServedCertificate &certificate : input.certificates)
            loaded.append(QJsonObject{{"certificate"_L1, QString::fromLatin1(certificate.chainPem)},
                                      {"key"_L1, QString::fromLatin1(certificate.keyPem)},
                                      {"tags"_L1, QJsonArray{certificate.host}}});
        tls.insert("certificates"_L1, QJsonObject{{"load_pem"_L1, loaded}});
    }
    if (!tls.isEmpty())
        apps.insert("tls"_L1, tls);
    // The install's CA, made once and kept in the edge's storage; never put in the system's trust
    // store (people add its root where they choose: GET /api/v1/edge/ca).
    apps.insert("pki"_L1, QJsonObject{{"certificate_authorities"_L1,
                                       QJsonObject{{QLatin1String(InstallCaId),
                                                    QJsonObject{{"name"_L1, "Pando install CA"_L1},
                                                                {"root_common_name"_L1, "Pando install CA root"_L1},
                                                                {"install_trust"_L1, false}}}}}});

    QJsonObject adminConfig;
    adminConfig.insert("listen"_L1, QString(u"unix/"_s + input.adminSocket));
    adminConfig.insert("config"_L1, QJsonObject{{"persist"_L1, false}});
    QJsonObject config;
    config.insert("admin"_L1, adminConfig);
    config.insert("logging"_L1,
                  QJsonObject{{"logs"_L1, QJsonObject{{"default"_L1, QJsonObject{{"level"_L1, "WARN"_L1}}}}}});
    config.insert("storage"_L1, QJsonObject{{"module"_L1, "file_system"_L1}, {"root"_L1, input.storageDir}});
    config.insert("apps"_L1, apps);
    return QJsonDocument(config).toJson(QJsonDocument::Compact);
}

QHash<QString, Route> routesOfServers(const QJsonObject &servers)
{
    QHash<QString, Route> routes;
    for (auto it = servers.constBegin(); it != servers.constEnd(); ++it) {
        if (!it.key().startsWith(ServerPrefix))
            continue;
        const QJsonObject server = it.value().toObject();
        Route route;
        route.app = it.key().mid(ServerPrefix.size());
        route.port = splitDial(server.value("listen"_L1).toArray().first().toString()).second;
        if (route.app.isEmpty() || route.port <= 0)
            continue;
        route.url = QUrl(u"http://127.0.0.1:%1/"_s.arg(route.port));
        const QJsonObject served =
            server.value("routes"_L1).toArray().first().toObject().value("handle"_L1).toArray().first().toObject();
        route.signIn = served.value("handler"_L1).toString() == "subroute"_L1;
        const QJsonObject handler = backendHandler(served);
        if (handler.value("handler"_L1).toString() == "reverse_proxy"_L1) {
            const auto [host, port] =
                splitDial(handler.value("upstreams"_L1).toArray().first().toObject().value("dial"_L1).toString());
            route.backendHost = host;
            route.backendPort = port;
        }
        routes.insert(route.app, route);
    }
    return routes;
}

IdentityCheck identityOfServers(const QJsonObject &servers)
{
    for (auto it = servers.constBegin(); it != servers.constEnd(); ++it) {
        if (!it.key().startsWith(ServerPrefix))
            continue;
        const QJsonObject served = it.value()
                                       .toObject()
                                       .value("routes"_L1)
                                       .toArray()
                                       .first()
                                       .toObject()
                                       .value("handle"_L1)
                                       .toArray()
                                       .first()
                                       .toObject();
        if (served.value("handler"_L1).toString() != "subroute"_L1)
            continue;
        // The check asks pandod first: its upstream and transport say where pandod answers.
        const QJsonObject ask =
            served.value("routes"_L1).toArray().last().toObject().value("handle"_L1).toArray().first().toObject();
        IdentityCheck identity;
        identity.dial = ask.value("upstreams"_L1).toArray().first().toObject().value("dial"_L1).toString();
        const QJsonObject tls = ask.value("transport"_L1).toObject().value("tls"_L1).toObject();
        identity.caFile = tls.value("root_ca_pem_files"_L1).toArray().first().toString();
        identity.tlsName = tls.value("server_name"_L1).toString();
        return identity;
    }
    return {};
}

QList<ServedCertificate> certificatesOfConfig(const QJsonArray &loadPem)
{
    QList<ServedCertificate> certificates;
    for (const QJsonValue entry : loadPem) {
        const QJsonObject loaded = entry.toObject();
        const QString host = loaded.value("tags"_L1).toArray().first().toString();
        if (!host.isEmpty())
            certificates.append({host, loaded.value("certificate"_L1).toString().toLatin1(),
                                 loaded.value("key"_L1).toString().toLatin1()});
    }
    return certificates;
}

QString caddyError(const QByteArray &body)
{
    const QString error = QJsonDocument::fromJson(body).object().value("error"_L1).toString();
    return error.isEmpty() ? QString::fromUtf8(body).trimmed() : error;
}

} // namespace pando::adapters::caddy
