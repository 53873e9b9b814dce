#pragma once
// The Caddy edge: apps are served by a Caddy (Debian's `caddy`, 2.6) that runs in its own
// process, so they keep answering while Pando stops, crashes, restarts or is upgraded. Pando
// starts it (its own session, so neither a terminal's Ctrl+C nor a SIGKILL of Pando reaches it),
// drives it only through its admin API on a unix socket in the edge's private directory, and on
// the next start adopts the one already running: the routes Caddy serves are read back, and a
// route that did not change is not touched, so a restart of Pando costs no request.
//
// Each app keeps the stable 127.0.0.1 port the loopback router gave it (a Caddy server per
// app, reverse-proxying HTTP to the current container). Every change loads the whole
// configuration at once (POST /load): Caddy applies it atomically or refuses it and keeps the
// previous one, which then keeps serving. The configuration is also written to
// <stateDir>/caddy.json (0600), so a Caddy started after a reboot serves the last routes before
// Pando has even started.
//
// Caddy reopens its listeners on every load (SO_REUSEPORT); Linux drops the connections waiting
// in a closing listener's queue unless net.ipv4.tcp_migrate_req is 1, which the edge sets when it
// may (it is per network namespace and changes nothing else) and reports when it may not.
//
// The state directory (0700) holds admin.sock, caddy.json, caddy.pid, caddy.log and Caddy's own
// data (certificates, later). Its path must leave room for the socket name (108 bytes in all).
//
// Threading: every method may be called from any thread; changes are serialised.

#include "adapters/api/restartpacer.h"
#include "adapters/api/routing.h"
#include "adapters/kit/httpkit/httptransport.h"
#include "adapters/routing/caddy/caddyconfig.h"

#include <QHash>
#include <QString>
#include <mutex>

namespace pando::adapters::caddy {

struct CaddyEdgeOptions {
    QString stateDir;           // required; made 0700 when missing
    QString caddyBinary;        // empty: `caddy` found on PATH
    int startTimeoutMs = 10000; // for a started Caddy's admin socket to answer
    int adminTimeoutMs = 30000; // one admin request (a load waits for old servers to finish)
    EdgeSite site;              // the shared ports apps' addresses are served on, and the ACME CA
};

class CaddyEdge : public Router {
public:
    explicit CaddyEdge(CaddyEdgeOptions options);
    ~CaddyEdge() override; // leaves Caddy running: that is the point

    // The caddy binary: options' one, else `caddy` on PATH; empty when there is none.
    static QString findCaddy(const QString &configured = {});

    // Adopts the Caddy that answers on the state directory's socket, or starts one with the
    // last configuration written there. Unavailable, with Caddy's last words, when it cannot.
    Status start();
    // Stops Caddy (the apps stop answering). For tests and `pando edge stop`.
    Status stop();

    Result<Route> ensure(const QString &app, int requestedPort) override;
    Status setBackend(const QString &app, const QString &host, int port) override;
    Status remove(const QString &app) override;
    std::optional<Route> route(const QString &app) override;
    bool servesAddresses() const override { return true; }
    Status setAddresses(const QString &app, const AddressChange &change) override;
    bool assertsIdentity() const override { return true; }
    // Loads the configuration again when where pandod answers changed.
    Status setIdentityCheck(const IdentityCheck &check) override;
    QList<CertificateState> certificates() override;
    // With site.certificates Pando: the challenges answered and the certificates served for the
    // tls auto names are the ones handed over here (kept across a restart of Pando: they are
    // read back from the Caddy that runs).
    bool takesCertificates() const override { return m_options.site.certificates == CertificateSource::Pando; }
    QStringList autoTlsHosts() override;
    Status setChallengeAnswers(const QList<ChallengeAnswer> &answers) override;
    Status setCertificates(const QList<ServedCertificate> &certificates) override;
    QByteArray installCa() override;
    std::pair<int, int> addressPorts() const override { return {m_options.site.httpPort, m_options.site.httpsPort}; }
    // Starts Caddy again (with the routes it had) when it no longer answers.
    Status check() override;
    RouterStatus status() override;

private:
    Status startLocked();
    Status adoptLocked();
    Status spawnLocked();
    bool answersLocked();
    Status applyLocked(const QHash<QString, Route> &routes);
    // The routes loaded again with member set to value; member as it was when Caddy refuses.
    template<class T> Status applyWithLocked(T &member, const T &value);
    // One admin API request; timeoutMs 0: the options' adminTimeoutMs.
    httpkit::Exchange admin(const QByteArray &method, const QString &where, const QByteArray &body = {},
                            int timeoutMs = 0) const;
    // caddy.json and routes.json (Pando's table, with the addresses), both 0600.
    Status writeConfig(const QByteArray &config, const QHash<QString, Route> &routes) const;
    QHash<QString, Route> writtenRoutes() const;
    std::function<bool(const QString &)> certificateCheck() const;
    qint64 caddyPid() const; // from the pid file Caddy writes; 0 when there is none
    // Whether the sites' HTTP and HTTPS ports can be listened on (nobody holds them).
    bool sitePortsFree() const;
    QByteArray configJson(const QHash<QString, Route> &routes) const;
    QString path(const char *name) const;

    CaddyEdgeOptions m_options;
    std::mutex m_mutex;
    QHash<QString, Route> m_routes;
    IdentityCheck m_identity;
    QList<ChallengeAnswer> m_challenges;     // with CertificateSource::Pando
    QList<ServedCertificate> m_certificates; // with CertificateSource::Pando
    bool m_started = false;
    bool m_movesPending = false; // a moved address serves the app until where it moved serves
    QString m_problem;           // the last failed restart
    RestartPacer m_restarts;     // how soon Caddy is started again when it keeps failing
    QString m_migrateProblem;    // net.ipv4.tcp_migrate_req is 0 and may not be set
};

} // namespace pando::adapters::caddy
