#pragma once
// Package https is the audit sink adapter for a SIEM's HTTPS ingest endpoint: one POST per
// batch, in the body shape the destination reads — newline-delimited JSON, a JSON array, Splunk
// HEC's envelope, or Elastic's bulk action lines — with the certificate verified (against the
// sink's CA bundle when it names one) and a bearer, basic or HEC token.
//
// Threading: see AuditSink. Each deliver() is one libcurl transfer on the calling thread.

#include "adapters/api/auditsink.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace pando::adapters::https {

struct HttpsSinkConfig {
    enum class Body { Ndjson, JsonArray, SplunkHec, ElasticBulk };
    enum class Auth { None, Bearer, Basic, SplunkHec };
    QString name;
    QString url; // https://siem.example/ingest (http:// only when allowInsecure)
    Body body = Body::Ndjson;
    Auth auth = Auth::None;
    QString token;          // Bearer and SplunkHec: already read (sinkkit::readCredential)
    QString user, password; // Basic
    QString caBundle;       // PEM; empty: the system's CAs
    QString index;          // Elastic: the index (default "pando-audit"); HEC: the index, optional
    QString sourcetype = QStringLiteral("pando:audit"); // HEC
    QString host;                                       // HEC "host"; empty: this machine's name
    bool allowInsecure = false;                         // plain http:// (tests, a collector on loopback)
    int timeoutMs = 15'000;
    AuditSinkSettings settings;

    // {"name", "url", "body": "ndjson"|"array"|"hec"|"elastic", "auth": "none"|"bearer"|"basic"|"hec",
    //  "token", "user", "password" (each "env:NAME", "file:/path" or inline), "caBundle", "index",
    //  "sourcetype", "host", "allowInsecure", "timeoutMs"} plus sinkkit's settings keys.
    static Result<HttpsSinkConfig> fromJson(const QJsonObject &config, const QString &where);
};

struct HttpsBody {
    QByteArray bytes;
    QByteArray contentType;
};
// The request body for one batch.
HttpsBody formatBody(const QList<AuditLine> &batch, const HttpsSinkConfig &config);

class HttpsSink final : public AuditSink {
public:
    explicit HttpsSink(HttpsSinkConfig config) : m_config(std::move(config)) {}
    QString name() const override { return m_config.name; }
    const AuditSinkSettings &settings() const override { return m_config.settings; }
    Status deliver(const QList<AuditLine> &batch, const CancelToken &cancel) override;

private:
    HttpsSinkConfig m_config;
};

} // namespace pando::adapters::https
