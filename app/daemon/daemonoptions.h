#pragma once
// pandod's command line: where its data lives, where it listens, which database it uses.

#include "adapters/api/error.h"
#include "adapters/routing/caddy/caddyconfig.h"
#include "adapters/routing/cloudflare/cloudflareconfig.h"
#include "app/server/connectionlimits.h"
#include "app/wiring/enginesettings.h"
#include "app/wiring/runtimewiring.h"
#include "core/engine/engine.h"

#include <QHostAddress>
#include <QProcessEnvironment>
#include <QStringList>

namespace pando::daemon {

struct DaemonOptions {
    core::EngineOptions engine;
    QHostAddress listenAddress = QHostAddress::LocalHost;
    quint16 listenPort = 7420;
    QString dockerSocket;                  // empty: DOCKER_HOST or /var/run/docker.sock
    wiring::RuntimeWiringOptions runtimes; // Docker, and Incus when there is one
    // --service-image KIND[:VERSION]=IMAGE: what a service kind runs instead of Pando's image.
    QMap<QString, QString> serviceImages;
    int maxRuns = 4;                                    // pipeline runs at once, all pipelines together
    QString auditSinks;                                 // a JSON file of audit sinks; empty: none
    int appLimit = 10;                                  // apps a member may own (operators and admins are not limited)
    wiring::EdgeChoice edge = wiring::EdgeChoice::Auto; // --edge, else $PANDO_EDGE
    // --edge-listen, --edge-http-port, --edge-https-port, --acme-*: where apps' addresses are
    // served and where their certificates come from (docs/edge.md).
    adapters::caddy::EdgeSite edgeSite;
    // --traefik-dir ($PANDO_TRAEFIK_DIR) and --traefik-resolver ($PANDO_TRAEFIK_RESOLVER), with
    // --edge traefik: where Traefik's file provider looks, and its ACME resolver's name.
    QString traefikDir;
    QString traefikResolver = QStringLiteral("pando");
    QString traefikCertificates; // --traefik-certs ($PANDO_TRAEFIK_CERTS): HOST.crt/HOST.key for TLS internal
    // --cloudflare-account, -tunnel, -zone, -token-file, -api and --cloudflared (each also a
    // PANDO_CLOUDFLARE* variable; the token itself only $PANDO_CLOUDFLARE_TOKEN), with --edge
    // cloudflare: the tunnel whose ingress pandod manages. stateDir is <data-dir>/cloudflare.
    adapters::cloudflare::CloudflareRouterOptions cloudflare;
    // HTTPS: with certificate and key files when given, else with a certificate made (and kept)
    // in <data-dir>/tls naming tlsNames, which clients pin by its fingerprint.
    bool tls = false;
    QStringList tlsNames;
    QString tlsCertificate;
    QString tlsKey;
    // --allow-host: names requests may carry in Host besides loopback, the listen address and
    // the certificate's names (a reverse proxy's public name).
    QStringList allowedHosts;
    // --insecure-http: plain HTTP on an address other people reach, said out loud.
    bool insecureHttp = false;
    // --git-timeout: how long a git host may stay silent (connecting, or mid-fetch).
    int gitTimeoutMs = 30'000;
    // --max-connections, --header-timeout, --idle-timeout.
    server::ConnectionLimits connections;
    // --rotate-secrets-key: re-seal every secret with a new key, then exit (pandod stopped).
    bool rotateSecretsKey = false;
    // --reset-admin USER [--password-file FILE]: make USER an enabled administrator, then exit
    // (pandod stopped). Empty passwordFile: a one-time password is made.
    QString resetAdmin;
    QString passwordFile;
};

// "90s", "30m", "24h", "7d"; nullopt for anything else.
using wiring::parseDuration;

// Errors name the flag that was wrong. --help and --version exit the process. environment is
// where PANDO_DATABASE_URL, PANDO_EDGE, PANDO_TRAEFIK_* and PANDO_CLOUDFLARE* are read (the process's own by default).
Result<DaemonOptions> parseOptions(const QStringList &arguments,
                                   const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment());

} // namespace pando::daemon
