#pragma once
// The remote installs this desktop was paired with, kept across starts: name, address,
// certificate fingerprint and account in QSettings (group "connections"), and each API token in a
// file of its own with mode 0600 under the token directory — never in QSettings, which is
// world-readable on many systems, and never in a log.
//
// Threading: GUI thread.

#include "adapters/api/error.h"

#include <QList>
#include <QString>
#include <QUrl>

class QSettings;

namespace pando::desktop {

struct RemoteInstall {
    QString id;          // "r" + 16 hex digits; names the token file
    QString name;        // what the sidebar shows
    QUrl url;            // https://host:port
    QString fingerprint; // the pinned certificate's SHA-256, hex
    QString user;        // the account the token belongs to
};

class ConnectionStore {
public:
    // settings: where the list is kept; tokenDir: where the token files go (made 0700).
    ConnectionStore(QSettings &settings, QString tokenDir);

    QList<RemoteInstall> installs() const;
    // Saves a new install (its id is made here) and its token; returns it as saved.
    Result<RemoteInstall> add(RemoteInstall install, const QString &token);
    // Forgets the install and deletes its token file.
    Status remove(const QString &id);
    // The install's token, or empty when its file is gone.
    QString token(const QString &id) const;
    QString tokenPath(const QString &id) const;

private:
    QSettings &m_settings;
    QString m_tokenDir;
};

} // namespace pando::desktop
