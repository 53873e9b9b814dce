// DockerRuntime::exec: POST /containers/{id}/exec makes the exec; POST /exec/{id}/start, sent on a
// unix socket connection of its own with "Upgrade: tcp", is answered 101 and the connection then
// carries the process's streams both ways: stdin from the client, output back (raw with a tty,
// else frames of an 8-byte header as in logs). Closing our write side ends the process's stdin.
// GET /exec/{id}/json says the exit code once the stream ended.
//
// Threading: the exec runs on the calling thread (a poll() loop that also wakes every 50 ms for
// cancel); ExecInput (streamkit::ExecQueue) may be called from any thread, also after the exec
// ended (it then does nothing): it queues and wakes the loop through a pipe.

#include "adapters/runtime/docker/dockerruntime.h"

#include "adapters/kit/streamkit/execqueue.h"
#include "adapters/kit/streamkit/unixsocket.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>

namespace pando::adapters::docker {

namespace {

constexpr int PollMs = 50;
constexpr int StartWaitMs = 30000;
constexpr int ExitCodeWaitMs = 5000;

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

// Sends the start request and reads the answer's head; what came after it is the stream's start.
Status startStream(int fd, const QString &execId, bool tty, const CancelToken &cancel, QByteArray *rest)
{
    const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("Detach"), false}, {QStringLiteral("Tty"), tty}})
                                .toJson(QJsonDocument::Compact);
    const QByteArray request = "POST /" + QByteArray(dockerapi::ApiVersion) + "/exec/" + execId.toUtf8() +
                               "/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
                               "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: " +
                               QByteArray::number(body.size()) + "\r\n\r\n" + body;
    if (!streamkit::writeAll(fd, request))
        return fail(ErrorCode::Unavailable, QStringLiteral("the Docker engine closed the connection"),
                    QStringLiteral("exec ") + execId);
    auto head = streamkit::readHead(fd, StartWaitMs, cancel, rest, QStringLiteral("exec ") + execId);
    if (!head)
        return std::unexpected(head.error());
    const QByteArray statusLine = head->left(head->indexOf("\r\n"));
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

void DockerRuntime::resizeExec(const QString &execId, int columns, int rows)
{
    dockerapi::Request r;
    r.method = "POST";
    r.path = QStringLiteral("/exec/%1/resize").arg(execId);
    r.addQuery(QStringLiteral("h"), QString::number(rows)).addQuery(QStringLiteral("w"), QString::number(columns));
    r.timeoutMs = 5000;
    (void)m_client.call(r); // a size the engine refuses leaves the old one
}

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

    auto connected = streamkit::connectUnix(m_client.socketPath(), QStringLiteral("the Docker engine"));
    if (!connected)
        return std::unexpected(connected.error());
    const streamkit::UniqueFd socket = std::move(*connected);
    QByteArray early;
    if (auto started = startStream(socket.get(), execId, request.tty, cancel, &early); !started)
        return std::unexpected(started.error());
    auto wake = streamkit::WakePipe::make();
    if (!wake)
        return std::unexpected(wake.error());

    // Shared with whoever feeds it; end() below makes it let go of the pipe before it closes.
    const auto input = std::make_shared<streamkit::ExecQueue>((*wake)->write);
    if (request.tty && request.columns > 0 && request.rows > 0)
        resizeExec(execId, request.columns, request.rows);
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
        const streamkit::ExecQueue::Pending next = input->take();
        if (next.size)
            resizeExec(execId, next.size->first, next.size->second);
        if (inputOpen && !next.data.isEmpty() && !streamkit::writeAll(socket.get(), next.data))
            inputOpen = false; // the process closed its input: what else it was sent goes nowhere
        if (inputOpen && next.closeInput) {
            ::shutdown(socket.get(), SHUT_WR);
            inputOpen = false;
        }
        pollfd fds[2] = {{socket.get(), POLLIN, 0}, {(*wake)->read, POLLIN, 0}};
        if (::poll(fds, 2, PollMs) < 0 && errno != EINTR) {
            ended = fail(ErrorCode::Unavailable,
                         QStringLiteral("waiting on the command: %1").arg(qt_error_string(errno)), id);
            break;
        }
        if (fds[1].revents & POLLIN)
            (*wake)->drain();
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buffer[16384];
            const ssize_t n = ::recv(socket.get(), buffer, sizeof(buffer), 0);
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
