#include "requestguard.h"

#include "httperror.h"

#include <QJsonDocument>
#include <QPointer>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTimer>
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

struct GuardState {
    QByteArray head; // header bytes of the request being received
    bool inBody = false;
    bool chunked = false;
    qint64 remaining = 0;    // body bytes still to come (Content-Length)
    qint64 chunkedBytes = 0; // chunked body bytes seen so far
    QByteArray chunkTail;    // the last bytes of a chunked body, to see its end
    qint64 drain = -1;       // >= 0 once refused: bytes still to read and drop
};

struct Head {
    qint64 contentLength = 0;
    bool chunked = false;
    bool upgrade = false;
};

Head parseHead(const QByteArray &head)
{
    Head result;
    const QList<QByteArray> lines = head.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines[i];
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length")
            result.contentLength = value.toLongLong();
        else if (name == "transfer-encoding")
            result.chunked = value.toLower().contains("chunked");
        else if (name == "upgrade")
            result.upgrade = true;
    }
    return result;
}

void refuse(QTcpSocket *socket, const std::shared_ptr<GuardState> &shared, qint64 declared, qint64 limit)
{
    GuardState &state = *shared;
    // From here on the HTTP server must not see this connection again.
    QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    const Error error{
        ErrorCode::TooLarge,
        declared > 0
            ? QStringLiteral("the request body is %1 bytes, more than the limit of %2 bytes").arg(declared).arg(limit)
            : QStringLiteral("the request body is larger than the limit of %1 bytes").arg(limit),
        QStringLiteral("body")};
    const QByteArray body = QJsonDocument(errorBody(error)).toJson(QJsonDocument::Compact);
    const QByteArray response =
        "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nConnection: close\r\n"
        "Content-Length: " +
        QByteArray::number(body.size()) + "\r\n\r\n" + body;
    if (socket->isTransactionStarted())
        socket->commitTransaction();
    // The answer goes once the client has sent all it declared: a client still sending when
    // an answer and a close arrive may see only a reset. A declared body too large to drain,
    // or one whose size we cannot know, gets the answer at once.
    state.drain = declared > 0 && declared <= MaxDrainBytes ? std::max<qint64>(0, state.remaining) : 0;
    QPointer<QTcpSocket> guarded(socket);
    const auto answerAndClose = [guarded, response] {
        if (!guarded)
            return;
        guarded->write(response);
        guarded->disconnectFromHost();
    };
    // What is in the buffer now (the headers and the body bytes that came with them) is
    // dropped; the caller already took those body bytes off state.remaining.
    socket->readAll();
    if (state.drain <= 0)
        return answerAndClose();
    QObject::connect(socket, &QTcpSocket::readyRead, socket, [guarded, shared, answerAndClose]() {
        if (!guarded || shared->drain <= 0)
            return;
        shared->drain -= guarded->readAll().size();
        if (shared->drain <= 0)
            answerAndClose();
    });
}

// A header block with too many lines or bytes: 431 at once, then the rest of what the client
// sends is dropped until it closes, LingerMs pass or MaxLingerBytes came, whichever is first.
void refuseHeaders(QTcpSocket *socket, const QString &message)
{
    QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    const Error error{
        ErrorCode::TooLarge, message, QStringLiteral("headers"),
        QStringLiteral("send at most %1 header lines and %2 bytes of headers").arg(MaxHeaderLines).arg(MaxHeaderBytes)};
    const QByteArray body = QJsonDocument(errorBody(error)).toJson(QJsonDocument::Compact);
    if (socket->isTransactionStarted())
        socket->commitTransaction();
    socket->readAll();
    socket->write("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
                  "Connection: close\r\nContent-Length: " +
                  QByteArray::number(body.size()) + "\r\n\r\n" + body);
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

// Looks at each chunk of new bytes before the HTTP server reads it.
void inspect(QTcpSocket *socket, std::shared_ptr<GuardState> shared, qint64 limit)
{
    GuardState &state = *shared;
    // A closed socket (the peer went away, or a WebSocket closed) has nothing left to look at.
    if (!socket->isOpen() || socket->bytesAvailable() <= 0)
        return;
    QByteArray data = socket->peek(socket->bytesAvailable());
    while (!data.isEmpty()) {
        if (!state.inBody) {
            state.head += data;
            const qsizetype end = state.head.indexOf("\r\n\r\n");
            const QByteArrayView block = QByteArrayView(state.head).first(end < 0 ? state.head.size() : end);
            // Refused here, before the HTTP server has buffered more of it: Qt 6.4 sets no limit.
            if (block.size() > MaxHeaderBytes) {
                refuseHeaders(socket,
                              QStringLiteral("the request's headers are more than %1 bytes").arg(MaxHeaderBytes));
                return;
            }
            // The request line is one of the lines.
            if (block.count('\n') > MaxHeaderLines) {
                refuseHeaders(socket, QStringLiteral("the request has more than %1 header lines").arg(MaxHeaderLines));
                return;
            }
            if (end < 0)
                return;
            const Head head = parseHead(state.head.left(end));
            data = state.head.mid(end + 4);
            state.head.clear();
            if (head.upgrade) {
                // A WebSocket takes the connection over; its frames are not HTTP bodies.
                QObject::disconnect(socket, &QTcpSocket::readyRead, socket, nullptr);
                return;
            }
            state.remaining = head.contentLength;
            state.chunked = head.chunked;
            state.chunkedBytes = 0;
            state.chunkTail.clear();
            if (head.contentLength > limit) {
                state.remaining -= data.size();
                refuse(socket, shared, head.contentLength, limit);
                return;
            }
            state.inBody = head.chunked || head.contentLength > 0;
        } else if (state.chunked) {
            state.chunkedBytes += data.size();
            state.chunkTail = QByteArray(state.chunkTail + data).right(5);
            // Chunk-size lines and trailers add a little to the payload itself.
            if (state.chunkedBytes > limit + 64 * 1024) {
                refuse(socket, shared, 0, limit);
                return;
            }
            if (state.chunkTail == "0\r\n\r\n")
                state.inBody = false;
            return;
        } else {
            const qint64 take = std::min<qint64>(state.remaining, data.size());
            state.remaining -= take;
            data = data.mid(take);
            if (state.remaining == 0)
                state.inBody = false;
        }
    }
}

} // namespace

GuardedTcpServer::GuardedTcpServer(qint64 maxBodyBytes, QObject *parent)
    : QTcpServer(parent), m_maxBodyBytes(maxBodyBytes)
{}

void guardSocket(QTcpSocket *socket, qint64 maxBodyBytes)
{
    // Connected before the HTTP server connects its own slot, so it sees new bytes first.
    auto state = std::make_shared<GuardState>();
    QObject::connect(socket, &QTcpSocket::readyRead, socket,
                     [socket, state, maxBodyBytes]() { inspect(socket, state, maxBodyBytes); });
}

void GuardedTcpServer::incomingConnection(qintptr descriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    guardSocket(socket, m_maxBodyBytes);
    addPendingConnection(socket);
}

GuardedSslServer::GuardedSslServer(qint64 maxBodyBytes, QObject *parent)
    : QSslServer(parent), m_maxBodyBytes(maxBodyBytes)
{
    connect(this, &QSslServer::startedEncryptionHandshake, this, [](QSslSocket *socket) {
        QPointer<QSslSocket> guarded(socket);
        QTimer::singleShot(HandshakeTimeoutMs, socket, [guarded] {
            if (guarded && !guarded->isEncrypted())
                guarded->abort();
        });
    });
}

QTcpSocket *GuardedSslServer::nextPendingConnection()
{
    // QSslServer drops every connection of a socket once its handshake is done, so the guard
    // goes on here, just before the HTTP server connects its own slot.
    QTcpSocket *socket = QSslServer::nextPendingConnection();
    if (socket)
        guardSocket(socket, m_maxBodyBytes);
    return socket;
}

} // namespace pando::server::detail
