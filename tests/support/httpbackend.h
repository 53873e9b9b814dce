#pragma once
// Real sockets for routing tests: a QTcpServer-based HTTP/1.1 backend on its own thread that
// echoes a request's body (or names itself) in an X-Backend header, and a blocking POSIX client
// with a 5 s receive timeout, so what is measured is the proxy in between and a hang fails.

#include "tests/support/ports.h"

#include <QByteArray>
#include <QSemaphore>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>

#include <arpa/inet.h>
#include <atomic>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace pando::test {

// Answers every request on a kept-alive connection with its body (or, when there is none,
// the backend's name) and names itself in an X-Backend header.
class HttpBackend : public QThread {
public:
    explicit HttpBackend(QByteArray name) : m_name(std::move(name))
    {
        start();
        m_ready.acquire();
    }
    ~HttpBackend() override { stop(); }
    void stop()
    {
        quit();
        wait();
    }
    quint16 port() const { return m_port; }
    int served() const { return m_served.load(); }

protected:
    void run() override
    {
        QTcpServer server;
        server.listen(QHostAddress::LocalHost, 0);
        m_port = server.serverPort();
        QObject::connect(&server, &QTcpServer::newConnection, &server, [this, &server] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
                auto buffer = std::make_shared<QByteArray>();
                QObject::connect(socket, &QTcpSocket::readyRead, socket,
                                 [this, socket, buffer] { serve(socket, *buffer); });
                QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
        m_ready.release();
        exec();
    }

private:
    void serve(QTcpSocket *socket, QByteArray &buffer)
    {
        buffer += socket->readAll();
        for (;;) {
            const qsizetype end = buffer.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            qsizetype length = 0;
            for (const QByteArray &line : buffer.left(end).split('\n')) {
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            }
            if (buffer.size() < end + 4 + length)
                return;
            const QByteArray body = length > 0 ? buffer.mid(end + 4, length) : m_name;
            buffer.remove(0, end + 4 + length);
            socket->write("HTTP/1.1 200 OK\r\nX-Backend: " + m_name +
                          "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
            ++m_served;
        }
    }

    QByteArray m_name;
    QSemaphore m_ready;
    quint16 m_port = 0;
    std::atomic_int m_served{0};
};

struct Reply {
    QByteArray backend;
    QByteArray body;
};

// A blocking HTTP/1.1 client over a raw socket, with a 5 s receive timeout so a hang fails.
class Client {
public:
    ~Client() { close(); }
    bool connectTo(quint16 port)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const int one = 1;
        ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        timeval timeout{5, 0};
        ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return ::connect(m_fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
    }
    void close()
    {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }
    int fd() const { return m_fd; }
    bool send(const QByteArray &data)
    {
        qsizetype sent = 0;
        while (sent < data.size()) {
            const ssize_t n = ::send(m_fd, data.constData() + sent, size_t(data.size() - sent), MSG_NOSIGNAL);
            if (n <= 0)
                return false;
            sent += n;
        }
        return true;
    }
    std::optional<Reply> request(const QByteArray &body = {})
    {
        QByteArray head = "POST / HTTP/1.1\r\nHost: test\r\n";
        if (!body.isEmpty())
            head += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
        if (!send(head + "\r\n" + body))
            return std::nullopt;
        for (;;) {
            const qsizetype end = m_buffer.indexOf("\r\n\r\n");
            if (end >= 0) {
                Reply reply;
                qsizetype length = 0;
                for (const QByteArray &line : m_buffer.left(end).split('\n')) {
                    if (line.startsWith("Content-Length:"))
                        length = line.mid(15).trimmed().toLongLong();
                    else if (line.startsWith("X-Backend:"))
                        reply.backend = line.mid(10).trimmed();
                }
                if (m_buffer.size() >= end + 4 + length) {
                    reply.body = m_buffer.mid(end + 4, length);
                    m_buffer.remove(0, end + 4 + length);
                    return reply;
                }
            }
            char chunk[65536];
            const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
            if (n <= 0)
                return std::nullopt;
            m_buffer.append(chunk, n);
        }
    }
    // True when the peer closed the connection (EOF or reset) within ms.
    bool closedWithin(int ms)
    {
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0)
            return false;
        char byte;
        return ::recv(m_fd, &byte, 1, MSG_DONTWAIT) <= 0;
    }

private:
    int m_fd = -1;
    QByteArray m_buffer;
};

inline std::optional<Reply> oneShot(quint16 port, const QByteArray &body = {})
{
    Client client;
    if (!client.connectTo(port))
        return std::nullopt;
    return client.request(body);
}

} // namespace pando::test
