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
#include <chrono>
#include <memory>
#include <mutex>

namespace pando::adapters::loopback {

namespace detail {
class ProxyLoop;
}

// What one app's port holds at most: open connections (each takes two descriptors; past the cap
// new ones are accepted and closed at once, with a log line at most every 10 s), and how long a
// connection may move no byte either way before it is closed. Without them idle sockets piled
// up until the daemon ran out of descriptors.
struct LoopbackLimits {
    int maxConnections = 512;
    std::chrono::milliseconds idleTimeout = std::chrono::minutes(10);
};

class LoopbackRouter : public Router {
public:
    explicit LoopbackRouter(LoopbackLimits limits = {});
    ~LoopbackRouter() override;

    Result<Route> ensure(const QString &app, int requestedPort) override;
    Status setBackend(const QString &app, const QString &host, int port) override;
    Status remove(const QString &app) override;
    std::optional<Route> route(const QString &app) override;
    RouterStatus status() override;

    // Connections currently open through app's port.
    int openConnections(const QString &app);

private:
    std::mutex m_mutex; // guards m_routes and orders changes to one app
    QHash<QString, Route> m_routes;
    std::unique_ptr<detail::ProxyLoop> m_loop;
};

} // namespace pando::adapters::loopback
