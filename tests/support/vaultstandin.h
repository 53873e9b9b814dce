#pragma once
// A stand-in for HashiCorp Vault's HTTP API, for the vault var source's tests: Vault itself is in
// neither Debian nor npm. It answers the documented requests a client of the key/value secrets
// engine makes with the documented responses: token auth (X-Vault-Token), an AppRole login
// (POST /v1/auth/approle/login), the mount preflight (GET /v1/sys/internal/ui/mounts/<path>),
// KV version 1 reads (GET /v1/<mount>/<path>: {"data": {...}}) and version 2 reads
// (GET /v1/<mount>/data/<path>: {"data": {"data": {...}, "metadata": {...}}}), 404 for what is not
// there, 403 {"errors": ["permission denied"]} without a valid token or namespace. HTTP/1.1 on
// 127.0.0.1, port 0, on its own thread.

#include <QJsonObject>
#include <QMutex>
#include <QSemaphore>
#include <QString>
#include <QStringList>
#include <QThread>

class QTcpSocket;

namespace pando::test {

class VaultStandIn : public QThread {
public:
    VaultStandIn();
    ~VaultStandIn() override;

    QString url() const; // "http://127.0.0.1:<port>"

    // The token every request but a login must carry; a login hands out another valid one.
    void setRootToken(const QString &token);
    // An AppRole whose login (role_id, secret_id) succeeds.
    void addAppRole(const QString &roleId, const QString &secretId);
    // Set: every request must name this namespace (X-Vault-Namespace).
    void setNamespace(const QString &ns);
    // A KV secrets engine mounted at path ("secret/"), version 1 or 2.
    void mount(const QString &path, int version);
    // A secret at its full path ("secret/ci/main/db"), under a mount.
    void put(const QString &path, const QJsonObject &data);
    // "METHOD /v1/path" of every request so far.
    QStringList requests() const;

protected:
    void run() override;

private:
    void serve(QTcpSocket *socket, QByteArray &buffer);
    QByteArray answer(const QByteArray &method, const QString &path, const QList<QByteArray> &headers,
                      const QByteArray &body, int *status);

    mutable QMutex m_mutex;
    QString m_rootToken;
    QStringList m_tokens; // valid ones
    QList<QPair<QString, QString>> m_appRoles;
    QString m_namespace;
    QList<QPair<QString, int>> m_mounts;
    QMap<QString, QJsonObject> m_secrets;
    QStringList m_requests;
    QSemaphore m_ready;
    quint16 m_port = 0;
};

} // namespace pando::test
