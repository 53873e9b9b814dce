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

std::optional<QString> ServerState::addTunnel(const QString &owner, int maxTotal, int maxPerOwner)
{
    QMutexLocker lock(&m_mutex);
    if (maxTotal > 0 && m_tunnelCount >= maxTotal)
        return u"%1 tunnels to apps are open on this server, the limit; try again once one closed"_s.arg(maxTotal);
    int &held = m_tunnels[owner];
    if (maxPerOwner > 0 && held >= maxPerOwner) {
        if (held == 0)
            m_tunnels.remove(owner);
        return u"%1 tunnels to apps are open for this user, the limit; close one first"_s.arg(maxPerOwner);
    }
    ++held;
    ++m_tunnelCount;
    return std::nullopt;
}

void ServerState::removeTunnel(const QString &owner)
{
    QMutexLocker lock(&m_mutex);
    auto it = m_tunnels.find(owner);
    if (it == m_tunnels.end())
        return;
    --m_tunnelCount;
    if (--*it <= 0)
        m_tunnels.erase(it);
}

int ServerState::tunnelCount() const
{
    QMutexLocker lock(&m_mutex);
    return m_tunnelCount;
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
