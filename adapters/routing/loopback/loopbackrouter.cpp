#include "loopbackrouter.h"

#include "proxyloop.h"

#include "adapters/api/oskit.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::loopback {

namespace {

QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

// Resolved on the caller's thread so the proxy loop never blocks on a name lookup.
Result<detail::Backend> resolveBackend(const QString &host, int port)
{
    if (port < 1 || port > 65535)
        return fail(ErrorCode::Invalid, u"backend port %1 is outside 1-65535"_s.arg(port), u"port"_s);
    if (host.isEmpty())
        return fail(ErrorCode::Invalid, u"backend host is empty"_s, u"host"_s);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo *found = nullptr;
    const QByteArray hostBytes = host.toUtf8();
    const QByteArray portBytes = QByteArray::number(port);
    const int rc = ::getaddrinfo(hostBytes.constData(), portBytes.constData(), &hints, &found);
    if (rc != 0 || !found)
        return fail(ErrorCode::Unavailable,
                    u"cannot resolve backend host \"%1\": %2"_s.arg(host, QString::fromLocal8Bit(gai_strerror(rc))),
                    u"host"_s);
    detail::Backend backend;
    std::memcpy(&backend.address, found->ai_addr, found->ai_addrlen);
    backend.length = found->ai_addrlen;
    ::freeaddrinfo(found);
    return backend;
}

Result<int> openListener(int port, int *boundPort)
{
    auto fd = bindLoopbackPort(port, boundPort, true);
    if (!fd)
        return fd;
    if (::listen(*fd, 1024) != 0) {
        const int err = errno;
        ::close(*fd);
        return fail(ErrorCode::Internal, u"cannot listen on 127.0.0.1:%1: %2"_s.arg(port).arg(errnoText(err)));
    }
    return fd;
}

} // namespace

LoopbackRouter::LoopbackRouter(LoopbackLimits limits) : m_loop(std::make_unique<detail::ProxyLoop>(limits))
{}

LoopbackRouter::~LoopbackRouter() = default;

Result<Route> LoopbackRouter::ensure(const QString &app, int requestedPort)
{
    if (!m_loop->startError().isEmpty())
        return fail(ErrorCode::Internal, u"the loopback router could not start: %1"_s.arg(m_loop->startError()));
    const std::lock_guard guard(m_mutex);
    auto kept = routeToKeep(m_routes, app, requestedPort);
    if (!kept)
        return std::unexpected(kept.error());
    if (const Route *existing = *kept)
        return *existing;
    int port = 0;
    Result<int> fd = openListener(requestedPort, &port);
    if (!fd)
        return std::unexpected(fd.error());
    Route route;
    route.app = app;
    route.port = port;
    route.url = QUrl(u"http://127.0.0.1:%1/"_s.arg(port));
    m_loop->addListener(app, *fd, detail::Backend{});
    m_routes.insert(app, route);
    return route;
}

Status LoopbackRouter::setBackend(const QString &app, const QString &host, int port)
{
    Result<detail::Backend> backend = resolveBackend(host, port);
    if (!backend)
        return std::unexpected(backend.error());
    const std::lock_guard guard(m_mutex);
    auto it = m_routes.find(app);
    if (it == m_routes.end())
        return fail(ErrorCode::NotFound, u"app %1 has no route"_s.arg(app), u"app"_s, u"call ensure() first"_s);
    m_loop->setBackend(app, *backend);
    it->backendHost = host;
    it->backendPort = port;
    return {};
}

Status LoopbackRouter::remove(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    if (!m_routes.remove(app))
        return {};
    m_loop->removeListener(app);
    return {};
}

std::optional<Route> LoopbackRouter::route(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    if (auto it = m_routes.constFind(app); it != m_routes.constEnd())
        return *it;
    return std::nullopt;
}

RouterStatus LoopbackRouter::status()
{
    RouterStatus status;
    status.kind = u"in-process"_s;
    status.running = m_loop->startError().isEmpty();
    {
        const std::lock_guard guard(m_mutex);
        status.routes = int(m_routes.size());
    }
    status.problem =
        status.running ? QString() : u"the loopback router could not start: %1"_s.arg(m_loop->startError());
    return status;
}

int LoopbackRouter::openConnections(const QString &app)
{
    return m_loop->openConnections(app);
}

} // namespace pando::adapters::loopback
