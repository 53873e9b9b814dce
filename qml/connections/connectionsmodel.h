#pragma once
// ConnectionsModel: the Connections view's list — "This computer" first, then every remote install
// this desktop was paired with (ConnectionStore keeps them). Pasting a pairing link adds one: the
// link is read (pairinglink.h), the install is reached over TLS accepting exactly the certificate
// the link pins, and the one-time code is traded for an API token of the account it was made for.
// Choosing a row asks the window to switch to that install (DesktopState does the switching).
// Pairing again with a saved install (same address and certificate) replaces its token in place.
// Each remote row says until when its token works (paired tokens last 90 days), warns in the last
// week and says when it has expired, so a connection does not just stop working one day.
//
// Threading: GUI thread; adding never blocks (the redemption is an asynchronous request).

#include "app/client/apiclient.h"
#include "qml/connections/connectionstore.h"

#include <QAbstractListModel>
#include <QPointer>
#include <QTimer>
#include <QtQml/qqmlregistration.h>
#include <functional>
#include <memory>
#include <optional>

class QSettings;

namespace pando::desktop {

class ConnectionsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.connections is the one list")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(int currentRow READ currentRow NOTIFY currentRowChanged)
    Q_PROPERTY(bool busy READ isBusy NOTIFY busyChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        AddressRole,        // "host:port", or "" for this computer
        FingerprintRole,    // the pinned certificate's SHA-256, hex ("" for this computer)
        AccountRole,        // the account the token belongs to
        LocalRole,          // true for "This computer"
        CurrentRole,        // the window shows this one
        FingerprintArtRole, // the fingerprint as a text picture (pairinglink.h)
        ExpiresMsRole,      // when the token stops working, ms since the epoch; 0: not known, or this computer
        AccessTextRole,     // "access until 3 Mar 2027", a warning in the last week, "access expired — …";
                            // "" when not known; translated, follows the clock
        AccessStateRole,    // DisplayState: Healthy, Waiting (ends within a week), Failed (expired), Neutral
    };
    Q_ENUM(Role)

    // The list kept in the application's QSettings, tokens under the app data directory.
    explicit ConnectionsModel(QObject *parent = nullptr);
    // The list kept in settings, tokens in tokenDir (tests).
    ConnectionsModel(QSettings *settings, const QString &tokenDir, QObject *parent = nullptr);
    ~ConnectionsModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    int currentRow() const { return m_currentRow; }
    // Marks the row the window shows (DesktopState calls it once the switch is made).
    void setCurrentRow(int row);
    bool isBusy() const { return m_redeeming != nullptr; }
    QString error() const { return m_error; }

    // The remote install at the row (nullopt for this computer or a row out of range).
    std::optional<RemoteInstall> installAt(int row) const;
    QString tokenAt(int row) const;
    int rowOfId(const QString &id) const;

    // The clock the expiry texts read (ms since the epoch); tests set it.
    void setClock(std::function<qint64()> nowMs);
    // From this long before expiry a row warns.
    static constexpr qint64 WarnBeforeMs = 7LL * 24 * 60 * 60 * 1000;

    // Reads the link, redeems its code and saves the install under name (default: the host, or the
    // name it has when it is paired again). added(row) or error follows.
    Q_INVOKABLE void addFromLink(const QString &link, const QString &name = {});
    // Forgets a remote install and its token; removing the one shown switches to this computer.
    Q_INVOKABLE void remove(int row);
    // Asks the window to show this install.
    Q_INVOKABLE void activate(int row);
    Q_INVOKABLE void clearError();
    void setError(const QString &error);

Q_SIGNALS:
    void countChanged();
    void currentRowChanged();
    void busyChanged();
    void errorChanged();
    void added(int row);
    void switchRequested(int row);

private:
    void finishRedeem();
    void setUp();
    // Saves what a pairing link was redeemed for: a new row, or the row of the same install
    // paired again. host names a new row the user gave no name.
    void saveRedeemed(const RemoteInstall &redeemed, const QString &token, const QString &host);
    QString accessText(qint64 expiresMs) const;
    int accessState(qint64 expiresMs) const;
    void expiryMoved();

    std::unique_ptr<QSettings> m_ownSettings;
    std::unique_ptr<ConnectionStore> m_store;
    QList<RemoteInstall> m_installs;
    int m_currentRow = 0;
    QString m_error;
    QPointer<client::ApiClient> m_redeeming;
    std::function<qint64()> m_now;
    QTimer m_tick; // "access ends in 3 days" moves on while the window stays open
};

} // namespace pando::desktop
