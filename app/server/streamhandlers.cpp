#include "streamhandlers.h"

#include "appexec.h"
#include "apptunnel.h"
#include "deploylogfollow.h"
#include "replies.h"
#include "runfollow.h"
#include "serverstate.h"
#include "volumerestore.h"
#include "websocketsession.h"

#include "core/accounts/accountservice.h"
#include "core/engine/engine.h"
#include "core/engine/eventfilter.h"
#include "core/logstream/loghub.h"

#include <QUrlQuery>
#include <memory>

namespace pando::server::streamapi {

void followLogs(StreamCall &call)
{
    // The last N lines first, then the live ones, with nothing lost or repeated between the two.
    const QUrlQuery query(call.url);
    bool ok = true;
    const int tail =
        query.hasQueryItem(QStringLiteral("tail")) ? query.queryItemValue(QStringLiteral("tail")).toInt(&ok) : 0;
    if (!ok || tail < 0 || tail > core::LogHub::BacklogLimit) {
        call.session.close(
            QWebSocketProtocol::CloseCodeProtocolError,
            QStringLiteral("query.tail: must be a whole number from 0 to %1").arg(core::LogHub::BacklogLimit));
        return;
    }
    const QString app = call.args.value(0);
    auto known = call.engine.app(app);
    if (!known) {
        call.session.close(detail::closeCode(detail::StreamClose::NotFound), known.error().text());
        return;
    }
    detail::WebSocketSession *session = &call.session;
    std::shared_ptr<core::LogSubscription> subscription = call.engine.logs()->subscribe(app, tail);
    QObject::connect(subscription.get(), &core::LogSubscription::line, session,
                     [session](const adapters::LogLine &line) { session->send(core::toJson(line)); });
    QObject::connect(subscription.get(), &core::LogSubscription::ended, session, [session](const QString &reason) {
        session->send(QJsonObject{{QStringLiteral("ended"), reason}});
    });
    session->keep(std::move(subscription));
}

void events(StreamCall &call)
{
    const QString app = QUrlQuery(call.url).queryItemValue(QStringLiteral("app"));
    detail::WebSocketSession *session = &call.session;
    auto filter = std::make_shared<core::EventFilter>(call.engine, call.principal);
    QObject::connect(call.engine.events(), &core::EventBus::published, session,
                     [session, app, filter](const core::Event &event) {
                         if ((app.isEmpty() || event.app == app) && filter->sees(event))
                             session->send(event.toJson());
                     });
}

void followRun(StreamCall &call)
{
    const QUrlQuery query(call.url);
    bool ok = true;
    const qint64 after =
        query.hasQueryItem(QStringLiteral("after")) ? query.queryItemValue(QStringLiteral("after")).toLongLong(&ok) : 0;
    if (!ok || after < 0) {
        call.session.close(QWebSocketProtocol::CloseCodeProtocolError,
                           QStringLiteral("query.after: must be a whole number from 0"));
        return;
    }
    auto *follow = new detail::RunFollow(call.engine, call.session, call.args.value(0), after, call.pool);
    follow->start();
}

Reply tunnelReady(Call &call)
{
    // Read only, not audited: the opening is, once the socket is upgraded.
    if (auto port = call.engine.tunnelPort(call.args.value(0)); !port)
        return errorReply(port.error());
    return Reply{200, {}};
}

void followDeployLog(StreamCall &call)
{
    auto *follow = new detail::DeployLogFollow(call.engine, call.session, call.args.value(0), call.pool);
    follow->start();
}

void exec(StreamCall &call)
{
    new detail::AppExec(call.engine, call.session, call.args.value(0), call.actor);
}

void restoreVolume(StreamCall &call)
{
    new detail::VolumeRestore(call.engine, call.session, call.args.value(0), call.args.value(1), call.actor);
}

void tunnel(StreamCall &call)
{
    const QString app = call.args.value(0);
    const ConnectionLimits limits = call.limits ? *call.limits : ConnectionLimits{};
    detail::ServerState *server = call.server;
    const QString owner = call.principal.userId.isEmpty() ? call.principal.tokenId : call.principal.userId;
    if (server)
        if (std::optional<QString> refused = server->addTunnel(owner, limits.maxTunnels, limits.maxTunnelsPerUser)) {
            call.session.close(detail::closeCode(detail::StreamClose::TooMany), *refused);
            return;
        }
    auto release = [server, owner] {
        if (server)
            server->removeTunnel(owner);
    };
    // Checked again (the app may have stopped since the upgrade was allowed) and audited; the
    // store is written on the server's thread, as the upgrade's authorization reads it there.
    auto port = call.engine.openTunnel(app, call.actor);
    if (!port) {
        release();
        const ErrorCode code = port.error().code;
        const detail::StreamClose close = code == ErrorCode::NotFound   ? detail::StreamClose::NotFound
                                          : code == ErrorCode::Conflict ? detail::StreamClose::Conflict
                                                                        : detail::StreamClose::Unavailable;
        call.session.close(detail::closeCode(close), port.error().text());
        return;
    }
    new detail::AppTunnel(call.session, {app, *port, limits.tunnelConnectTimeoutMs, limits.tunnelIdleTimeoutMs},
                          std::move(release));
}

} // namespace pando::server::streamapi
