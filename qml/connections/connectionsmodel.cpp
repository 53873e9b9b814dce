#include "connectionsmodel.h"

#include "app/client/api.h"
#include "app/client/apiclient.h"
#include "qml/connections/pairinglink.h"
#include "qml/states/displaystate.h"

#include <QDateTime>
#include <QJsonObject>
#include <QLocale>
#include <QSettings>
#include <QStandardPaths>
#include <QSysInfo>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

// A message and what to do, for a person reading it in the view.
QString describe(const Error &error)
{
    return error.hint.isEmpty() ? error.message : error.message + u" — "_s + error.hint;
}

constexpr qint64 HourMs = 60LL * 60 * 1000;

} // namespace

ConnectionsModel::ConnectionsModel(QObject *parent)
    : QAbstractListModel(parent), m_ownSettings(std::make_unique<QSettings>()),
      m_store(std::make_unique<ConnectionStore>(
          *m_ownSettings, QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + u"/connections"_s))
{
    setUp();
}

ConnectionsModel::ConnectionsModel(QSettings *settings, const QString &tokenDir, QObject *parent)
    : QAbstractListModel(parent), m_store(std::make_unique<ConnectionStore>(*settings, tokenDir))
{
    setUp();
}

void ConnectionsModel::setUp()
{
    m_installs = m_store->installs();
    m_now = [] {
        return QDateTime::currentMSecsSinceEpoch();
    };
    // Hourly: the texts count days, and hours only in the last one.
    m_tick.setInterval(int(HourMs));
    connect(&m_tick, &QTimer::timeout, this, &ConnectionsModel::expiryMoved);
    m_tick.start();
}

void ConnectionsModel::setClock(std::function<qint64()> nowMs)
{
    m_now = std::move(nowMs);
    expiryMoved();
}

void ConnectionsModel::expiryMoved()
{
    if (!m_installs.isEmpty())
        Q_EMIT dataChanged(index(1), index(int(m_installs.size())), {AccessTextRole, AccessStateRole});
}

QString ConnectionsModel::accessText(qint64 expiresMs) const
{
    if (expiresMs <= 0)
        return {};
    const qint64 left = expiresMs - m_now();
    if (left <= 0)
        return tr("access expired — ask its administrator for a new pairing link");
    if (left >= WarnBeforeMs) {
        const QDate day = QDateTime::fromMSecsSinceEpoch(expiresMs).date();
        return tr("access until %1").arg(QLocale().toString(day, tr("d MMM yyyy", "the date in 'access until'")));
    }
    // Rounded down: never more time than is left.
    const qint64 hours = left / HourMs;
    const QString span = hours >= 24  ? tr("%n day(s)", "access ends in", int(hours / 24))
                         : hours >= 1 ? tr("%n hour(s)", "access ends in", int(hours))
                                      : tr("less than an hour", "access ends in");
    return tr("access ends in %1 — ask its administrator for a new pairing link").arg(span);
}

int ConnectionsModel::accessState(qint64 expiresMs) const
{
    if (expiresMs <= 0)
        return DisplayState::Neutral;
    const qint64 left = expiresMs - m_now();
    if (left <= 0)
        return DisplayState::Failed;
    return left < WarnBeforeMs ? DisplayState::Waiting : DisplayState::Healthy;
}

ConnectionsModel::~ConnectionsModel()
{
    delete m_redeeming;
}

int ConnectionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_installs.size()) + 1;
}

QVariant ConnectionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    if (row == 0) {
        switch (role) {
        case Qt::DisplayRole:
        case NameRole:
            return tr("This computer");
        case LocalRole:
            return true;
        case CurrentRole:
            return m_currentRow == 0;
        case AddressRole:
        case FingerprintRole:
        case AccountRole:
        case FingerprintArtRole:
        case AccessTextRole:
            return QString();
        case ExpiresMsRole:
            return qint64(0);
        case AccessStateRole:
            return int(DisplayState::Neutral);
        default:
            return {};
        }
    }
    const RemoteInstall &install = m_installs.at(row - 1);
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return install.name;
    case AddressRole:
        return u"%1:%2"_s.arg(install.url.host()).arg(install.url.port());
    case FingerprintRole:
        return install.fingerprint;
    case FingerprintArtRole:
        return fingerprintArt(install.fingerprint);
    case AccountRole:
        return install.user;
    case LocalRole:
        return false;
    case CurrentRole:
        return m_currentRow == row;
    case ExpiresMsRole:
        return install.expiresMs;
    case AccessTextRole:
        return accessText(install.expiresMs);
    case AccessStateRole:
        return accessState(install.expiresMs);
    default:
        return {};
    }
}

QHash<int, QByteArray> ConnectionsModel::roleNames() const
{
    return {{NameRole, "name"},
            {AddressRole, "address"},
            {FingerprintRole, "fingerprint"},
            {AccountRole, "account"},
            {LocalRole, "local"},
            {CurrentRole, "current"},
            {FingerprintArtRole, "fingerprintArt"},
            {ExpiresMsRole, "expiresMs"},
            {AccessTextRole, "accessText"},
            {AccessStateRole, "accessState"}};
}

void ConnectionsModel::setCurrentRow(int row)
{
    if (row < 0 || row >= rowCount() || row == m_currentRow)
        return;
    const int previous = m_currentRow;
    m_currentRow = row;
    Q_EMIT dataChanged(index(previous), index(previous), {CurrentRole});
    Q_EMIT dataChanged(index(row), index(row), {CurrentRole});
    Q_EMIT currentRowChanged();
}

std::optional<RemoteInstall> ConnectionsModel::installAt(int row) const
{
    if (row < 1 || row > m_installs.size())
        return std::nullopt;
    return m_installs.at(row - 1);
}

QString ConnectionsModel::tokenAt(int row) const
{
    const auto install = installAt(row);
    return install ? m_store->token(install->id) : QString();
}

int ConnectionsModel::rowOfId(const QString &id) const
{
    for (qsizetype i = 0; i < m_installs.size(); ++i) {
        if (m_installs.at(i).id == id)
            return int(i) + 1;
    }
    return -1;
}

void ConnectionsModel::setError(const QString &error)
{
    if (error == m_error)
        return;
    m_error = error;
    Q_EMIT errorChanged();
}

void ConnectionsModel::clearError()
{
    setError({});
}

void ConnectionsModel::finishRedeem()
{
    if (m_redeeming)
        m_redeeming->deleteLater();
    m_redeeming = nullptr;
    Q_EMIT busyChanged();
}

void ConnectionsModel::addFromLink(const QString &text, const QString &name)
{
    if (m_redeeming)
        return;
    auto link = parsePairingLink(text);
    if (!link) {
        setError(describe(link.error()));
        return;
    }
    setError({});
    m_redeeming = new client::ApiClient(link->baseUrl(), QString(), this);
    m_redeeming->setPinnedFingerprint(link->fingerprint);
    m_redeeming->setTimeoutMs(20000);
    Q_EMIT busyChanged();
    const QString label = name.trimmed();
    QPointer<ConnectionsModel> self(this);
    const PairingLink pairing = *link;
    client::Api(m_redeeming)
        .redeemPairing(
            link->token, QSysInfo::machineHostName().left(60),
            [self, pairing, label](const Result<client::ApiResponse> &answer) {
                if (!self)
                    return;
                self->finishRedeem();
                if (!answer) {
                    self->setError(tr("Pairing with %1:%2 failed: %3")
                                       .arg(pairing.host)
                                       .arg(pairing.port)
                                       .arg(describe(answer.error())));
                    return;
                }
                const QString token = answer->json.value(u"token"_s).toString();
                if (token.isEmpty()) {
                    self->setError(
                        tr("The install at %1:%2 answered without a token").arg(pairing.host).arg(pairing.port));
                    return;
                }
                const RemoteInstall install{{},
                                            label,
                                            pairing.baseUrl(),
                                            pairing.fingerprint,
                                            answer->json.value(u"user"_s).toString(),
                                            answer->json.value(u"expiresMs"_s).toInteger()};
                self->saveRedeemed(install, token, pairing.host);
            });
}

void ConnectionsModel::saveRedeemed(const RemoteInstall &redeemed, const QString &token, const QString &host)
{
    RemoteInstall install = redeemed;
    // The same install paired again (same address, same certificate): its row takes the new token
    // and expiry instead of a second row beside it, and keeps its name unless a new one was given.
    const auto same = std::find_if(m_installs.cbegin(), m_installs.cend(), [&install](const RemoteInstall &old) {
        return old.url.host().compare(install.url.host(), Qt::CaseInsensitive) == 0 &&
               old.url.port() == install.url.port() &&
               old.fingerprint.compare(install.fingerprint, Qt::CaseInsensitive) == 0;
    });
    if (same == m_installs.cend()) {
        if (install.name.isEmpty())
            install.name = host;
        auto saved = m_store->add(install, token);
        if (!saved) {
            setError(describe(saved.error()));
            return;
        }
        const int row = rowCount();
        beginInsertRows({}, row, row);
        m_installs.append(*saved);
        endInsertRows();
        Q_EMIT countChanged();
        Q_EMIT added(row);
        return;
    }
    const int row = int(same - m_installs.cbegin()) + 1;
    if (install.name.isEmpty())
        install.name = same->name;
    auto saved = m_store->replace(same->id, install, token);
    if (!saved) {
        setError(describe(saved.error()));
        return;
    }
    m_installs[row - 1] = *saved;
    Q_EMIT dataChanged(index(row), index(row));
    Q_EMIT added(row);
    // The window shows this install with the old token: it reconnects with the new one.
    if (row == m_currentRow)
        Q_EMIT switchRequested(row);
}

void ConnectionsModel::remove(int row)
{
    const auto install = installAt(row);
    if (!install)
        return;
    const bool wasCurrent = row == m_currentRow;
    if (auto removed = m_store->remove(install->id); !removed)
        setError(describe(removed.error()));
    if (wasCurrent) {
        // Back to this computer before the row goes, so the window never shows a forgotten install.
        setCurrentRow(0);
        Q_EMIT switchRequested(0);
    }
    beginRemoveRows({}, row, row);
    m_installs.removeAt(row - 1);
    endRemoveRows();
    if (m_currentRow > row) {
        --m_currentRow;
        Q_EMIT currentRowChanged();
    }
    Q_EMIT countChanged();
}

void ConnectionsModel::activate(int row)
{
    if (row < 0 || row >= rowCount())
        return;
    Q_EMIT switchRequested(row);
}

} // namespace pando::desktop
