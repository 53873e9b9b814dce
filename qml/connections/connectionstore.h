#pragma once
// The remote installs this desktop was paired with, kept across starts: name, address,
// certificate fingerprint, account and the token's expiry in QSettings (group "connections"), and
// each API token in a file of its own with mode 0600 under the token directory — never in
// QSettings, which is world-readable on many systems, and never in a log.
//
// Threading: GUI thread.

#include "adapters/api/error.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QUrl>
#include <functional>

class QSettings;

namespace pando::desktop {

struct RemoteInstall {
    QString id;          // "r" + 16 hex digits; names the token file
    QString name;        // what the sidebar shows
    QUrl url;            // https://host:port
    QString fingerprint; // the pinned certificate's SHA-256, hex
    QString user;        // the account the token belongs to
    // When the token stops working, ms since the epoch (the redemption's expiresMs). 0: not known —
    // an install saved before the desktop kept it, or a token that never expires — never "expired".
    qint64 expiresMs = 0;
};

class ConnectionStore {
public:
    // settings: where the list is kept; tokenDir: where the token files go (made 0700).
    ConnectionStore(QSettings &settings, QString tokenDir);

    QList<RemoteInstall> installs() const;
    // Saves a new install (its id is made here) and its token; returns it as saved.
    Result<RemoteInstall> add(RemoteInstall install, const QString &token);
    // Pairing again with a saved install: saves install and its new token under a new id, in the
    // old one's place in the list, then forgets the old one and deletes its token file. A new id,
    // not the old file rewritten, so the old token stays whole until the new one is on disk.
    Result<RemoteInstall> replace(const QString &id, RemoteInstall install, const QString &token);
    // Forgets the install and deletes its token file.
    Status remove(const QString &id);
    // The install's token, or empty when its file is gone.
    QString token(const QString &id) const;
    QString tokenPath(const QString &id) const;
    // What "now" is when an install is added (ms since the epoch); tests freeze it.
    void setClock(std::function<qint64()> clock) { m_clock = std::move(clock); }

private:
    Result<RemoteInstall> save(RemoteInstall install, const QString &token, qint64 addedMs);

    QSettings &m_settings;
    QString m_tokenDir;
    std::function<qint64()> m_clock = [] {
        return QDateTime::currentMSecsSinceEpoch();
    };
};

} // namespace pando::desktop
