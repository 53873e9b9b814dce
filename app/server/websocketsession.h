#pragma once
// One WebSocket client of the API: the socket, who opened it (so that revoking the credentials
// closes it), and what its stream keeps alive (a log subscription). The ApiServer owns every
// session as a direct child; a session deletes itself when its socket disconnects.
//
// Threading: lives on the server's thread with its socket.

#include "core/logstream/loghub.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QWebSocket>
#include <memory>

namespace pando::server::detail {

class WebSocketSession : public QObject {
    Q_OBJECT
public:
    WebSocketSession(QWebSocket *socket, QObject *parent) : QObject(parent), m_socket(socket)
    {
        socket->setParent(this);
        connect(socket, &QWebSocket::disconnected, this, &QObject::deleteLater);
    }

    void close(QWebSocketProtocol::CloseCode code, const QString &reason) { m_socket->close(code, reason); }
    void send(const QJsonObject &message)
    {
        m_socket->sendTextMessage(QString::fromUtf8(QJsonDocument(message).toJson(QJsonDocument::Compact)));
    }
    QWebSocket *socket() const { return m_socket; }
    const QString &tokenId() const { return m_tokenId; }
    const QString &userId() const { return m_userId; }
    void setPrincipal(const QString &tokenId, const QString &userId)
    {
        m_tokenId = tokenId;
        m_userId = userId;
    }
    void keep(std::shared_ptr<core::LogSubscription> subscription) { m_subscription = std::move(subscription); }

private:
    QWebSocket *m_socket;
    QString m_tokenId;
    QString m_userId;
    std::shared_ptr<core::LogSubscription> m_subscription;
};

} // namespace pando::server::detail
