#pragma once
// A port-forward to an app on a Pando server, as `kubectl port-forward` does: a listener on this
// machine's loopback, and for each connection a WebSocket to the server's tunnel route
// (GET /api/v1/apps/{name}/tunnel) that carries its bytes both ways. The WebSocket is opened
// through the ApiClient, so with the token and the certificate pin every other request has: a
// teammate reaches the apps of a desktop they paired with over the TLS trust the pairing pinned.
//
// Back-pressure: the local connection is read only while less than MaxPendingBytes wait to go
// out on its WebSocket; what comes from the server is written to the local connection as it comes
// (a browser reads faster than a tunnel delivers).
//
// Threading: lives on its ApiClient's thread; every callback and signal comes on that thread.

#include "adapters/api/error.h"

#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <functional>

class QTcpServer;
class QTcpSocket;

namespace pando::client {

class ApiClient;

class AppForwarder : public QObject {
    Q_OBJECT
public:
    // What one binary message carries at most toward the server, under the server's inbound cap.
    static constexpr qint64 ChunkBytes = 32 * 1024;
    static constexpr qint64 MaxPendingBytes = 4 * 1024 * 1024;

    AppForwarder(ApiClient *client, QString app, QObject *parent = nullptr);
    ~AppForwarder() override;

    // Asks the server for the app first (so that an unknown app, a refused read or an app never
    // routed is said at once: NotFound, Forbidden, Conflict), then listens on 127.0.0.1:port (0: a
    // free one; a taken port is Conflict naming it). done gets the port it listens on.
    void start(quint16 port, std::function<void(const Result<quint16> &)> done);
    void stop();

    QString app() const { return m_app; }
    quint16 port() const;
    bool isListening() const;
    // "http://127.0.0.1:PORT/" once listening; empty before.
    QUrl localUrl() const;
    // The server's base URL, as the user named it ("through <server>").
    QUrl server() const;
    int connectionCount() const { return m_connections; }

Q_SIGNALS:
    // One forwarded connection ended with an error: the server refused its tunnel (the app
    // stopped, a cap was reached), the pin refused the server, or the app's side failed.
    void connectionFailed(const pando::Error &error);
    void connectionsChanged(int count);

private:
    void accept();
    void forward(QTcpSocket *local);

    QPointer<ApiClient> m_client;
    QString m_app;
    QTcpServer *m_listener = nullptr;
    int m_connections = 0;
};

// What a refused WebSocket upgrade or a tunnel's close frame means, for people: Qt reports an
// upgrade answered with an HTTP status only in its error string, whose status is looked for here.
Error tunnelError(const QString &app, const QString &server, int closeCode, const QString &closeReason,
                  const QString &socketError);

} // namespace pando::client
