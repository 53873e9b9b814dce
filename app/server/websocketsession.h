#pragma once
// One WebSocket client of the API: the socket, who opened it (so that revoking the credentials
// closes it), and what its stream keeps alive (a log subscription). The ApiServer owns every
// session as a direct child; a session deletes itself when its socket disconnects.
//
// Threading: lives on the server's thread with its socket.

#include "adapters/api/error.h"
#include "core/logstream/loghub.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTimer>
#include <QWebSocket>
#include <algorithm>
#include <memory>

namespace pando::server::detail {

// The API's own close codes, from the range RFC 6455 leaves to applications (4000-4999): "no such
// thing", "not in a state for it", "too many now" and "not available now", as HTTP's 404, 409, 429
// and 503 (RFC 6455's 1013 would say "try again later", but Qt's own client refuses it as invalid). QWebSocket takes
// only its CloseCode enum, whose named values end at 1015; the number is passed through as it is.
enum class StreamClose { NotFound = 4404, Conflict = 4409, TooMany = 4429, Unavailable = 4503 };
inline QWebSocketProtocol::CloseCode closeCode(StreamClose code)
{
    return static_cast<QWebSocketProtocol::CloseCode>(int(code));
}
// How a stream that could not go on is closed: unknown object 4404, not in a state for it 4409,
// unavailable 4503, a wrong request 1002, any other error 1011 (an internal error).
inline QWebSocketProtocol::CloseCode closeCodeFor(ErrorCode error)
{
    switch (error) {
    case ErrorCode::NotFound:
        return closeCode(StreamClose::NotFound);
    case ErrorCode::Conflict:
        return closeCode(StreamClose::Conflict);
    case ErrorCode::Unavailable:
        return closeCode(StreamClose::Unavailable);
    case ErrorCode::Invalid:
    case ErrorCode::TooLarge:
        return QWebSocketProtocol::CloseCodeProtocolError;
    default:
        return QWebSocketProtocol::CloseCodeBadOperation;
    }
}

class WebSocketSession : public QObject {
    Q_OBJECT
public:
    // maxPendingBytes: what may wait to go out to a client that reads too slowly before it is
    // dropped; QWebSocket would queue without end (a log follow of a chatty app grew the daemon).
    WebSocketSession(QWebSocket *socket, qint64 maxPendingBytes, QObject *parent)
        : QObject(parent), m_socket(socket), m_maxPending(maxPendingBytes)
    {
        socket->setParent(this);
        connect(socket, &QWebSocket::disconnected, this, &QObject::deleteLater);
        // A client that went between its handshake and this session will send no disconnected():
        // the session would stay for ever, counted against the connection cap and its user's.
        if (socket->state() == QAbstractSocket::UnconnectedState)
            deleteLater();
        connect(socket, &QWebSocket::bytesWritten, this,
                [this](qint64 written) { m_pending = std::max<qint64>(0, m_pending - written); });
    }

    void close(QWebSocketProtocol::CloseCode code, const QString &reason) { m_socket->close(code, reason); }
    // Every message to the client goes through here, so that the bound holds for every stream.
    void send(const QJsonObject &message)
    {
        if (m_dropped)
            return;
        const QByteArray text = QJsonDocument(message).toJson(QJsonDocument::Compact);
        if (m_maxPending > 0 && m_pending + text.size() > m_maxPending) {
            m_dropped = true;
            qWarning("dropping a WebSocket client of %s: %lld bytes wait to go to it, the limit is %lld",
                     qUtf8Printable(m_socket->peerAddress().toString()), static_cast<long long>(m_pending),
                     static_cast<long long>(m_maxPending));
            // A close frame would queue behind what is stuck; the connection just ends.
            m_socket->abort();
            return;
        }
        m_pending += text.size();
        m_socket->sendTextMessage(QString::fromUtf8(text));
    }
    // Bytes for a tunnel (apptunnel.h), counted as send() counts them but never dropped: the
    // tunnel stops reading its app while pendingBytes() is at the bound, so the queue stays bounded.
    void sendBinary(const QByteArray &data)
    {
        m_pending += data.size();
        m_socket->sendBinaryMessage(data);
    }
    qint64 pendingBytes() const { return m_pending; }
    qint64 maxPendingBytes() const { return m_maxPending; }
    QWebSocket *socket() const { return m_socket; }
    const QString &tokenId() const { return m_tokenId; }
    const QString &userId() const { return m_userId; }
    void setPrincipal(const QString &tokenId, const QString &userId)
    {
        m_tokenId = tokenId;
        m_userId = userId;
    }
    void keep(std::shared_ptr<core::LogSubscription> subscription) { m_subscription = std::move(subscription); }
    // Closes the socket (1008, "the token expired") when the credentials that opened it stop
    // working at expiresMs (wall-clock ms; 0: never). A stream must not outlive its token.
    void closeAt(qint64 expiresMs)
    {
        if (expiresMs <= 0)
            return;
        if (!m_expiry) {
            m_expiry = new QTimer(this);
            m_expiry->setSingleShot(true);
            connect(m_expiry, &QTimer::timeout, this, [this] { closeAt(m_expiresMs); });
        }
        m_expiresMs = expiresMs;
        const qint64 left = expiresMs - QDateTime::currentMSecsSinceEpoch();
        if (left <= 0) {
            close(QWebSocketProtocol::CloseCodePolicyViolated, QStringLiteral("the token expired"));
            return;
        }
        // QTimer counts in int milliseconds: a token good for months is looked at again daily.
        m_expiry->start(int(std::min<qint64>(left, 24LL * 60 * 60 * 1000)));
    }

private:
    QWebSocket *m_socket;
    qint64 m_maxPending = 0;
    qint64 m_pending = 0; // sent to the socket, not yet written to the network
    bool m_dropped = false;
    QString m_tokenId;
    QString m_userId;
    std::shared_ptr<core::LogSubscription> m_subscription;
    QTimer *m_expiry = nullptr;
    qint64 m_expiresMs = 0;
};

} // namespace pando::server::detail
