#pragma once
// The credentials of an app's service slots, in the state database with the password sealed
// under the install's seal key (core/pipelines/sealbox, bound to the app and slot it belongs
// to). A slot's row is made with fresh random credentials the first time a deploy needs it and
// lives as long as the service's data does, so a redeploy, or an app made again after its
// removal kept the data, finds the same credentials the data was initialised with.
//
// Threading: a borrowed view over a Database and a SealBox, both safe to share; any thread.

#include "adapters/api/error.h"
#include "adapters/api/services.h"
#include "core/common/clock.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/state/database.h"

#include <QList>
#include <QString>

namespace pando::core {

struct ServiceRecord {
    QString app;
    QString slot;
    QString kind;
    QString version;
    QString user;
    QString database;
    QString password; // opened; empty in list()
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
};

// 32 characters of [A-Za-z0-9] from the system's CSPRNG (about 190 bits): strong, and safe in
// URLs, SQL and shell words as it is.
QString generateServicePassword();

class ServiceStore {
public:
    ServiceStore(Database &db, const pipelines::SealBox &seal, Clock &clock) : m_db(db), m_seal(seal), m_clock(clock) {}

    // The slot's row with its password opened; made with new credentials when there is none.
    // A row of another kind is replaced: that data is of no use to the new kind.
    // wanted: the user, database and password the spec sets (each empty: Pando's default); a
    // service made with others is Conflict at that field (its data was made for them).
    Result<ServiceRecord> obtain(const QString &app, const QString &slot, const QString &kind, const QString &version,
                                 const adapters::ServiceCredentials &wanted = {});
    // The row with its password opened.
    Result<ServiceRecord> find(const QString &app, const QString &slot);
    // The app's rows (every app's when app is empty), passwords left out.
    Result<QList<ServiceRecord>> list(const QString &app);
    Status remove(const QString &app, const QString &slot);
    // The seed file the app's last deploy read for the slot (seedPath, from the spec), kept with
    // the row so a service made again without a checkout (the reconciler's) is loaded as the deploy
    // would have; an empty seedPath forgets it. Unchanged data is not written again.
    Status keepSeed(const QString &app, const QString &slot, const QString &seedPath, const QByteArray &data);
    // The kept seed of the slot, when it is the file at seedPath; NotFound when none is kept for it.
    Result<QByteArray> keptSeed(const QString &app, const QString &slot, const QString &seedPath);
    // The app's rows are kept past its removal for owners (user ids): only they, or an
    // administrator, make an app of that name again and get the data back (Engine::createApp).
    Status markKept(const QString &app, const QStringList &owners);
    // The owners the app's kept rows were kept for (none: no row was kept for anybody).
    Result<QStringList> keptOwners(const QString &app);

private:
    Database &m_db;
    const pipelines::SealBox &m_seal;
    Clock &m_clock;
};

} // namespace pando::core
