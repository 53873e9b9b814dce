#pragma once
// The loopback router: each app gets a stable port on 127.0.0.1 whose connections are proxied,
// byte for byte, to the app's current container. Switching the backend sends new connections
// to the new container while open ones finish where they started, which is what makes a
// redeploy seamless on a single host. No TLS, no HTTP parsing: plain TCP.
//
// Threading: every method may be called from any thread except the router's own loop thread
// (which only runs socket handlers); each returns once the change took effect.

#include "adapters/api/routing.h"

#include <QHash>
#include <memory>
#include <mutex>

namespace pando::adapters::loopback {

namespace detail {
class ProxyLoop;
}

class LoopbackRouter : public Router {
public:
    LoopbackRouter();
    ~LoopbackRouter() override;

    Result<Route> ensure(const QString &app, int requestedPort) override;
    Status setBackend(const QString &app, const QString &host, int port) override;
    Status remove(const QString &app) override;
    std::optional<Route> route(const QString &app) override;

    // Connections currently open through app's port.
    int openConnections(const QString &app);

private:
    std::mutex m_mutex; // guards m_routes and orders changes to one app
    QHash<QString, Route> m_routes;
    std::unique_ptr<detail::ProxyLoop> m_loop;
};

} // namespace pando::adapters::loopback
