#pragma once
// Package server: Pando's HTTP + WebSocket API over the engine (REST + JSON under /api/v1, live
// logs and events over WebSockets). Every route comes from one table with the permission it
// needs and the URL argument naming its object; every request but the health check, the
// bootstrap, the login and the resource webhook (which carries the resource's own token,
// checked by the pipeline service) is authenticated with a bearer token and authorized by
// core/authz (role, grants, token scopes) before it runs; each refusal is audited.
//
// Threading: an ApiServer lives on the thread that created it and serves from that thread's
// event loop; it calls only the engine's thread-safe query and command methods.

#include "adapters/api/error.h"
#include "app/server/connectionlimits.h"
#include "core/authz/authz.h"

#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QSet>
#include <QSslCertificate>
#include <QSslKey>
#include <memory>

namespace pando::core {
class Engine;
}

namespace pando::server {

// The largest request body any route takes (pipeline configs and secrets may be big); larger ones
// are refused with 413 before they are read. An AppSpec is held to core::MaxSpecBytes on top.
inline constexpr qint64 MaxRequestBodyBytes = 3LL * 1024 * 1024;

// One row of the route table, for documentation checks and clients.
struct RouteInfo {
    QString method;     // "GET"
    QString path;       // "/api/v1/apps/{name}"
    QString permission; // "public", "apps.read", ...
    bool webSocket = false;
    QString object; // what the first {placeholder} names: "app", "pipeline", "deploy", "run", "token",
                    // "approval"; "" none
};

class ApiServer : public QObject {
    Q_OBJECT
public:
    explicit ApiServer(core::Engine &engine, QObject *parent = nullptr);
    ~ApiServer() override;

    // Starts listening; port 0 picks a free one. Returns the bound port; a port in use is
    // ErrorCode::Conflict. May be called more than once to listen on several addresses.
    Result<quint16> listen(const QHostAddress &address, quint16 port);
    // Like listen(), over TLS with this certificate and key (tlsidentity.h makes them); plain
    // HTTP to this port is refused. The certificate's fingerprint goes into pairing links.
    Result<quint16> listenTls(const QHostAddress &address, quint16 port, const QSslCertificate &certificate,
                              const QSslKey &key);
    // Stops every listenTls() listener and drops the connections that came through them (the
    // plain listeners go on): the desktop's "serve teammates" switched off.
    void stopTls();
    // The app limit and other authorization settings (defaults: core/authz/authz.h); the
    // engine keeps them, as it decides every request.
    void setAuthzOptions(const core::authz::AuthzOptions &options);
    // Connection caps and deadlines (connectionlimits.h) for the listeners made from now on and
    // the WebSockets accepted from now on.
    void setConnectionLimits(const ConnectionLimits &limits);
    // A host name (or address) requests may name in their Host header besides loopback names,
    // the addresses listened on and the TLS certificate's names: a reverse proxy's public name.
    void addAllowedHost(const QString &name);
    // Every route the server answers, in matching order.
    static QList<RouteInfo> routeTable();
    // How many WebSocket clients are connected now.
    int webSocketCount() const;
    // Who holds a live stream open now, oldest first: JSON as GET /api/v1/connections lists it.
    QList<QJsonObject> connections() const;

private:
    class Frontend;
    void acceptWebSockets();

    core::Engine &m_engine;
    ConnectionLimits m_limits;
    std::unique_ptr<Frontend> m_frontend;
    QSet<quint16> m_tlsPorts; // the ports listenTls() serves
    QList<QObject *> m_tlsListeners;
};

} // namespace pando::server
