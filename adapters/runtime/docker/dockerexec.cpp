// DockerRuntime::exec: POST /containers/{id}/exec makes the exec; POST /exec/{id}/start, sent on a
// unix socket connection of its own with "Upgrade: tcp", is answered 101 and the connection then
// carries the process's streams both ways: stdin from the client, output back (raw with a tty,
// else frames of an 8-byte header as in logs). Closing our write side ends the process's stdin.
// GET /exec/{id}/json says the exit code once the stream ended.
//
// Threading: the exec runs on the calling thread (a poll() loop that also wakes every 50 ms for
// cancel); ExecInput may be called from any thread, also after the exec ended (it then does
// nothing): it queues under a mutex and wakes the loop through a pipe.

#include "adapters/runtime/docker/dockerruntime.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutex>
#include <QThread>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace pando::adapters::docker {

namespace {

constexpr int PollMs = 50;
constexpr int HeaderLimit = 64 * 1024;
constexpr int ExitCodeWaitMs = 5000;

// A file descriptor closed with its owner.
struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

// The input side: queued by whoever feeds it, written by the loop.
class QueuedInput final : public ExecInput {
public:
    QueuedInput(const dockerapi::DockerClient &client, QString execId, int wakeFd)
        : m_client(client), m_execId(std::move(execId)), m_wake(wakeFd)
    {}
    void write(const QByteArray &data) override
    {
        QMutexLocker lock(&m_mutex);
        if (m_ended || m_inputClosed)
            return;
        m_pending += data;
        wake();
    }
    void closeInput() override
    {
        QMutexLocker lock(&m_mutex);
        if (m_ended || m_inputClosed)
            return;
        m_inputClosed = true;
        wake();
    }
    void resize(int columns, int rows) override
    {
        {
            QMutexLocker lock(&m_mutex);
            if (m_ended || columns <= 0 || rows <= 0)
                return;
        }
        dockerapi::Request r;
        r.method = "POST";
        r.path = QStringLiteral("/exec/%1/resize").arg(m_execId);
        r.addQuery(QStringLiteral("h"), QString::number(rows)).addQuery(QStringLiteral("w"), QString::number(columns));
        r.timeoutMs = 5000;
        (void)m_client.call(r); // a size the engine refuses leaves the old one
    }
    // The loop's side: what to write now, and whether stdin ends after it.
    QByteArray take(bool *closeAfter)
    {
        QMutexLocker lock(&m_mutex);
        *closeAfter = m_inputClosed;
        return std::exchange(m_pending, {});
    }
    void end()
    {
        QMutexLocker lock(&m_mutex);
        m_ended = true;
        m_pending.clear();
    }

private:
    void wake() const
    {
        const char byte = 1;
        (void)!::write(m_wake, &byte, 1);
    }
    const dockerapi::DockerClient &m_client;
    QString m_execId;
    int m_wake;
    QMutex m_mutex;
    QByteArray m_pending;
    bool m_inputClosed = false;
    bool m_ended = false;
};

// Splits the non-tty stream into its frames (stream byte, three zeros, a big-endian length).
class Frames {
public:
    explicit Frames(const std::function<void(int, QByteArrayView)> &out) : m_out(out) {}
    void feed(QByteArrayView data)
    {
        while (!data.isEmpty()) {
            if (m_remaining == 0) {
                const qsizetype need = 8 - m_header.size();
                m_header.append(data.first(std::min(need, data.size())));
                data = data.sliced(std::min(need, data.size()));
                if (m_header.size() < 8)
                    return;
                m_stream = m_header.at(0) == 2 ? 2 : 1;
                const auto *h = reinterpret_cast<const unsigned char *>(m_header.constData());
                m_remaining = (qint64(h[4]) << 24) | (qint64(h[5]) << 16) | (qint64(h[6]) << 8) | qint64(h[7]);
                m_header.clear();
                continue;
            }
            const qsizetype n = qsizetype(std::min<qint64>(m_remaining, data.size()));
            m_out(m_stream, data.first(n));
            m_remaining -= n;
            data = data.sliced(n);
        }
    }

private:
    const std::function<void(int, QByteArrayView)> &m_out;
    QByteArray m_header;
    int m_stream = 1;
    qint64 m_remaining = 0;
};

Result<int> connectUnix(const QString &path)
{
    const QByteArray native = path.toLocal8Bit();
    sockaddr_un address{};
    if (native.size() >= qsizetype(sizeof(address.sun_path)))
        return fail(ErrorCode::Invalid, QStringLiteral("the Docker socket path is too long"), path);
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, native.constData(), size_t(native.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(ErrorCode::Unavailable, QStringLiteral("no socket: %1").arg(qt_error_string(errno)), path);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof(address)) != 0) {
        const int error = errno;
        ::close(fd);
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("the Docker engine does not answer: %1").arg(qt_error_string(error)), path);
    }
    return fd;
}

bool writeAll(int fd, QByteArrayView data)
{
    while (!data.isEmpty()) {
        const ssize_t n = ::send(fd, data.data(), size_t(data.size()), MSG_NOSIGNAL);
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

// Sends the start request and reads the answer's head; what came after it is the stream's start.
Status startStream(int fd, const QString &execId, bool tty, const CancelToken &cancel, QByteArray *rest)
{
    const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("Detach"), false}, {QStringLiteral("Tty"), tty}})
                                .toJson(QJsonDocument::Compact);
    const QByteArray request = "POST /" + QByteArray(dockerapi::ApiVersion) + "/exec/" + execId.toUtf8() +
                               "/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
                               "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: " +
                               QByteArray::number(body.size()) + "\r\n\r\n" + body;
    if (!writeAll(fd, request))
        return fail(ErrorCode::Unavailable, QStringLiteral("the Docker engine closed the connection"),
                    QStringLiteral("exec ") + execId);
    QByteArray head;
    QElapsedTimer waited;
    waited.start();
    while (!head.contains("\r\n\r\n")) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"), QStringLiteral("exec ") + execId);
        if (head.size() > HeaderLimit || waited.elapsed() > 30000)
            return fail(ErrorCode::Unavailable, QStringLiteral("the Docker engine did not start the command"),
                        QStringLiteral("exec ") + execId);
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, PollMs) <= 0)
            continue;
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
        if (n <= 0)
            return fail(ErrorCode::Unavailable, QStringLiteral("the Docker engine closed the connection"),
                        QStringLiteral("exec ") + execId);
        head.append(buffer, n);
    }
    const qsizetype end = head.indexOf("\r\n\r\n");
    *rest = head.mid(end + 4);
    const QByteArray statusLine = head.left(head.indexOf("\r\n"));
    const int status = statusLine.split(' ').value(1).toInt();
    // 101 on an upgrade; an engine that does not upgrade answers 200 and streams all the same.
    if (status == 101 || status == 200)
        return {};
    const QString message = dockerapi::DockerClient::errorMessage(*rest);
    return fail(status == 409   ? ErrorCode::Conflict
                : status == 404 ? ErrorCode::NotFound
                                : ErrorCode::Failed,
                message.isEmpty() ? QString::fromUtf8(statusLine) : message, QStringLiteral("exec ") + execId);
}

} // namespace

Result<int> DockerRuntime::exec(const QString &id, const ExecRequest &request, const CancelToken &cancel,
                                const std::function<void(std::shared_ptr<ExecInput> input)> &opened,
                                const std::function<void(int stream, QByteArrayView data)> &onOutput)
{
    if (request.command.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("no command to run"), QStringLiteral("command"));
    QJsonObject create{{QStringLiteral("AttachStdin"), true},
                       {QStringLiteral("AttachStdout"), true},
                       {QStringLiteral("AttachStderr"), true},
                       {QStringLiteral("Tty"), request.tty},
                       {QStringLiteral("Cmd"), QJsonArray::fromStringList(request.command)}};
    auto made = m_client.post(QStringLiteral("/containers/%1/exec").arg(id), {},
                              QJsonDocument(create).toJson(QJsonDocument::Compact));
    if (!made)
        return std::unexpected(made.error());
    const QString execId = made->json().object().value(QLatin1String("Id")).toString();
    if (execId.isEmpty())
        return fail(ErrorCode::Failed, QStringLiteral("the Docker engine made no exec"), id);

    auto connected = connectUnix(m_client.socketPath());
    if (!connected)
        return std::unexpected(connected.error());
    const Fd socket(*connected);
    QByteArray early;
    if (auto started = startStream(socket.fd, execId, request.tty, cancel, &early); !started)
        return std::unexpected(started.error());
    int wakeFds[2];
    if (::pipe2(wakeFds, O_CLOEXEC | O_NONBLOCK) != 0)
        return fail(ErrorCode::Internal, QStringLiteral("no pipe: %1").arg(qt_error_string(errno)), id);
    const Fd wakeRead(wakeFds[0]), wakeWrite(wakeFds[1]);

    // Shared with whoever feeds it; end() below makes it let go of the pipe before it closes.
    const auto input = std::make_shared<QueuedInput>(m_client, execId, wakeWrite.fd);
    if (request.tty && request.columns > 0 && request.rows > 0)
        input->resize(request.columns, request.rows);
    Frames frames(onOutput);
    const auto deliver = [&](QByteArrayView data) {
        if (request.tty)
            onOutput(1, data);
        else
            frames.feed(data);
    };
    if (!early.isEmpty())
        deliver(early);
    if (opened)
        opened(input);

    bool inputOpen = true;
    Status ended;
    for (;;) {
        if (cancel.isCancelled()) {
            ended = fail(ErrorCode::Cancelled, QStringLiteral("the command was left running"), id);
            break;
        }
        bool closeAfter = false;
        const QByteArray out = inputOpen ? input->take(&closeAfter) : QByteArray();
        if (!out.isEmpty() && !writeAll(socket.fd, out))
            inputOpen = false; // the process closed its input: what else it was sent goes nowhere
        if (inputOpen && closeAfter) {
            ::shutdown(socket.fd, SHUT_WR);
            inputOpen = false;
        }
        pollfd fds[2] = {{socket.fd, POLLIN, 0}, {wakeRead.fd, POLLIN, 0}};
        if (::poll(fds, 2, PollMs) < 0 && errno != EINTR) {
            ended = fail(ErrorCode::Unavailable,
                         QStringLiteral("waiting on the command: %1").arg(qt_error_string(errno)), id);
            break;
        }
        if (fds[1].revents & POLLIN) {
            char drain[64];
            while (::read(wakeRead.fd, drain, sizeof(drain)) > 0) {
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buffer[16384];
            const ssize_t n = ::recv(socket.fd, buffer, sizeof(buffer), 0);
            if (n > 0) {
                deliver(QByteArrayView(buffer, n));
                continue;
            }
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            break; // the process's output ended
        }
    }
    input->end();
    if (!ended)
        return std::unexpected(ended.error());

    // The stream ends as the process does; the engine may take a moment to record its code.
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        auto inspected = m_client.get(QStringLiteral("/exec/%1/json").arg(execId));
        if (!inspected)
            return std::unexpected(inspected.error());
        const QJsonObject state = inspected->json().object();
        if (!state.value(QLatin1String("Running")).toBool() && !state.value(QLatin1String("ExitCode")).isNull())
            return state.value(QLatin1String("ExitCode")).toInt();
        if (waited.elapsed() > ExitCodeWaitMs)
            return fail(ErrorCode::Unavailable, QStringLiteral("the Docker engine did not say how the command ended"),
                        QStringLiteral("exec ") + execId);
        QThread::msleep(20);
    }
}

} // namespace pando::adapters::docker
