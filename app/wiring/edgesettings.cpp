#include "app/wiring/edgesettings.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

#include <tuple>

using namespace Qt::StringLiterals;

namespace pando::wiring {

Result<adapters::traefik::TraefikRouterOptions> traefikOptions(const TraefikSettings &given)
{
    adapters::traefik::TraefikRouterOptions o;
    if (given.dir.value.isEmpty())
        return fail(ErrorCode::Invalid, u"the Traefik edge needs the directory Traefik's file provider watches"_s,
                    given.dir.where, u"name it (docs/edge.md, Traefik)"_s);
    o.configDir = QDir(given.dir.value).absolutePath();
    if (!given.resolver.value.isEmpty()) {
        static const QRegularExpression resolverName(u"^[A-Za-z0-9_-]{1,64}$"_s);
        if (!resolverName.match(given.resolver.value).hasMatch())
            return fail(ErrorCode::Invalid,
                        u"expected a certificatesResolvers name (letters, digits, - and _), got \"%1\""_s.arg(
                            given.resolver.value),
                        given.resolver.where);
        o.certResolver = given.resolver.value;
    }
    if (!given.certs.value.isEmpty())
        o.certificatesDir = QDir(given.certs.value).absolutePath();
    return o;
}

Result<adapters::cloudflare::CloudflareRouterOptions> cloudflareOptions(const CloudflareSettings &given,
                                                                        const QString &stateDir)
{
    adapters::cloudflare::CloudflareRouterOptions o;
    o.accountId = given.account.value;
    o.tunnelId = given.tunnel.value;
    o.zoneId = given.zone.value;
    if (!given.api.value.isEmpty())
        o.apiBase = given.api.value;
    // The install names the directory when it is not known yet; checked as if it were.
    o.stateDir = stateDir.isEmpty() ? u"."_s : stateDir;
    for (const auto &[setting, what] :
         {std::tuple{&given.account, "the account id"}, std::tuple{&given.tunnel, "the tunnel's id"},
          std::tuple{&given.zone, "the zone's id"}})
        if (setting->value.isEmpty())
            return fail(ErrorCode::Invalid, u"the Cloudflare edge needs %1"_s.arg(QLatin1StringView(what)),
                        setting->where, u"docs/edge.md, Cloudflare Tunnel, says where to find it"_s);
    if (auto checked = adapters::cloudflare::detail::checkOptions(o); !checked) {
        // The router names its options as pandod's flags are named; say where each was given.
        Error e = checked.error();
        for (const auto &[name, setting] :
             {std::pair{"cloudflare-account", &given.account}, std::pair{"cloudflare-tunnel", &given.tunnel},
              std::pair{"cloudflare-zone", &given.zone}, std::pair{"cloudflare-api", &given.api}})
            if (e.where == QLatin1StringView(name))
                e.where = setting->where;
        return std::unexpected(e);
    }
    if (given.tokenFile.value.isEmpty()) {
        o.apiToken = given.token;
        if (o.apiToken.isEmpty())
            return fail(ErrorCode::Invalid, u"the Cloudflare edge needs an API token"_s, given.tokenFile.where,
                        u"name a file (mode 0600) that holds it; never put the token itself in a flag or setting"_s);
    } else {
        o.apiTokenFile = QFileInfo(given.tokenFile.value).absoluteFilePath();
        if (auto token = adapters::cloudflare::detail::readApiToken(o.apiTokenFile); !token) {
            Error e = token.error();
            e.where = given.tokenFile.where;
            return std::unexpected(e);
        }
    }
    if (const QString &binary = given.cloudflared.value; !binary.isEmpty()) {
        const QString found = binary.contains(u'/') ? (QFileInfo(binary).isExecutable() ? binary : QString())
                                                    : QStandardPaths::findExecutable(binary);
        if (found.isEmpty())
            return fail(ErrorCode::Invalid, u"cloudflared (%1) is not there or not executable"_s.arg(binary),
                        given.cloudflared.where,
                        u"install cloudflared from Cloudflare (Debian does not package it), or leave it out and run "
                        "cloudflared yourself"_s);
        o.cloudflaredBinary = QFileInfo(found).absoluteFilePath();
    }
    o.stateDir = stateDir;
    return o;
}

} // namespace pando::wiring
