#pragma once
// A TCP server for the API that refuses, before QHttpServer buffers them in memory, request
// bodies over a limit as soon as their headers say so (413 with the API's error body) and header
// blocks with too many lines or bytes (431). Qt 6.4's QHttpServer has no limit of its own on
// either: it keeps every byte of a request in the socket's read transaction until the request is
// complete (a 1 MiB header or 10 000 header lines were read whole and routed), and after a parse
// error it only drops its signal connections, leaving the socket open.

#include <QSslServer>
#include <QTcpServer>

namespace pando::server::detail {

class GuardedTcpServer : public QTcpServer {
    Q_OBJECT
public:
    GuardedTcpServer(qint64 maxBodyBytes, QObject *parent = nullptr);

    // The request line and headers together, and how many header lines.
    static constexpr qsizetype MaxHeaderBytes = 64 * 1024;
    static constexpr int MaxHeaderLines = 100;

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    qint64 m_maxBodyBytes;
};

// The same guard behind TLS: it looks at the decrypted bytes of each connection. A client that
// has not finished the TLS handshake within HandshakeTimeoutMs is dropped (Qt 6.4's QSslServer
// waits for ever); a client speaking plain HTTP fails the handshake and is closed unanswered.
class GuardedSslServer : public QSslServer {
    Q_OBJECT
public:
    GuardedSslServer(qint64 maxBodyBytes, QObject *parent = nullptr);
    static constexpr int HandshakeTimeoutMs = 10000;
    QTcpSocket *nextPendingConnection() override;

private:
    qint64 m_maxBodyBytes;
};

// Puts the guard in front of a socket the HTTP server has not seen yet.
void guardSocket(QTcpSocket *socket, qint64 maxBodyBytes);

} // namespace pando::server::detail
