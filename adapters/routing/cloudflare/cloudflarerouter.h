#pragma once
// The Cloudflare Tunnel router: apps are served by Cloudflare's edge through a remotely-managed
// tunnel, and Pando changes what the tunnel serves through Cloudflare's API. Each address of an
// app is one ingress rule of the tunnel's configuration (its host name, a path pattern for a path
// prefix, the app's current backend as service); every change GETs the configuration and PUTs it
// back whole, Pando's rules first, the rules Pando did not make kept after them, the catch-all
// last, so cloudflared swaps one configuration for the next and never serves half of one. Each
// host name gets a proxied CNAME to <tunnel>.cfargotunnel.com in the zone; Pando deletes only the
// records it made, when no app uses their name any more.
//
// What Cloudflare cannot do is refused before anything is sent: tls: internal or off (Cloudflare
// ends TLS at its edge with its own certificates), a host outside the zone, a name that holds a
// DNS record Pando did not make or that a rule Pando did not make serves. A wildcard is sent as it
// is (*.example.com); the zone refuses it when its plan does not allow one, and that refusal is
// the error. An address an app leaves is dropped: a tunnel's ingress cannot answer with a redirect
// (Cloudflare's Redirect Rules could; Pando does not manage them).
//
// Nothing is left half-applied: a DNS record that cannot be made puts the previous ingress back
// and deletes the records this change made; an error before the PUT changes nothing. A record
// that cannot be deleted after a change is kept in the table and deleted by a later check().
//
// Each app keeps a stable port number so that its record and a later edge agree, but nothing
// listens on it here: the app is reached at its addresses only. Its route's url is its first
// address, or empty.
//
// cloudflared: with a binary configured, Pando runs `cloudflared tunnel run` itself (cloudflared.h)
// with the tunnel token it gets from the API, adopts the one the previous Pando left running and
// starts it again in check() when it is gone (at once, then less and less often while it keeps
// ending: restartpacer.h). Without one, the user runs cloudflared, and status()
// relies on the tunnel's status as the API reports it.
//
// The route table, with the DNS records Pando made, is kept in <stateDir>/routes.json (0600) and
// adopted by start(). The API token lives in memory only and never reaches a log, an error or a
// command line.
//
// Threading: every method may be called from any thread; changes are serialised. API requests
// are synchronous with a deadline each (options.requestTimeoutMs).

#include "adapters/api/restartpacer.h"
#include "adapters/api/routing.h"
#include "adapters/routing/cloudflare/cloudflareapi.h"
#include "adapters/routing/cloudflare/cloudflareconfig.h"
#include "adapters/routing/cloudflare/cloudflared.h"

#include <QElapsedTimer>
#include <QHash>
#include <QString>
#include <memory>
#include <mutex>
#include <optional>

namespace pando::adapters::cloudflare {

class CloudflareRouter : public Router {
public:
    explicit CloudflareRouter(CloudflareRouterOptions options);
    ~CloudflareRouter() override; // leaves cloudflared running: that is the point

    // Checks the options, reads the token, adopts <stateDir>/routes.json, learns the zone's name,
    // brings the tunnel's ingress in line with the table and adopts or starts cloudflared.
    // Invalid for bad options or table, Forbidden when Cloudflare refuses the token, NotFound
    // when it does not know the zone; an API that does not answer is not an error here (the
    // tunnel serves what it was given, and check() tries again) but a problem status() reports.
    Status start();
    // Stops the cloudflared Pando runs (the apps stop answering). For tests and `pando edge stop`.
    void stopCloudflared();

    QString routesFile() const; // <stateDir>/routes.json
    qint64 cloudflaredPid();

    Result<Route> ensure(const QString &app, int requestedPort) override;
    Status setBackend(const QString &app, const QString &host, int port) override;
    Status remove(const QString &app) override;
    std::optional<Route> route(const QString &app) override;
    bool servesAddresses() const override { return true; }
    Status setAddresses(const QString &app, const AddressChange &change) override;
    // Starts cloudflared again when it is gone, and at most every apiCheckIntervalMs asks the API
    // whether the tunnel still serves Pando's rules (putting them back when someone changed
    // them) and the zone still holds the records Pando made (making one someone deleted again),
    // and deletes the DNS records left to delete.
    Status check() override;
    RouterStatus status() override;

private:
    Status startLocked();
    Status zoneLocked();
    // The tunnel's configuration as Cloudflare has it now (the zone's name learnt first).
    Result<QJsonObject> tunnelConfigLocked();
    // Serves routes from now on (see the class comment); on error nothing changes.
    Status applyLocked(const QHash<QString, Route> &routes);
    // The ingress as the table says, PUT when the tunnel serves something else.
    Status syncLocked();
    // Makes the DNS records Pando made and someone deleted again.
    Status recordsLocked();
    Status cloudflaredLocked();
    // Why cloudflared does not run, and when Pando starts it again.
    QString cloudflaredProblemLocked();
    void deleteStaleLocked(detail::State &state);
    Status saveLocked(const detail::State &state) const;
    // Records what an API error says about the API for status(), and passes it on.
    Error noted(Error error);

    CloudflareRouterOptions m_options;
    std::mutex m_mutex;
    std::unique_ptr<CloudflareApi> m_api; // made by start(), which reads the token
    std::unique_ptr<Cloudflared> m_cloudflared;
    detail::State m_state;
    QString m_zone; // the zone's name, once the API gave it
    bool m_started = false;
    bool m_inSync = false; // the tunnel serves m_state's rules, as far as Pando knows
    QElapsedTimer m_lastSync;
    QString m_apiProblem;         // the API did not answer or refused the token; empty once it worked
    QString m_cloudflaredProblem; // cloudflared is missing, would not start or exited
    RestartPacer m_restarts;      // how soon cloudflared is started again when it keeps ending
    QString m_tunnelStatus;       // healthy, degraded, down or inactive, as the API said last
};

} // namespace pando::adapters::cloudflare
