#include "gitstream.h"

#include "adapters/api/netaddress.h"

#include <git2.h>
#include <git2/sys/stream.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace pando::adapters::git {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> g_connectMs{NetworkDeadlines{}.connectMs};
std::atomic<int> g_idleMs{NetworkDeadlines{}.idleMs};
std::atomic<int> g_totalMs{NetworkDeadlines{}.totalMs};
thread_local bool t_refuseInternal = false;

struct TimedStream {
    git_stream parent; // first: libgit2 hands back this pointer
    char *host = nullptr;
    char *port = nullptr;
    int fd = -1;
    Clock::time_point deadline; // the whole connection's
};

TimedStream *self(git_stream *stream)
{
    return reinterpret_cast<TimedStream *>(stream);
}

int failWith(const char *what, const TimedStream *s, int ms)
{
    char message[512];
    std::snprintf(message, sizeof message, "%s %s:%s (%d s)", what, s->host ? s->host : "?", s->port ? s->port : "?",
                  ms / 1000);
    git_error_set_str(GIT_ERROR_NET, message);
    return -1;
}

// Waits until fd is ready for events, for the idle deadline or what is left of the overall one.
// 1 ready, 0 timed out (the error is set), -1 failed.
int waitFor(TimedStream *s, short events, int idleMs, const char *what)
{
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(s->deadline - Clock::now()).count();
        if (left <= 0)
            return failWith("the git host did not finish within the deadline:", s, g_totalMs.load()), 0;
        const int wait = int(std::min<long long>(left, idleMs));
        pollfd p{s->fd, events, 0};
        const int rc = ::poll(&p, 1, wait);
        if (rc > 0)
            return 1;
        if (rc == 0) {
            if (wait < idleMs)
                continue; // the overall deadline: reported above on the next turn
            return failWith(what, s, idleMs), 0;
        }
        if (errno != EINTR) {
            git_error_set_str(GIT_ERROR_OS, std::strerror(errno));
            return -1;
        }
    }
}

int timedConnect(git_stream *stream)
{
    TimedStream *s = self(stream);
    s->deadline = Clock::now() + std::chrono::milliseconds(g_totalMs.load());
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    addrinfo *info = nullptr;
    if (const int rc = ::getaddrinfo(s->host, s->port, &hints, &info); rc != 0) {
        char message[512];
        std::snprintf(message, sizeof message, "cannot resolve %s: %s", s->host, ::gai_strerror(rc));
        git_error_set_str(GIT_ERROR_NET, message);
        return -1;
    }
    int result = -1;
    const char *refused = nullptr; // an internal address that was skipped, as text
    char refusedText[64] = {};
    int tried = 0;
    for (addrinfo *p = info; p && result != 0; p = p->ai_next) {
        if (t_refuseInternal && isInternalAddress(QHostAddress(p->ai_addr))) {
            if (::getnameinfo(p->ai_addr, p->ai_addrlen, refusedText, sizeof refusedText, nullptr, 0, NI_NUMERICHOST))
                std::snprintf(refusedText, sizeof refusedText, "?");
            refused = refusedText;
            continue;
        }
        ++tried;
        const int fd = ::socket(p->ai_family, p->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0)
            continue;
        s->fd = fd;
        if (::connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
            result = 0;
            break;
        }
        if (errno == EINPROGRESS &&
            waitFor(s, POLLOUT, g_connectMs.load(), "cannot connect within the deadline to") == 1) {
            int err = 0;
            socklen_t len = sizeof err;
            if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
                result = 0;
                break;
            }
            char message[512];
            std::snprintf(message, sizeof message, "cannot connect to %s:%s: %s", s->host, s->port, std::strerror(err));
            git_error_set_str(GIT_ERROR_NET, message);
        } else if (errno != EINPROGRESS) {
            char message[512];
            std::snprintf(message, sizeof message, "cannot connect to %s:%s: %s", s->host, s->port,
                          std::strerror(errno));
            git_error_set_str(GIT_ERROR_NET, message);
        }
        ::close(fd);
        s->fd = -1;
    }
    ::freeaddrinfo(info);
    if (result != 0 && refused && tried == 0) {
        char message[512];
        std::snprintf(message, sizeof message,
                      "%s resolves to %s, an address of this machine or its link, which this fetch may not reach",
                      s->host, refused);
        git_error_set_str(GIT_ERROR_NET, message);
    }
    return result;
}

ssize_t timedRead(git_stream *stream, void *data, size_t len)
{
    TimedStream *s = self(stream);
    for (;;) {
        const ssize_t n = ::recv(s->fd, data, len, 0);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            git_error_set_str(GIT_ERROR_NET, std::strerror(errno));
            return -1;
        }
        if (waitFor(s, POLLIN, g_idleMs.load(), "the git host sent nothing within the deadline:") != 1)
            return -1;
    }
}

ssize_t timedWrite(git_stream *stream, const char *data, size_t len, int /*flags*/)
{
    TimedStream *s = self(stream);
    size_t sent = 0;
    while (sent < len) {
        const ssize_t n = ::send(s->fd, data + sent, len - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            git_error_set_str(GIT_ERROR_NET, std::strerror(errno));
            return -1;
        }
        if (waitFor(s, POLLOUT, g_idleMs.load(), "the git host took nothing within the deadline:") != 1)
            return -1;
    }
    return ssize_t(sent);
}

int timedClose(git_stream *stream)
{
    TimedStream *s = self(stream);
    if (s->fd >= 0)
        ::close(s->fd);
    s->fd = -1;
    return 0;
}

void timedFree(git_stream *stream)
{
    TimedStream *s = self(stream);
    timedClose(stream);
    std::free(s->host);
    std::free(s->port);
    delete s;
}

int timedInit(git_stream **out, const char *host, const char *port)
{
    auto *s = new TimedStream{};
    s->parent.version = GIT_STREAM_VERSION;
    s->parent.connect = timedConnect;
    s->parent.read = timedRead;
    s->parent.write = timedWrite;
    s->parent.close = timedClose;
    s->parent.free = timedFree;
    s->host = ::strdup(host ? host : "");
    s->port = ::strdup(port ? port : "");
    *out = &s->parent;
    return 0;
}

} // namespace

void installNetworkDeadlines()
{
    static std::once_flag registered;
    std::call_once(registered, [] {
        git_libgit2_init();
        static git_stream_registration registration{GIT_STREAM_VERSION, timedInit, nullptr};
        git_stream_register(GIT_STREAM_STANDARD, &registration);
    });
}

InternalHostsRefused::InternalHostsRefused(bool refuse) : m_before(t_refuseInternal)
{
    t_refuseInternal = t_refuseInternal || refuse;
}

InternalHostsRefused::~InternalHostsRefused()
{
    t_refuseInternal = m_before;
}

void setNetworkDeadlines(const NetworkDeadlines &deadlines)
{
    installNetworkDeadlines();
    const NetworkDeadlines defaults;
    g_connectMs = deadlines.connectMs > 0 ? deadlines.connectMs : defaults.connectMs;
    g_idleMs = deadlines.idleMs > 0 ? deadlines.idleMs : defaults.idleMs;
    g_totalMs = deadlines.totalMs > 0 ? deadlines.totalMs : defaults.totalMs;
}

} // namespace pando::adapters::git
