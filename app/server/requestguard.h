#pragma once
// A TCP server for the API that refuses request bodies over a limit as soon as their headers
// say so (413 with the API's error body), before QHttpServer buffers them in memory.

#include <QTcpServer>

namespace pando::server::detail {

class GuardedTcpServer : public QTcpServer {
    Q_OBJECT
public:
    GuardedTcpServer(qint64 maxBodyBytes, QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    qint64 m_maxBodyBytes;
};

} // namespace pando::server::detail
