#pragma once
// What the API's handlers may know about the server serving them: who holds a live stream
// (event stream or follow WebSocket) open right now, and the fingerprint of the certificate it
// serves TLS with. The server's thread writes it, handlers on the worker pool read it.
//
// Threading: every method may be called from any thread.

#include <QJsonArray>
#include <QList>
#include <QMutex>
#include <QString>

namespace pando::server::detail {

struct ConnectionInfo {
    QString id;       // "c" + 16 hex digits
    QString username; // "" for the initial token
    QString userId;
    QString principal; // as the audit log names it: "user:alice/token:t…"
    QString address;   // the peer's IP address
    QString stream;    // the route: "/api/v1/events", "/api/v1/apps/{name}/logs/follow", …
    qint64 sinceMs = 0;
    bool tls = false;
    QJsonObject toJson() const;
};

class ServerState {
public:
    // Returns the new connection's id.
    QString addConnection(ConnectionInfo info);
    void removeConnection(const QString &id);
    // Oldest first.
    QList<ConnectionInfo> connections() const;

    void setTlsFingerprint(const QString &fingerprint);
    QString tlsFingerprint() const;

private:
    mutable QMutex m_mutex;
    QList<ConnectionInfo> m_connections;
    QString m_tlsFingerprint;
};

} // namespace pando::server::detail
