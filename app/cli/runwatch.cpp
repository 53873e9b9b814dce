// Following a pipeline run to its end (`jobs trigger --watch`, `runs watch`): the run's events
// over the follow WebSocket (stored ones first, then live ones), each step printed as it starts
// and ends and each output line prefixed with its step's name. If the socket cannot be had, the
// same events are polled. The exit code says how the run ended.

#include "cli.h"
#include "output.h"

#include "core/vocab/vocab.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <QWebSocket>

namespace pando::cli {
namespace {

constexpr int RunPollIntervalMs = 500;
constexpr int EventPage = 1000;
constexpr int MaxRunPollErrors = 5;

// A status this CLI does not know (a newer server's) is not taken for an end: the watch goes on.
bool isRunOver(const QString &status)
{
    const std::optional<core::RunStatus> known = core::parseRunStatus(status);
    return known && core::isFinished(*known);
}

// The innermost step that failed or errored, depth first: where to look.
QJsonObject failedStep(const QJsonArray &steps)
{
    for (const QJsonValue value : steps) {
        const QJsonObject step = value.toObject();
        const std::optional<core::RunStepStatus> status = core::parseRunStepStatus(str(step, "status"));
        if (status != core::RunStepStatus::Failed && status != core::RunStepStatus::Errored)
            continue;
        const QJsonObject inner = failedStep(step.value(QStringLiteral("children")).toArray());
        return inner.isEmpty() ? step : inner;
    }
    return {};
}

QString compact(const QJsonObject &o)
{
    return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

// One run followed to its end; a child of the Cli, living as long as the command.
class RunWatch : public QObject {
public:
    RunWatch(Cli &cli, QString runId) : QObject(&cli), m_cli(cli), m_runId(std::move(runId)) {}
    void start();

private:
    void onRunMessage(const QJsonObject &message);
    void onRunEvent(const QJsonObject &event);
    void startRunPolling();
    void pollRun();
    void pollRunEvents(const QString &status);
    void endRun();
    void showRunEnd(const QJsonObject &run);

    Cli &m_cli;
    QString m_runId;
    qint64 m_lastSeq = 0;
    int m_pollErrors = 0;
    QHash<QString, QString> m_stepShown; // step id → "status/attempt" last printed
    QHash<QString, int> m_stepDepth;     // step id → nesting depth
    QHash<QString, QString> m_stepLabel; // step id → "task unit"
    QString m_finishedAs;                // the status the follow stream ended with
    QTimer *m_pollTimer = nullptr;
};

void RunWatch::start()
{
    m_cli.setOnInterrupt([runId = m_runId] {
        printErr(QStringLiteral("pando: stopped watching; run %1 goes on (pando runs watch %1)").arg(runId));
    });
    m_pollTimer = new QTimer(this);
    m_pollTimer->setSingleShot(true);
    connect(m_pollTimer, &QTimer::timeout, this, &RunWatch::pollRun);
    QWebSocket *stream = m_cli.api().followRun(
        m_runId, m_lastSeq, [this](const QJsonObject &message) { onRunMessage(message); },
        [this](const Status &closed) {
            if (m_cli.isFinished())
                return;
            if (!closed) {
                const ErrorCode code = closed.error().code;
                if (code == ErrorCode::NotFound || code == ErrorCode::Unauthorized || code == ErrorCode::Forbidden)
                    return m_cli.failWith(closed.error());
                // No stream (an older server, a proxy without WebSockets): look every so often.
                return startRunPolling();
            }
            if (!m_finishedAs.isEmpty())
                return endRun();
            startRunPolling();
        });
    m_cli.own(stream);
}

void RunWatch::onRunMessage(const QJsonObject &message)
{
    if (m_cli.isFinished())
        return;
    if (message.contains(QStringLiteral("finished"))) {
        m_finishedAs = str(message, "finished");
        return;
    }
    onRunEvent(message);
}

void RunWatch::onRunEvent(const QJsonObject &event)
{
    const qint64 seq = num(event, "seq");
    if (seq <= m_lastSeq)
        return;
    m_lastSeq = seq;
    if (m_cli.args().json) {
        printOut(compact(event));
        return;
    }
    const QString stepId = str(event, "step");
    const QJsonObject data = event.value(QStringLiteral("data")).toObject();
    const QString type = str(event, "type");
    if (type == QLatin1String("step")) {
        const QString parent = str(data, "parent");
        const int depth = !parent.isEmpty() && m_stepDepth.contains(parent) ? m_stepDepth.value(parent) + 1 : 0;
        m_stepDepth.insert(stepId, depth);
        const QString kind = str(data, "kind");
        const QString name = str(data, "name");
        const QString label = name.isEmpty() || name == kind ? kind : kind + QLatin1Char(' ') + name;
        m_stepLabel.insert(stepId, name.isEmpty() ? kind : name);
        const QString statusText = str(data, "status");
        const std::optional<core::RunStepStatus> status = core::parseRunStepStatus(statusText);
        const int attempt = int(num(data, "attempt"));
        const QString shownKey = statusText + QLatin1Char('/') + QString::number(attempt);
        if (status == core::RunStepStatus::Pending || m_stepShown.value(stepId) == shownKey)
            return;
        m_stepShown.insert(stepId, shownKey);
        const QString indent(qsizetype{2} * (depth + 1), QLatin1Char(' '));
        const QString attemptText = attempt > 1 ? QStringLiteral(" (attempt %1)").arg(attempt) : QString();
        if (status == core::RunStepStatus::Running) {
            printOut(indent + QStringLiteral("… ") + label + attemptText);
            return;
        }
        if (status == core::RunStepStatus::Waiting) { // an approve step: its error says how to settle it
            printOut(indent + QStringLiteral("⏸ %1  %2").arg(label, str(data, "error")));
            return;
        }
        QString line;
        if (status == core::RunStepStatus::Cached)
            line = QStringLiteral("↷ %1  unchanged").arg(label);
        else if (status == core::RunStepStatus::Skipped)
            line = QStringLiteral("- %1  skipped").arg(label);
        else if (status == core::RunStepStatus::Succeeded)
            line = QStringLiteral("✓ %1  %2").arg(label, duration(num(data, "duration_ms")));
        else
            line = QStringLiteral("✗ %1  %2  %3").arg(label, duration(num(data, "duration_ms")), statusText);
        if (data.contains(QStringLiteral("exit_code")) && status != core::RunStepStatus::Succeeded &&
            status != core::RunStepStatus::Cached)
            line += QStringLiteral("  exit %1").arg(num(data, "exit_code"));
        line += attemptText;
        if (!str(data, "error").isEmpty())
            line += QStringLiteral(": ") + str(data, "error");
        printOut(indent + line);
        return;
    }
    if (type == QLatin1String("output")) {
        const int depth = m_stepDepth.value(stepId, 0);
        QString name = m_stepLabel.value(stepId);
        if (name.isEmpty()) // a step we have not seen start: its id ends with the name
            name = stepId.section(QLatin1Char(':'), -1);
        const QString mark =
            str(data, "stream") == QLatin1String("stderr") ? QStringLiteral(" ! ") : QStringLiteral(" | ");
        printOut(QString(qsizetype{2} * (depth + 2), QLatin1Char(' ')) + name + mark + str(data, "text"));
    }
}

void RunWatch::startRunPolling()
{
    if (m_cli.isFinished() || m_pollTimer->isActive())
        return;
    pollRun();
}

void RunWatch::pollRun()
{
    // The run's status first: the events it recorded before that status are all stored.
    if (m_cli.isFinished())
        return;
    m_cli.api().run(m_runId, [this](const Result<client::ApiResponse> &r) {
        if (m_cli.isFinished())
            return;
        if (!r) {
            if (++m_pollErrors >= MaxRunPollErrors || r.error().code == ErrorCode::NotFound ||
                r.error().code == ErrorCode::Unauthorized)
                return m_cli.failWith(r.error());
            m_pollTimer->start(RunPollIntervalMs);
            return;
        }
        m_pollErrors = 0;
        pollRunEvents(str(r->json, "status"));
    });
}

void RunWatch::pollRunEvents(const QString &status)
{
    m_cli.api().runEvents(m_runId, m_lastSeq, EventPage, [this, status](const Result<client::ApiResponse> &r) {
        if (m_cli.isFinished())
            return;
        if (!r) {
            if (++m_pollErrors >= MaxRunPollErrors || r.error().code == ErrorCode::NotFound)
                return m_cli.failWith(r.error());
            m_pollTimer->start(RunPollIntervalMs);
            return;
        }
        const QJsonArray events = r->json.value(QStringLiteral("events")).toArray();
        for (const QJsonValue event : events)
            onRunEvent(event.toObject());
        if (events.size() >= EventPage)
            return pollRunEvents(status);
        if (isRunOver(status)) {
            m_finishedAs = status;
            return endRun();
        }
        m_pollTimer->start(RunPollIntervalMs);
    });
}

void RunWatch::endRun()
{
    m_cli.api().run(m_runId, m_cli.handle([this](const client::ApiResponse &r) { showRunEnd(r.json); }));
}

void RunWatch::showRunEnd(const QJsonObject &run)
{
    const QString statusText = str(run, "status");
    const std::optional<core::RunStatus> status = core::parseRunStatus(statusText);
    const QString id = str(run, "id");
    const QString title =
        QStringLiteral("%1/%2 #%3").arg(str(run, "pipeline"), str(run, "job")).arg(num(run, "number"));
    if (m_cli.args().json)
        printOut(compact(run));
    else if (const qint64 removed = num(run, "log_removed_ms"); removed > 0)
        printErr(logRemovedNote(removed));
    if (status == core::RunStatus::Succeeded) {
        if (!m_cli.args().json)
            printOut(QStringLiteral("succeeded: %1 in %2").arg(title, duration(num(run, "duration_ms"))));
        return m_cli.finish(ExitOk);
    }
    const QJsonObject step = failedStep(run.value(QStringLiteral("steps")).toArray());
    QString message;
    int code = ExitFailed;
    if (status == core::RunStatus::Aborted) {
        message = QStringLiteral("%1 was aborted").arg(title);
        code = ExitRunAborted;
    } else {
        message = QStringLiteral("%1 %2").arg(
            title,
            core::toString(status == core::RunStatus::Errored ? core::RunStatus::Errored : core::RunStatus::Failed));
        if (status == core::RunStatus::Errored)
            code = ExitRunErrored;
        else if (status != core::RunStatus::Failed)
            message = QStringLiteral("%1 ended as \"%2\"").arg(title, statusText);
        if (!step.isEmpty())
            message += QStringLiteral(" at step ") + str(step, "name");
    }
    if (!str(run, "error").isEmpty())
        message += QStringLiteral(": ") + str(run, "error");
    m_cli.failWithCode(Error{status == core::RunStatus::Aborted ? ErrorCode::Cancelled : ErrorCode::Failed, message,
                             QStringLiteral("run ") + id,
                             QStringLiteral("see the whole run with: pando runs show %1").arg(id)},
                       code);
}

} // namespace

void watchRun(Cli &cli, const QString &runId)
{
    (new RunWatch(cli, runId))->start();
}

} // namespace pando::cli
