#include "adapters/kit/streamkit/unixsocket.h"

#include <QElapsedTimer>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::streamkit {

namespace {
constexpr int PollMs = 50;
constexpr qsizetype HeadLimit = qsizetype(64) * 1024;
} // namespace

void UniqueFd::reset(int fd)
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = fd;
}

Result<UniqueFd> connectUnix(const QString &path, const QString &whom)
{
    const QByteArray native = QFile::encodeName(path);
    sockaddr_un address{};
    if (native.size() >= qsizetype(sizeof(address.sun_path)))
        return fail(ErrorCode::Invalid, u"the socket path is too long"_s, path);
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, native.constData(), size_t(native.size()));
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        return fail(ErrorCode::Unavailable, u"no socket: %1"_s.arg(qt_error_string(errno)), path);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0)
        return fail(ErrorCode::Unavailable, u"%1 does not answer: %2"_s.arg(whom, qt_error_string(errno)), path);
    return fd;
}

bool writeAll(int fd, QByteArrayView data)
{
    while (!data.isEmpty()) {
        const ssize_t n = ::send(fd, data.data(), size_t(data.size()), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, PollMs);
            continue;
        }
        if (n <= 0)
            return false;
        data = data.sliced(n);
    }
    return true;
}

Result<QByteArray> readHead(int fd, int timeoutMs, const CancelToken &cancel, QByteArray *rest, const QString &where)
{
    QByteArray head;
    QElapsedTimer waited;
    waited.start();
    while (!head.contains("\r\n\r\n")) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"cancelled"_s, where);
        if (head.size() > HeadLimit || waited.elapsed() > timeoutMs)
            return fail(ErrorCode::Unavailable, u"no answer came in %1 s"_s.arg(timeoutMs / 1000), where);
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, PollMs) <= 0)
            continue;
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0)
            return fail(ErrorCode::Unavailable, u"the connection closed before an answer"_s, where);
        head.append(buffer, n);
    }
    const qsizetype end = head.indexOf("\r\n\r\n");
    *rest = head.mid(end + 4);
    head.truncate(end + 4);
    return head;
}

} // namespace pando::adapters::streamkit
