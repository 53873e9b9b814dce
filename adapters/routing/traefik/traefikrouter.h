#pragma once
// The Traefik router: apps are served by a Traefik v3 the user runs, which Pando does not start,
// stop or talk to. Pando writes Traefik's dynamic configuration for its file provider,
// <configDir>/pando.yml, and Traefik, watching that directory, applies each version as it
// appears: routes, backends and addresses change live, and apps keep answering while Pando is
// stopped. Every change rewrites the whole file at once (QSaveFile: a new file renamed over the
// old), so Traefik reads an old or a new file, never half of one.
//
// What Pando writes (traefikconfig.h has the details):
// - each app's stable port: a router on the entry point pando-APP with a service load-balancing
//   to the current backend. Entry points are Traefik's static configuration, which it reads only
//   when it starts: Pando writes them to <stateDir>/entrypoints.yml for the user to copy in, and
//   a new app's stable port answers once Traefik is restarted with it (docs/edge.md).
// - each address: routers on the web / websecure entry points, TLS from the configured
//   certificate resolver (auto) or from the install's certificate files (internal); plain HTTP
//   on a TLS address redirects to HTTPS.
// - each moved address: a redirectRegex middleware (Traefik answers 301 to GET, 308 to other
//   methods) on routers to noop@internal.
// - an app without a backend yet gets no routers (Traefik answers 404): Traefik has no
//   plugin-free way to answer 503.
//
// The route table is kept in <stateDir>/routes.json (0600) and adopted by start(): a restart of
// Pando changes nothing Traefik serves. Files are 0600 and directories Pando makes 0700, so
// Traefik must run as Pando's user (or root) to read pando.yml.
//
// Threading: every method may be called from any thread; changes are serialised.

#include "adapters/api/routing.h"
#include "adapters/routing/traefik/traefikconfig.h"

#include <QHash>
#include <QString>
#include <mutex>

namespace pando::adapters::traefik {

class TraefikRouter : public Router {
public:
    explicit TraefikRouter(TraefikRouterOptions options);

    // Makes the directories, adopts the route table in <stateDir>/routes.json and writes the
    // files from it. Invalid, naming the file, when that table cannot be read: it is left as it
    // is, and nothing is written.
    Status start();

    // Where the files are.
    QString dynamicFile() const;     // <configDir>/pando.yml
    QString entryPointsFile() const; // <stateDir>/entrypoints.yml
    QString routesFile() const;      // <stateDir>/routes.json

    Result<Route> ensure(const QString &app, int requestedPort) override;
    Status setBackend(const QString &app, const QString &host, int port) override;
    Status remove(const QString &app) override;
    std::optional<Route> route(const QString &app) override;
    bool servesAddresses() const override { return true; }
    Status setAddresses(const QString &app, const AddressChange &change) override;
    // The install-issued certificates of TLS-internal hosts (Traefik keeps the ACME ones itself).
    QList<CertificateState> certificates() override;
    // Writes pando.yml again when it is missing or differs from the routes (someone edited or
    // removed it, an internal certificate appeared).
    Status check() override;
    RouterStatus status() override;

private:
    Status startLocked();
    // Writes the files for routes, then makes them the routes; on error nothing changes.
    Status applyLocked(const QHash<QString, Route> &routes);
    Status writeFile(const QString &path, const QByteArray &content);
    QByteArray dynamicYaml(const QHash<QString, Route> &routes) const;

    TraefikRouterOptions m_options;
    std::mutex m_mutex;
    QHash<QString, Route> m_routes;
    bool m_started = false;
    bool m_written = false; // the files hold m_routes
    QString m_problem;      // the last write that failed; empty once one worked
};

} // namespace pando::adapters::traefik
