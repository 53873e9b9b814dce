// IncusRuntime::exec: POST /1.0/instances/{name}/exec with wait-for-websocket makes an operation
// whose metadata names a secret per stream: with a terminal ("interactive") "0" carries the
// terminal both ways, else "0" is stdin, "1" stdout and "2" stderr; "control" takes a new window
// size. Each is a WebSocket on GET /1.0/operations/{id}/websocket?secret=…, opened here on a
// unix socket connection of its own; Incus starts the command once all are open. Data goes as
// binary messages; an empty text message ends a stream (our stdin; Incus's output); the
// operation's metadata says the exit code ("return") once it ended.
//
// Threading: as DockerRuntime::exec, a poll() loop on the calling thread that wakes every 50 ms
// for cancel; the input (streamkit::ExecQueue) may be fed from any thread.

#include "adapters/runtime/incus/incusruntime.h"

#include "adapters/kit/streamkit/execqueue.h"
#include "adapters/kit/streamkit/unixsocket.h"
#include "adapters/kit/streamkit/websocketframes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrlQuery>

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <vector>

using namespace Qt::StringLiterals;

namespace pando::adapters::incus {

namespace {

namespace ws = streamkit::websocket;

constexpr int PollMs = 50;
constexpr int OpenWaitMs = 30000;
constexpr int ExitCodeWaitMs = 30000;

// One of the exec's WebSockets.
struct Channel {
    QString name; // "0", "1", "2", "control"
    streamkit::UniqueFd socket;
    ws::Reader reader;
    bool ended = false; // its stream ended (a barrier, a close, or the connection's end)
};

Status send(Channel &channel, ws::Opcode opcode, QByteArrayView payload)
{
    if (!streamkit::writeAll(channel.socket.get(), ws::clientFrame(opcode, payload)))
        return fail(ErrorCode::Unavailable, u"Incus closed the command's stream %1"_s.arg(channel.name));
    return {};
}

} // namespace

Result<int> IncusRuntime::exec(const QString &id, const ExecRequest &request, const CancelToken &cancel,
                               const std::function<void(std::shared_ptr<ExecInput> input)> &opened,
                               const std::function<void(int stream, QByteArrayView data)> &onOutput)
{
    if (request.command.isEmpty())
        return fail(ErrorCode::Invalid, u"no command to run"_s, u"command"_s);
    const incusapi::Connection &connection = m_client.connection();
    if (!connection.url.isEmpty())
        return fail(ErrorCode::Unavailable, u"commands run in instances through a local Incus only (its unix socket)"_s,
                    connection.url);
    auto state = readState(id);
    if (!state)
        return std::unexpected(state.error());
    if (state->status != QLatin1String("Running"))
        return fail(ErrorCode::Conflict, u"instance %1 is not running (%2)"_s.arg(id, state->status.toLower()), id);

    QJsonObject post{{u"command"_s, QJsonArray::fromStringList(request.command)},
                     {u"wait-for-websocket"_s, true},
                     {u"interactive"_s, request.tty},
                     {u"record-output"_s, false}};
    if (request.tty && request.columns > 0 && request.rows > 0) {
        post.insert(u"width"_s, request.columns);
        post.insert(u"height"_s, request.rows);
    }
    httpkit::Request r;
    r.method = "POST";
    r.path = u"/1.0/instances/%1/exec"_s.arg(id);
    r.body = QJsonDocument(post).toJson(QJsonDocument::Compact);
    r.timeoutMs = OpenWaitMs;
    auto answer = m_client.call(r);
    if (!answer)
        return std::unexpected(answer.error());
    const std::optional<incusapi::Operation> &operation = answer->operation;
    if (!operation)
        return fail(ErrorCode::Failed, u"Incus ran the command without an operation to attach to"_s, id);
    const QJsonObject secrets = operation->metadata.value(u"fds"_s).toObject();

    // The streams, each on its own connection; Incus starts the command once all are open.
    std::vector<Channel> channels;
    const QStringList names =
        request.tty ? QStringList{u"0"_s, u"control"_s} : QStringList{u"0"_s, u"1"_s, u"2"_s, u"control"_s};
    for (const QString &name : names) {
        const QString secret = secrets.value(name).toString();
        const QString where = u"incus exec %1 (stream %2)"_s.arg(operation->id, name);
        if (secret.isEmpty())
            return fail(ErrorCode::Failed, u"Incus named no secret for the stream"_s, where);
        auto socket = streamkit::connectUnix(connection.socket, u"Incus"_s);
        if (!socket)
            return std::unexpected(socket.error());
        QUrlQuery query;
        query.addQueryItem(u"secret"_s, secret);
        QByteArray key;
        const QByteArray handshake = ws::handshakeRequest(
            u"/1.0/operations/%1/websocket?%2"_s.arg(operation->id, query.toString(QUrl::FullyEncoded)), "incus", &key);
        if (!streamkit::writeAll(socket->get(), handshake))
            return fail(ErrorCode::Unavailable, u"Incus closed the connection"_s, where);
        QByteArray rest;
        auto head = streamkit::readHead(socket->get(), OpenWaitMs, cancel, &rest, where);
        if (!head)
            return std::unexpected(head.error());
        if (auto upgraded = ws::checkHandshake(*head, key, where); !upgraded)
            return std::unexpected(upgraded.error());
        Channel channel{name, std::move(*socket), {}, false};
        channel.reader.feed(rest);
        channels.push_back(std::move(channel));
    }
    Channel &input = channels.front();
    Channel &control = channels.back();

    auto wake = streamkit::WakePipe::make();
    if (!wake)
        return std::unexpected(wake.error());
    const auto queue = std::make_shared<streamkit::ExecQueue>((*wake)->write);
    if (opened)
        opened(queue);

    // The streams whose end is the command's output's end.
    const auto outputEnded = [&] {
        return request.tty ? channels[0].ended : channels[1].ended && channels[2].ended;
    };
    bool inputOpen = true;
    Status ended;
    while (!outputEnded()) {
        if (cancel.isCancelled()) {
            ended = fail(ErrorCode::Cancelled, u"the command was left running"_s, id);
            break;
        }
        const streamkit::ExecQueue::Pending next = queue->take();
        if (next.size && request.tty)
            discardResult(
                send(control, ws::Opcode::Text,
                     QJsonDocument(
                         QJsonObject{{u"command"_s, u"window-resize"_s},
                                     {u"args"_s, QJsonObject{{u"width"_s, QString::number(next.size->first)},
                                                             {u"height"_s, QString::number(next.size->second)}}}})
                         .toJson(QJsonDocument::Compact)),
                "a size Incus does not take leaves the old one");
        if (inputOpen && !next.data.isEmpty() && !send(input, ws::Opcode::Binary, next.data))
            inputOpen = false; // the process closed its input: what else it was sent goes nowhere
        if (inputOpen && next.closeInput) {
            discardResult(send(input, ws::Opcode::Text, {}), "the command's input is over either way");
            inputOpen = false;
        }

        std::vector<pollfd> fds;
        fds.reserve(channels.size() + 1);
        for (const Channel &c : channels)
            fds.push_back({c.ended ? -1 : c.socket.get(), POLLIN, 0});
        fds.push_back({(*wake)->read, POLLIN, 0});
        if (::poll(fds.data(), nfds_t(fds.size()), PollMs) < 0 && errno != EINTR) {
            ended = fail(ErrorCode::Unavailable, u"waiting on the command: %1"_s.arg(qt_error_string(errno)), id);
            break;
        }
        if (fds.back().revents & POLLIN)
            (*wake)->drain();
        for (size_t i = 0; i < channels.size(); ++i) {
            Channel &c = channels[i];
            if (c.ended || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buffer[16384];
            const ssize_t n = ::recv(c.socket.get(), buffer, sizeof(buffer), 0);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                c.ended = true;
                continue;
            }
            c.reader.feed(QByteArrayView(buffer, n));
            ws::Message message;
            while (c.reader.next(&message)) {
                if (message.opcode == ws::Opcode::Binary && c.name != u"control") {
                    // With a terminal its one stream is the terminal's output.
                    onOutput(c.name == u"2" ? 2 : 1, message.payload);
                } else if (message.opcode == ws::Opcode::Ping) {
                    discardResult(send(c, ws::Opcode::Pong, message.payload), "a lost pong ends nothing here");
                } else if (message.opcode == ws::Opcode::Close ||
                           (message.opcode == ws::Opcode::Text && message.payload.isEmpty())) {
                    c.ended = true;
                }
            }
            if (!c.reader.error().isEmpty())
                c.ended = true;
        }
    }
    queue->end();
    for (Channel &c : channels)
        discardResult(send(c, ws::Opcode::Close, QByteArray("\x03\xe8", 2)), "Incus ends its side either way");
    if (!ended)
        return std::unexpected(ended.error());

    auto finished = m_client.wait(*operation, ExitCodeWaitMs, &cancel);
    if (!finished) {
        // Incus fails the operation when the command cannot be run; a shell says so with 127
        // (not found) or 126 (not executable), and so does Pando, with Incus's reason.
        const QString reason = finished.error().message;
        const bool notFound = reason.contains(u"not found"_s, Qt::CaseInsensitive);
        if (notFound || reason.contains(u"not executable"_s, Qt::CaseInsensitive) ||
            reason.contains(u"permission denied"_s, Qt::CaseInsensitive)) {
            onOutput(2, u"%1: %2\n"_s.arg(request.command.first(), reason).toUtf8());
            return notFound ? 127 : 126;
        }
        return std::unexpected(finished.error());
    }
    const QJsonValue code = finished->metadata.value(u"return"_s);
    if (!code.isDouble())
        return fail(ErrorCode::Unavailable, u"Incus did not say how the command ended"_s,
                    u"incus exec %1"_s.arg(operation->id));
    return code.toInt();
}

} // namespace pando::adapters::incus
