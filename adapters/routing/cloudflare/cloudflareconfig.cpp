#include "cloudflareconfig.h"

#include "adapters/api/routetable.h"

#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QUrl>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::adapters::cloudflare::detail {

namespace {

bool isWildcard(const QString &host)
{
    return host.startsWith("*."_L1);
}

QJsonObject stringMap(const QHash<QString, QString> &map)
{
    QJsonObject object;
    for (auto it = map.constBegin(); it != map.constEnd(); ++it)
        object.insert(it.key(), it.value());
    return object;
}

Result<QHash<QString, QString>> stringMapFrom(const QJsonValue &value, const QString &where)
{
    QHash<QString, QString> map;
    if (value.isUndefined())
        return map;
    if (!value.isObject())
        return fail(ErrorCode::Invalid, u"not an object of host names and record ids"_s, where);
    const QJsonObject object = value.toObject();
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        if (!it.value().isString() || it.value().toString().isEmpty())
            return fail(ErrorCode::Invalid, u"the record id of %1 is not a string"_s.arg(it.key()), where);
        map.insert(it.key(), it.value().toString());
    }
    return map;
}

} // namespace

QString tunnelTarget(const QString &tunnelId)
{
    return tunnelId + ".cfargotunnel.com"_L1;
}

Status checkOptions(const CloudflareRouterOptions &options)
{
    static const QRegularExpression hexId(u"^[0-9a-f]{32}\\z"_s);
    static const QRegularExpression uuid(u"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\z"_s);
    if (!hexId.match(options.accountId).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a Cloudflare account id (32 lower-case hex digits)"_s.arg(options.accountId),
                    u"cloudflare-account"_s, u"copy it from the dashboard's account home, or the tunnel's URL"_s);
    if (!uuid.match(options.tunnelId).hasMatch())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a tunnel id (a lower-case UUID)"_s.arg(options.tunnelId),
                    u"cloudflare-tunnel"_s, u"create a remotely-managed tunnel and copy its id (docs/edge.md)"_s);
    if (!hexId.match(options.zoneId).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a Cloudflare zone id (32 lower-case hex digits)"_s.arg(options.zoneId),
                    u"cloudflare-zone"_s, u"copy it from the zone's overview page"_s);
    const QUrl base(options.apiBase, QUrl::StrictMode);
    if (!base.isValid() || base.host().isEmpty() || (base.scheme() != "https"_L1 && base.scheme() != "http"_L1) ||
        base.hasQuery() || base.hasFragment() || !base.userInfo().isEmpty())
        return fail(ErrorCode::Invalid, u"\"%1\" is not an http(s) base URL"_s.arg(options.apiBase),
                    u"cloudflare-api"_s);
    // Plain HTTP would carry the token in the clear: only to a stand-in on this machine.
    const QHostAddress address(base.host());
    if (base.scheme() == "http"_L1 && !address.isLoopback() && base.host() != "localhost"_L1)
        return fail(ErrorCode::Invalid,
                    u"\"%1\" would send the API token in the clear: http:// is for a stand-in on loopback only"_s.arg(
                        options.apiBase),
                    u"cloudflare-api"_s, u"use https://"_s);
    if (options.stateDir.isEmpty())
        return fail(ErrorCode::Invalid, u"the Cloudflare router has no state directory"_s, u"stateDir"_s);
    if (options.requestTimeoutMs < 100)
        return fail(ErrorCode::Invalid, u"a request's deadline must be at least 100 ms"_s, u"requestTimeoutMs"_s);
    return {};
}

Result<QString> readApiToken(const QString &file)
{
    const QString where = u"cloudflare-token-file"_s;
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the API token file %1: %2"_s.arg(file, f.errorString()), where);
    // Group and others may not even read it: the token can change every DNS record of the zone.
    constexpr QFile::Permissions others =
        QFile::ReadGroup | QFile::WriteGroup | QFile::ExeGroup | QFile::ReadOther | QFile::WriteOther | QFile::ExeOther;
    if (f.permissions() & others)
        return fail(ErrorCode::Invalid, u"the API token file %1 may be read by others than its owner"_s.arg(file),
                    where, u"chmod 600 %1"_s.arg(file));
    QByteArray content = f.read(4097);
    if (content.endsWith('\n'))
        content.chop(1);
    if (content.endsWith('\r'))
        content.chop(1);
    static const QRegularExpression token(u"^[\\x21-\\x7e]{1,4096}\\z"_s);
    if (!token.match(QString::fromLatin1(content)).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"the API token file %1 does not hold one token on one line (printable, no spaces)"_s.arg(file),
                    where);
    return QString::fromLatin1(content);
}

QString scrubbed(QString text, const QString &secret)
{
    if (!secret.isEmpty())
        text.replace(secret, u"[the API token]"_s);
    return text;
}

QString pathRegex(const QString &path)
{
    return u"^%1(/.*)?$"_s.arg(escapeRe2(path));
}

QString serviceFor(const Route &route)
{
    if (route.backendHost.isEmpty())
        return u"http_status:503"_s;
    const QString host = route.backendHost.contains(u':') ? u"[%1]"_s.arg(route.backendHost) : route.backendHost;
    return u"http://%1:%2"_s.arg(host).arg(route.backendPort);
}

QString ruleKey(const QJsonObject &rule)
{
    return rule.value("hostname"_L1).toString() + u'\n' + rule.value("path"_L1).toString();
}

QString ruleKey(const Address &address)
{
    return address.host + u'\n' + (address.path == "/"_L1 ? QString() : pathRegex(address.path));
}

Status checkAddress(const Address &address, const QString &zone, const QString &hostWhere, const QString &pathWhere)
{
    if (auto checked = checkAddressSyntax(address, hostWhere, pathWhere); !checked)
        return checked;
    const QString name = isWildcard(address.host) ? address.host.mid(2) : address.host;
    if (!zone.isEmpty() && name != zone && !name.endsWith(u'.' + zone))
        return fail(ErrorCode::Invalid, u"%1 is not in the Cloudflare zone %2"_s.arg(address.host, zone), hostWhere,
                    u"Pando manages the DNS of one zone (--cloudflare-zone): pick a name under %1"_s.arg(zone));
    if (address.tls != TlsMode::Auto)
        return fail(ErrorCode::Invalid,
                    u"%1 asks for tls: %2, but Cloudflare ends TLS at its edge with its own certificates"_s.arg(
                        address.host, tlsModeName(address.tls)),
                    u"route.tls"_s, u"use tls: auto with the Cloudflare edge (docs/edge.md)"_s);
    return {};
}

QJsonArray ingressRules(const QHash<QString, Route> &routes)
{
    struct Rule {
        Address address;
        QString service;
    };
    QList<Rule> rules;
    for (const Route &route : routes)
        for (const Address &address : route.addresses)
            rules.append({address, serviceFor(route)});
    // cloudflared takes the first rule that matches: an exact host before a wildcard that covers
    // it, a longer path before a shorter one of the same host.
    std::sort(rules.begin(), rules.end(), [](const Rule &a, const Rule &b) {
        const bool aWild = isWildcard(a.address.host);
        const bool bWild = isWildcard(b.address.host);
        if (aWild != bWild)
            return !aWild;
        if (a.address.host != b.address.host)
            return a.address.host < b.address.host;
        if (a.address.path.size() != b.address.path.size())
            return a.address.path.size() > b.address.path.size();
        return a.address.path < b.address.path;
    });
    QJsonArray out;
    for (const Rule &rule : std::as_const(rules)) {
        QJsonObject json{{"hostname"_L1, rule.address.host}, {"service"_L1, rule.service}};
        if (rule.address.path != "/"_L1)
            json.insert("path"_L1, pathRegex(rule.address.path));
        out.append(json);
    }
    return out;
}

QSet<QString> ruleKeys(const QHash<QString, Route> &routes)
{
    QSet<QString> keys;
    for (const Route &route : routes)
        for (const Address &address : route.addresses)
            keys.insert(ruleKey(address));
    return keys;
}

QJsonObject configWith(const QJsonObject &current, const QJsonArray &pandoRules, const QSet<QString> &pandoKeys)
{
    QJsonObject config = current;
    QJsonArray ingress = pandoRules;
    const QJsonArray before = current.value("ingress"_L1).toArray();
    QJsonObject catchAll{{"service"_L1, "http_status:404"_L1}};
    for (qsizetype i = 0; i < before.size(); ++i) {
        const QJsonObject rule = before[i].toObject();
        const bool matchesAll =
            rule.value("hostname"_L1).toString().isEmpty() && rule.value("path"_L1).toString().isEmpty();
        if (i == before.size() - 1 && matchesAll) {
            catchAll = rule;
            continue;
        }
        if (!pandoKeys.contains(ruleKey(rule)))
            ingress.append(rule);
    }
    ingress.append(catchAll);
    config.insert("ingress"_L1, ingress);
    return config;
}

QJsonObject comparable(QJsonObject config)
{
    QJsonArray ingress;
    for (const QJsonValue value : config.value("ingress"_L1).toArray()) {
        QJsonObject rule = value.toObject();
        if (rule.value("originRequest"_L1).toObject().isEmpty())
            rule.remove("originRequest"_L1);
        ingress.append(rule);
    }
    config.insert("ingress"_L1, ingress);
    return config;
}

QByteArray stateToJson(const State &state)
{
    // The routes as every router's table holds them (adapters/api/routetable.h), with the DNS
    // records Pando made beside them.
    QJsonObject root = QJsonDocument::fromJson(routeTableJson(state.routes)).object();
    root.insert("dnsRecords"_L1, stringMap(state.dnsRecords));
    root.insert("staleRecords"_L1, stringMap(state.staleRecords));
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

Result<State> stateFromJson(const QByteArray &json)
{
    auto routes = routeTableFromJson(json, [](const Address &address, const QString &where) {
        return checkAddress(address, {}, where + ".host"_L1, where + ".path"_L1);
    });
    if (!routes)
        return std::unexpected(routes.error());
    State state;
    state.routes = *routes;
    for (Route &route : state.routes)
        route.url = routeUrl(route);
    const QJsonObject root = QJsonDocument::fromJson(json).object();
    auto records = stringMapFrom(root.value("dnsRecords"_L1), u"dnsRecords"_s);
    if (!records)
        return std::unexpected(records.error());
    state.dnsRecords = *records;
    auto stale = stringMapFrom(root.value("staleRecords"_L1), u"staleRecords"_s);
    if (!stale)
        return std::unexpected(stale.error());
    state.staleRecords = *stale;
    return state;
}

QUrl routeUrl(const Route &route)
{
    return route.addresses.isEmpty() ? QUrl() : route.addresses.first().url(80, 443);
}

} // namespace pando::adapters::cloudflare::detail
