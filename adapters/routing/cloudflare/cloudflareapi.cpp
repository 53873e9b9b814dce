#include "cloudflareapi.h"

#include "adapters/kit/httpkit/httptransport.h"

#include <QJsonArray>
#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace pando::adapters::cloudflare {

namespace {

// "code 10000: Authentication error; code 9109: ..." from the envelope's errors.
QString errorsOf(const QJsonObject &envelope)
{
    QStringList parts;
    for (const QJsonValue error : envelope.value("errors"_L1).toArray()) {
        const QJsonObject object = error.toObject();
        const QString message = object.value("message"_L1).toString().left(300);
        parts << (object.contains("code"_L1) ? u"code %1: %2"_s.arg(object.value("code"_L1).toInteger()).arg(message)
                                             : message);
    }
    return parts.join(u"; "_s);
}

ErrorCode codeForStatus(int status)
{
    switch (status) {
    case 401:
    case 403:
        return ErrorCode::Forbidden;
    case 404:
        return ErrorCode::NotFound;
    case 409:
        return ErrorCode::Conflict;
    case 400:
    case 422:
        return ErrorCode::Invalid;
    default:
        return ErrorCode::Unavailable;
    }
}

} // namespace

CloudflareApi::CloudflareApi(QString base, QString token, int timeoutMs)
    : m_base(std::move(base)), m_token(std::move(token)), m_timeoutMs(timeoutMs)
{
    while (m_base.endsWith(u'/'))
        m_base.chop(1);
}

Result<QJsonValue> CloudflareApi::call(const QByteArray &method, const QString &path,
                                       const QList<QPair<QString, QString>> &query,
                                       const std::optional<QJsonObject> &body) const
{
    const QString what = u"Cloudflare's API (%1 %2)"_s.arg(QString::fromLatin1(method), path);
    httpkit::Request request;
    request.method = method;
    request.path = path;
    request.query = query;
    if (body)
        request.body = QJsonDocument(*body).toJson(QJsonDocument::Compact);
    request.headers.append({QByteArray("Authorization"), "Bearer " + m_token.toLatin1()});
    request.headers.append({QByteArray("Accept"), QByteArray("application/json")});
    request.timeoutMs = m_timeoutMs;
    const httpkit::Exchange exchange = httpkit::perform({.baseUrl = m_base.toUtf8()}, request);
    if (exchange.transportFailed)
        return fail(
            exchange.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
            u"%1 did not answer%2: %3"_s.arg(what, exchange.timedOut ? u" within %1 ms"_s.arg(m_timeoutMs) : QString(),
                                             detail::scrubbed(exchange.error, m_token)),
            u"cloudflare-api"_s, u"check the network and %1"_s.arg(m_base));

    const QJsonDocument document = QJsonDocument::fromJson(exchange.body);
    const QJsonObject envelope = document.object();
    const bool isEnvelope = document.isObject() && envelope.value("success"_L1).isBool() &&
                            (envelope.value("errors"_L1).isArray() || envelope.value("errors"_L1).isUndefined());
    if (exchange.status == 401 || exchange.status == 403) {
        const QString said = isEnvelope ? errorsOf(envelope) : QString();
        return fail(ErrorCode::Forbidden,
                    detail::scrubbed(u"Cloudflare refused the API token for %1 (HTTP %2%3)"_s.arg(what)
                                         .arg(exchange.status)
                                         .arg(said.isEmpty() ? QString() : u", "_s + said),
                                     m_token),
                    u"cloudflare-token-file"_s,
                    u"give a token with Account › Cloudflare Tunnel › Edit and Zone › DNS › Edit (docs/edge.md)"_s);
    }
    if (!isEnvelope)
        return fail(ErrorCode::Unavailable,
                    u"%1 answered HTTP %2 with something that is not Cloudflare's {success, errors, result} envelope"_s
                        .arg(what)
                        .arg(exchange.status),
                    u"cloudflare-api"_s);
    if (exchange.status >= 300 || !envelope.value("success"_L1).toBool()) {
        const QString said = errorsOf(envelope);
        return fail(exchange.status >= 300 ? codeForStatus(exchange.status) : ErrorCode::Failed,
                    detail::scrubbed(u"%1 refused the request (HTTP %2): %3"_s.arg(what)
                                         .arg(exchange.status)
                                         .arg(said.isEmpty() ? u"no reason given"_s : said),
                                     m_token),
                    u"cloudflare-api"_s);
    }
    return envelope.value("result"_L1);
}

Result<QString> CloudflareApi::zoneName(const QString &zoneId) const
{
    auto result = call("GET", u"/zones/%1"_s.arg(zoneId));
    if (!result)
        return std::unexpected(result.error());
    const QString name = result->toObject().value("name"_L1).toString();
    if (name.isEmpty())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API gave zone %1 without a name"_s.arg(zoneId),
                    u"cloudflare-zone"_s);
    return name;
}

Result<QJsonObject> CloudflareApi::tunnelConfig(const QString &accountId, const QString &tunnelId) const
{
    auto result = call("GET", u"/accounts/%1/cfd_tunnel/%2/configurations"_s.arg(accountId, tunnelId));
    if (!result)
        return std::unexpected(result.error());
    if (!result->isObject() && !result->isNull())
        return fail(ErrorCode::Unavailable,
                    u"Cloudflare's API gave tunnel %1's configuration as no object"_s.arg(tunnelId),
                    u"cloudflare-api"_s);
    const QJsonValue config = result->toObject().value("config"_L1);
    if (!config.isObject() && !config.isNull() && !config.isUndefined())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API gave tunnel %1's config as no object"_s.arg(tunnelId),
                    u"cloudflare-api"_s);
    const QJsonValue ingress = config.toObject().value("ingress"_L1);
    if (!ingress.isArray() && !ingress.isNull() && !ingress.isUndefined())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API gave tunnel %1's ingress as no list"_s.arg(tunnelId),
                    u"cloudflare-api"_s);
    return config.toObject();
}

Status CloudflareApi::putTunnelConfig(const QString &accountId, const QString &tunnelId,
                                      const QJsonObject &config) const
{
    auto result = call("PUT", u"/accounts/%1/cfd_tunnel/%2/configurations"_s.arg(accountId, tunnelId), {},
                       QJsonObject{{"config"_L1, config}});
    if (!result)
        return std::unexpected(result.error());
    return {};
}

Result<QList<detail::DnsRecord>> CloudflareApi::dnsRecords(const QString &zoneId, const QString &name) const
{
    auto result = call("GET", u"/zones/%1/dns_records"_s.arg(zoneId), {{u"name"_s, name}, {u"per_page"_s, u"100"_s}});
    if (!result)
        return std::unexpected(result.error());
    if (!result->isArray())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API gave the DNS records of %1 as no list"_s.arg(name),
                    u"cloudflare-api"_s);
    QList<detail::DnsRecord> records;
    for (const QJsonValue value : result->toArray()) {
        const QJsonObject object = value.toObject();
        detail::DnsRecord record{object.value("id"_L1).toString(), object.value("type"_L1).toString(),
                                 object.value("name"_L1).toString(), object.value("content"_L1).toString(),
                                 object.value("proxied"_L1).toBool()};
        if (record.id.isEmpty() || record.type.isEmpty())
            return fail(ErrorCode::Unavailable,
                        u"Cloudflare's API gave a DNS record of %1 without id or type"_s.arg(name),
                        u"cloudflare-api"_s);
        // The filter is the API's; a record of another name is not this one's business.
        if (record.name.compare(name, Qt::CaseInsensitive) == 0)
            records << record;
    }
    return records;
}

Result<QString> CloudflareApi::createCname(const QString &zoneId, const QString &name, const QString &target,
                                           const QString &comment) const
{
    auto result = call("POST", u"/zones/%1/dns_records"_s.arg(zoneId), {},
                       QJsonObject{{"type"_L1, "CNAME"_L1},
                                   {"name"_L1, name},
                                   {"content"_L1, target},
                                   {"proxied"_L1, true},
                                   {"ttl"_L1, 1},
                                   {"comment"_L1, comment}});
    if (!result)
        return std::unexpected(result.error());
    const QString id = result->toObject().value("id"_L1).toString();
    if (id.isEmpty())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API made the DNS record of %1 but gave no id"_s.arg(name),
                    u"cloudflare-api"_s);
    return id;
}

Status CloudflareApi::deleteDnsRecord(const QString &zoneId, const QString &recordId) const
{
    auto result = call("DELETE", u"/zones/%1/dns_records/%2"_s.arg(zoneId, recordId));
    if (!result && result.error().code != ErrorCode::NotFound)
        return std::unexpected(result.error());
    return {};
}

Result<QString> CloudflareApi::tunnelStatus(const QString &accountId, const QString &tunnelId) const
{
    auto result = call("GET", u"/accounts/%1/cfd_tunnel/%2"_s.arg(accountId, tunnelId));
    if (!result)
        return std::unexpected(result.error());
    const QString status = result->toObject().value("status"_L1).toString();
    if (status.isEmpty())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API gave tunnel %1 without a status"_s.arg(tunnelId),
                    u"cloudflare-api"_s);
    return status;
}

Result<QString> CloudflareApi::tunnelToken(const QString &accountId, const QString &tunnelId) const
{
    auto result = call("GET", u"/accounts/%1/cfd_tunnel/%2/token"_s.arg(accountId, tunnelId));
    if (!result)
        return std::unexpected(result.error());
    if (!result->isString() || result->toString().isEmpty())
        return fail(ErrorCode::Unavailable, u"Cloudflare's API gave tunnel %1's token as no string"_s.arg(tunnelId),
                    u"cloudflare-api"_s);
    return result->toString();
}

} // namespace pando::adapters::cloudflare
