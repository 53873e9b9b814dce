#include "proxyloop.h"

#include <QtGlobal>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <unordered_set>

namespace pando::adapters::loopback::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Bytes held per direction of one connection. Reading from a side stops while the buffer
// toward the other side is full, so memory stays bounded however slow a peer is.
constexpr size_t BufferSize = size_t{64} * 1024;
constexpr int ConnectAttempts = 3;
constexpr auto RetryDelay = std::chrono::milliseconds(100);
constexpr auto ConnectTimeout = std::chrono::seconds(5);
constexpr auto AcceptPause = std::chrono::milliseconds(100);
// How often idle connections are looked for (and refusals past the cap logged at most).
constexpr auto IdleSweep = std::chrono::seconds(1);
constexpr auto RefusalLogEvery = std::chrono::seconds(10);

void setNoDelay(int fd)
{
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

} // namespace

// Handler and Buffer are named in the structs the header declares, so they are not in the anonymous
// namespace (GCC's -Wsubobject-linkage in a unity build).
struct Handler {
    virtual ~Handler() = default;
    virtual void onEvent(unsigned events) = 0;
};

class Buffer {
public:
    Buffer() : m_data(new char[BufferSize]) {}
    size_t size() const { return m_end - m_start; }
    bool empty() const { return m_end == m_start; }
    size_t room() const { return BufferSize - m_end; }
    char *tail() { return m_data.get() + m_end; }
    const char *head() const { return m_data.get() + m_start; }
    void produced(size_t n) { m_end += n; }
    void consumed(size_t n)
    {
        m_start += n;
        if (m_start == m_end)
            m_start = m_end = 0;
    }
    // Moves unsent bytes to the front so the free space is contiguous again.
    void compact()
    {
        if (m_start > 0 && m_end == BufferSize) {
            std::memmove(m_data.get(), m_data.get() + m_start, size());
            m_end -= m_start;
            m_start = 0;
        }
    }

private:
    std::unique_ptr<char[]> m_data;
    size_t m_start = 0;
    size_t m_end = 0;
};

struct Listener final : Handler {
    ProxyLoop *loop = nullptr;
    QString app;
    int fd = -1;
    Backend backend;
    std::unordered_set<Connection *> connections;
    Clock::time_point resumeAt{};
    qint64 refused = 0; // past the connection cap, since the last log line
    Clock::time_point lastRefusalLog{};
    void onEvent(unsigned) override { loop->acceptOn(this); }
};

struct Side final : Handler {
    ProxyLoop *loop = nullptr;
    Connection *connection = nullptr;
    bool client = false;
    void onEvent(unsigned events) override { loop->onConnectionEvent(connection, client, events); }
};

struct Connection {
    Listener *listener = nullptr;
    Backend backend;
    int clientFd = -1;
    int upstreamFd = -1;
    Side clientSide;
    Side upstreamSide;
    Buffer toUpstream;
    Buffer toClient;
    bool connected = false;
    bool clientEof = false;   // the client sent FIN
    bool upstreamEof = false; // the backend sent FIN
    bool upstreamShut = false;
    bool clientShut = false;
    bool dead = false;
    int attempts = 0;
    Clock::time_point deadline{};   // connect timeout, or when to retry (upstreamFd == -1)
    Clock::time_point lastActive{}; // when a byte last moved, either way
    unsigned clientMask = 0;
    unsigned upstreamMask = 0;
};

ProxyLoop::ProxyLoop(ProxyLimits limits) : m_limits(limits)
{
    m_epoll = ::epoll_create1(EPOLL_CLOEXEC);
    m_wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_epoll < 0 || m_wake < 0) {
        m_startError = QString::fromLocal8Bit(std::strerror(errno));
        return;
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = nullptr; // the wake-up descriptor
    ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wake, &event);
    std::promise<void> started;
    std::future<void> ready = started.get_future();
    m_thread = std::thread([this, &started] {
        m_loopThread = std::this_thread::get_id();
        started.set_value();
        run();
    });
    ready.wait();
}

ProxyLoop::~ProxyLoop()
{
    if (m_thread.joinable()) {
        call([this] { m_stopping = true; });
        m_thread.join();
    }
    if (m_wake >= 0)
        ::close(m_wake);
    if (m_epoll >= 0)
        ::close(m_epoll);
}

void ProxyLoop::call(std::function<void()> work)
{
    // Waiting on our own loop would deadlock: the loop thread only ever runs handlers.
    Q_ASSERT(std::this_thread::get_id() != m_loopThread);
    if (!m_thread.joinable())
        return;
    std::promise<void> done;
    std::future<void> finished = done.get_future();
    {
        const std::lock_guard guard(m_queueMutex);
        m_queue.emplace_back([&work, &done] {
            work();
            done.set_value();
        });
    }
    const quint64 one = 1;
    [[maybe_unused]] const ssize_t n = ::write(m_wake, &one, sizeof one);
    finished.wait();
}

void ProxyLoop::runCommands()
{
    quint64 count = 0;
    [[maybe_unused]] const ssize_t n = ::read(m_wake, &count, sizeof count);
    std::deque<std::function<void()>> work;
    {
        const std::lock_guard guard(m_queueMutex);
        work.swap(m_queue);
    }
    for (auto &item : work)
        item();
}

void ProxyLoop::run()
{
    std::array<epoll_event, 256> events;
    while (!m_stopping) {
        const int n = ::epoll_wait(m_epoll, events.data(), static_cast<int>(events.size()), nextTimeoutMs());
        if (n < 0 && errno != EINTR)
            break;
        for (int i = 0; i < n; ++i) {
            if (events[i].data.ptr == nullptr)
                runCommands();
            else
                static_cast<Handler *>(events[i].data.ptr)->onEvent(events[i].events);
        }
        runTimers();
        // Objects closed during this batch may still have had events queued in it.
        m_deadConnections.clear();
        m_deadListeners.clear();
    }
    while (!m_listeners.empty())
        closeListener(m_listeners.begin()->second.get());
    m_deadConnections.clear();
    m_deadListeners.clear();
}

int ProxyLoop::nextTimeoutMs() const
{
    const bool anyOpen = std::any_of(m_listeners.begin(), m_listeners.end(),
                                     [](const auto &entry) { return !entry.second->connections.empty(); });
    if (m_timed.empty() && m_paused.empty() && !anyOpen)
        return -1;
    Clock::time_point next = anyOpen ? m_nextIdleSweep : Clock::time_point::max();
    for (const Connection *c : m_timed)
        next = std::min(next, c->deadline);
    for (const Listener *l : m_paused)
        next = std::min(next, l->resumeAt);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(wait + 1, 0, 60'000));
}

void ProxyLoop::closeIdle()
{
    const Clock::time_point now = Clock::now();
    if (now < m_nextIdleSweep)
        return;
    m_nextIdleSweep = now + IdleSweep;
    std::vector<Connection *> idle;
    for (const auto &[app, listener] : m_listeners) {
        for (Connection *c : listener->connections)
            if (!c->dead && now - c->lastActive >= m_limits.idleTimeout)
                idle.push_back(c);
    }
    for (Connection *c : idle)
        closeConnection(c);
}

void ProxyLoop::runTimers()
{
    closeIdle();
    const Clock::time_point now = Clock::now();
    for (auto it = m_paused.begin(); it != m_paused.end();) {
        Listener *listener = *it;
        if (listener->resumeAt <= now) {
            epoll_event event{};
            event.events = EPOLLIN;
            event.data.ptr = static_cast<Handler *>(listener);
            ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, listener->fd, &event);
            it = m_paused.erase(it);
        } else {
            ++it;
        }
    }
    std::vector<Connection *> due;
    for (Connection *c : m_timed) {
        if (c->deadline <= now)
            due.push_back(c);
    }
    for (Connection *c : due) {
        if (c->dead)
            continue;
        m_timed.erase(c);
        if (c->upstreamFd >= 0)
            connectFailed(c, ETIMEDOUT); // still connecting: give up on this attempt
        else
            startConnect(c); // the retry delay is over
    }
}

void ProxyLoop::addListener(const QString &app, int fd, const Backend &backend)
{
    call([&] {
        auto listener = std::make_unique<Listener>();
        listener->loop = this;
        listener->app = app;
        listener->fd = fd;
        listener->backend = backend;
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.ptr = static_cast<Handler *>(listener.get());
        ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event);
        m_listeners[app] = std::move(listener);
    });
}

void ProxyLoop::setBackend(const QString &app, const Backend &backend)
{
    call([&] {
        if (auto it = m_listeners.find(app); it != m_listeners.end())
            it->second->backend = backend;
    });
}

void ProxyLoop::removeListener(const QString &app)
{
    call([&] {
        if (auto it = m_listeners.find(app); it != m_listeners.end())
            closeListener(it->second.get());
    });
}

int ProxyLoop::openConnections(const QString &app)
{
    int count = 0;
    call([&] {
        if (auto it = m_listeners.find(app); it != m_listeners.end())
            count = static_cast<int>(it->second->connections.size());
    });
    return count;
}

void ProxyLoop::closeListener(Listener *listener)
{
    while (!listener->connections.empty())
        closeConnection(*listener->connections.begin());
    m_paused.erase(listener);
    closeDescriptor(listener->fd);
    auto it = m_listeners.find(listener->app);
    if (it != m_listeners.end() && it->second.get() == listener) {
        m_deadListeners.push_back(std::move(it->second));
        m_listeners.erase(it);
    }
}

void ProxyLoop::acceptOn(Listener *listener)
{
    if (listener->fd < 0)
        return; // closed earlier in this batch
    for (int i = 0; i < 64; ++i) {
        const int fd = ::accept4(listener->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                // The pending connection stays queued; stop polling the listener for a moment
                // rather than spinning on it.
                epoll_event event{};
                event.data.ptr = static_cast<Handler *>(listener);
                ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, listener->fd, &event);
                listener->resumeAt = Clock::now() + AcceptPause;
                m_paused.insert(listener);
            }
            return;
        }
        if (listener->backend.length == 0) {
            ::close(fd); // no backend yet: nothing to talk to
            continue;
        }
        if (static_cast<int>(listener->connections.size()) >= m_limits.maxConnections) {
            ::close(fd);
            ++listener->refused;
            const Clock::time_point now = Clock::now();
            if (now - listener->lastRefusalLog >= RefusalLogEvery) {
                qWarning("loopback router: app %s has %d connections open, its limit; refused %lld more",
                         qUtf8Printable(listener->app), m_limits.maxConnections,
                         static_cast<long long>(listener->refused));
                listener->lastRefusalLog = now;
                listener->refused = 0;
            }
            continue;
        }
        setNoDelay(fd);
        auto *connection = new Connection;
        connection->listener = listener;
        connection->backend = listener->backend; // read at accept time
        connection->clientFd = fd;
        connection->lastActive = Clock::now();
        connection->clientSide.loop = this;
        connection->clientSide.connection = connection;
        connection->clientSide.client = true;
        connection->upstreamSide.loop = this;
        connection->upstreamSide.connection = connection;
        listener->connections.insert(connection);
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.ptr = static_cast<Handler *>(&connection->clientSide);
        ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event);
        connection->clientMask = EPOLLIN;
        startConnect(connection);
    }
}

void ProxyLoop::startConnect(Connection *c)
{
    ++c->attempts;
    const Backend &backend = c->backend;
    const int fd = ::socket(backend.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        connectFailed(c, errno);
        return;
    }
    setNoDelay(fd);
    c->upstreamFd = fd;
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr *>(&backend.address), backend.length);
    if (rc != 0 && errno != EINPROGRESS) {
        connectFailed(c, errno);
        return;
    }
    epoll_event event{};
    event.events = EPOLLOUT;
    event.data.ptr = static_cast<Handler *>(&c->upstreamSide);
    ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event);
    c->upstreamMask = EPOLLOUT;
    c->deadline = Clock::now() + ConnectTimeout;
    m_timed.insert(c);
}

void ProxyLoop::connectFailed(Connection *c, int err)
{
    closeDescriptor(c->upstreamFd);
    c->upstreamMask = 0;
    m_timed.erase(c);
    // A refused connection is what a backend being replaced looks like for a moment; try
    // again shortly, toward whatever backend is current by then.
    const bool transient = err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
                           err == ECONNRESET || err == EAGAIN;
    if (transient && c->attempts < ConnectAttempts) {
        if (c->listener->backend.length > 0)
            c->backend = c->listener->backend;
        c->deadline = Clock::now() + RetryDelay;
        m_timed.insert(c);
        return;
    }
    closeConnection(c);
}

void ProxyLoop::onConnectionEvent(Connection *c, bool clientSide, unsigned events)
{
    if (c->dead)
        return;
    if (!clientSide && !c->connected) {
        int err = 0;
        socklen_t len = sizeof err;
        if (::getsockopt(c->upstreamFd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0) {
            connectFailed(c, err);
            return;
        }
        if (!(events & EPOLLOUT))
            return;
        c->connected = true;
        m_timed.erase(c);
        pump(c, false, false);
        return;
    }
    // A reset or a peer gone while we already saw its end: nothing more can move.
    const bool sideEof = clientSide ? c->clientEof : c->upstreamEof;
    if ((events & EPOLLERR) || ((events & EPOLLHUP) && sideEof))
        return closeConnection(c);
    const bool readable = events & (EPOLLIN | EPOLLHUP);
    pump(c, clientSide && readable, !clientSide && readable);
}

// Moves what can be moved in both directions without blocking, then asks epoll for the
// events that would let it move more.
void ProxyLoop::pump(Connection *c, bool readClient, bool readUpstream)
{
    auto readInto = [c](int fd, Buffer &buffer, bool &eof) -> bool {
        buffer.compact();
        if (buffer.room() == 0)
            return true;
        const ssize_t n = ::recv(fd, buffer.tail(), buffer.room(), 0);
        if (n > 0) {
            buffer.produced(static_cast<size_t>(n));
            c->lastActive = Clock::now();
        } else if (n == 0)
            eof = true;
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return false;
        return true;
    };
    auto writeFrom = [c](int fd, Buffer &buffer) -> bool {
        while (!buffer.empty()) {
            const ssize_t n = ::send(fd, buffer.head(), buffer.size(), MSG_NOSIGNAL);
            if (n > 0) {
                buffer.consumed(static_cast<size_t>(n));
                c->lastActive = Clock::now();
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        }
        return true;
    };

    if (readClient && !c->clientEof && !readInto(c->clientFd, c->toUpstream, c->clientEof))
        return closeConnection(c);
    if (readUpstream && !c->upstreamEof && !readInto(c->upstreamFd, c->toClient, c->upstreamEof))
        return closeConnection(c);
    if (c->connected) {
        if (!writeFrom(c->upstreamFd, c->toUpstream))
            return closeConnection(c);
        // Half-close: the client finished sending, so the backend sees end-of-request while its
        // answer can still flow back.
        if (c->clientEof && c->toUpstream.empty() && !c->upstreamShut) {
            ::shutdown(c->upstreamFd, SHUT_WR);
            c->upstreamShut = true;
        }
    }
    if (!writeFrom(c->clientFd, c->toClient))
        return closeConnection(c);
    if (c->upstreamEof && c->toClient.empty() && !c->clientShut) {
        ::shutdown(c->clientFd, SHUT_WR);
        c->clientShut = true;
    }
    if (c->clientShut && c->upstreamShut)
        return closeConnection(c);
    if (!c->connected && c->clientEof && c->toUpstream.empty() && c->upstreamFd < 0)
        return closeConnection(c); // the client gave up before a backend answered
    updateInterest(c);
}

void ProxyLoop::updateInterest(Connection *c)
{
    unsigned clientMask = 0;
    if (!c->clientEof && c->toUpstream.size() < BufferSize)
        clientMask |= EPOLLIN;
    if (!c->toClient.empty())
        clientMask |= EPOLLOUT;
    if (clientMask != c->clientMask) {
        epoll_event event{};
        event.events = clientMask;
        event.data.ptr = static_cast<Handler *>(&c->clientSide);
        ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, c->clientFd, &event);
        c->clientMask = clientMask;
    }
    if (c->upstreamFd < 0)
        return;
    unsigned upstreamMask = 0;
    if (!c->connected) {
        upstreamMask = EPOLLOUT;
    } else {
        if (!c->upstreamEof && c->toClient.size() < BufferSize)
            upstreamMask |= EPOLLIN;
        if (!c->toUpstream.empty())
            upstreamMask |= EPOLLOUT;
    }
    if (upstreamMask != c->upstreamMask) {
        epoll_event event{};
        event.events = upstreamMask;
        event.data.ptr = static_cast<Handler *>(&c->upstreamSide);
        ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, c->upstreamFd, &event);
        c->upstreamMask = upstreamMask;
    }
}

void ProxyLoop::closeConnection(Connection *c)
{
    if (c->dead)
        return;
    c->dead = true;
    closeDescriptor(c->clientFd);
    closeDescriptor(c->upstreamFd);
    m_timed.erase(c);
    c->listener->connections.erase(c);
    m_deadConnections.emplace_back(c);
}

// Leaves epoll before closing: a child forked meanwhile may hold a copy of the descriptor, and
// epoll forgets a registration only once every copy is closed, so it would go on reporting events
// for an object already freed.
void ProxyLoop::closeDescriptor(int &fd)
{
    if (fd < 0)
        return;
    ::epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    fd = -1;
}

} // namespace pando::adapters::loopback::detail
