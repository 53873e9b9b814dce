#include "app/wiring/enginesettings.h"
#include "app/wiring/auditwiring.h"
#include "app/wiring/edgesettings.h"

#include <QRegularExpression>

namespace pando::wiring {

namespace {

// The whole number in text, within [low, high].
Result<int> number(const QString &text, int low, int high, const QString &where)
{
    bool ok = false;
    const int n = text.trimmed().toInt(&ok);
    if (!ok || n < low || n > high)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("expected a number from %1 to %2, got \"%3\"").arg(low).arg(high).arg(text), where);
    return n;
}

} // namespace

std::optional<qint64> parseDuration(const QString &text)
{
    static const QRegularExpression pattern(QStringLiteral("^([0-9]{1,9})(s|m|h|d)$"));
    const QRegularExpressionMatch match = pattern.match(text.trimmed());
    if (!match.hasMatch())
        return std::nullopt;
    const qint64 n = match.captured(1).toLongLong();
    const QString unit = match.captured(2);
    const qint64 unitMs = unit == QLatin1String("s")   ? 1000
                          : unit == QLatin1String("m") ? 60'000
                          : unit == QLatin1String("h") ? 3'600'000
                                                       : 86'400'000;
    return n * unitMs;
}

Result<EngineChoices> checkEngineSettings(const EngineSettings &settings, const QString &prefix)
{
    EngineChoices choices;
    if (!settings.appLimit.isEmpty()) {
        auto n = number(settings.appLimit, 0, 100000, prefix + QStringLiteral("app-limit"));
        if (!n)
            return std::unexpected(n.error());
        choices.appLimit = *n;
    }
    if (!settings.maxRuns.isEmpty()) {
        auto n = number(settings.maxRuns, 1, 256, prefix + QStringLiteral("max-runs"));
        if (!n)
            return std::unexpected(n.error());
        choices.maxRuns = *n;
    }
    if (!settings.approvalPolicy.isEmpty()) {
        auto loaded = core::policy::loadPolicy(settings.approvalPolicy);
        if (!loaded) {
            Error e = loaded.error();
            e.where = prefix + QStringLiteral("approval-policy ") + e.where;
            return std::unexpected(e);
        }
        choices.approvalPolicy = *loaded;
    }
    if (!settings.approvalTtl.isEmpty()) {
        const std::optional<qint64> ttl = parseDuration(settings.approvalTtl);
        if (!ttl || *ttl < 60'000)
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected a duration of at least a minute such as 30m, 24h or 7d, got \"%1\"")
                            .arg(settings.approvalTtl),
                        prefix + QStringLiteral("approval-ttl"));
        choices.approvalTtlMs = *ttl;
    }
    if (!settings.auditSinks.isEmpty()) {
        if (auto checked = checkAuditSinks(settings.auditSinks); !checked) {
            Error e = checked.error();
            e.where = prefix + QStringLiteral("audit-sinks ") + e.where;
            return std::unexpected(e);
        }
        choices.auditSinks = settings.auditSinks;
    }
    if (!settings.edge.isEmpty()) {
        static const QHash<QString, EdgeChoice> edges{{QStringLiteral("auto"), EdgeChoice::Auto},
                                                      {QStringLiteral("caddy"), EdgeChoice::Caddy},
                                                      {QStringLiteral("in-process"), EdgeChoice::InProcess},
                                                      {QStringLiteral("traefik"), EdgeChoice::Traefik},
                                                      {QStringLiteral("cloudflare"), EdgeChoice::Cloudflare}};
        if (!edges.contains(settings.edge))
            return fail(ErrorCode::Invalid,
                        QStringLiteral("expected auto, caddy, in-process, traefik or cloudflare, got \"%1\"")
                            .arg(settings.edge),
                        prefix + QStringLiteral("edge"));
        choices.edge = edges.value(settings.edge);
    }
    const auto given = [&](const QString &name) {
        return Given{settings.edgeOptions->value(name).trimmed(), prefix + name};
    };
    if (choices.edge == EdgeChoice::Traefik && settings.edgeOptions) {
        auto traefik = traefikOptions({given(QStringLiteral("traefik-dir")), given(QStringLiteral("traefik-resolver")),
                                       given(QStringLiteral("traefik-certs"))});
        if (!traefik)
            return std::unexpected(traefik.error());
        choices.traefik = *traefik;
    }
    if (choices.edge == EdgeChoice::Cloudflare && settings.edgeOptions) {
        CloudflareSettings cloudflare{given(QStringLiteral("cloudflare-account")),
                                      given(QStringLiteral("cloudflare-tunnel")),
                                      given(QStringLiteral("cloudflare-zone")),
                                      given(QStringLiteral("cloudflare-token-file")),
                                      given(QStringLiteral("cloudflare-api")),
                                      given(QStringLiteral("cloudflared")),
                                      {}};
        auto options = cloudflareOptions(cloudflare, {});
        if (!options)
            return std::unexpected(options.error());
        choices.cloudflare = *options;
    }
    return choices;
}

} // namespace pando::wiring
