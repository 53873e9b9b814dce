#include "session.h"

#include <QWebSocket>

namespace pando::desktop {

Subscription::~Subscription()
{
    // The socket belongs to the session's client; closing it here ends the stream on the server.
    // Nobody hears ended() from an object going away.
    m_active = false;
    if (m_socket)
        m_socket->close();
}

void Subscription::attach(QWebSocket *socket)
{
    m_socket = socket;
    connect(socket, &QWebSocket::connected, this, &Subscription::opened);
}

bool Subscription::sendBinary(const QByteArray &data)
{
    if (!m_active || !m_socket || !m_socket->isValid())
        return false;
    return m_socket->sendBinaryMessage(data) == data.size();
}

bool Subscription::sendText(const QString &text)
{
    if (!m_active || !m_socket || !m_socket->isValid())
        return false;
    m_socket->sendTextMessage(text);
    return true;
}

void Subscription::cancel()
{
    if (!m_active)
        return;
    if (m_socket)
        m_socket->close();
    finish({});
}

void Subscription::finish(const Status &status)
{
    if (!m_active)
        return;
    m_active = false;
    m_socket = nullptr;
    m_result = status;
    Q_EMIT ended();
}

Session::~Session() = default;

void Session::setState(State state, const Error &failure)
{
    m_failure = failure;
    if (state == m_state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

Session *sessionOf(QObject *object, const QObject *holder)
{
    auto *typed = qobject_cast<Session *>(object);
    if (object && !typed)
        qWarning("%s: %s is not a pando::desktop::Session", holder->metaObject()->className(),
                 object->metaObject()->className());
    return typed;
}

} // namespace pando::desktop
