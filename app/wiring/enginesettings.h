#pragma once
// The engine's settings an operator chooses — the app limit, pipeline runs at once, the approval
// policy and how long an approval waits, the audit sinks, the edge — read one way whether they come as
// pandod's flags or from the desktop's Settings view: each value is checked here, and an error
// names the setting ("app-limit", or "--app-limit" with pandod's prefix) and what was expected.
//
// Threading: pure functions of their arguments and the files they name.

#include "adapters/api/error.h"
#include "adapters/routing/cloudflare/cloudflareconfig.h"
#include "adapters/routing/traefik/traefikconfig.h"
#include "core/policy/policy.h"

#include <QMap>
#include <QString>
#include <optional>

namespace pando::wiring {

// Each as text, as a person typed it; empty: the default (and the setting is left alone).
struct EngineSettings {
    QString appLimit;       // apps a member may own: 0 to 100000 (default 10)
    QString maxRuns;        // pipeline runs at once: 1 to 256 (default 4)
    QString approvalPolicy; // a JSON policy file (docs/user-guide.md, Approvals); default: none wait
    QString approvalTtl;    // how long a deploy waits for sign-off: a duration ≥ 1m such as 24h
    QString auditSinks;     // a JSON file of audit sinks (docs/audit.md)
    QString edge;           // what serves the apps: auto, caddy, in-process, traefik or cloudflare (docs/edge.md)
    // The Traefik and Cloudflare edges' own settings, by the name of pandod's flag ("traefik-dir",
    // "cloudflare-account", ...; edgesettings.h); only the chosen edge's are read. nullopt: they
    // come another way (pandod's flags).
    std::optional<QMap<QString, QString>> edgeOptions;

    bool operator==(const EngineSettings &) const = default;
};

// What serves the apps' routes (docs/edge.md): Caddy in a process of its own, so apps keep
// answering while Pando is stopped, when it is installed (Auto) or always (Caddy, an error
// without it); a proxy in Pando's own process, with which apps stop answering when it stops; or
// a Traefik the user runs, for which Pando writes configuration (Traefik, given its directory); or
// a Cloudflare Tunnel whose ingress Pando manages through Cloudflare's API (Cloudflare, given the
// account, tunnel, zone and an API token).
enum class EdgeChoice { Auto, Caddy, InProcess, Traefik, Cloudflare };

// "90s", "30m", "24h", "7d"; nullopt for anything else.
std::optional<qint64> parseDuration(const QString &text);

// The settings once checked: what each one set, nothing for one left at its default.
struct EngineChoices {
    std::optional<int> appLimit;
    std::optional<int> maxRuns;
    std::optional<core::policy::Policy> approvalPolicy;
    std::optional<qint64> approvalTtlMs;
    QString auditSinks;
    std::optional<EdgeChoice> edge;
    // The chosen edge's options, when it is Traefik or Cloudflare and they came with the settings
    // (pandod reads its own flags instead).
    std::optional<adapters::traefik::TraefikRouterOptions> traefik;
    std::optional<adapters::cloudflare::CloudflareRouterOptions> cloudflare;

    // Into pandod's, the desktop's or the composition root's options: each has appLimit,
    // maxRuns, auditSinks, edge and the engine's options.
    template<typename Options> void applyTo(Options &options) const
    {
        if (appLimit)
            options.appLimit = *appLimit;
        if (maxRuns)
            options.maxRuns = *maxRuns;
        if (approvalPolicy)
            options.engine.approvalPolicy = *approvalPolicy;
        if (approvalTtlMs)
            options.engine.approvalTtlMs = *approvalTtlMs;
        if (!auditSinks.isEmpty())
            options.auditSinks = auditSinks;
        if (edge)
            options.edge = *edge;
        if constexpr (requires { options.traefik = *traefik; })
            if (traefik)
                options.traefik = *traefik;
        if constexpr (requires { options.cloudflare = *cloudflare; })
            if (cloudflare)
                options.cloudflare = *cloudflare;
    }
};

// Checks every setting (reading the policy and sinks files). prefix goes before each setting's
// name in an error's "where" ("--" for pandod's flags).
Result<EngineChoices> checkEngineSettings(const EngineSettings &settings, const QString &prefix = {});

} // namespace pando::wiring
