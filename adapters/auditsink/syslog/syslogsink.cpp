#include "syslogsink.h"

#include "adapters/kit/sinkkit/sinkkit.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QSysInfo>
#include <QThread>

using namespace Qt::StringLiterals;

namespace pando::adapters::syslog {

namespace {

bool isLineBreakOrControl(char16_t c)
{
    return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || c == 0x2028 || c == 0x2029;
}

QString unicodeEscape(char16_t c)
{
    return u"\\u"_s + QString::number(c, 16).rightJustified(4, u'0');
}

// RFC 5424 header fields are printable US-ASCII without spaces, with a length limit; anything
// else becomes '_' so a hostile action name cannot forge header fields.
QByteArray headerField(const QString &value, int maxLength)
{
    if (value.isEmpty())
        return "-";
    QByteArray out;
    for (const QChar c : value.left(maxLength)) {
        const char16_t u = c.unicode();
        out.append(u >= 33 && u <= 126 ? char(u) : '_');
    }
    return out;
}

int severityOf(const QString &outcome)
{
    return outcome == u"success"_s ? 5 /* notice */ : 4 /* warning */;
}

} // namespace

Result<SyslogSinkConfig> SyslogSinkConfig::fromJson(const QJsonObject &json, const QString &where)
{
    SyslogSinkConfig config;
    auto settings = sinkkit::parseSettings(json, where);
    if (!settings)
        return std::unexpected(settings.error());
    config.settings = *settings;
    config.name = json.value(u"name"_s).toString();
    if (config.name.isEmpty())
        return fail(ErrorCode::Invalid, u"a syslog sink needs a name"_s, where + u".name"_s);
    config.host = json.value(u"host"_s).toString();
    if (config.host.isEmpty())
        return fail(ErrorCode::Invalid, u"a syslog sink needs the collector's host"_s, where + u".host"_s);
    config.tls = json.value(u"tls"_s).toBool(true);
    config.port = json.value(u"port"_s).toInt(config.tls ? 6514 : 514);
    if (config.port < 1 || config.port > 65535)
        return fail(ErrorCode::Invalid, u"port must be 1..65535"_s, where + u".port"_s);
    config.caBundle = json.value(u"caBundle"_s).toString();
    if (!config.caBundle.isEmpty())
        if (auto ca = sinkkit::loadCaBundle(config.caBundle); !ca)
            return std::unexpected(Error{ca.error().code, ca.error().message, where + u".caBundle"_s, {}});
    config.serverName = json.value(u"serverName"_s).toString();
    config.facility = json.value(u"facility"_s).toInt(13);
    if (config.facility < 0 || config.facility > 23)
        return fail(ErrorCode::Invalid, u"facility must be 0..23"_s, where + u".facility"_s);
    config.hostname = json.value(u"hostname"_s).toString();
    config.appName = json.value(u"appName"_s).toString(u"pando"_s);
    config.sdId = json.value(u"sdId"_s).toString(u"pando@32473"_s);
    if (!config.sdId.contains(u'@'))
        return fail(ErrorCode::Invalid, u"a private SD-ID is name@enterprise-number"_s, where + u".sdId"_s);
    config.timeoutMs = json.value(u"timeoutMs"_s).toInt(10'000);
    return config;
}

QString escapeSdValue(const QString &value)
{
    QString out;
    out.reserve(value.size() + 8);
    for (const QChar c : value) {
        const char16_t u = c.unicode();
        if (u == u'"' || u == u'\\' || u == u']') {
            out.append(u'\\');
            out.append(c);
        } else if (isLineBreakOrControl(u)) {
            out.append(unicodeEscape(u));
        } else {
            out.append(c);
        }
    }
    return out;
}

QByteArray frame(const QByteArray &message)
{
    return QByteArray::number(message.size()) + ' ' + message;
}

QByteArray formatMessage(const AuditLine &line, const SyslogSinkConfig &config)
{
    const AuditSinkSettings &settings = config.settings;
    const auto want = [&](const QString &field) {
        return settings.fields.isEmpty() || field == u"seq"_s || settings.fields.contains(field);
    };
    QByteArray out;
    out += '<' + QByteArray::number(config.facility * 8 + severityOf(line.outcome)) + ">1 ";
    out += sinkkit::rfc3339(line.timeMs).toLatin1() + ' ';
    out += headerField(config.hostname.isEmpty() ? QSysInfo::machineHostName() : config.hostname, 255) + ' ';
    out += headerField(config.appName, 48) + ' ';
    out += QByteArray::number(QCoreApplication::applicationPid()) + ' ';
    out += headerField(line.action, 32) + ' ';

    QString sd = u'[' + config.sdId;
    const std::pair<QString, QString> params[] = {{u"seq"_s, QString::number(line.seq)},
                                                  {u"actor"_s, line.actor},
                                                  {u"action"_s, line.action},
                                                  {u"object"_s, line.object},
                                                  {u"outcome"_s, line.outcome},
                                                  {u"requestId"_s, line.requestId},
                                                  {u"source"_s, line.source},
                                                  {u"hash"_s, line.hash}};
    for (const auto &[key, value] : params)
        if (want(key))
            sd += u' ' + key + u"=\""_s + escapeSdValue(value) + u'"';
    sd += u']';
    out += sd.toUtf8() + ' ';

    // QJsonDocument escapes C0 controls (CR, LF, ESC) inside strings; C1 controls and the
    // Unicode line separators it leaves as they are, and some collectors break lines on them.
    const QString json =
        QString::fromUtf8(QJsonDocument(sinkkit::shapeLine(line, settings)).toJson(QJsonDocument::Compact));
    QString msg;
    msg.reserve(json.size());
    for (const QChar c : json)
        msg.append(isLineBreakOrControl(c.unicode()) ? unicodeEscape(c.unicode()) : QString(c));
    out += "\xEF\xBB\xBF" + msg.toUtf8(); // RFC 5424 §6.4: a UTF-8 MSG starts with the BOM
    return out;
}

SyslogSink::SyslogSink(SyslogSinkConfig config) : m_config(std::move(config))
{}

SyslogSink::~SyslogSink()
{
    drop();
}

QString SyslogSink::where() const
{
    return (m_config.tls ? u"syslog+tls://"_s : u"syslog+tcp://"_s) + m_config.host + u':' +
           QString::number(m_config.port);
}

void SyslogSink::drop()
{
    if (m_socket) {
        m_socket->abort();
        m_socket.reset();
    }
}

Status SyslogSink::connectIfNeeded(const CancelToken &cancel)
{
    if (m_socket && m_socket->thread() != QThread::currentThread())
        drop();
    if (m_socket && m_socket->state() == QAbstractSocket::ConnectedState) {
        // A collector never talks back over syslog; readable bytes or end of stream mean it is
        // closing. Finding out before writing matters: bytes written into a connection the peer
        // already closed vanish without an error, and the cursor would move past them.
        m_socket->waitForReadyRead(1);
        if (m_socket->state() == QAbstractSocket::ConnectedState && (m_config.tls || m_socket->bytesAvailable() == 0)) {
            m_socket->readAll();
            return {};
        }
        drop();
    }
    drop();
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, u"cancelled before connecting"_s, where());
    if (m_config.tls) {
        auto socket = std::make_unique<QSslSocket>();
        QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
        if (!m_config.caBundle.isEmpty()) {
            auto ca = sinkkit::loadCaBundle(m_config.caBundle);
            if (!ca)
                return std::unexpected(ca.error());
            ssl.setCaCertificates(*ca);
        }
        ssl.setPeerVerifyMode(QSslSocket::VerifyPeer);
        ssl.setProtocol(QSsl::TlsV1_2OrLater);
        socket->setSslConfiguration(ssl);
        socket->connectToHostEncrypted(m_config.host, quint16(m_config.port),
                                       m_config.serverName.isEmpty() ? m_config.host : m_config.serverName);
        if (!socket->waitForEncrypted(m_config.timeoutMs)) {
            QStringList reasons;
            for (const QSslError &e : socket->sslHandshakeErrors())
                reasons.append(e.errorString());
            const QString why = reasons.isEmpty() ? socket->errorString() : reasons.join(u"; "_s);
            const bool refused = socket->error() == QAbstractSocket::ConnectionRefusedError ||
                                 socket->error() == QAbstractSocket::SocketTimeoutError ||
                                 socket->error() == QAbstractSocket::RemoteHostClosedError;
            return fail(refused && reasons.isEmpty() ? ErrorCode::Unavailable : ErrorCode::Failed,
                        u"TLS connection failed: "_s + why, where(),
                        u"check caBundle and serverName against the collector's certificate"_s);
        }
        m_socket = std::move(socket);
    } else {
        auto socket = std::make_unique<QTcpSocket>();
        socket->connectToHost(m_config.host, quint16(m_config.port));
        if (!socket->waitForConnected(m_config.timeoutMs))
            return fail(ErrorCode::Unavailable, u"cannot connect: "_s + socket->errorString(), where());
        m_socket = std::move(socket);
    }
    return {};
}

Status SyslogSink::deliver(const QList<AuditLine> &batch, const CancelToken &cancel)
{
    QByteArray payload;
    for (const AuditLine &line : batch)
        payload += frame(formatMessage(line, m_config));
    if (auto connected = connectIfNeeded(cancel); !connected)
        return connected;
    if (m_socket->write(payload) != payload.size()) {
        const QString why = m_socket->errorString();
        drop();
        return fail(ErrorCode::Unavailable, u"write failed: "_s + why, where());
    }
    const QDeadlineTimer deadline(m_config.timeoutMs);
    while (m_socket->bytesToWrite() > 0) {
        if (cancel.isCancelled()) {
            drop();
            return fail(ErrorCode::Cancelled, u"cancelled while writing"_s, where());
        }
        if (deadline.hasExpired()) {
            drop();
            return fail(ErrorCode::Timeout,
                        u"the collector took no data for "_s + QString::number(m_config.timeoutMs) + u" ms"_s, where());
        }
        if (!m_socket->waitForBytesWritten(100) && m_socket->state() != QAbstractSocket::ConnectedState) {
            const QString why = m_socket->errorString();
            drop();
            return fail(ErrorCode::Unavailable, u"connection lost while writing: "_s + why, where());
        }
    }
    return {};
}

} // namespace pando::adapters::syslog
