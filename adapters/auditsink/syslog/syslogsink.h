#pragma once
// Package syslog is the audit sink adapter for a syslog collector: each audit line becomes one
// RFC 5424 message (the line's fields as structured data, its JSON — native or OCSF — as the
// message), octet-counted as RFC 5425 and RFC 6587 frame them, over TCP with TLS unless the
// operator turns it off. Nothing a line holds can split it: CR, LF and ANSI escapes are escaped.
//
// Threading: see AuditSink. The connection belongs to the thread that calls deliver(); it is
// kept open between batches and opened again when it was lost.

#include "adapters/api/auditsink.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <memory>

class QTcpSocket;

namespace pando::adapters::syslog {

struct SyslogSinkConfig {
    QString name; // the sink's name (its cursor key)
    QString host;
    int port = 6514; // RFC 5425's port for syslog over TLS
    bool tls = true;
    QString caBundle;   // PEM bundle the collector's certificate must chain to; empty: system CAs
    QString serverName; // the name the certificate must carry; empty: host
    int facility = 13;  // 13: log audit
    QString hostname;   // HOSTNAME field; empty: this machine's name
    QString appName = QStringLiteral("pando");
    QString sdId = QStringLiteral("pando@32473"); // 32473: the enterprise number RFC 5612 reserves for examples
    int timeoutMs = 10'000;                       // connect, handshake and write, each
    AuditSinkSettings settings;

    // {"name", "host", "port", "tls", "caBundle", "serverName", "facility", "hostname", "appName",
    //  "sdId", "timeoutMs"} plus sinkkit's settings keys.
    static Result<SyslogSinkConfig> fromJson(const QJsonObject &config, const QString &where);
};

// One RFC 5424 message (without framing) for one line.
QByteArray formatMessage(const AuditLine &line, const SyslogSinkConfig &config);
// RFC 5424 §6.3.3: '"', '\' and ']' get a backslash; control characters (CR, LF, ESC, ...)
// become the text "\uXXXX" so the value stays on one line.
QString escapeSdValue(const QString &value);
// RFC 6587 §3.4.1 octet counting: "<length> <message>".
QByteArray frame(const QByteArray &message);

class SyslogSink final : public AuditSink {
public:
    explicit SyslogSink(SyslogSinkConfig config);
    ~SyslogSink() override;
    QString name() const override { return m_config.name; }
    const AuditSinkSettings &settings() const override { return m_config.settings; }
    Status deliver(const QList<AuditLine> &batch, const CancelToken &cancel) override;

private:
    Status connectIfNeeded(const CancelToken &cancel);
    void drop();
    QString where() const;

    SyslogSinkConfig m_config;
    std::unique_ptr<QTcpSocket> m_socket;
};

} // namespace pando::adapters::syslog
