// Where a teammate's port-forward (GET /api/v1/apps/{name}/tunnel, `pando apps forward`) leads:
// the app's stable route on this machine's loopback, the same port its URL names here. The rule
// lives here rather than in the server so that every way in (API, desktop) asks one place.

#include "core/engine/engineprivate.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Result<quint16> Engine::tunnelPort(const QString &app)
{
    if (auto row = AppRepository(d->db).find(app); !row)
        return std::unexpected(row.error());
    const std::optional<adapters::Route> route = d->router->route(app);
    if (!route || route->port <= 0 || route->port > 65535)
        return fail(ErrorCode::Conflict, u"app %1 has no route yet: it was never deployed here"_s.arg(app), u"app"_s,
                    u"deploy it first (pando deploy %1)"_s.arg(app));
    // The stable port answers only while it leads somewhere; a tunnel to it would open and fail.
    if (route->backendHost.isEmpty() || route->backendPort <= 0)
        return fail(ErrorCode::Conflict, u"app %1 is not running: its route leads to no container"_s.arg(app), u"app"_s,
                    u"deploy it again (pando deploy %1)"_s.arg(app));
    return quint16(route->port);
}

Result<quint16> Engine::openTunnel(const QString &app, const Actor &actor)
{
    auto port = tunnelPort(app);
    if (!port)
        return port;
    // Who reached which app through the server is the install's business: no tunnel opens that
    // the audit log does not show.
    if (auto audited = d->audit.record(actor, u"app.tunnel"_s, u"app/%1"_s.arg(app), u"success"_s, QJsonObject{});
        !audited)
        return std::unexpected(audited.error());
    return port;
}

} // namespace pando::core
