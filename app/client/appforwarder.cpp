#include "appforwarder.h"

#include "api.h"
#include "apiclient.h"

#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>
#include <QWebSocket>
#include <memory>
#include <optional>

using namespace Qt::StringLiterals;

namespace pando::client {

namespace {
// How long a closed local connection waits for the server to take its close.
constexpr int LingerMs = 5'000;
} // namespace

Error tunnelError(const QString &app, const QString &server, int closeCode, const QString &closeReason,
                  const QString &socketError)
{
    if (!closeReason.isEmpty()) {
        ErrorCode code = ErrorCode::Unavailable;
        if (closeCode == 4404)
            code = ErrorCode::NotFound;
        else if (closeCode == 4409)
            code = ErrorCode::Conflict;
        else if (closeCode == int(QWebSocketProtocol::CloseCodePolicyViolated))
            code = closeReason.startsWith(u"forbidden"_s) ? ErrorCode::Forbidden : ErrorCode::Unauthorized;
        return Error{code, closeReason, server};
    }
    // Qt 6.4 says "Unhandled http status code: 403 (Forbidden)" and keeps the body to itself.
    static const QRegularExpression statusCode(u"status code: (\\d{3})"_s);
    const QRegularExpressionMatch match = statusCode.match(socketError);
    switch (match.hasMatch() ? match.captured(1).toInt() : 0) {
    case 401:
        return Error{ErrorCode::Unauthorized, u"the server refused the token (HTTP 401)"_s, server,
                     u"log in again, or pair again with a new link"_s};
    case 403:
        return Error{ErrorCode::Forbidden, u"you may not open app %1 (HTTP 403)"_s.arg(app), server,
                     u"ask an administrator for a grant on the app"_s};
    case 404:
        return Error{ErrorCode::NotFound, u"there is no app %1 (HTTP 404)"_s.arg(app), server,
                     u"pando apps list names the apps"_s};
    case 409:
        return Error{ErrorCode::Conflict, u"app %1 is not running or has no route yet (HTTP 409)"_s.arg(app), server,
                     u"deploy it (pando deploy %1)"_s.arg(app)};
    default:
        break;
    }
    return Error{ErrorCode::Unavailable, u"the tunnel to app %1 failed: %2"_s.arg(app, socketError), server};
}

AppForwarder::AppForwarder(ApiClient *client, QString app, QObject *parent)
    : QObject(parent), m_client(client), m_app(std::move(app))
{}

AppForwarder::~AppForwarder() = default;

void AppForwarder::start(quint16 port, std::function<void(const Result<quint16> &)> done)
{
    if (!m_client) {
        done(fail(ErrorCode::Internal, u"the forwarder has no API client"_s));
        return;
    }
    QPointer<AppForwarder> self(this);
    Api(m_client).app(m_app, [self, port, done = std::move(done)](const Result<ApiResponse> &answer) {
        if (!self)
            return;
        if (!answer) {
            done(std::unexpected(answer.error()));
            return;
        }
        // An app without a route has nowhere for a tunnel to lead yet; one that is routed but
        // stopped may start again, and its connections say so until it does.
        if (answer->json.value(u"url"_s).toString().isEmpty()) {
            done(fail(ErrorCode::Conflict, u"app %1 is not routed yet: it was never deployed"_s.arg(self->m_app),
                      self->server().toString(), u"deploy it first (pando deploy %1)"_s.arg(self->m_app)));
            return;
        }
        self->stop();
        auto *listener = new QTcpServer(self);
        // Loopback only: what is forwarded carries the user's access to the app, not anyone's.
        if (!listener->listen(QHostAddress::LocalHost, port)) {
            const QString why = listener->errorString();
            delete listener;
            done(fail(ErrorCode::Conflict, u"cannot listen on 127.0.0.1:%1: %2"_s.arg(port).arg(why), u"--port"_s,
                      u"choose another port, or leave --port out for a free one"_s));
            return;
        }
        self->m_listener = listener;
        connect(listener, &QTcpServer::newConnection, self, &AppForwarder::accept);
        done(listener->serverPort());
    });
}

void AppForwarder::stop()
{
    if (!m_listener)
        return;
    m_listener->close();
    m_listener->deleteLater();
    m_listener = nullptr;
}

quint16 AppForwarder::port() const
{
    return m_listener ? m_listener->serverPort() : 0;
}

bool AppForwarder::isListening() const
{
    return m_listener && m_listener->isListening();
}

QUrl AppForwarder::localUrl() const
{
    if (!isListening())
        return {};
    return QUrl(u"http://127.0.0.1:%1/"_s.arg(port()));
}

QUrl AppForwarder::server() const
{
    return m_client ? m_client->baseUrl() : QUrl();
}

void AppForwarder::accept()
{
    while (m_listener && m_listener->hasPendingConnections())
        if (QTcpSocket *local = m_listener->nextPendingConnection())
            forward(local);
}

void AppForwarder::forward(QTcpSocket *local)
{
    if (!m_client) {
        local->abort();
        local->deleteLater();
        return;
    }
    // One connection: the local socket and its WebSocket, which go together. State shared by the
    // callbacks below, which all run on this thread.
    struct Link {
        qint64 pending = 0; // sent on the WebSocket, not yet written to the network
        bool open = false;  // the WebSocket is open
        bool ended = false; // one side ended; the other is being closed
    };
    auto link = std::make_shared<Link>();
    auto mismatch = std::make_shared<std::optional<Error>>();
    QWebSocket *remote = m_client->newWebSocket(local, mismatch);
    local->setReadBufferSize(ChunkBytes * 4);
    local->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    ++m_connections;
    Q_EMIT connectionsChanged(m_connections);
    connect(local, &QObject::destroyed, this, [this] {
        --m_connections;
        Q_EMIT connectionsChanged(m_connections);
    });

    auto pump = [local, remote, link] {
        if (!link->open || link->ended)
            return;
        while (local->bytesAvailable() > 0 && link->pending < MaxPendingBytes) {
            const QByteArray chunk = local->read(ChunkBytes);
            link->pending += chunk.size();
            remote->sendBinaryMessage(chunk);
        }
    };
    // The local side is closed once what came from the server is written to it.
    auto endLocal = [local, link] {
        link->ended = true;
        if (local->state() == QAbstractSocket::UnconnectedState)
            local->deleteLater();
        else
            local->disconnectFromHost();
    };

    connect(local, &QTcpSocket::readyRead, this, [link, pump] {
        if (!link->open) {
            // Before the WebSocket is open the kernel holds the rest (the read buffer is bounded).
            return;
        }
        pump();
    });
    connect(remote, &QWebSocket::bytesWritten, this, [link, pump](qint64 written) {
        link->pending = std::max<qint64>(0, link->pending - written);
        pump();
    });
    connect(remote, &QWebSocket::connected, this, [link, pump] {
        link->open = true;
        pump();
    });
    connect(remote, &QWebSocket::binaryMessageReceived, local, [local](const QByteArray &data) {
        if (local->state() == QAbstractSocket::ConnectedState)
            local->write(data);
    });
    const QString app = m_app;
    const QString server = m_client->baseUrl().toString();
    // The local side went first: the server is told, and the pair goes once it answered (or
    // after LingerMs), so that what the local side sent last still reaches the app.
    connect(local, &QTcpSocket::disconnected, this, [local, remote, link] {
        if (link->ended) {
            local->deleteLater();
            return;
        }
        link->ended = true;
        if (remote->state() == QAbstractSocket::UnconnectedState) {
            local->deleteLater();
            return;
        }
        remote->close(QWebSocketProtocol::CloseCodeNormal, u"the local connection ended"_s);
        QTimer::singleShot(LingerMs, local, [local] { local->deleteLater(); });
    });
    connect(remote, &QWebSocket::disconnected, this, [this, local, remote, link, mismatch, app, server, endLocal] {
        if (link->ended) {
            if (local->state() == QAbstractSocket::UnconnectedState)
                local->deleteLater();
            return;
        }
        const int code = int(remote->closeCode());
        if (*mismatch)
            Q_EMIT connectionFailed(**mismatch);
        else if (!link->open || code != QWebSocketProtocol::CloseCodeNormal)
            Q_EMIT connectionFailed(tunnelError(app, server, link->open ? code : 0,
                                                link->open ? remote->closeReason() : QString(), remote->errorString()));
        endLocal();
    });
    connect(remote, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
            [this, remote, link, mismatch, app, server, endLocal](QAbstractSocket::SocketError) {
                if (link->ended || link->open)
                    return; // an open socket's failure ends in disconnected()
                Q_EMIT connectionFailed(*mismatch ? **mismatch
                                                  : tunnelError(app, server, 0, {}, remote->errorString()));
                endLocal();
            });
    m_client->openWebSocket(remote, apiPath({u"apps"_s, m_app, u"tunnel"_s}));
}

} // namespace pando::client
