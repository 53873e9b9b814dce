#pragma once
// Package settings (QML module Pando.Settings): the Settings view. EmbeddedServer is its
// controller for serving teammates from this computer: the switch (off by default, remembered in
// QSettings with the address and port), the certificate fingerprint teammates pin, a one-time
// pairing link for a chosen account with a text-art picture of the fingerprint to compare by eye,
// and who is connected now (ConnectedModel). It drives this computer's InProcessSession only:
// a remote install's own server is configured there.
//
// Threading: GUI thread; starting and stopping run on the engine's thread and answer later.

#include "app/desktop/session/inprocesssession.h"
#include "qml/settings/connectedmodel.h"

#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

class QSettings;

namespace pando::desktop {

class EmbeddedServer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.embeddedServer is the one controller")
    // False when this desktop runs no engine of its own (started with --server).
    Q_PROPERTY(bool available READ isAvailable CONSTANT)
    Q_PROPERTY(bool enabled READ isEnabled WRITE setEnabled NOTIFY enabledChanged)
    Q_PROPERTY(QString address READ address WRITE setAddress NOTIFY addressChanged)
    Q_PROPERTY(int port READ port WRITE setPort NOTIFY portChanged)
    Q_PROPERTY(bool running READ isRunning NOTIFY statusChanged)
    Q_PROPERTY(bool busy READ isBusy NOTIFY statusChanged)
    Q_PROPERTY(QString status READ status NOTIFY statusChanged)
    Q_PROPERTY(QString error READ error NOTIFY statusChanged)
    Q_PROPERTY(QString fingerprint READ fingerprint NOTIFY statusChanged)
    Q_PROPERTY(QString fingerprintArt READ fingerprintArt NOTIFY statusChanged)
    Q_PROPERTY(QStringList accounts READ accounts NOTIFY accountsChanged)
    Q_PROPERTY(QString pairingLink READ pairingLink NOTIFY pairingChanged)
    Q_PROPERTY(QString pairingText READ pairingText NOTIFY pairingChanged)
    Q_PROPERTY(pando::desktop::ConnectedModel *connected READ connected CONSTANT)

public:
    static constexpr int DefaultPort = 7443;

    // local: this computer's session (null when there is none); settings: where the switch is kept.
    EmbeddedServer(InProcessSession *local, QSettings *settings, QObject *parent = nullptr);
    ~EmbeddedServer() override;

    bool isAvailable() const { return m_local != nullptr; }
    bool isEnabled() const { return m_enabled; }
    // Remembered and applied: on starts serving, off stops.
    void setEnabled(bool enabled);
    QString address() const { return m_address; }
    void setAddress(const QString &address);
    int port() const { return m_port; }
    void setPort(int port);
    bool isRunning() const { return m_servingPort != 0; }
    bool isBusy() const { return m_busy; }
    QString status() const;
    QString error() const { return m_error; }
    QString fingerprint() const { return m_fingerprint; }
    QString fingerprintArt() const { return randomArt(m_fingerprint); }
    QStringList accounts() const { return m_accounts; }
    QString pairingLink() const { return m_pairingLink; }
    QString pairingText() const { return m_pairingText; }
    ConnectedModel *connected() { return &m_connected; }

    // Starts or stops serving as the settings say (the window calls it once the engine is up).
    Q_INVOKABLE void apply();
    Q_INVOKABLE void refreshAccounts();
    // A new one-time link for the account; pairingLink follows (or error).
    Q_INVOKABLE void makePairingLink(const QString &account);
    Q_INVOKABLE void copyPairingLink() const;

    // The host teammates reach this computer by: the address when it is a specific one, else the
    // first non-loopback IPv4 address (or the host name).
    static QString advertisedHost(const QString &address);
    // A fingerprint as a 17x9 "drunken bishop" picture (as OpenSSH draws host keys), so two people
    // can compare it at a glance; empty for an empty fingerprint.
    static QString randomArt(const QString &fingerprintHex);

Q_SIGNALS:
    void enabledChanged();
    void addressChanged();
    void portChanged();
    void statusChanged();
    void accountsChanged();
    void pairingChanged();

private:
    void setStatus(bool busy, const QString &error);
    void clearPairing();

    QPointer<InProcessSession> m_local;
    QSettings *m_settings;
    bool m_enabled = false;
    QString m_address;
    int m_port = DefaultPort;
    bool m_busy = false;
    quint16 m_servingPort = 0;
    QString m_servingAddress;
    QString m_fingerprint;
    QString m_error;
    QStringList m_accounts;
    QString m_pairingLink;
    QString m_pairingText;
    ConnectedModel m_connected;
    quint64 m_generation = 0;
};

} // namespace pando::desktop
