#include "serverstate.h"

#include <QJsonObject>
#include <QMutexLocker>
#include <QRandomGenerator>

using namespace Qt::StringLiterals;

namespace pando::server::detail {

QJsonObject ConnectionInfo::toJson() const
{
    return {{u"id"_s, id},           {u"user"_s, username}, {u"userId"_s, userId},   {u"principal"_s, principal},
            {u"address"_s, address}, {u"stream"_s, stream}, {u"sinceMs"_s, sinceMs}, {u"tls"_s, tls}};
}

QString ServerState::addConnection(ConnectionInfo info)
{
    info.id = u"c%1"_s.arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
    QMutexLocker lock(&m_mutex);
    m_connections.append(info);
    return info.id;
}

void ServerState::removeConnection(const QString &id)
{
    QMutexLocker lock(&m_mutex);
    m_connections.removeIf([&id](const ConnectionInfo &c) { return c.id == id; });
}

QList<ConnectionInfo> ServerState::connections() const
{
    QMutexLocker lock(&m_mutex);
    return m_connections;
}

void ServerState::setTlsFingerprint(const QString &fingerprint)
{
    QMutexLocker lock(&m_mutex);
    m_tlsFingerprint = fingerprint;
}

QString ServerState::tlsFingerprint() const
{
    QMutexLocker lock(&m_mutex);
    return m_tlsFingerprint;
}

} // namespace pando::server::detail
