#include "tests/support/vaultstandin.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUuid>

namespace pando::test {

namespace {

QByteArray errors(const QString &message)
{
    return QJsonDocument(
               QJsonObject{{QStringLiteral("errors"), message.isEmpty() ? QJsonArray{} : QJsonArray{message}}})
        .toJson(QJsonDocument::Compact);
}

QByteArray header(const QList<QByteArray> &headers, const QByteArray &name)
{
    for (const QByteArray &line : headers) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().toLower() == name.toLower())
            return line.mid(colon + 1).trimmed();
    }
    return {};
}

} // namespace

VaultStandIn::VaultStandIn()
{
    start();
    m_ready.acquire();
}

VaultStandIn::~VaultStandIn()
{
    quit();
    wait();
}

QString VaultStandIn::url() const
{
    return QStringLiteral("http://127.0.0.1:%1").arg(m_port);
}

void VaultStandIn::setRootToken(const QString &token)
{
    QMutexLocker lock(&m_mutex);
    m_rootToken = token;
    m_tokens << token;
}

void VaultStandIn::addAppRole(const QString &roleId, const QString &secretId)
{
    QMutexLocker lock(&m_mutex);
    m_appRoles.append({roleId, secretId});
}

void VaultStandIn::setNamespace(const QString &ns)
{
    QMutexLocker lock(&m_mutex);
    m_namespace = ns;
}

void VaultStandIn::mount(const QString &path, int version)
{
    QMutexLocker lock(&m_mutex);
    m_mounts.append({path.endsWith(u'/') ? path : path + u'/', version});
}

void VaultStandIn::put(const QString &path, const QJsonObject &data)
{
    QMutexLocker lock(&m_mutex);
    m_secrets.insert(path, data);
}

QStringList VaultStandIn::requests() const
{
    QMutexLocker lock(&m_mutex);
    return m_requests;
}

void VaultStandIn::run()
{
    QTcpServer server;
    server.listen(QHostAddress::LocalHost, 0);
    m_port = server.serverPort();
    QObject::connect(&server, &QTcpServer::newConnection, &server, [this, &server] {
        while (QTcpSocket *socket = server.nextPendingConnection()) {
            auto buffer = std::make_shared<QByteArray>();
            QObject::connect(socket, &QTcpSocket::readyRead, socket,
                             [this, socket, buffer] { serve(socket, *buffer); });
            QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        }
    });
    m_ready.release();
    exec();
}

void VaultStandIn::serve(QTcpSocket *socket, QByteArray &buffer)
{
    buffer += socket->readAll();
    for (;;) {
        const qsizetype end = buffer.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        QList<QByteArray> lines = buffer.left(end).split('\n');
        for (QByteArray &line : lines)
            line = line.trimmed();
        const qsizetype length = header(lines, "content-length").toLongLong();
        if (buffer.size() < end + 4 + length)
            return;
        const QByteArray body = buffer.mid(end + 4, length);
        buffer.remove(0, end + 4 + length);
        const QList<QByteArray> requestLine = lines.value(0).split(' ');
        const QString path =
            QString::fromUtf8(QByteArray::fromPercentEncoding(requestLine.value(1).split('?').first()));
        int status = 200;
        const QByteArray reply = answer(requestLine.value(0), path, lines, body, &status);
        socket->write("HTTP/1.1 " + QByteArray::number(status) +
                      " X\r\nContent-Type: application/json\r\nContent-Length: " + QByteArray::number(reply.size()) +
                      "\r\n\r\n" + reply);
    }
}

QByteArray VaultStandIn::answer(const QByteArray &method, const QString &path, const QList<QByteArray> &headers,
                                const QByteArray &body, int *status)
{
    QMutexLocker lock(&m_mutex);
    m_requests << QString::fromLatin1(method) + u' ' + path;
    if (!m_namespace.isEmpty() && QString::fromUtf8(header(headers, "x-vault-namespace")) != m_namespace) {
        *status = 403;
        return errors(QStringLiteral("permission denied"));
    }
    if (method == "POST" && path == u"/v1/auth/approle/login") {
        const QJsonObject given = QJsonDocument::fromJson(body).object();
        const QPair<QString, QString> pair{given.value(QStringLiteral("role_id")).toString(),
                                           given.value(QStringLiteral("secret_id")).toString()};
        if (!m_appRoles.contains(pair)) {
            *status = 400;
            return errors(QStringLiteral("invalid role or secret ID"));
        }
        const QString token = QStringLiteral("hvs.") + QUuid::createUuid().toString(QUuid::Id128);
        m_tokens << token;
        return QJsonDocument(QJsonObject{{QStringLiteral("auth"), QJsonObject{{QStringLiteral("client_token"), token},
                                                                              {QStringLiteral("lease_duration"), 3600},
                                                                              {QStringLiteral("renewable"), true}}}})
            .toJson(QJsonDocument::Compact);
    }
    if (!m_tokens.contains(QString::fromUtf8(header(headers, "x-vault-token")))) {
        *status = 403;
        return errors(QStringLiteral("permission denied"));
    }
    if (method != "GET" || !path.startsWith(u"/v1/")) {
        *status = 405;
        return errors({});
    }
    const QString rest = path.mid(4);
    const QString preflight = QStringLiteral("sys/internal/ui/mounts/");
    if (rest.startsWith(preflight)) {
        const QString of = rest.mid(preflight.size());
        for (const auto &[mount, version] : std::as_const(m_mounts)) {
            if (of.startsWith(mount))
                return QJsonDocument(
                           QJsonObject{
                               {QStringLiteral("data"),
                                QJsonObject{{QStringLiteral("path"), mount},
                                            {QStringLiteral("type"), QStringLiteral("kv")},
                                            {QStringLiteral("options"),
                                             QJsonObject{{QStringLiteral("version"), QString::number(version)}}}}}})
                    .toJson(QJsonDocument::Compact);
        }
        *status = 400;
        return errors(QStringLiteral("no mount for this path"));
    }
    for (const auto &[mount, version] : std::as_const(m_mounts)) {
        if (!rest.startsWith(mount))
            continue;
        QString secretPath = rest;
        if (version == 2) {
            if (!rest.startsWith(mount + QStringLiteral("data/"))) {
                *status = 404;
                return errors({});
            }
            secretPath = mount + rest.mid(mount.size() + 5);
        }
        const auto found = m_secrets.constFind(secretPath);
        if (found == m_secrets.cend()) {
            *status = 404;
            return errors({});
        }
        const QJsonObject data =
            version == 2 ? QJsonObject{{QStringLiteral("data"), *found},
                                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("version"), 1}}}}
                         : *found;
        return QJsonDocument(QJsonObject{{QStringLiteral("data"), data}, {QStringLiteral("lease_duration"), 2764800}})
            .toJson(QJsonDocument::Compact);
    }
    *status = 404;
    return errors({});
}

} // namespace pando::test
