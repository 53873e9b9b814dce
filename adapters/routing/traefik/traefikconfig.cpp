#include "traefikconfig.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::adapters::traefik::detail {

namespace {

// Traefik's internal service that answers nothing: routers whose middleware redirects need one.
constexpr auto NoopService = "noop@internal"_L1;
constexpr auto HttpsMiddleware = "pando-https"_L1;

// Router, service and middleware names: "pando-APP" and "pando-APP_SUFFIX". App names are DNS
// labels (no '_'), so one app's suffixed names never collide with another app's plain one.
QString objectName(const QString &app, const QString &suffix = {})
{
    return suffix.isEmpty() ? u"pando-"_s + app : u"pando-%1_%2"_s.arg(app, suffix);
}

bool isWildcard(const QString &host)
{
    return host.startsWith("*."_L1);
}

QString hostRegex(const QString &host)
{
    // One label in place of "*", as a wildcard certificate covers.
    return isWildcard(host) ? u"[a-z0-9-]+"_s + escapeRe2(host.mid(1)) : escapeRe2(host);
}

QJsonObject tlsFor(const Address &address, const TraefikRouterOptions &options)
{
    if (address.tls == TlsMode::Internal)
        return {};
    QJsonObject tls{{"certResolver"_L1, options.certResolver}};
    // Traefik cannot read the names to certify out of a HostRegexp rule.
    if (isWildcard(address.host))
        tls.insert("domains"_L1, QJsonArray{QJsonObject{{"main"_L1, address.host}}});
    return tls;
}

QString dialUrl(const QString &host, int port)
{
    return host.contains(u':') ? u"http://[%1]:%2"_s.arg(host).arg(port) : u"http://%1:%2"_s.arg(host).arg(port);
}

// The routers that answer on address: on the websecure entry point with TLS (and on web, sending
// people to HTTPS with httpMiddleware) or on web alone when TLS is off.
void addRouters(QJsonObject &routers, const QString &name, const Address &address, const QString &service,
                const QStringList &middlewares, const QString &httpMiddleware, const TraefikRouterOptions &options)
{
    QJsonObject router{{"rule"_L1, ruleFor(address)}, {"priority"_L1, priorityFor(address)}, {"service"_L1, service}};
    if (!middlewares.isEmpty())
        router.insert("middlewares"_L1, QJsonArray::fromStringList(middlewares));
    if (address.tls == TlsMode::Off) {
        router.insert("entryPoints"_L1, QJsonArray{options.webEntryPoint});
        routers.insert(name, router);
        return;
    }
    QJsonObject secure = router;
    secure.insert("entryPoints"_L1, QJsonArray{options.websecureEntryPoint});
    secure.insert("tls"_L1, tlsFor(address, options));
    routers.insert(name, secure);
    QJsonObject plain = router;
    plain.insert("entryPoints"_L1, QJsonArray{options.webEntryPoint});
    plain.insert("middlewares"_L1, QJsonArray{httpMiddleware});
    plain.insert("service"_L1, QString(NoopService));
    routers.insert(name + "_http"_L1, plain);
}

void emitScalar(QByteArray &out, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        out += value.toBool() ? "true" : "false";
        return;
    case QJsonValue::Double:
        out += QByteArray::number(value.toInteger());
        return;
    case QJsonValue::String: {
        out += '"';
        for (const char c : value.toString().toUtf8()) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (c == '\n') {
                out += "\\n";
            } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                out += "\\x" + QByteArray::number(static_cast<unsigned char>(c), 16).rightJustified(2, '0');
            } else {
                out += c;
            }
        }
        out += '"';
        return;
    }
    case QJsonValue::Object:
        out += "{}";
        return;
    case QJsonValue::Array:
        out += "[]";
        return;
    default:
        out += "null";
    }
}

bool isEmptyContainer(const QJsonValue &value)
{
    return (value.isObject() && value.toObject().isEmpty()) || (value.isArray() && value.toArray().isEmpty()) ||
           !(value.isObject() || value.isArray());
}

void emitKey(QByteArray &out, const QString &key)
{
    static const QRegularExpression plain(uR"(^[A-Za-z][A-Za-z0-9_.-]*\z)"_s);
    static const QSet<QString> words{u"true"_s, u"false"_s, u"null"_s, u"yes"_s, u"no"_s,
                                     u"on"_s,   u"off"_s,   u"y"_s,    u"n"_s};
    if (plain.match(key).hasMatch() && !words.contains(key.toLower()))
        out += key.toUtf8();
    else
        emitScalar(out, key);
    out += ':';
}

void emitValue(QByteArray &out, const QJsonValue &value, int indent);

void emitObject(QByteArray &out, const QJsonObject &object, int indent)
{
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        out += QByteArray(indent, ' ');
        emitKey(out, it.key());
        if (isEmptyContainer(it.value())) {
            out += ' ';
            emitScalar(out, it.value());
            out += '\n';
        } else {
            out += '\n';
            emitValue(out, it.value(), indent + 2);
        }
    }
}

void emitValue(QByteArray &out, const QJsonValue &value, int indent)
{
    if (value.isObject()) {
        emitObject(out, value.toObject(), indent);
        return;
    }
    for (const QJsonValue item : value.toArray()) {
        if (isEmptyContainer(item)) {
            out += QByteArray(indent, ' ') + "- ";
            emitScalar(out, item);
            out += '\n';
            continue;
        }
        // The item's block one step in, its first line's indentation turned into "- ".
        QByteArray block;
        emitValue(block, item, indent + 2);
        block.replace(indent, 2, "- ");
        out += block;
    }
}

} // namespace

QString entryPointName(const QString &app)
{
    return u"pando-"_s + app;
}

QString ruleFor(const Address &address)
{
    QString rule = isWildcard(address.host) ? u"HostRegexp(`^%1$`)"_s.arg(hostRegex(address.host))
                                            : u"Host(`%1`)"_s.arg(address.host);
    // PathPrefix alone would let /api serve /apis too.
    if (address.path != "/"_L1)
        rule += u" && (Path(`%1`) || PathPrefix(`%1/`))"_s.arg(address.path);
    return rule;
}

int priorityFor(const Address &address)
{
    return (isWildcard(address.host) ? 0 : 1'000'000) + 1000 + int(address.path.size());
}

std::pair<QString, QString> redirectFor(const MovedAddress &moved)
{
    const Address &from = moved.from;
    QString regex = u"^https?://(?i:%1)(?::[0-9]+)?"_s.arg(hostRegex(from.host));
    regex += from.path == "/"_L1 ? u"(/.*)$"_s : escapeRe2(from.path) + "([/?].*)?$"_L1;
    QString base = moved.to.toString(QUrl::FullyEncoded);
    while (base.endsWith(u'/'))
        base.chop(1);
    // "$" in the target is literal for Go's Regexp.Expand only doubled.
    base.replace(u"$"_s, u"$$"_s);
    return {regex, base + "${1}"_L1};
}

std::pair<QString, QString> certificateFiles(const QString &dir, const QString &host)
{
    const QString base = isWildcard(host) ? u"_wildcard"_s + host.mid(1) : host;
    return {QDir(dir).filePath(base + ".crt"_L1), QDir(dir).filePath(base + ".key"_L1)};
}

Status checkAddress(const Address &address, const QString &hostWhere, const QString &pathWhere)
{
    return checkAddressSyntax(address, hostWhere, pathWhere);
}

QJsonObject dynamicConfig(const QHash<QString, Route> &routes, const TraefikRouterOptions &options)
{
    QJsonObject routers;
    QJsonObject services;
    QJsonObject middlewares;
    QStringList internalHosts;
    bool wantsHttps = false;
    for (const Route &route : routes) {
        const QString service = objectName(route.app);
        // No backend yet: no router either, so Traefik answers 404 rather than proxying nowhere
        // (a 503 of its own would take a plugin); see docs/edge.md.
        if (!route.backendHost.isEmpty()) {
            services.insert(
                service, QJsonObject{{"loadBalancer"_L1,
                                      QJsonObject{{"servers"_L1,
                                                   QJsonArray{QJsonObject{
                                                       {"url"_L1, dialUrl(route.backendHost, route.backendPort)}}}}}}});
            routers.insert(service, QJsonObject{{"entryPoints"_L1, QJsonArray{entryPointName(route.app)}},
                                                {"rule"_L1, "PathPrefix(`/`)"_L1},
                                                {"service"_L1, service}});
            for (qsizetype i = 0; i < route.addresses.size(); ++i) {
                const Address &address = route.addresses[i];
                addRouters(routers, objectName(route.app, u"addr%1"_s.arg(i)), address, service, {}, HttpsMiddleware,
                           options);
                wantsHttps = wantsHttps || address.tls != TlsMode::Off;
                if (address.tls == TlsMode::Internal)
                    internalHosts << address.host;
            }
        }
        for (qsizetype i = 0; i < route.moved.size(); ++i) {
            const MovedAddress &moved = route.moved[i];
            const QString name = objectName(route.app, u"moved%1"_s.arg(i));
            const auto [regex, replacement] = redirectFor(moved);
            middlewares.insert(name, QJsonObject{{"redirectRegex"_L1, QJsonObject{{"regex"_L1, regex},
                                                                                  {"replacement"_L1, replacement},
                                                                                  {"permanent"_L1, true}}}});
            // Plain HTTP goes straight to the new address, not through HTTPS first.
            addRouters(routers, name, moved.from, NoopService, {name}, name, options);
            if (moved.from.tls == TlsMode::Internal)
                internalHosts << moved.from.host;
        }
    }
    if (wantsHttps) {
        QJsonObject scheme{{"scheme"_L1, "https"_L1}, {"permanent"_L1, true}};
        if (options.websecurePort != 443)
            scheme.insert("port"_L1, QString::number(options.websecurePort));
        middlewares.insert(HttpsMiddleware, QJsonObject{{"redirectScheme"_L1, scheme}});
    }
    QJsonObject http{{"routers"_L1, routers}, {"services"_L1, services}};
    if (!middlewares.isEmpty())
        http.insert("middlewares"_L1, middlewares);
    QJsonObject config{{"http"_L1, http}};

    QJsonArray certificates;
    if (!options.certificatesDir.isEmpty()) {
        internalHosts.sort();
        internalHosts.removeDuplicates();
        for (const QString &host : std::as_const(internalHosts)) {
            const auto [cert, key] = certificateFiles(options.certificatesDir, host);
            if (QFileInfo::exists(cert) && QFileInfo::exists(key))
                certificates.append(QJsonObject{{"certFile"_L1, cert}, {"keyFile"_L1, key}});
        }
    }
    if (!certificates.isEmpty())
        config.insert("tls"_L1, QJsonObject{{"certificates"_L1, certificates}});
    return config;
}

QJsonObject staticEntryPoints(const QHash<QString, Route> &routes)
{
    QJsonObject entryPoints;
    for (const Route &route : routes)
        entryPoints.insert(entryPointName(route.app), QJsonObject{{"address"_L1, u"127.0.0.1:%1"_s.arg(route.port)}});
    return {{"entryPoints"_L1, entryPoints}};
}

QByteArray toYaml(const QJsonObject &tree, const QByteArray &header)
{
    QByteArray out = header;
    if (tree.isEmpty())
        return out + "{}\n";
    emitObject(out, tree, 0);
    return out;
}

QUrl routeUrl(const Route &route, const TraefikRouterOptions &options)
{
    if (!route.addresses.isEmpty())
        return route.addresses.first().url(options.webPort, options.websecurePort);
    return QUrl(u"http://127.0.0.1:%1/"_s.arg(route.port));
}

} // namespace pando::adapters::traefik::detail
