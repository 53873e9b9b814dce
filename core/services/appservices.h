#pragma once
// Package services: the backing services an app declares in its AppSpec (`services:` slots).
// At deploy, before the app's new container starts, each slot is provisioned through the
// services adapter with credentials this package generates and keeps sealed (ServiceStore);
// the app then gets the connection settings as environment variables (connectionEnv) and joins
// the network its services are on. Services outlive redeploys; removing them, or the app, keeps
// or deletes their data as the caller says.
//
// Threading: every method blocks (Docker, the database) and may run on any worker thread; an
// AppServices holds no state of its own beyond what it was given.

#include "adapters/api/services.h"
#include "core/services/servicestore.h"
#include "core/spec/appspec.h"

#include <QMap>
#include <QStringList>

namespace pando::core {

// The variables an app gets for a slot, named for the slot in upper case (db → DB_URL, ...):
// _URL, _HOST, _PORT, _USER, _PASSWORD, and _NAME (the database) for the SQL kinds, unless the
// service's env names a part's variable (url: DATABASE_URL).
QMap<QString, QString> connectionEnv(const QString &slot, const AppSpec::Service &service, const QString &host,
                                     int port, const adapters::ServiceCredentials &credentials);
// The names alone, for plans and checks (values are secrets).
QStringList connectionEnvNames(const QString &slot, const AppSpec::Service &service);

struct ProvisionedServices {
    QMap<QString, QString> env; // for the app's container
    QStringList networks;       // for the app's container to join
    QStringList summary;        // "db: postgres 15 at db:5432 (ready)"
    QStringList made;           // the summaries of the slots whose data this made (a new volume)
};

struct ServiceView {
    QString app;
    QString slot;
    QString kind;
    QString version;
    QString image;
    QString state;  // the container's; "absent" without one
    QString volume; // empty: no data kept
    QString user;
    QString database;
    qint64 createdMs = 0; // when its credentials were made; 0 when only the runtime knows it
    QStringList env;      // the variables the app gets from it; empty: the slot's default names
    // "running"; "stopped" (a container that does not run); "missing" (no container: only its
    // data or credentials are left).
    QString status() const;
    QJsonObject toJson() const; // never the password
};

class AppServices {
public:
    AppServices(ServiceStore store, adapters::ServiceProvisioner &provisioner, QString installId)
        : m_store(store), m_provisioner(provisioner), m_installId(std::move(installId))
    {}

    // Plan-time rules: services run on the provisioner's runtime only (that run.env may not set
    // a variable a slot injects is the spec's own rule, validateAppSpec).
    Status checkPlan(const AppSpec &spec, const QString &runtimeKind) const;
    // Provisions every slot of spec (in slot order) and returns what the app's container needs.
    // The first slot that fails ends it with that slot's error. A slot with a seed whose volume
    // this made gets the seed loaded from checkoutDir; without one (the reconciler making a lost
    // service again) from the copy the app's last deploy kept (ServiceStore::keepSeed), or none,
    // which its summary says. A seed that fails to load takes the new service and its volume
    // with it, so the next deploy makes them again.
    Result<ProvisionedServices> provision(const QString &app, const AppSpec &spec, const CancelToken &cancel,
                                          const std::function<void(const QString &line)> &progress,
                                          const QString &checkoutDir = {});
    // The app's services (every app's when app is empty): what the store knows and what the
    // runtime has, joined by slot.
    Result<QList<ServiceView>> list(const QString &app);
    Result<qint64> backup(const QString &app, const QString &slot, QIODevice &out, const CancelToken &cancel,
                          const std::function<void(qint64 bytes)> &progress);
    // Removes the slot's container; deleteData also removes its volume and credentials.
    Status remove(const QString &app, const QString &slot, bool deleteData);
    // Every slot of the app (what the store and the runtime know of).
    Status removeAll(const QString &app, bool deleteData);
    // Whether the app has any service, or data of one, to decide on.
    Result<bool> hasAny(const QString &app);
    // What the app's removal keeps belongs to owners (user ids; ServiceStore::markKept).
    Status markKept(const QString &app, const QStringList &owners) { return m_store.markKept(app, owners); }
    Result<QStringList> keptOwners(const QString &app) { return m_store.keptOwners(app); }

private:
    // The largest seed file loaded (docs/services.md).
    static constexpr qint64 MaxSeedBytes = 32LL * 1024 * 1024;

    adapters::ServiceRequest request(const ServiceRecord &record) const;
    // The seed file at path seed of checkoutDir, which must be a file of it.
    static Result<QByteArray> readSeed(const QString &slot, const QString &seed, const QString &checkoutDir);
    // Loads data (the file seed) into service's new volume.
    Status loadSeed(const adapters::ServiceRequest &service, const QString &seed, const QByteArray &data,
                    const CancelToken &cancel);
    // Keeps the slot's seed as the checkout has it, and loads it into a fresh service: from the
    // checkout, or the kept copy without one. Returns what the summary says of it ("" for nothing).
    Result<QString> seedFresh(const adapters::ServiceRequest &service, const AppSpec::Service &spec, bool fresh,
                              const QString &checkoutDir, const CancelToken &cancel);

    ServiceStore m_store;
    adapters::ServiceProvisioner &m_provisioner;
    QString m_installId;
};

} // namespace pando::core
