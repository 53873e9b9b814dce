#pragma once
// What the API's handlers may know about the server serving them: who holds a live stream
// (event stream or follow WebSocket) open right now, how many tunnels to apps each user holds, and
// the fingerprint of the certificate it serves TLS with. The server's thread writes it, handlers on the worker pool
// read it.
//
// Threading: every method may be called from any thread.

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QMutex>
#include <QString>
#include <optional>

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

    // Counts one more tunnel of owner (a user id, or the initial token's id), unless that would
    // pass maxTotal open in all or maxPerOwner of the owner's (0: no cap); then nothing is counted
    // and the answer is why, for the close frame.
    std::optional<QString> addTunnel(const QString &owner, int maxTotal, int maxPerOwner);
    void removeTunnel(const QString &owner);
    int tunnelCount() const;

    void setTlsFingerprint(const QString &fingerprint);
    QString tlsFingerprint() const;

private:
    mutable QMutex m_mutex;
    QList<ConnectionInfo> m_connections;
    QHash<QString, int> m_tunnels; // owner → open tunnels
    int m_tunnelCount = 0;
    QString m_tlsFingerprint;
};

} // namespace pando::server::detail
