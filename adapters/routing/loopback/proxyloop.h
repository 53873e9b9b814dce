#pragma once
// The loopback router's engine: one thread running an epoll loop that accepts connections on
// the apps' listening sockets and pumps bytes to and from their backends. Kept apart from
// LoopbackRouter so the socket code is in one place and the router keeps the route table.
//
// Threading: the public methods may be called from any thread except the loop's own; they
// hand the work to the loop and return once it took effect.

#include "adapters/routing/loopback/loopbackrouter.h"

#include <QString>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sys/socket.h>
#include <thread>

namespace pando::adapters::loopback::detail {

// A resolved backend address; len 0 means "no backend": connections are closed at once.
struct Backend {
    sockaddr_storage address{};
    socklen_t length = 0;
};

struct Listener;
struct Connection;

using ProxyLimits = LoopbackLimits;

class ProxyLoop {
public:
    explicit ProxyLoop(ProxyLimits limits = {});
    ~ProxyLoop();
    ProxyLoop(const ProxyLoop &) = delete;
    ProxyLoop &operator=(const ProxyLoop &) = delete;

    // Empty when the loop runs; otherwise why it could not start.
    QString startError() const { return m_startError; }

    // Serves the listening socket fd (ownership passes to the loop) as app's.
    void addListener(const QString &app, int fd, const Backend &backend);
    // Applies to connections accepted from now on (and to retries of ones still connecting).
    void setBackend(const QString &app, const Backend &backend);
    // Closes app's listening socket and every connection it accepted.
    void removeListener(const QString &app);
    // Connections of app currently open (for tests and status views).
    int openConnections(const QString &app);

    // Internal to the loop thread; public only for the epoll handler types.
    void acceptOn(Listener *listener);
    void onConnectionEvent(Connection *connection, bool clientSide, unsigned events);

private:
    void run();
    void call(std::function<void()> work);
    void runCommands();
    void runTimers();
    int nextTimeoutMs() const;

    void startConnect(Connection *connection);
    void connectFailed(Connection *connection, int err);
    void pump(Connection *connection, bool readClient, bool readUpstream);
    void updateInterest(Connection *connection);
    void closeConnection(Connection *connection);
    void closeListener(Listener *listener);
    void closeIdle();
    void closeDescriptor(int &fd);

    ProxyLimits m_limits;
    std::chrono::steady_clock::time_point m_nextIdleSweep{};
    int m_epoll = -1;
    int m_wake = -1;
    QString m_startError;
    std::thread m_thread;
    std::thread::id m_loopThread;
    bool m_stopping = false; // loop thread only

    std::mutex m_queueMutex;
    std::deque<std::function<void()>> m_queue;

    // Loop thread only.
    std::map<QString, std::unique_ptr<Listener>> m_listeners;
    std::set<Connection *> m_timed;                             // connections waiting to connect or to retry
    std::set<Listener *> m_paused;                              // listeners paused after running out of descriptors
    std::vector<std::unique_ptr<Connection>> m_deadConnections; // freed after each batch
    std::vector<std::unique_ptr<Listener>> m_deadListeners;
};

} // namespace pando::adapters::loopback::detail
