#include "runfollow.h"

#include "websocketsession.h"
#include "whenready.h"

#include "pipelinehandlers.h"

#include "core/engine/engine.h"
#include "core/pipelines/service/pipelineservice.h"

#include <QJsonDocument>
#include <QThreadPool>
#include <QWebSocket>
#include <QtConcurrent/QtConcurrentRun>
#include <optional>

namespace pando::server::detail {

namespace {
constexpr int PageSize = 1000;
} // namespace

struct RunFollow::Loaded {
    std::optional<Error> error;
    core::RunStatus status = core::RunStatus::Queued;
    QList<core::RunEventRecord> events;
};

RunFollow::RunFollow(core::Engine &engine, WebSocketSession &session, QString runId, qint64 afterSeq, QThreadPool &pool)
    : QObject(&session), m_engine(engine), m_session(session), m_socket(session.socket()), m_runId(std::move(runId)),
      m_lastSeq(afterSeq), m_pool(pool)
{}

void RunFollow::start()
{
    if (!m_engine.pipelines()) {
        m_done = true;
        m_socket->close(closeCode(StreamClose::Unavailable), pipelineapi::notEnabled().message);
        return;
    }
    // Subscribed before the store is read, so nothing published in between is lost; what is
    // both stored and published is sent once, by seq.
    connect(m_engine.events(), &core::EventBus::published, this, &RunFollow::onEvent);
    load();
}

void RunFollow::load()
{
    m_loading = true;
    core::pipelines::PipelineService *service = m_engine.pipelines();
    if (!service) {
        loaded(Loaded{pipelineapi::notEnabled(), {}, {}});
        return;
    }
    const QString runId = m_runId;
    const qint64 after = m_lastSeq;
    QFuture<Loaded> loading = QtConcurrent::run(&m_pool, [service, runId, after] {
        Loaded result;
        // The status first: events stored before it are all in the store.
        auto tree = service->runTree(runId);
        if (!tree) {
            result.error = tree.error();
            return result;
        }
        result.status = tree->run.status;
        qint64 from = after;
        for (;;) {
            auto page = service->runEvents(runId, from, PageSize);
            if (!page) {
                result.error = page.error();
                return result;
            }
            result.events += *page;
            if (page->size() < PageSize)
                break;
            from = page->constLast().seq;
        }
        return result;
    });
    whenReady(std::move(loading), this, [this](const Loaded &result) { loaded(result); });
}

void RunFollow::loaded(const Loaded &result)
{
    m_loading = false;
    if (m_done)
        return;
    if (result.error) {
        m_done = true;
        m_socket->close(closeCodeFor(result.error->code), result.error->text());
        return;
    }
    for (const core::RunEventRecord &event : result.events) {
        if (event.seq <= m_lastSeq)
            continue;
        send(pipelineapi::eventJson(event));
        m_lastSeq = event.seq;
    }
    if (core::isFinished(result.status)) {
        finishWith(core::toString(result.status));
        return;
    }
    const QList<core::Event> pending = std::exchange(m_pending, {});
    for (const core::Event &event : pending) {
        if (m_loading || m_done) {
            m_pending.append(event);
            continue;
        }
        process(event);
    }
}

void RunFollow::onEvent(const core::Event &event)
{
    if (m_done || event.data.value(QStringLiteral("run")).toString() != m_runId)
        return;
    if (event.type != core::EventType::RunEvent && event.type != core::EventType::RunFinished)
        return;
    if (m_loading) {
        m_pending.append(event);
        return;
    }
    process(event);
}

void RunFollow::process(const core::Event &event)
{
    if (event.type == core::EventType::RunFinished) {
        finishWith(event.data.value(QStringLiteral("status")).toString());
        return;
    }
    const qint64 seq = qint64(event.data.value(QStringLiteral("seq")).toDouble());
    if (seq <= m_lastSeq)
        return;
    if (seq > m_lastSeq + 1) {
        // Some events were stored but not seen here (published before the subscription, or
        // dropped): read them from the store, this one included.
        m_pending.append(event);
        load();
        return;
    }
    send(QJsonObject{{QStringLiteral("seq"), seq},
                     {QStringLiteral("time_ms"), event.timeMs},
                     {QStringLiteral("step"), event.data.value(QStringLiteral("step")).toString()},
                     {QStringLiteral("type"), event.data.value(QStringLiteral("type")).toString()},
                     {QStringLiteral("data"), event.data.value(QStringLiteral("data")).toObject()}});
    m_lastSeq = seq;
}

void RunFollow::send(const QJsonObject &message)
{
    m_session.send(message);
}

void RunFollow::finishWith(const QString &status)
{
    if (m_done)
        return;
    m_done = true;
    disconnect(m_engine.events(), nullptr, this, nullptr);
    send(QJsonObject{{QStringLiteral("finished"), status}});
    m_socket->close(QWebSocketProtocol::CloseCodeNormal, QStringLiteral("the run finished"));
}

} // namespace pando::server::detail
