#pragma once
// A TCP server for the API that refuses, before QHttpServer buffers them in memory, request
// bodies over a limit as soon as their headers say so (413 with the API's error body) and header
// blocks with too many lines or bytes (431). Qt 6.4's QHttpServer has no limit of its own on
// either: it keeps every byte of a request in the socket's read transaction until the request is
// complete (a 1 MiB header or 10 000 header lines were read whole and routed), and after a parse
// error it only drops its signal connections, leaving the socket open.
//
// The guard reads the framing itself, byte for byte as the HTTP server will: Content-Length, or
// chunked transfer coding decoded by a state machine (size line, extensions, data, CRLF,
// trailers) whose decoded bytes count against the limit. It steps aside only for a real
// WebSocket handshake (GET, "Connection: upgrade", "Upgrade: websocket", Sec-WebSocket-Key and
// -Version, no body) on a path the caller says is a WebSocket route: an "Upgrade:" header alone
// once turned every limit off, and one POST with it and an endless body took the daemon from
// 76 MiB to 2.9 GiB in two seconds. Framing it cannot follow (a bad size line, Content-Length
// and chunked together, two different lengths) is refused with 400 rather than guessed at, so the
// guard and the HTTP server never disagree about where a request ends.

#include "connectionlimits.h"

#include <QByteArrayView>
#include <QElapsedTimer>
#include <QHash>
#include <QSslServer>
#include <QTcpServer>
#include <functional>

namespace pando::server::detail {

// Decodes the framing of a chunked body (RFC 9112 §7.1) without keeping its bytes. feed() takes
// the next bytes, in pieces of any size, and says how many of them belong to the body; the rest
// after the end are the next request's. Trailer fields are refused: Qt 6.4's server reads them as
// the start of another request, and the guard must frame the stream as the server does.
class ChunkedReader {
public:
    // A size line (with its extensions) or a trailer line longer than this is refused.
    static constexpr qsizetype MaxLineBytes = 4096;

    enum class Outcome { More, Done, Malformed };
    struct Step {
        Outcome outcome = Outcome::More;
        qsizetype consumed = 0; // bytes of this piece that are the body's
    };
    Step feed(QByteArrayView data);
    qint64 decodedBytes() const { return m_decoded; }
    // What was wrong, once feed() said Malformed.
    const char *problem() const { return m_problem; }

private:
    enum class State { Size, Extension, SizeLf, Data, DataCr, DataLf, Trailer, LastLf, Done, Bad };
    Step malformed(const char *problem, qsizetype consumed);

    State m_state = State::Size;
    qint64 m_size = 0;         // the chunk being read: its size, then what is left of it
    int m_digits = 0;          // hex digits of the size line so far
    qsizetype m_lineBytes = 0; // of the current size line
    qint64 m_decoded = 0;
    const char *m_problem = "";
};

struct GuardOptions {
    qint64 maxBodyBytes = 0;
    // Whether a request path (without its query) is a WebSocket route; none when unset.
    std::function<bool(const QByteArray &path)> isWebSocketPath;
    ConnectionLimits limits;
};

// Counts a listener's open connections and refuses those past the cap, logging the refusals at
// most every few seconds (a flood must not fill the log either).
class ConnectionCount {
public:
    bool full(int max) const { return max > 0 && m_open >= max; }
    // Counts the connection until it disconnects or is destroyed, whichever is first, or until
    // the returned function is called: a socket a WebSocket takes over loses every connection
    // (Qt disconnects them) and is counted by the ApiServer's WebSocket cap from then on.
    std::function<void()> add(QAbstractSocket *connection, QObject *context);
    // Notes one connection refused because the count is full.
    void refused(const QString &peer);
    int open() const { return m_open; }

private:
    int m_open = 0;
    qint64 m_refused = 0;
    QElapsedTimer m_lastLog;
};

class GuardedTcpServer : public QTcpServer {
    Q_OBJECT
public:
    explicit GuardedTcpServer(GuardOptions options, QObject *parent = nullptr);

    // The request line and headers together, and how many header lines.
    static constexpr qsizetype MaxHeaderBytes = 64 * 1024;
    static constexpr int MaxHeaderLines = 100;

    int openConnections() const { return m_count.open(); }

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    GuardOptions m_options;
    ConnectionCount m_count;
};

// The same guard behind TLS: it looks at the decrypted bytes of each connection. A client that
// has not finished the TLS handshake within HandshakeTimeoutMs is dropped (Qt 6.4's QSslServer
// waits for ever); a client speaking plain HTTP fails the handshake and is closed unanswered.
class GuardedSslServer : public QSslServer {
    Q_OBJECT
public:
    explicit GuardedSslServer(GuardOptions options, QObject *parent = nullptr);
    static constexpr int HandshakeTimeoutMs = 10000;
    QTcpSocket *nextPendingConnection() override;

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    GuardOptions m_options;
    ConnectionCount m_count;
    QHash<QObject *, std::function<void()>> m_releases; // until the guard takes them
};

// Puts the guard in front of a socket the HTTP server has not seen yet; release is called when
// a WebSocket takes the connection over.
void guardSocket(QTcpSocket *socket, const GuardOptions &options, std::function<void()> release = {});

} // namespace pando::server::detail
