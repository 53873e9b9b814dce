#include "deploylogfollow.h"

#include "websocketsession.h"
#include "whenready.h"

#include "core/deploy/deploylogfeed.h"
#include "core/engine/engine.h"

#include <QThreadPool>
#include <QWebSocket>
#include <QtConcurrent/QtConcurrentRun>
#include <optional>

namespace pando::server::detail {

namespace {
constexpr int SafetyCheckMs = 5000;
constexpr int StepLines = 5000; // what the store keeps of a step at most
} // namespace

struct DeployLogFollow::Loaded {
    std::optional<Error> error;
    core::DeployStatus status = core::DeployStatus::Queued;
    QString deployError;
    QList<core::StepRecord> steps;
    QHash<int, QList<core::StepLogLine>> lines; // by step
};

DeployLogFollow::DeployLogFollow(core::Engine &engine, WebSocketSession &session, QString deployId, QThreadPool &pool)
    : QObject(&session), m_engine(engine), m_session(session), m_socket(session.socket()),
      m_deployId(std::move(deployId)), m_pool(pool)
{
    m_safety.setInterval(SafetyCheckMs);
    connect(&m_safety, &QTimer::timeout, this, &DeployLogFollow::checkStatus);
    connect(m_socket, &QWebSocket::bytesWritten, this, &DeployLogFollow::pump);
}

DeployLogFollow::~DeployLogFollow()
{
    // Under the feed's lock: no line is handed to this follow once it is gone.
    if (m_joinId != 0)
        m_engine.deployLogFeed()->leave(m_joinId);
}

void DeployLogFollow::start()
{
    // Joined before the store is read, so that a line printed in between is in one or the other.
    core::DeployLogFeed::Joined joined =
        m_engine.deployLogFeed()->join(m_deployId, [this](const QList<core::StepLogLine> &lines) {
            QMetaObject::invokeMethod(
                this, [this, lines] { onLines(lines); }, Qt::QueuedConnection);
        });
    m_joinId = joined.id;
    m_early.append(Pending{std::nullopt, std::move(joined.unstored)});
    connect(m_engine.events(), &core::EventBus::published, this, &DeployLogFollow::onEvent);
    load();
}

void DeployLogFollow::load()
{
    m_loading = true;
    core::Engine *engine = &m_engine;
    const QString id = m_deployId;
    whenReady(QtConcurrent::run(&m_pool,
                                [engine, id] {
                                    Loaded result;
                                    // The status first: a deploy that had ended then has all its
                                    // lines in the store.
                                    auto view = engine->deployView(id);
                                    if (!view) {
                                        result.error = view.error();
                                        return result;
                                    }
                                    result.status = view->record.status;
                                    result.deployError = view->record.error;
                                    result.steps = view->steps;
                                    for (const core::StepRecord &step : std::as_const(view->steps)) {
                                        auto lines = engine->deployLog(id, step.seq, 0, StepLines);
                                        if (!lines) {
                                            result.error = lines.error();
                                            return result;
                                        }
                                        result.lines.insert(step.seq, *lines);
                                    }
                                    return result;
                                }),
              this, [this](const Loaded &result) { loaded(result); });
}

void DeployLogFollow::loaded(const Loaded &result)
{
    m_loading = false;
    if (m_done)
        return;
    if (result.error)
        return closeWith(*result.error);
    // A running step is announced before its lines, an ended one after them.
    for (const core::StepRecord &step : result.steps) {
        const bool running = step.status == core::DeployStepStatus::Running;
        if (running)
            takeStep(step);
        for (const core::StepLogLine &line : result.lines.value(step.seq))
            take(line, false);
        if (!running)
            takeStep(step);
    }
    for (const Pending &early : std::exchange(m_early, {})) {
        if (early.step)
            takeStep(*early.step);
        for (const core::StepLogLine &line : early.lines)
            take(line, true);
    }
    if (core::isFinished(result.status))
        m_ended = Ended{core::toString(result.status), result.deployError};
    finishOnceStepsEnded();
    if (!m_done)
        m_safety.start();
}

void DeployLogFollow::finishOnceStepsEnded()
{
    // A deploy succeeds once its new version serves, while its retire step still runs: the
    // follow ends with the last step's end.
    if (!m_ended)
        return;
    for (const std::optional<core::DeployStepStatus> &status : std::as_const(m_stepSent))
        if (status == core::DeployStepStatus::Running)
            return;
    finishWith(m_ended->status, m_ended->error);
}

void DeployLogFollow::checkStatus()
{
    if (m_done || m_loading || m_checking)
        return;
    m_checking = true;
    core::Engine *engine = &m_engine;
    const QString id = m_deployId;
    whenReady(QtConcurrent::run(&m_pool, [engine, id] { return engine->deployView(id); }), this,
              [this](const Result<core::DeployView> &view) {
                  m_checking = false;
                  if (m_done)
                      return;
                  if (!view)
                      return closeWith(view.error());
                  // Ended: read the store once more before saying so, since a step's last state
                  // (and its last lines) may be stored before their events reach this thread.
                  if (core::isFinished(view->record.status))
                      load();
              });
}

void DeployLogFollow::onLines(const QList<core::StepLogLine> &lines)
{
    if (m_done)
        return;
    if (m_loading) {
        m_early.append(Pending{std::nullopt, lines});
        return;
    }
    for (const core::StepLogLine &line : lines)
        take(line, true);
}

void DeployLogFollow::onEvent(const core::Event &event)
{
    if (m_done || event.deployId != m_deployId)
        return;
    // A step's lines came through the feed before the event of its end, and all of them before
    // the deploy's end: both are published after, from the same thread.
    if (event.type == core::EventType::DeployStep) {
        const QJsonObject &data = event.data;
        core::StepRecord step;
        step.seq = data.value(QStringLiteral("seq")).toInt();
        step.name = data.value(QStringLiteral("name")).toString();
        step.status = core::parseDeployStepStatus(data.value(QStringLiteral("status")).toString())
                          .value_or(core::DeployStepStatus::Running);
        step.detail = data.value(QStringLiteral("detail")).toString();
        step.startedMs = qint64(data.value(QStringLiteral("started_ms")).toDouble());
        step.finishedMs = qint64(data.value(QStringLiteral("finished_ms")).toDouble());
        if (m_loading)
            m_early.append(Pending{step, {}});
        else
            takeStep(step);
        return;
    }
    if (event.type == core::EventType::DeploySucceeded || event.type == core::EventType::DeployFailed)
        checkStatus();
}

void DeployLogFollow::takeStep(const core::StepRecord &step)
{
    // The store and the events may both tell of a step's state: each state is sent once.
    std::optional<core::DeployStepStatus> &sent = m_stepSent[step.seq];
    if (sent == step.status)
        return;
    sent = step.status;
    queue(QJsonObject{{QStringLiteral("progress"), core::toJson(step)}});
    finishOnceStepsEnded();
}

void DeployLogFollow::take(const core::StepLogLine &line, bool fromFeed)
{
    int &sent = m_sent[line.seq];
    if (line.line <= sent)
        return;
    if (fromFeed && line.line > sent + 1) {
        core::StepLogLine note{line.seq, line.line - 1, line.timeMs, false,
                               QStringLiteral("… %1 lines left out …").arg(line.line - sent - 1)};
        queue(core::toJson(note));
    }
    sent = line.line;
    queue(core::toJson(line));
}

void DeployLogFollow::queue(const QJsonObject &message)
{
    m_out.push_back(message);
    if (qsizetype(m_out.size()) > MaxQueued) {
        m_done = true;
        m_out.clear();
        qWarning("dropping a follower of deploy %s: %lld lines wait to go to it", qPrintable(m_deployId),
                 static_cast<long long>(MaxQueued));
        m_socket->abort();
        return;
    }
    pump();
}

void DeployLogFollow::pump()
{
    // A client that closed takes nothing more.
    if (m_socket->state() != QAbstractSocket::ConnectedState) {
        m_done = true;
        m_out.clear();
        return;
    }
    const qint64 bound = m_session.maxPendingBytes() > 0 ? m_session.maxPendingBytes() / 2 : 0;
    while (!m_out.empty() && (bound == 0 || m_session.pendingBytes() < bound)) {
        m_session.send(m_out.front());
        m_out.pop_front();
    }
    if (m_out.empty() && m_done)
        m_socket->close(QWebSocketProtocol::CloseCodeNormal, QStringLiteral("the deploy ended"));
}

void DeployLogFollow::finishWith(const QString &status, const QString &error)
{
    if (m_done)
        return;
    m_done = true;
    m_safety.stop();
    disconnect(m_engine.events(), nullptr, this, nullptr);
    QJsonObject finished{{QStringLiteral("finished"), status}};
    if (!error.isEmpty())
        finished.insert(QStringLiteral("error"), error);
    m_out.push_back(finished);
    pump();
}

void DeployLogFollow::closeWith(const Error &error)
{
    m_done = true;
    m_safety.stop();
    m_socket->close(closeCodeFor(error.code), error.text());
}

} // namespace pando::server::detail
