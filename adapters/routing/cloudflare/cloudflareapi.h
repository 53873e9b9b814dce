#pragma once
// The few requests of Cloudflare's API (v4) the tunnel router makes: the zone's name, the
// tunnel's configuration (GET and PUT, whole), the zone's DNS records by name (list, create a
// CNAME, delete) and the token cloudflared runs the tunnel with. Every request carries the API
// token as a Bearer header and a deadline; every answer is read as the documented envelope
// {success, errors: [{code, message}], messages, result}, and anything else is an error that says
// so. No error, log line or URL holds the token: what the API says is scrubbed of it too.
//
// Requests go through httpkit (libcurl), the transport the other adapters' REST clients share,
// rather than QNetworkAccessManager: a Router answers synchronously on whatever thread calls it,
// and a QNetworkReply would need an event loop on that thread, that is a nested one. The deadline
// is curl's (connecting within 5 s, the whole exchange within the timeout given).
//
// Threading: a value type without shared state; any thread may make requests, concurrently.

#include "adapters/api/error.h"
#include "adapters/routing/cloudflare/cloudflareconfig.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QPair>
#include <QString>

namespace pando::adapters::cloudflare {

class CloudflareApi {
public:
    CloudflareApi(QString base, QString token, int timeoutMs);

    // The envelope's result, or the error: Forbidden when the token is refused (401/403),
    // NotFound for an id Cloudflare does not know, Unavailable when the API does not answer or
    // answers with something that is not its envelope, Timeout past the deadline, Invalid or
    // Conflict when it refuses the request; the message quotes Cloudflare's codes and words.
    Result<QJsonValue> call(const QByteArray &method, const QString &path,
                            const QList<QPair<QString, QString>> &query = {},
                            const std::optional<QJsonObject> &body = std::nullopt) const;

    Result<QString> zoneName(const QString &zoneId) const;
    // The tunnel's configuration object (result.config): {ingress: [...], originRequest, ...};
    // empty when the tunnel has none yet.
    Result<QJsonObject> tunnelConfig(const QString &accountId, const QString &tunnelId) const;
    Status putTunnelConfig(const QString &accountId, const QString &tunnelId, const QJsonObject &config) const;
    Result<QList<detail::DnsRecord>> dnsRecords(const QString &zoneId, const QString &name) const;
    // A proxied CNAME name → target (TTL automatic); the new record's id.
    Result<QString> createCname(const QString &zoneId, const QString &name, const QString &target,
                                const QString &comment) const;
    // A record that is gone already is not an error.
    Status deleteDnsRecord(const QString &zoneId, const QString &recordId) const;
    // The tunnel's status: healthy, degraded, down or inactive (never run).
    Result<QString> tunnelStatus(const QString &accountId, const QString &tunnelId) const;
    // The token `cloudflared tunnel run` needs (GET .../cfd_tunnel/{id}/token).
    Result<QString> tunnelToken(const QString &accountId, const QString &tunnelId) const;

private:
    QString m_base;
    QString m_token;
    int m_timeoutMs;
};

} // namespace pando::adapters::cloudflare
