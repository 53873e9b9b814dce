#include "requestguard.h"

#include "httperror.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTimer>
#include <algorithm>
#include <expected>
#include <memory>

namespace pando::server::detail {
namespace {

constexpr qsizetype MaxHeaderBytes = GuardedTcpServer::MaxHeaderBytes;
constexpr int MaxHeaderLines = GuardedTcpServer::MaxHeaderLines;
// A refused body of up to this size is read and dropped before the 413 goes out, so that the
// client, which is still sending, gets to read it instead of a connection reset.
constexpr qint64 MaxDrainBytes = 64LL * 1024 * 1024;
// After a 431 the connection is read and dropped for at most this long and this much, so that
// the client gets to read the answer (a close with unread bytes is a reset that may discard it)
// without a flood holding the connection or any memory.
constexpr int LingerMs = 2000;
constexpr qint64 MaxLingerBytes = 16LL * 1024 * 1024;

enum class Body { None, Length, Chunked };

int hexDigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

Q_LOGGING_CATEGORY(lcGuard, "pando.server.guard")

// Which deadline the connection's timer stands for.
enum class Wait { None, Idle, Headers, Body };

struct GuardState {
    QByteArray head; // header bytes of the request being received
    Body body = Body::None;
    QTimer *timer = nullptr; // the socket's child
    Wait wait = Wait::None;
    std::function<void()> release; // takes the connection off its listener's count
    qint64 remaining = 0;          // body bytes still to come (Content-Length)
    ChunkedReader chunked;
    qint64 drain = -1; // >= 0 once refused: bytes still to read and drop
};

struct Head {
    QByteArray method;
    QByteArray path; // the request target without its query
    qint64 contentLength = 0;
    bool chunked = false;
    bool upgradeWebSocket = false;  // Upgrade: websocket
    bool connectionUpgrade = false; // Connection: ..., upgrade, ...
    bool webSocketKey = false;
    bool webSocketVersion = false;
};

struct Refusal {
    QString message;
    QString where;
};

std::expected<Head, Refusal> parseHead(const QByteArray &block)
{
    Head result;
    const QList<QByteArray> lines = block.split('\n');
    const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
    if (requestLine.size() != 3)
        return std::unexpected(Refusal{QStringLiteral("the request line is not \"METHOD target HTTP/1.1\""),
                                       QStringLiteral("request line")});
    result.method = requestLine[0];
    const qsizetype query = requestLine[1].indexOf('?');
    result.path = query < 0 ? requestLine[1] : requestLine[1].left(query);
    bool haveLength = false;
    bool haveEncoding = false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines[i].chopped(lines[i].endsWith('\r') ? 1 : 0);
        // A line folded onto the one before (obs-fold) or a name with blanks: the HTTP server
        // and the guard could read different headers from it.
        if (line.startsWith(' ') || line.startsWith('\t'))
            return std::unexpected(Refusal{QStringLiteral("header line %1 is folded onto the one before").arg(i),
                                           QStringLiteral("headers")});
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0 || line.left(colon).contains(' ') || line.left(colon).contains('\t'))
            return std::unexpected(
                Refusal{QStringLiteral("header line %1 is not \"Name: value\"").arg(i), QStringLiteral("headers")});
        const QByteArray name = line.left(colon).toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            bool ok = !value.isEmpty() &&
                      std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
            const qint64 length = ok ? value.toLongLong(&ok) : 0;
            if (!ok || (haveLength && length != result.contentLength))
                return std::unexpected(
                    Refusal{haveLength ? QStringLiteral("the request has two different Content-Length headers")
                                       : QStringLiteral("Content-Length is not a number of bytes"),
                            QStringLiteral("Content-Length")});
            result.contentLength = length;
            haveLength = true;
        } else if (name == "transfer-encoding") {
            if (haveEncoding || value.compare("chunked", Qt::CaseInsensitive) != 0)
                return std::unexpected(
                    Refusal{QStringLiteral("the only transfer coding accepted is a single \"chunked\""),
                            QStringLiteral("Transfer-Encoding")});
            result.chunked = true;
            haveEncoding = true;
        } else if (name == "upgrade") {
            result.upgradeWebSocket = value.compare("websocket", Qt::CaseInsensitive) == 0;
        } else if (name == "connection") {
            for (const QByteArray &token : value.split(','))
                if (token.trimmed().compare("upgrade", Qt::CaseInsensitive) == 0)
                    result.connectionUpgrade = true;
        } else if (name == "sec-websocket-key") {
            result.webSocketKey = !value.isEmpty();
        } else if (name == "sec-websocket-version") {
            result.webSocketVersion = !value.isEmpty();
        }
    }
    if (haveLength && haveEncoding)
        return std::unexpected(Refusal{QStringLiteral("the request has both Content-Length and Transfer-Encoding"),
                                       QStringLiteral("Transfer-Encoding")});
    return result;
}

// Only this hands the connection over to a WebSocket, whose frames are not HTTP bodies; any
// other request, "Upgrade:" header or not, is held to the limits.
bool isWebSocketHandshake(const Head &head, const GuardOptions &options)
{
    return head.method == "GET" && head.upgradeWebSocket && head.connectionUpgrade && head.webSocketKey &&
           head.webSocketVersion && !head.chunked && head.contentLength == 0 && options.isWebSocketPath &&
           options.isWebSocketPath(head.path);
}

QByteArray answer(const QByteArray &statusLine, const Error &error)
{
    const QByteArray body = QJsonDocument(errorBody(error)).toJson(QJsonDocument::Compact);
    return "HTTP/1.1 " + statusLine + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

void arm(GuardState &state, Wait wait, int ms)
{
    state.wait = ms > 0 ? wait : Wait::None;
    if (state.wait == Wait::None)
        state.timer->stop();
    else
        state.timer->start(ms);
}

// Answers at once, then drops what the client goes on sending until it closes, LingerMs pass or
// MaxLingerBytes came, whichever is first: a close with unread bytes is a reset that may discard
// the answer, and a flood must hold neither the connection nor any memory.
void answerAndLinger(QTcpSocket *socket, const QByteArray &response)
{
    // From here on the HTTP server must not see this connection again, nor the guard's deadlines.
    QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    QObject::disconnect(socket, &QTcpSocket::bytesWritten, nullptr, nullptr);
    qDeleteAll(socket->findChildren<QTimer *>(QStringLiteral("guard"), Qt::FindDirectChildrenOnly));
    if (socket->isTransactionStarted())
        socket->commitTransaction();
    socket->readAll();
    socket->write(response);
    auto dropped = std::make_shared<qint64>(0);
    QPointer<QTcpSocket> guarded(socket);
    QObject::connect(socket, &QTcpSocket::readyRead, socket, [guarded, dropped] {
        if (!guarded)
            return;
        *dropped += guarded->readAll().size();
        if (*dropped > MaxLingerBytes)
            guarded->abort();
    });
    QTimer::singleShot(LingerMs, socket, [guarded] {
        if (guarded)
            guarded->abort();
    });
}

void refuse(QTcpSocket *socket, const std::shared_ptr<GuardState> &shared, qint64 declared, qint64 limit)
{
    GuardState &state = *shared;
    const Error error{
        ErrorCode::TooLarge,
        declared > 0
            ? QStringLiteral("the request body is %1 bytes, more than the limit of %2 bytes").arg(declared).arg(limit)
            : QStringLiteral("the request body is larger than the limit of %1 bytes").arg(limit),
        QStringLiteral("body")};
    const QByteArray response = answer("413 Payload Too Large", error);
    // The answer goes once the client has sent all it declared: a client still sending when
    // an answer and a close arrive may see only a reset. A declared body too large to drain,
    // or one whose size we cannot know, gets the answer at once.
    state.drain = declared > 0 && declared <= MaxDrainBytes ? std::max<qint64>(0, state.remaining) : 0;
    if (state.drain <= 0)
        return answerAndLinger(socket, response);
    QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    QObject::disconnect(socket, &QTcpSocket::bytesWritten, nullptr, nullptr);
    // Draining has the linger's bounds: a client that stops sending is dropped after LingerMs.
    arm(state, Wait::Body, LingerMs);
    if (socket->isTransactionStarted())
        socket->commitTransaction();
    // What is in the buffer now (the headers and the body bytes that came with them) is
    // dropped; the caller already took those body bytes off state.remaining.
    socket->readAll();
    QPointer<QTcpSocket> guarded(socket);
    QObject::connect(socket, &QTcpSocket::readyRead, socket, [guarded, shared, response]() {
        if (!guarded || shared->drain <= 0)
            return;
        shared->drain -= guarded->readAll().size();
        if (shared->drain > 0)
            return;
        // The client sent all it declared: it reads the answer, then the connection ends.
        guarded->write(response);
        guarded->disconnectFromHost();
    });
}

void refuseHeaders(QTcpSocket *socket, const QString &message)
{
    answerAndLinger(socket, answer("431 Request Header Fields Too Large",
                                   Error{ErrorCode::TooLarge, message, QStringLiteral("headers"),
                                         QStringLiteral("send at most %1 header lines and %2 bytes of headers")
                                             .arg(MaxHeaderLines)
                                             .arg(MaxHeaderBytes)}));
}

void refuseFraming(QTcpSocket *socket, const Refusal &refusal)
{
    answerAndLinger(socket, answer("400 Bad Request", Error{ErrorCode::Invalid, refusal.message, refusal.where,
                                                            QStringLiteral("send HTTP/1.1 as RFC 9112 frames it")}));
}

// Looks at each piece of new bytes before the HTTP server reads it.
void inspect(QTcpSocket *socket, const std::shared_ptr<GuardState> &shared, const GuardOptions &options)
{
    GuardState &state = *shared;
    const qint64 limit = options.maxBodyBytes;
    // A closed socket (the peer went away, or a WebSocket closed) has nothing left to look at.
    if (!socket->isOpen() || socket->bytesAvailable() <= 0)
        return;
    QByteArray data = socket->peek(socket->bytesAvailable());
    // A body that keeps coming keeps its connection; the header deadline does not move.
    if (state.body != Body::None)
        arm(state, Wait::Body, options.limits.idleTimeoutMs);
    while (!data.isEmpty()) {
        switch (state.body) {
        case Body::None: {
            if (state.head.isEmpty()) {
                // Empty lines before a request line are skipped, as the HTTP server skips them.
                qsizetype skip = 0;
                while (skip < data.size() && (data[skip] == '\r' || data[skip] == '\n'))
                    ++skip;
                data.remove(0, skip);
                if (data.isEmpty())
                    return;
                // A request begins: its headers have headerTimeoutMs to arrive, whole.
                arm(state, Wait::Headers, options.limits.headerTimeoutMs);
            }
            const qsizetype scanFrom = state.head.size();
            state.head += data;
            const qsizetype end = state.head.indexOf("\r\n\r\n", std::max<qsizetype>(0, scanFrom - 3));
            const qsizetype blockEnd = end < 0 ? state.head.size() : end;
            // Refused here, before the HTTP server has buffered more of it: Qt 6.4 sets no limit.
            if (blockEnd > MaxHeaderBytes) {
                refuseHeaders(socket,
                              QStringLiteral("the request's headers are more than %1 bytes").arg(MaxHeaderBytes));
                return;
            }
            // The request line is one of the lines.
            if (QByteArrayView(state.head).first(blockEnd).count('\n') > MaxHeaderLines) {
                refuseHeaders(socket, QStringLiteral("the request has more than %1 header lines").arg(MaxHeaderLines));
                return;
            }
            // A bare LF would end a line (or the headers) for the HTTP server and not for the guard.
            for (qsizetype i = std::max<qsizetype>(scanFrom, 0); i < std::min(blockEnd + 2, state.head.size()); ++i) {
                if (state.head[i] == '\n' && (i == 0 || state.head[i - 1] != '\r')) {
                    refuseFraming(socket, Refusal{QStringLiteral("a header line ends in a bare LF, not CRLF"),
                                                  QStringLiteral("headers")});
                    return;
                }
            }
            if (end < 0)
                return;
            const auto head = parseHead(state.head.left(end));
            data = state.head.mid(end + 4);
            state.head.clear();
            if (!head) {
                refuseFraming(socket, head.error());
                return;
            }
            if (isWebSocketHandshake(*head, options)) {
                // A WebSocket takes the connection over; its frames are not HTTP bodies.
                QObject::disconnect(socket, &QTcpSocket::readyRead, socket, nullptr);
                QObject::disconnect(socket, &QTcpSocket::bytesWritten, socket, nullptr);
                arm(state, Wait::None, 0);
                if (state.release)
                    state.release();
                return;
            }
            if (head->chunked) {
                state.body = Body::Chunked;
                state.chunked = ChunkedReader();
            } else if (head->contentLength > limit) {
                state.remaining = head->contentLength - data.size();
                refuse(socket, shared, head->contentLength, limit);
                return;
            } else if (head->contentLength > 0) {
                state.body = Body::Length;
                state.remaining = head->contentLength;
            }
            // Reading a body, or waiting for the answer (no deadline: a handler may take long).
            if (state.body != Body::None)
                arm(state, Wait::Body, options.limits.idleTimeoutMs);
            else
                arm(state, Wait::None, 0);
            break;
        }
        case Body::Chunked: {
            const ChunkedReader::Step step = state.chunked.feed(data);
            // Counted as each size line declares it, so one huge chunk is refused at its size.
            if (state.chunked.decodedBytes() > limit) {
                refuse(socket, shared, 0, limit);
                return;
            }
            if (step.outcome == ChunkedReader::Outcome::Malformed) {
                refuseFraming(socket, Refusal{QStringLiteral("the chunked body is malformed: %1")
                                                  .arg(QString::fromLatin1(state.chunked.problem())),
                                              QStringLiteral("body")});
                return;
            }
            data.remove(0, step.consumed);
            if (step.outcome == ChunkedReader::Outcome::Done) {
                state.body = Body::None;
                arm(state, Wait::None, 0);
            }
            break;
        }
        case Body::Length: {
            const qint64 take = std::min<qint64>(state.remaining, data.size());
            state.remaining -= take;
            data.remove(0, take);
            if (state.remaining == 0) {
                state.body = Body::None;
                arm(state, Wait::None, 0);
            }
            break;
        }
        }
    }
}

} // namespace

ChunkedReader::Step ChunkedReader::malformed(const char *problem, qsizetype consumed)
{
    m_state = State::Bad;
    m_problem = problem;
    return {Outcome::Malformed, consumed};
}

ChunkedReader::Step ChunkedReader::feed(QByteArrayView data)
{
    if (m_state == State::Bad)
        return {Outcome::Malformed, 0};
    if (m_state == State::Done)
        return {Outcome::Done, 0};
    qsizetype i = 0;
    while (i < data.size()) {
        if (m_state == State::Data) {
            const qsizetype take = qsizetype(std::min<qint64>(m_size, data.size() - i));
            m_size -= take;
            i += take;
            if (m_size == 0)
                m_state = State::DataCr;
            continue;
        }
        const char c = data[i++];
        switch (m_state) {
        case State::Size:
            if (++m_lineBytes > MaxLineBytes)
                return malformed("a chunk size line is too long", i);
            if (const int digit = hexDigit(c); digit >= 0) {
                // 15 hex digits are 2^60 bytes, far past any limit; more would overflow.
                if (++m_digits > 15)
                    return malformed("a chunk size has more than 15 hex digits", i);
                m_size = m_size * 16 + digit;
            } else if (m_digits == 0) {
                return malformed("a chunk does not start with its size in hex", i);
            } else if (c == ';' || c == ' ' || c == '\t') {
                m_state = State::Extension;
            } else if (c == '\r') {
                m_state = State::SizeLf;
            } else {
                return malformed("a chunk size line has a byte that is neither hex nor an extension", i);
            }
            break;
        case State::Extension:
            if (++m_lineBytes > MaxLineBytes)
                return malformed("a chunk size line is too long", i);
            if (c == '\r')
                m_state = State::SizeLf;
            else if (c == '\n')
                return malformed("a chunk size line ends in a bare LF", i);
            break;
        case State::SizeLf:
            if (c != '\n')
                return malformed("a chunk size line does not end in CRLF", i);
            m_lineBytes = 0;
            m_digits = 0;
            if (m_size == 0) {
                m_state = State::Trailer;
            } else {
                m_decoded += m_size;
                m_state = State::Data;
            }
            break;
        case State::DataCr:
            if (c != '\r')
                return malformed("a chunk's data is longer than its size", i);
            m_state = State::DataLf;
            break;
        case State::DataLf:
            if (c != '\n')
                return malformed("a chunk's data is not followed by CRLF", i);
            m_state = State::Size;
            break;
        case State::Trailer:
            // Qt 6.4's server leaves trailer lines in the socket as if they began the next request,
            // so the guard and it would part ways there: a body has none, or is refused.
            if (c != '\r')
                return malformed("trailers are not accepted after the last chunk", i);
            m_state = State::LastLf;
            break;
        case State::LastLf:
            if (c != '\n')
                return malformed("the last chunk does not end in CRLF", i);
            m_state = State::Done;
            return {Outcome::Done, i};
        case State::Data:
        case State::Done:
        case State::Bad:
            break;
        }
    }
    return {Outcome::More, i};
}

GuardedTcpServer::GuardedTcpServer(GuardOptions options, QObject *parent)
    : QTcpServer(parent), m_options(std::move(options))
{}

void guardSocket(QTcpSocket *socket, const GuardOptions &options, std::function<void()> release)
{
    // Connected before the HTTP server connects its own slot, so it sees new bytes first.
    auto state = std::make_shared<GuardState>();
    state->timer = new QTimer(socket);
    state->timer->setObjectName(QStringLiteral("guard"));
    state->timer->setSingleShot(true);
    state->release = std::move(release);
    QObject::connect(socket, &QTcpSocket::readyRead, socket,
                     [socket, state, options]() { inspect(socket, state, options); });
    // An answer going out starts the keep-alive wait for the next request, unless one began.
    QObject::connect(socket, &QTcpSocket::bytesWritten, socket, [state, options] {
        if (state->head.isEmpty() && state->body == Body::None)
            arm(*state, Wait::Idle, options.limits.idleTimeoutMs);
    });
    QObject::connect(state->timer, &QTimer::timeout, socket, [socket, state, options] {
        const Wait wait = state->wait;
        state->wait = Wait::None;
        if (wait == Wait::Idle) {
            // Nothing is due either way: an idle keep-alive connection just ends.
            qCDebug(lcGuard) << "closing a connection idle for" << options.limits.idleTimeoutMs << "ms";
            socket->disconnectFromHost();
            return;
        }
        if (wait != Wait::Headers && wait != Wait::Body)
            return;
        const int ms = wait == Wait::Headers ? options.limits.headerTimeoutMs : options.limits.idleTimeoutMs;
        answerAndLinger(socket,
                        answer("408 Request Timeout",
                               Error{ErrorCode::Unavailable,
                                     wait == Wait::Headers
                                         ? QStringLiteral("the request's headers did not arrive within %1 ms").arg(ms)
                                         : QStringLiteral("the request's body stopped coming for %1 ms").arg(ms),
                                     wait == Wait::Headers ? QStringLiteral("headers") : QStringLiteral("body"),
                                     QStringLiteral("send the whole request without pausing")}));
    });
    // The first request has the idle timeout to begin.
    arm(*state, Wait::Idle, options.limits.idleTimeoutMs);
}

std::function<void()> ConnectionCount::add(QAbstractSocket *connection, QObject *context)
{
    ++m_open;
    auto counted = std::make_shared<bool>(true);
    const auto release = [this, counted] {
        if (*counted) {
            *counted = false;
            --m_open;
        }
    };
    QObject::connect(connection, &QAbstractSocket::disconnected, context, release);
    QObject::connect(connection, &QObject::destroyed, context, release);
    return release;
}

void ConnectionCount::refused(const QString &peer)
{
    ++m_refused;
    if (m_lastLog.isValid() && m_lastLog.elapsed() < 10'000)
        return;
    qCWarning(lcGuard).nospace() << "the API has " << m_open << " connections open, its limit; refused " << m_refused
                                 << " since the last note, the last from " << peer;
    m_lastLog.start();
    m_refused = 0;
}

void GuardedTcpServer::incomingConnection(qintptr descriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    if (m_count.full(m_options.limits.maxConnections)) {
        m_count.refused(socket->peerAddress().toString());
        // Answered, so that a client sees why; the socket never reaches the HTTP server.
        const Error error{ErrorCode::Unavailable,
                          QStringLiteral("the server has %1 connections open, its limit").arg(m_count.open()),
                          QStringLiteral("connection"), QStringLiteral("retry later, or close idle connections")};
        answerAndLinger(socket, answer("503 Service Unavailable", error));
        QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        QTimer::singleShot(LingerMs + 100, socket, &QObject::deleteLater);
        return;
    }
    guardSocket(socket, m_options, m_count.add(socket, this));
    addPendingConnection(socket);
}

GuardedSslServer::GuardedSslServer(GuardOptions options, QObject *parent)
    : QSslServer(parent), m_options(std::move(options))
{
    connect(this, &QSslServer::startedEncryptionHandshake, this, [this](QSslSocket *socket) {
        m_releases.insert(socket, m_count.add(socket, this));
        connect(socket, &QObject::destroyed, this, [this, socket] { m_releases.remove(socket); });
        QPointer<QSslSocket> guarded(socket);
        QTimer::singleShot(HandshakeTimeoutMs, socket, [guarded] {
            if (guarded && !guarded->isEncrypted())
                guarded->abort();
        });
    });
}

void GuardedSslServer::incomingConnection(qintptr descriptor)
{
    // Counted before the TLS handshake, which a client can hold open for HandshakeTimeoutMs.
    if (m_count.full(m_options.limits.maxConnections)) {
        // No TLS yet to say why in: the connection is closed unanswered.
        QTcpSocket refused;
        if (refused.setSocketDescriptor(descriptor))
            m_count.refused(refused.peerAddress().toString());
        refused.abort();
        return;
    }
    QSslServer::incomingConnection(descriptor);
}

QTcpSocket *GuardedSslServer::nextPendingConnection()
{
    // QSslServer drops every connection of a socket once its handshake is done, so the guard
    // goes on here, just before the HTTP server connects its own slot.
    QTcpSocket *socket = QSslServer::nextPendingConnection();
    if (socket)
        guardSocket(socket, m_options, m_releases.take(socket));
    return socket;
}

} // namespace pando::server::detail
