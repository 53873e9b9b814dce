// Following a deploy to its end (`deploy --wait`, `rollback --wait`, `deploys watch`): its steps
// printed as they start and end, woken by the app's events and polled as a fallback, and what
// each step prints as it prints it (`STEP | line`, from the deploy's log follow; --quiet leaves it
// out). Without that stream (--quiet, an older server), a failed step's last lines come before the
// error. The exit code says how the deploy ended.

#include "cli.h"
#include "output.h"

#include "core/vocab/vocab.h"

#include <QJsonArray>
#include <QTimer>
#include <QWebSocket>
#include <algorithm>

namespace pando::cli {
namespace {

constexpr int EventFallbackPollMs = 1000;
// How long the end waits for the output stream's last lines once the deploy is seen ended.
constexpr int OutputDrainMs = 2000;

// A status this CLI does not know (a newer server's) is not taken for an end: the watch goes on.
bool isTerminal(std::optional<core::DeployStatus> status)
{
    return status && core::isFinished(*status);
}

// `deploy --wait`: the deploy asked for until it ends, its steps printed as they start and end.
// How many of a failed step's last lines `deploy --wait` prints.
constexpr int FailedStepTail = 20;

// A step's output, its last `tail` lines, on stderr under a heading.
void printStepTail(const QJsonObject &log, const QString &step, int tail)
{
    const QJsonArray lines = log.value(QStringLiteral("lines")).toArray();
    if (lines.isEmpty())
        return;
    printErr(
        QStringLiteral("--- the last %1 lines of step %2 ---").arg(std::min<qsizetype>(tail, lines.size())).arg(step));
    for (qsizetype i = std::max<qsizetype>(0, lines.size() - tail); i < lines.size(); ++i)
        printErr(str(lines[i].toObject(), "text"));
    printErr(QStringLiteral("---"));
}

class DeployWatch : public QObject {
public:
    DeployWatch(Cli &cli, QString deployId) : QObject(&cli), m_cli(cli), m_deployId(std::move(deployId)) {}
    // Each event of the app's deploys is a reason to look now rather than at the next tick;
    // the timer still looks every so often, so a lost event or socket costs only latency.
    void start(const QString &app);

private:
    // Asks for the deploy now, or right after the request in flight answers.
    void requestPoll();
    void poll();
    // The steps as a poll sees them, printed unless the output stream tells of them.
    void showProgress(const QJsonObject &view);
    // A step's start (once) or end (once).
    void showStep(const QJsonObject &step);
    // What the output stream says: a line a step printed, a step's state, the end.
    void onOutput(const QJsonObject &message);
    void outputClosed();
    void printLine(int seq, const QString &text);
    bool streaming() const { return m_output && !m_outputBroken; }
    // The deploy ended: its output's last lines first (or a moment's wait for them), then how.
    void ended(const QJsonObject &view);
    void conclude(const QJsonObject &view);
    void concludeIfEnded();
    void failWithView(const QJsonObject &view);

    Cli &m_cli;
    QString m_deployId;
    QHash<int, int> m_stepShown; // step seq → 1 started printed, 2 end printed
    QHash<int, QString> m_stepNames;
    int m_pollErrors = 0;
    QPointer<QWebSocket> m_events;
    // The deploy's output and steps in order (GET /api/v1/deploys/{id}/log/follow); the polls
    // print the steps when it is not there (--quiet, --json, a server without it, a cut link).
    QPointer<QWebSocket> m_output;
    bool m_outputShown = false; // lines were printed: a failed step's tail is not repeated
    bool m_outputOver = false;
    bool m_outputBroken = false;
    QJsonObject m_lastView;
    QHash<int, QStringList> m_unnamed; // lines of steps not told of yet
    QJsonObject m_ended;               // the deploy's last view once it ended, while its output's end is awaited
    QTimer *m_pollTimer = nullptr;
    bool m_pollInFlight = false;
    bool m_pollAgain = false;
};

void DeployWatch::start(const QString &app)
{
    m_cli.setOnInterrupt([id = m_deployId] {
        printErr(QStringLiteral("pando: stopped watching; deploy %1 goes on (pando deploys show %1)").arg(id));
    });
    m_pollTimer = new QTimer(this);
    m_pollTimer->setSingleShot(true);
    connect(m_pollTimer, &QTimer::timeout, this, &DeployWatch::requestPoll);
    m_events = m_cli.api().followEvents(
        app,
        [this](const QJsonObject &event) {
            if (str(event, "deploy") == m_deployId)
                requestPoll();
        },
        [](const Status &) {});
    m_cli.own(m_events);
    if (!m_cli.args().json && !m_cli.args().has(QStringLiteral("quiet"))) {
        m_output = m_cli.api().followDeployLog(
            m_deployId, [this](const QJsonObject &message) { onOutput(message); },
            [this](const Status &) { outputClosed(); });
        m_cli.own(m_output);
    }
    requestPoll();
}

void DeployWatch::onOutput(const QJsonObject &message)
{
    if (m_cli.isFinished())
        return;
    if (message.contains(QStringLiteral("finished"))) {
        m_outputOver = true;
        concludeIfEnded();
        return;
    }
    if (message.contains(QStringLiteral("progress")))
        return showStep(message.value(QStringLiteral("progress")).toObject());
    const int seq = int(num(message, "step"));
    m_outputShown = true;
    // A step that ended before the stream came is told of after its lines: they wait for its name.
    if (!m_stepNames.contains(seq))
        m_unnamed[seq].append(str(message, "text"));
    else
        printLine(seq, str(message, "text"));
}

void DeployWatch::printLine(int seq, const QString &text)
{
    printOut(QStringLiteral("  %1 | %2").arg(m_stepNames.value(seq, QString::number(seq)), text));
}

void DeployWatch::outputClosed()
{
    // Closed before the end (a server without the stream, a cut link): the polls carry on.
    if (!m_outputOver) {
        m_outputBroken = true;
        m_outputOver = true;
        if (!m_lastView.isEmpty() && !m_cli.isFinished())
            showProgress(m_lastView);
    }
    concludeIfEnded();
}

void DeployWatch::requestPoll()
{
    if (m_cli.isFinished() || m_deployId.isEmpty())
        return;
    if (m_pollInFlight) {
        m_pollAgain = true;
        return;
    }
    poll();
}

void DeployWatch::poll()
{
    m_pollInFlight = true;
    m_pollAgain = false;
    if (m_pollTimer)
        m_pollTimer->stop();
    // With the event stream open the timer is only a safety net.
    const int fallbackMs = m_events && m_events->isValid() ? EventFallbackPollMs : PollIntervalMs;
    const auto scheduleNext = [this, fallbackMs] {
        if (m_pollAgain)
            QTimer::singleShot(0, this, &DeployWatch::requestPoll);
        else
            m_pollTimer->start(fallbackMs);
    };
    m_cli.api().deployDetail(m_deployId, [this, scheduleNext](const Result<client::ApiResponse> &r) {
        m_pollInFlight = false;
        if (m_cli.isFinished())
            return;
        if (!r) {
            // A restarting server is not the deploy failing; give up only when it stays away.
            if (++m_pollErrors >= MaxPollErrors || r.error().code == ErrorCode::NotFound ||
                r.error().code == ErrorCode::Unauthorized)
                return m_cli.failWith(r.error());
            scheduleNext();
            return;
        }
        m_pollErrors = 0;
        const QJsonObject view = r->json;
        m_lastView = view;
        if (!m_cli.args().json)
            showProgress(view);
        const std::optional<core::DeployStatus> status = core::parseDeployStatus(str(view, "status"));
        if (!isTerminal(status)) {
            scheduleNext();
            return;
        }
        if (m_events)
            m_events->close();
        ended(view);
    });
}

void DeployWatch::ended(const QJsonObject &view)
{
    if (!m_output || m_outputOver)
        return conclude(view);
    // The stream may still carry the failing step's last lines: they come before the verdict.
    m_ended = view;
    QTimer::singleShot(OutputDrainMs, this, [this] {
        m_outputOver = true;
        concludeIfEnded();
    });
}

void DeployWatch::concludeIfEnded()
{
    if (!m_ended.isEmpty())
        conclude(std::exchange(m_ended, {}));
}

void DeployWatch::conclude(const QJsonObject &view)
{
    if (m_cli.isFinished())
        return;
    if (m_output)
        m_output->close();
    m_outputBroken = true; // what the stream did not tell of, the last poll does
    if (!m_cli.args().json)
        showProgress(view);
    for (auto it = m_unnamed.cbegin(); it != m_unnamed.cend(); ++it)
        for (const QString &text : it.value())
            printLine(it.key(), text);
    m_unnamed.clear();
    const std::optional<core::DeployStatus> status = core::parseDeployStatus(str(view, "status"));
    if (status == core::DeployStatus::Succeeded) {
        if (m_cli.args().json) {
            printJson(view);
            return m_cli.finish(ExitOk);
        }
        // The URL is the app's, so ask for it once at the end.
        m_cli.api().app(str(view, "app"), [this, view](const Result<client::ApiResponse> &app) {
            const QString url = app ? str(app->json, "url") : QString();
            printOut(QStringLiteral("deployed %1 in %2%3")
                         .arg(str(view, "app"), duration(num(view, "duration_ms")),
                              url.isEmpty() ? QString() : QStringLiteral(": ") + url));
            m_cli.finish(ExitOk);
        });
        return;
    }
    if (m_cli.args().json)
        printJson(view);
    const QString step = str(view, "failed_step");
    const int failedSeq = stepSeq(view, step);
    if (failedSeq >= 0 && !m_cli.args().json && !m_outputShown) {
        // The failing step's last lines (the build's error, the container's last words)
        // come before the one-line reason.
        m_cli.api().deployLog(m_deployId, failedSeq, 0, 5000,
                              [this, view, step](const Result<client::ApiResponse> &log) {
                                  if (log)
                                      printStepTail(log->json, step, FailedStepTail);
                                  failWithView(view);
                              });
        return;
    }
    failWithView(view);
}

void DeployWatch::failWithView(const QJsonObject &view)
{
    const std::optional<core::DeployStatus> status = core::parseDeployStatus(str(view, "status"));
    const QString step = str(view, "failed_step");
    m_cli.failWith(Error{
        status == core::DeployStatus::Cancelled ? ErrorCode::Cancelled : ErrorCode::Failed,
        status == core::DeployStatus::Cancelled ? QStringLiteral("the deploy was cancelled")
        : status == core::DeployStatus::Rejected
            ? QStringLiteral("the deploy did not run: ") + orDash(str(view, "error"))
            : QStringLiteral("failed%1: %2")
                  .arg(step.isEmpty() ? QString() : QStringLiteral(" at step ") + step, orDash(str(view, "error"))),
        QStringLiteral("deploy ") + m_deployId,
        step.isEmpty() ? QStringLiteral("see the whole deploy with: pando deploys show %1").arg(m_deployId)
                       : QStringLiteral("see the step's whole output with: pando deploys log %1 --step %2")
                             .arg(m_deployId, step)});
}

void DeployWatch::showProgress(const QJsonObject &view)
{
    if (streaming())
        return;
    QList<QJsonObject> steps;
    for (const QJsonValue value : view.value(QStringLiteral("steps")).toArray())
        steps << value.toObject();
    std::sort(steps.begin(), steps.end(),
              [](const QJsonObject &a, const QJsonObject &b) { return num(a, "seq") < num(b, "seq"); });
    for (const QJsonObject &step : steps)
        showStep(step);
}

void DeployWatch::showStep(const QJsonObject &step)
{
    const int seq = int(num(step, "seq"));
    m_stepNames.insert(seq, str(step, "name"));
    for (const QString &text : m_unnamed.take(seq))
        printLine(seq, text);
    const std::optional<core::DeployStepStatus> status = core::parseDeployStepStatus(str(step, "status"));
    int &shown = m_stepShown[seq];
    if (status == core::DeployStepStatus::Running) {
        if (shown < 1) {
            printStatus(QStringLiteral("  … %1").arg(str(step, "name")));
            shown = 1;
        }
        return;
    }
    // Waiting for a person: say so once, with how to decide, and keep following.
    if (status == core::DeployStepStatus::Waiting) {
        if (shown < 1) {
            printOut(QStringLiteral("  ⏸ %1 %2").arg(str(step, "name").leftJustified(7), str(step, "detail")));
            shown = 1;
        }
        return;
    }
    if (shown >= 2)
        return;
    shown = 2;
    const QString mark = status == core::DeployStepStatus::Succeeded ? QStringLiteral("✓")
                         : status == core::DeployStepStatus::Failed  ? QStringLiteral("✗")
                                                                     : QStringLiteral("-");
    // Step names are short (fetch … retire): pad them so durations line up.
    QString line = QStringLiteral("  %1 %2 %3")
                       .arg(mark, str(step, "name").leftJustified(7),
                            status == core::DeployStepStatus::Skipped ? QStringLiteral("skipped")
                                                                      : duration(num(step, "duration_ms")));
    if (!str(step, "detail").isEmpty())
        line += QStringLiteral("  ") + str(step, "detail");
    printOut(line);
}

} // namespace

int stepSeq(const QJsonObject &view, const QString &name)
{
    for (const QJsonValue value : view.value(QStringLiteral("steps")).toArray())
        if (str(value.toObject(), "name") == name)
            return int(num(value.toObject(), "seq"));
    return -1;
}

// What deploy and rollback print for the deploy the server queued: its id, or with --wait its
// steps to the end.
void followQueued(Cli &cli, const QString &name, const QJsonObject &queued, const QString &what)
{
    const QString id = str(queued, "id");
    if (!cli.args().has(QStringLiteral("wait"))) {
        if (cli.args().json)
            printJson(queued);
        else
            printOut(QStringLiteral("deploy %1 queued for %2 (%3 %4); follow it with: pando deploys watch %1")
                         .arg(id, name, what, orDash(str(queued, "ref"))));
        return cli.finish(ExitOk);
    }
    if (!cli.args().json)
        printOut(QStringLiteral("deploying %1 (deploy %2)").arg(name, id));
    followDeploy(cli, id, name);
}

void followDeploy(Cli &cli, const QString &deployId, const QString &app)
{
    (new DeployWatch(cli, deployId))->start(app);
}

} // namespace pando::cli
