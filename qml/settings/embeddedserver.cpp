#include "embeddedserver.h"

#include "app/desktop/session/inprocesssession.h"
#include "qml/connections/pairinglink.h"

#include <QClipboard>
#include <QDateTime>
#include <QGuiApplication>
#include <QHostInfo>
#include <QJsonArray>
#include <QLocale>
#include <QNetworkInterface>
#include <QSettings>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
const QString EnabledKey = u"embeddedServer/enabled"_s;
const QString AddressKey = u"embeddedServer/address"_s;
const QString PortKey = u"embeddedServer/port"_s;
const QString DefaultAddress = u"0.0.0.0"_s;

QString link(const QString &host, int port, const QString &fingerprint, const QString &token)
{
    QUrl url;
    url.setScheme(u"pando"_s);
    url.setHost(host);
    url.setPort(port);
    url.setPath(u"/pair"_s);
    QUrlQuery query;
    query.addQueryItem(u"fp"_s, fingerprint);
    query.addQueryItem(u"token"_s, token);
    url.setQuery(query);
    return url.toString(QUrl::FullyEncoded);
}
} // namespace

EmbeddedServer::EmbeddedServer(InProcessSession *local, QSettings *settings, QObject *parent)
    : QObject(parent), m_local(local), m_settings(settings)
{
    m_enabled = m_settings->value(EnabledKey, false).toBool();
    m_address = m_settings->value(AddressKey, DefaultAddress).toString();
    m_port = m_settings->value(PortKey, DefaultPort).toInt();
    m_connected.setSession(local);
}

EmbeddedServer::~EmbeddedServer() = default;

void EmbeddedServer::setEnabled(bool enabled)
{
    if (enabled == m_enabled)
        return;
    m_enabled = enabled;
    m_settings->setValue(EnabledKey, enabled);
    Q_EMIT enabledChanged();
    apply();
}

void EmbeddedServer::setAddress(const QString &address)
{
    const QString trimmed = address.trimmed();
    if (trimmed == m_address)
        return;
    m_address = trimmed;
    m_settings->setValue(AddressKey, trimmed);
    Q_EMIT addressChanged();
}

void EmbeddedServer::setPort(int port)
{
    if (port == m_port)
        return;
    m_port = port;
    m_settings->setValue(PortKey, port);
    Q_EMIT portChanged();
}

QString EmbeddedServer::status() const
{
    if (!m_local)
        return tr("This desktop shows a remote install; its own server is set up there.");
    if (m_busy)
        return m_enabled ? tr("Starting…") : tr("Stopping…");
    if (!m_error.isEmpty())
        return tr("Not serving: %1").arg(m_error);
    if (m_servingPort != 0)
        return tr("Serving teammates over TLS on %1:%2").arg(m_servingAddress).arg(m_servingPort);
    return tr("Off: only this computer uses its engine.");
}

void EmbeddedServer::setStatus(bool busy, const QString &error)
{
    m_busy = busy;
    m_error = error;
    Q_EMIT statusChanged();
}

void EmbeddedServer::clearPairing()
{
    if (m_pairingLink.isEmpty() && m_pairingText.isEmpty())
        return;
    m_pairingLink.clear();
    m_pairingText.clear();
    Q_EMIT pairingChanged();
}

void EmbeddedServer::apply()
{
    if (!m_local)
        return;
    const quint64 generation = ++m_generation;
    QPointer<EmbeddedServer> self(this);
    if (!m_enabled) {
        if (m_servingPort == 0)
            return;
        setStatus(true, {});
        m_local->stopServingTeammates([self, generation] {
            if (!self || generation != self->m_generation)
                return;
            self->m_servingPort = 0;
            self->m_fingerprint.clear();
            self->m_connected.setActive(false);
            self->clearPairing();
            self->setStatus(false, {});
        });
        return;
    }
    const QHostAddress address(m_address);
    if (address.isNull()) {
        setStatus(false, tr("\"%1\" is not an IP address (use 0.0.0.0 for every network)").arg(m_address));
        return;
    }
    if (m_port < 1 || m_port > 65535) {
        setStatus(false, tr("the port must be 1-65535"));
        return;
    }
    setStatus(true, {});
    QStringList names{advertisedHost(m_address), QHostInfo::localHostName().toLower()};
    if (!address.isEqual(QHostAddress::AnyIPv4) && !address.isEqual(QHostAddress::Any))
        names.append(address.toString());
    const QString shown = m_address;
    m_local->serveTeammates(address, quint16(m_port), names,
                            [self, generation, shown](const Result<InProcessSession::Serving> &serving) {
                                if (!self || generation != self->m_generation)
                                    return;
                                if (!serving) {
                                    self->m_servingPort = 0;
                                    self->m_fingerprint.clear();
                                    self->setStatus(false, serving.error().message);
                                    return;
                                }
                                self->m_servingPort = serving->port;
                                self->m_servingAddress = shown;
                                self->m_fingerprint = serving->fingerprint;
                                self->m_connected.setActive(true);
                                self->clearPairing();
                                self->setStatus(false, {});
                                self->refreshAccounts();
                            });
}

void EmbeddedServer::refreshAccounts()
{
    if (!m_local)
        return;
    QPointer<EmbeddedServer> self(this);
    m_local->users([self](const Result<QJsonArray> &users) {
        if (!self || !users)
            return;
        QStringList names;
        for (const QJsonValue user : *users) {
            if (!user[u"disabled"_s].toBool())
                names.append(user[u"username"_s].toString());
        }
        if (names != self->m_accounts) {
            self->m_accounts = names;
            Q_EMIT self->accountsChanged();
        }
    });
}

void EmbeddedServer::makePairingLink(const QString &account)
{
    if (!m_local || m_servingPort == 0 || account.isEmpty())
        return;
    QPointer<EmbeddedServer> self(this);
    const QString host = advertisedHost(m_servingAddress);
    const quint16 port = m_servingPort;
    const QString fingerprint = m_fingerprint;
    m_local->createPairing(account, [self, host, port, fingerprint, account](const Result<QJsonObject> &code) {
        if (!self)
            return;
        if (!code) {
            self->m_pairingLink.clear();
            self->m_pairingText = tr("No pairing link for %1: %2").arg(account, code.error().message);
            Q_EMIT self->pairingChanged();
            return;
        }
        self->m_pairingLink = link(host, port, fingerprint, code->value(u"token"_s).toString());
        const QDateTime expires = QDateTime::fromMSecsSinceEpoch(code->value(u"expiresMs"_s).toInteger());
        self->m_pairingText = tr("For %1; works once, until %2. Send it privately: whoever uses it first gets "
                                 "%1's access.")
                                  .arg(account, QLocale().toString(expires.time(), QLocale::ShortFormat));
        Q_EMIT self->pairingChanged();
    });
}

void EmbeddedServer::copyPairingLink() const
{
    if (QClipboard *clipboard = QGuiApplication::clipboard(); clipboard && !m_pairingLink.isEmpty())
        clipboard->setText(m_pairingLink);
}

QString EmbeddedServer::advertisedHost(const QString &address)
{
    const QHostAddress given(address);
    if (!given.isNull() && !given.isEqual(QHostAddress::AnyIPv4) && !given.isEqual(QHostAddress::Any) &&
        !given.isEqual(QHostAddress::AnyIPv6))
        return given.toString();
    for (const QHostAddress &candidate : QNetworkInterface::allAddresses()) {
        if (candidate.protocol() == QAbstractSocket::IPv4Protocol && !candidate.isLoopback() &&
            !candidate.isLinkLocal())
            return candidate.toString();
    }
    return QHostInfo::localHostName().toLower();
}

QString EmbeddedServer::randomArt(const QString &fingerprintHex)
{
    return pando::desktop::fingerprintArt(fingerprintHex);
}

} // namespace pando::desktop
