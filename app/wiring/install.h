#pragma once
// Install: the one composition root. Given options, it holds the data directory, resolves where
// the state lives and which install id labels this install's objects on the runtimes, builds
// every adapter (the runtimes, the edge, git, the Docker service provisioner), starts
// the engine and puts the pipeline runner, accounts and audit sinks into it; close() stops them
// in the reverse order. pandod, the desktop's in-process session and the integration-test
// fixtures all open an install through it, so what one of them has the others have too (the
// desktop once lacked services, audit sinks, the app limit and the lock because it assembled
// its own); nothing else constructs a core::Engine.
//
// Install identity: every object Pando labels on a runtime carries the install id, and the
// reconciler, teardown and image clean-up touch only objects with their own id. Two installs
// with one id on one Docker engine take each other's containers and images for leftovers and
// delete them, so each data directory keeps its own id in <dataDir>/install-id (0600), made on
// a fresh data directory. A data directory that already holds an install but no such file (one
// made before ids were per directory) adopts "default", the id it was using, so it keeps its
// objects. An explicit id (pandod --install-id) wins and is not written down: it exists for
// installs meant to share one (cluster mode).
//
// Threading: an Install is opened, used and closed on one thread (the engine's start() and
// shutdown() contract); engine() may then be handed to the API server on that thread. The
// engine's own methods are thread-safe as core/engine/engine.h says.

#include "adapters/api/error.h"
#include "adapters/api/routing.h"
#include "adapters/api/runtime.h"
#include "adapters/api/services.h"
#include "adapters/api/source.h"
#include "adapters/routing/caddy/caddyconfig.h"
#include "adapters/routing/cloudflare/cloudflareconfig.h"
#include "adapters/routing/traefik/traefikconfig.h"
#include "app/wiring/enginesettings.h"
#include "app/wiring/runtimewiring.h"
#include "core/authz/authz.h"
#include "core/engine/engine.h"

#include <QHostAddress>
#include <QLockFile>
#include <QMap>
#include <QStringList>
#include <functional>
#include <memory>

namespace pando::core {
class AuditStream;
}

namespace pando::wiring {

struct InstallOptions {
    // dataDir is required (made when missing, used as an absolute path). An empty SQLite path
    // means <dataDir>/pando.db; an empty installId the data directory's own (see above).
    core::EngineOptions engine;
    RuntimeWiringOptions runtimes;        // Docker, and Incus when there is one
    QString dockerSocket;                 // services and pipeline tasks; empty: DOCKER_HOST or /var/run/docker.sock
    QMap<QString, QString> serviceImages; // KIND[:VERSION] → image run instead of Pando's
    int maxRuns = 4;                      // pipeline runs at once, all pipelines together
    QString auditSinks;                   // a JSON file of audit sinks (docs/audit.md); empty: none
    int appLimit = 10;                    // apps a member may own (operators and admins are not limited)
    EdgeChoice edge = EdgeChoice::Auto;   // what serves the apps; Caddy's files go in <dataDir>/edge
    adapters::caddy::EdgeSite edgeSite;   // Caddy's shared ports for apps' domains, and the ACME CA
    // With EdgeChoice::Traefik: configDir (required), certResolver, certificatesDir; the state goes in
    // <dataDir>/traefik.
    adapters::traefik::TraefikRouterOptions traefik;
    // With EdgeChoice::Cloudflare: the account, tunnel and zone, the API token (or its file), the
    // API's base URL and cloudflared (optional); the state goes in <dataDir>/cloudflare.
    adapters::cloudflare::CloudflareRouterOptions cloudflare;
    // One engine per data directory: <dataDir>/pandod.lock is held while open. Only a test
    // that opens the state next to a running install turns it off.
    bool lockDataDirectory = true;

    // Tests inject fakes here; null means the real adapter. Each is used on the engine's threads
    // as the adapter interfaces say.
    std::shared_ptr<adapters::Runtime> runtime;
    std::shared_ptr<adapters::Router> router;
    std::shared_ptr<adapters::SourceProvider> source;
    std::shared_ptr<adapters::ServiceProvisioner> services;
    core::Clock *clock = nullptr; // null: the system's; a test's outlives the install
    // Puts the pipeline runner into the started engine instead of app/wiring's real one (which
    // uses dockerSocket and maxRuns); a hook that installs nothing leaves the engine without one.
    std::function<Status(core::Engine &)> installPipelines;
};

// <dataDir>/pandod.lock for as long as the returned lock lives; a lock left by a process that
// died is taken over. Conflict, naming the holder, while another engine (a pandod, a desktop)
// or a secrets key rotation has the directory.
Result<std::unique_ptr<QLockFile>> lockDataDirectory(const QString &dataDir);

// The data directory's install id: the one in <dataDir>/install-id; "default" for a directory
// that holds an install made before that file existed (its database or token key is there);
// otherwise a new one, written 0600. Invalid when the file holds something that is not an id.
Result<QString> dataDirectoryInstallId(const QString &dataDir, const core::DatabaseConfig &database);

// Where the edge reaches an API that listens on address:port (a wildcard address: its loopback
// one); certificateFile: the API's self-made TLS certificate, empty for plain HTTP.
adapters::IdentityCheck identityCheckFor(const QHostAddress &address, quint16 port,
                                         const QString &certificateFile = {});

class Install {
public:
    explicit Install(InstallOptions options);
    ~Install(); // close()
    Install(const Install &) = delete;
    Install &operator=(const Install &) = delete;

    // Takes the lock, builds the adapters, starts the engine and what goes into it. On failure
    // nothing stays open (the lock is released) and the error says what to do.
    Status open();
    // Stops the audit sinks, the engine (with its pipeline runner and accounts) and drops the
    // adapters and the lock. Safe to call when not open.
    void close();
    bool isOpen() const { return bool(m_engine); }

    // While open.
    core::Engine &engine() { return *m_engine; }
    // The options as opened: dataDir absolute, the SQLite path and the install id filled in.
    const InstallOptions &options() const { return m_options; }
    QString dataDir() const { return m_options.engine.dataDir; }
    QString installId() const { return m_options.engine.installId; }
    // What the API server enforces beside roles (ApiServer::setAuthzOptions).
    core::authz::AuthzOptions authzOptions() const { return core::authz::AuthzOptions{m_options.appLimit}; }
    // Where the edge asks who is signed in for apps that want it: this install's API, once it
    // listens (a router that cannot ask ignores it).
    Status setIdentityCheck(const adapters::IdentityCheck &check);
    // A line for each runtime left out and why ("Incus: not used: ..."), and one for the edge
    // when apps are served from Pando's own process, for the log.
    QStringList runtimeNotes() const { return m_runtimeNotes; }

private:
    Status openLocked();
    Status openEdge();

    InstallOptions m_options;
    QStringList m_runtimeNotes;
    std::unique_ptr<QLockFile> m_lock;
    std::shared_ptr<adapters::Runtime> m_runtime;
    std::shared_ptr<adapters::Router> m_router;
    std::shared_ptr<adapters::SourceProvider> m_source;
    std::unique_ptr<core::Engine> m_engine;
    std::shared_ptr<core::AuditStream> m_auditStream;
};

} // namespace pando::wiring
