#include "adapters/taskrunner/docker/attachstream.h"

#include "adapters/kit/dockerapi/dockerclient.h"

#include <QElapsedTimer>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace pando::adapters::docker::detail {

using namespace Qt::StringLiterals;

namespace {
constexpr int HandshakeTimeoutMs = 10000;
constexpr qsizetype MaxHeaderBytes = 64LL * 1024;
} // namespace

void FrameSplitter::feed(QByteArrayView data)
{
    while (!data.isEmpty()) {
        if (m_remaining == 0) {
            const qsizetype take = qMin(8 - m_header.size(), data.size());
            m_header.append(data.first(take));
            data = data.sliced(take);
            if (m_header.size() < 8)
                return;
            const auto *h = reinterpret_cast<const uchar *>(m_header.constData());
            m_stderr = h[0] == 2;
            m_remaining = (qint64(h[4]) << 24) | (qint64(h[5]) << 16) | (qint64(h[6]) << 8) | qint64(h[7]);
            m_header.clear();
            continue;
        }
        const qsizetype take = qsizetype(qMin<qint64>(m_remaining, data.size()));
        m_sink(m_stderr, data.first(take));
        data = data.sliced(take);
        m_remaining -= take;
    }
}

AttachStream::~AttachStream()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

void AttachStream::setStdin(QByteArray data)
{
    m_stdin = std::move(data);
    m_stdinOffset = 0;
}

Status AttachStream::open(const QString &socketPath, const QString &containerId, bool withStdin)
{
    const QString where = u"docker attach %1"_s.arg(containerId.left(12));
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
        return fail(ErrorCode::Internal, u"cannot create a socket: %1"_s.arg(QString::fromLocal8Bit(::strerror(errno))),
                    where);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const QByteArray path = QFile::encodeName(socketPath);
    if (path.size() >= qsizetype(sizeof address.sun_path))
        return fail(ErrorCode::Invalid, u"the Docker socket path is too long"_s, socketPath);
    std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
    if (::connect(m_fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0)
        return fail(ErrorCode::Unavailable,
                    u"cannot connect to the Docker engine at %1: %2"_s.arg(socketPath,
                                                                           QString::fromLocal8Bit(::strerror(errno))),
                    where, u"is dockerd running?"_s);

    QByteArray request = "POST /" + QByteArray(dockerapi::ApiVersion) + "/containers/" + containerId.toLatin1() +
                         "/attach?stream=1&stdout=1&stderr=1";
    if (withStdin)
        request += "&stdin=1";
    request += " HTTP/1.1\r\nHost: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n";
    for (qsizetype sent = 0; sent < request.size();) {
        const ssize_t n = ::send(m_fd, request.constData() + sent, size_t(request.size() - sent), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(ErrorCode::Unavailable, u"the Docker engine closed the attach connection"_s, where);
        sent += n;
    }

    QByteArray header;
    QElapsedTimer clock;
    clock.start();
    qsizetype end = -1;
    while ((end = header.indexOf("\r\n\r\n")) < 0) {
        if (header.size() > MaxHeaderBytes)
            return fail(ErrorCode::Failed, u"the Docker engine sent an oversized attach response"_s, where);
        const qint64 left = HandshakeTimeoutMs - clock.elapsed();
        if (left <= 0)
            return fail(ErrorCode::Timeout, u"the Docker engine did not answer the attach request in time"_s, where);
        pollfd fd{m_fd, POLLIN, 0};
        if (::poll(&fd, 1, int(left)) <= 0)
            continue;
        char buffer[4096];
        const ssize_t n = ::recv(m_fd, buffer, sizeof buffer, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(ErrorCode::Unavailable, u"the Docker engine closed the attach connection"_s, where);
        header.append(buffer, qsizetype(n));
    }
    m_early = header.mid(end + 4);
    header.truncate(end);
    // "HTTP/1.1 101 UPGRADED" (or 200 from engines that do not upgrade).
    const QList<QByteArray> statusLine = header.left(header.indexOf("\r\n")).split(' ');
    const int status = statusLine.size() >= 2 ? statusLine.at(1).toInt() : 0;
    if (status != 101 && status != 200) {
        const QByteArray body = m_early.trimmed();
        const QString message =
            body.isEmpty() ? u"the engine answered HTTP %1"_s.arg(status) : dockerapi::DockerClient::errorMessage(body);
        return fail(status == 404 ? ErrorCode::NotFound : ErrorCode::Failed, message, where);
    }
    ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
    m_stdinOpen = withStdin;
    return {};
}

AttachStream::Pump AttachStream::pump(int waitMs, const std::function<void(QByteArrayView)> &onData)
{
    if (!m_early.isEmpty()) {
        onData(m_early);
        m_early.clear();
    }
    if (m_fd < 0)
        return Pump::Ended;
    if (m_stdinOpen && m_stdinOffset >= m_stdin.size()) {
        ::shutdown(m_fd, SHUT_WR);
        m_stdinOpen = false;
    }
    pollfd fd{m_fd, short(POLLIN | (m_stdinOpen ? POLLOUT : 0)), 0};
    const int ready = ::poll(&fd, 1, waitMs);
    if (ready <= 0)
        return Pump::More;
    if (fd.revents & POLLOUT) {
        const ssize_t n = ::send(m_fd, m_stdin.constData() + m_stdinOffset, size_t(m_stdin.size() - m_stdinOffset),
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            m_stdinOffset += n;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            m_stdinOffset = m_stdin.size(); // the container stopped reading: drop the rest
    }
    if (fd.revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[64 * 1024];
        for (;;) {
            const ssize_t n = ::recv(m_fd, buffer, sizeof buffer, 0);
            if (n > 0) {
                onData(QByteArrayView(buffer, qsizetype(n)));
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            ::close(m_fd);
            m_fd = -1;
            return Pump::Ended;
        }
    }
    return Pump::More;
}

} // namespace pando::adapters::docker::detail
