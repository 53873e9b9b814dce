#pragma once
// The services adapter interface: the backing services an app declares in its AppSpec's
// services slots (a PostgreSQL database, a MariaDB/MySQL database, a Redis cache), each
// provisioned next to the app's runtime with its own data volume, reached by the app over a
// network only the app and its services share. Docker now (adapters/services/docker).
//
// The caller owns the credentials (it generates and keeps them sealed); the adapter only hands
// them to the service when it first initialises its data, and to the tools it runs in the
// service's container (readiness checks, dumps). No call puts a password in an error text.
//
// Threading: every call blocks until the runtime answered and may be made from any thread,
// concurrently for different slots; implementations hold no per-thread state. None may be
// called from a GUI thread.

#include "cancel.h"
#include "error.h"
#include "runtime.h"

#include <QIODevice>
#include <QList>
#include <QString>
#include <functional>

namespace pando::adapters {

// The slot a service container fills, beside LabelApp and LabelInstall. App containers never
// carry it, which is how the deploy pipeline and the reconciler tell the two apart.
inline constexpr const char *LabelService = "dev.pando.service"; // slot name
// The kind ("postgres", ...) on a service's container and volume.
inline constexpr const char *LabelServiceKind = "dev.pando.service-kind";

struct ServiceCredentials {
    QString user;
    QString password;
    QString database; // empty for kinds without databases (redis)
};

struct ServiceRequest {
    QString installId;
    QString app;
    QString slot;    // a lowercase identifier
    QString kind;    // "postgres", "mysql", "mariadb", "redis"
    QString version; // "15"
    QString image;   // the image to run; empty: the adapter's default for kind and version
    ServiceCredentials credentials;
    int readyTimeoutMs = 120000;
};

struct ServiceEndpoint {
    QString host;        // the name the app reaches the service at on network
    int port = 0;        // on host
    QString network;     // the network the app's container must join (ContainerSpec::networks)
    QString containerId; // the service's container
    QString volume;      // its data
    QString image;
    bool fresh = false; // its data volume was made by this provision(): it holds nothing yet
};

struct ServiceInfo {
    QString app;
    QString slot;
    QString kind;
    QString image;
    QString containerId; // empty: no container (only the volume is left)
    QString state;       // the container's ("running", "exited", ...); "absent" without one
    QString volume;      // empty: no volume
};

struct BackupProgress {
    qint64 bytes = 0; // written so far
};

class ServiceProvisioner {
public:
    virtual ~ServiceProvisioner() = default;

    // The runtime kind services run on ("docker"): an app on another runtime cannot use them.
    virtual QString runtimeKind() const = 0;
    // The image a slot of kind and version runs when the request names none.
    virtual QString defaultImage(const QString &kind, const QString &version) const = 0;

    // Makes the slot's service run and accept connections: creates its volume and container the
    // first time (the service initialises its data with the credentials), starts a stopped one,
    // and leaves a running one be. Waits until a client logs in with the credentials, at most
    // readyTimeoutMs; on a timeout or a failure it removes the container it made (and a volume
    // it made, never one holding earlier data) and the error names the slot and what the
    // service last said. progress gets a line now and then.
    virtual Result<ServiceEndpoint> provision(const ServiceRequest &request, const CancelToken &cancel,
                                              const std::function<void(const QString &line)> &progress) = 0;
    // The app's services with their containers and volumes (one app; empty app: the install's).
    virtual Result<QList<ServiceInfo>> list(const QString &installId, const QString &app) = 0;
    // Dumps the slot's data to out (pg_dump, mysqldump, a Redis RDB file) through the running
    // service. Returns the bytes written; progress is called as they are.
    virtual Result<qint64> backup(const ServiceRequest &request, QIODevice &out, const CancelToken &cancel,
                                  const std::function<void(const BackupProgress &)> &progress) = 0;
    // Loads seed, SQL as the kind's own client reads it, into the slot's running service as its
    // user, into its database: PostgreSQL in one transaction that stops at the first error (psql
    // --single-transaction, ON_ERROR_STOP), MySQL and MariaDB statement by statement. The file goes
    // into the container beside the client and is removed after; a failure says the client's last
    // lines. Invalid for a kind without such a form (Redis).
    virtual Status seed(const ServiceRequest &request, const QByteArray &seed, const CancelToken &cancel) = 0;
    // Removes the slot's container and, with deleteData, its volume. Nothing to remove is not an
    // error. The app's services network goes with its last service.
    virtual Status remove(const QString &installId, const QString &app, const QString &slot, bool deleteData) = 0;
};

} // namespace pando::adapters
