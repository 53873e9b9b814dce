#pragma once
// The settings of the edges Pando configures but does not run itself — Traefik's directory and
// resolver, the Cloudflare Tunnel's account, tunnel, zone and API token — read one way whether
// they come as pandod's flags and variables or from the desktop's Settings view: each value is
// checked here, and an error names where it was given ("--traefik-dir", "PANDO_TRAEFIK_DIR",
// "traefik-dir") and what was expected.
//
// Threading: pure functions of their arguments and the files they name.

#include "adapters/api/error.h"
#include "adapters/routing/cloudflare/cloudflareconfig.h"
#include "adapters/routing/traefik/traefikconfig.h"

#include <QString>

namespace pando::wiring {

// A value as given, and where: the flag, variable or setting, for an error about it.
struct Given {
    QString value;
    QString where;
};

struct TraefikSettings {
    Given dir;      // the directory Traefik's file provider watches (required)
    Given resolver; // its certificatesResolvers entry for tls: auto (default "pando")
    Given certs;    // HOST.crt/HOST.key pairs for tls: internal (default: Traefik's own certificate)
};

struct CloudflareSettings {
    Given account;     // the account id
    Given tunnel;      // a remotely-managed tunnel's id
    Given zone;        // the zone apps' names are in
    Given tokenFile;   // a 0600 file holding the API token
    Given api;         // the API's base URL (default Cloudflare's)
    Given cloudflared; // a cloudflared binary Pando runs the tunnel with; empty: the user runs it
    QString token;     // the API token itself when no file is given (from the environment only)
};

// Traefik's router options (configDir absolute, certResolver, certificatesDir); Invalid, at the
// setting's where, for a missing directory or a resolver name Traefik would not take.
Result<adapters::traefik::TraefikRouterOptions> traefikOptions(const TraefikSettings &given);

// The Cloudflare router's options with stateDir (empty: the install sets it), the token read from its file, cloudflared
// found on PATH when named without a slash; Invalid, at the setting's where, for a missing or malformed id, a token
// missing or in a file others may read, an http:// API off loopback, a cloudflared that is not there.
Result<adapters::cloudflare::CloudflareRouterOptions> cloudflareOptions(const CloudflareSettings &given,
                                                                        const QString &stateDir);

} // namespace pando::wiring
