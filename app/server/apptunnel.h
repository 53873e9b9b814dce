#pragma once
// One port-forward to an app (GET /api/v1/apps/{name}/tunnel), as `kubectl port-forward` does: a
// TCP connection to the app's stable route on loopback, its bytes carried both ways as binary
// WebSocket messages. Either side ending ends the other, after what it sent was passed on.
//
// Back-pressure: the app is read only while the WebSocket's queue toward the client is under the
// session's bound (the kernel holds the rest and slows the app), and what the client sends may
// queue toward the app up to the same bound before the tunnel is closed saying so; neither queue
// grows without end. Deadlines: the app's port must accept within connectTimeoutMs, and a tunnel
// that carries no byte either way for idleTimeoutMs is closed.
//
// Threading: lives on the server's thread, a child of its WebSocketSession, and goes with it.

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>

class QTcpSocket;
class QTimer;

namespace pando::server::detail {

class WebSocketSession;

class AppTunnel : public QObject {
    Q_OBJECT
public:
    struct Options {
        QString app;
        quint16 port = 0; // on loopback
        int connectTimeoutMs = 5'000;
        int idleTimeoutMs = 0; // 0: none
    };
    // released runs once when the tunnel goes (its count against the caps).
    AppTunnel(WebSocketSession &session, Options options, std::function<void()> released);
    ~AppTunnel() override;

    // What one binary message carries at most toward the client.
    static constexpr qint64 ChunkBytes = 32 * 1024;

private:
    void fromClient(const QByteArray &data);
    void pump();
    void appEnded();
    void end(int code, const QString &reason);
    void touch();
    void letAppGo();

    WebSocketSession &m_session;
    Options m_options;
    std::function<void()> m_released;
    QTcpSocket *m_app = nullptr;
    QTimer *m_connectDeadline = nullptr;
    QTimer *m_idle = nullptr;
    QByteArray m_early; // what the client sent before the app accepted
    bool m_connected = false;
    bool m_ending = false;
};

} // namespace pando::server::detail
