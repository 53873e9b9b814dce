#include "hostallowlist.h"

#include <QHostInfo>
#include <QNetworkInterface>
#include <QUrl>

namespace pando::server::detail {

QString HostAllowList::hostName(const QByteArray &host)
{
    QString name = QString::fromLatin1(host.trimmed()).toLower();
    if (name.startsWith(QLatin1Char('['))) {
        const qsizetype close = name.indexOf(QLatin1Char(']'));
        return close < 0 ? QString() : name.mid(1, close - 1);
    }
    // One colon is a port; more (an IPv6 address without brackets) is not a valid Host.
    if (name.count(QLatin1Char(':')) == 1)
        name = name.left(name.indexOf(QLatin1Char(':')));
    if (name.endsWith(QLatin1Char('.')))
        name.chop(1);
    return name;
}

void HostAllowList::addName(const QString &name)
{
    const QString normal = hostName(name.toLatin1());
    if (!normal.isEmpty())
        m_names.insert(normal);
}

void HostAllowList::addListenAddress(const QHostAddress &address)
{
    if (address != QHostAddress::Any && address != QHostAddress::AnyIPv4 && address != QHostAddress::AnyIPv6) {
        m_names.insert(address.toString().toLower());
        return;
    }
    for (const QHostAddress &local : QNetworkInterface::allAddresses()) {
        bool v4 = false;
        const quint32 ip4 = local.toIPv4Address(&v4);
        m_names.insert((v4 ? QHostAddress(ip4) : local).toString().section(QLatin1Char('%'), 0, 0).toLower());
    }
    const QString host = QHostInfo::localHostName().toLower();
    if (!host.isEmpty()) {
        m_names.insert(host);
        const QString domain = QHostInfo::localDomainName().toLower();
        if (!domain.isEmpty())
            m_names.insert(host + QLatin1Char('.') + domain);
    }
}

void HostAllowList::addCertificate(const QSslCertificate &certificate)
{
    const auto names = certificate.subjectAlternativeNames();
    for (auto it = names.begin(); it != names.end(); ++it)
        addName(it.value());
}

bool HostAllowList::allowsName(const QString &name) const
{
    if (name.isEmpty())
        return false;
    if (name == QLatin1String("localhost") || name.endsWith(QLatin1String(".localhost")))
        return true;
    if (QHostAddress address; address.setAddress(name)) {
        if (address.isLoopback())
            return true;
        return m_names.contains(address.toString().toLower());
    }
    return m_names.contains(name);
}

bool HostAllowList::allowsHost(const QByteArray &host) const
{
    if (host.trimmed().isEmpty())
        return true;
    return allowsName(hostName(host));
}

bool HostAllowList::allowsOrigin(const QString &origin, quint16 port) const
{
    const QUrl url(origin);
    if (!url.isValid() || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")))
        return false;
    if (url.port(url.scheme() == QLatin1String("https") ? 443 : 80) != port)
        return false;
    return allowsName(url.host().toLower());
}

} // namespace pando::server::detail
