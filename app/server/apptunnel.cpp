#include "apptunnel.h"

#include "websocketsession.h"

#include <QHostAddress>
#include <QTcpSocket>
#include <QTimer>
#include <QWebSocket>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::server::detail {

namespace {
// How long the app's side may take to take what the client sent once the client is gone; past
// it the connection is dropped.
constexpr int TunnelLingerMs = 5'000;
} // namespace

AppTunnel::AppTunnel(WebSocketSession &session, Options options, std::function<void()> released)
    : QObject(&session), m_session(session), m_options(std::move(options)), m_released(std::move(released))
{
    QWebSocket *socket = session.socket();
    m_app = new QTcpSocket(this);
    // Unread bytes stay in the kernel, which slows the app down, instead of in this process.
    m_app->setReadBufferSize(ChunkBytes * 4);
    m_app->setSocketOption(QAbstractSocket::LowDelayOption, 1);

    m_connectDeadline = new QTimer(this);
    m_connectDeadline->setSingleShot(true);
    connect(m_connectDeadline, &QTimer::timeout, this, [this] {
        end(int(StreamClose::Unavailable),
            u"app %1 did not accept a connection on its route within %2 ms"_s.arg(m_options.app)
                .arg(m_options.connectTimeoutMs));
    });
    m_idle = new QTimer(this);
    m_idle->setSingleShot(true);
    connect(m_idle, &QTimer::timeout, this, [this] {
        end(QWebSocketProtocol::CloseCodeGoingAway,
            u"the tunnel to app %1 carried nothing for %2 s"_s.arg(m_options.app)
                .arg(std::max(1, m_options.idleTimeoutMs / 1000)));
    });

    connect(socket, &QWebSocket::binaryMessageReceived, this, &AppTunnel::fromClient);
    connect(socket, &QWebSocket::textMessageReceived, this, [this] {
        end(QWebSocketProtocol::CloseCodeDatatypeNotSupported, u"a tunnel carries binary messages only"_s);
    });
    // The session's own handler, connected first, has counted the bytes off its queue by now.
    connect(socket, &QWebSocket::bytesWritten, this, &AppTunnel::pump);
    connect(socket, &QWebSocket::disconnected, this, &AppTunnel::letAppGo);

    connect(m_app, &QTcpSocket::connected, this, [this] {
        m_connected = true;
        m_connectDeadline->stop();
        if (!m_early.isEmpty())
            m_app->write(std::exchange(m_early, {}));
        touch();
        pump();
    });
    connect(m_app, &QTcpSocket::readyRead, this, &AppTunnel::pump);
    connect(m_app, &QTcpSocket::bytesWritten, this, &AppTunnel::touch);
    connect(m_app, &QTcpSocket::disconnected, this, &AppTunnel::appEnded);
    connect(m_app, &QTcpSocket::errorOccurred, this, [this](QAbstractSocket::SocketError error) {
        if (error == QAbstractSocket::RemoteHostClosedError)
            return; // disconnected() follows and ends the tunnel once what was read is passed on
        if (!m_connected)
            end(int(StreamClose::Unavailable),
                u"app %1 refused the connection on its route: %2"_s.arg(m_options.app, m_app->errorString()));
        else
            end(QWebSocketProtocol::CloseCodeAbnormalDisconnection,
                u"the connection to app %1 failed: %2"_s.arg(m_options.app, m_app->errorString()));
    });

    m_connectDeadline->start(m_options.connectTimeoutMs);
    m_app->connectToHost(QHostAddress(QHostAddress::LocalHost), m_options.port);
}

AppTunnel::~AppTunnel()
{
    if (m_released)
        m_released();
}

void AppTunnel::fromClient(const QByteArray &data)
{
    if (m_ending)
        return;
    touch();
    const qint64 bound = m_session.maxPendingBytes();
    const qint64 queued = m_connected ? m_app->bytesToWrite() : m_early.size();
    if (bound > 0 && queued + data.size() > bound) {
        end(QWebSocketProtocol::CloseCodeTooMuchData,
            u"app %1 reads more slowly than the tunnel sends: %2 bytes wait, the limit is %3"_s.arg(m_options.app)
                .arg(queued + data.size())
                .arg(bound));
        return;
    }
    if (m_connected)
        m_app->write(data);
    else
        m_early += data;
}

void AppTunnel::pump()
{
    if (!m_connected || !m_app)
        return;
    const qint64 bound = m_session.maxPendingBytes();
    bool moved = false;
    while (m_app->bytesAvailable() > 0 && (bound <= 0 || m_session.pendingBytes() < bound)) {
        m_session.sendBinary(m_app->read(ChunkBytes));
        moved = true;
    }
    if (moved)
        touch();
}

void AppTunnel::appEnded()
{
    if (m_ending)
        return;
    // What the app wrote before it closed still goes to the client, ahead of the close frame.
    while (m_app->bytesAvailable() > 0)
        m_session.sendBinary(m_app->read(ChunkBytes));
    end(QWebSocketProtocol::CloseCodeNormal, u"app %1 closed the connection"_s.arg(m_options.app));
}

void AppTunnel::end(int code, const QString &reason)
{
    if (m_ending)
        return;
    m_ending = true;
    m_connectDeadline->stop();
    m_idle->stop();
    m_app->abort();
    m_session.close(static_cast<QWebSocketProtocol::CloseCode>(code), reason);
}

void AppTunnel::touch()
{
    if (m_options.idleTimeoutMs > 0 && !m_ending)
        m_idle->start(m_options.idleTimeoutMs);
}

void AppTunnel::letAppGo()
{
    // The client is gone: what it sent still reaches the app, then the app's side is closed. The
    // socket leaves this tunnel (which goes with its session now) and removes itself.
    m_connectDeadline->stop();
    m_idle->stop();
    if (m_ending || !m_connected || m_app->state() != QAbstractSocket::ConnectedState) {
        m_ending = true;
        return;
    }
    m_ending = true;
    QTcpSocket *app = m_app;
    app->disconnect(this);
    app->setParent(nullptr);
    m_app = nullptr;
    connect(app, &QTcpSocket::disconnected, app, &QObject::deleteLater);
    QTimer::singleShot(TunnelLingerMs, app, [app] {
        app->abort();
        app->deleteLater();
    });
    app->disconnectFromHost();
}

} // namespace pando::server::detail
