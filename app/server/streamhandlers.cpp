#include "streamhandlers.h"

#include "runfollow.h"
#include "websocketsession.h"

#include "core/accounts/accountservice.h"
#include "core/engine/engine.h"
#include "core/logstream/loghub.h"

#include <QDateTime>
#include <QHash>
#include <QUrlQuery>
#include <memory>
#include <optional>

namespace pando::server::streamapi {

namespace {

// The close code for "no such thing", as 404 is for HTTP.
constexpr auto CloseNotFound = static_cast<QWebSocketProtocol::CloseCode>(4404);

} // namespace

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
        call.session.close(CloseNotFound, known.error().text());
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

// What a watcher may see. The grants are read when the stream opens, again every few seconds
// (a grant taken away), and when an event about an object it does not see comes (a grant just
// given, an app it just created) unless that object was looked up in the last second.
class EventFilter {
public:
    EventFilter(core::Engine &engine, core::accounts::Principal principal)
        : m_engine(engine), m_principal(std::move(principal))
    {}
    bool sees(const core::Event &event)
    {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (!m_visible || now - m_readMs >= 5000)
            read(now);
        const core::authz::ObjectRef subject = m_engine.subjectOf(event);
        if (m_visible->sees(subject))
            return true;
        if (subject.kind == core::authz::ObjectKind::None || subject.name.isEmpty())
            return false;
        const QString key = subject.text();
        if (now - m_missedMs.value(key, 0) < 1000)
            return false;
        m_missedMs.insert(key, now);
        read(now);
        return m_visible->sees(subject);
    }

private:
    void read(qint64 now)
    {
        auto visible = m_engine.visibility(m_principal);
        // A store that cannot be read shows nothing rather than everything.
        m_visible = visible ? *visible : core::authz::Visibility{};
        m_readMs = now;
        if (m_missedMs.size() > 1000)
            m_missedMs.clear();
    }

    core::Engine &m_engine;
    core::accounts::Principal m_principal;
    std::optional<core::authz::Visibility> m_visible;
    qint64 m_readMs = 0;
    QHash<QString, qint64> m_missedMs; // object → when it was last looked up, not seen
};

void events(StreamCall &call)
{
    const QString app = QUrlQuery(call.url).queryItemValue(QStringLiteral("app"));
    detail::WebSocketSession *session = &call.session;
    auto filter = std::make_shared<EventFilter>(call.engine, call.principal);
    QObject::connect(call.engine.events(), &core::EventBus::published, session,
                     [session, app, filter](const core::Event &event) {
                         // Which tokens were revoked is for the server, not for every watcher.
                         if (event.type == core::EventType::TokenRevoked)
                             return;
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

} // namespace pando::server::streamapi
