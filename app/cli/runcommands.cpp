// `pando jobs|runs`: a pipeline's jobs (list, pause, unpause, trigger) and its runs (list, show,
// watch, abort), as fly's jobs, pause-job, trigger-job, builds and abort-build. Following a run
// lives in runwatch.cpp.

#include "cli.h"
#include "commands.h"
#include "output.h"

#include "core/pipelines/config/instancename.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace pando::cli {
namespace {

QString runTitle(const QJsonObject &run)
{
    return QStringLiteral("%1/%2 #%3").arg(str(run, "pipeline"), str(run, "job")).arg(num(run, "number"));
}

// "running", or "running (waiting for approval)" while a step of it waits for someone.
QString runStatus(const QJsonObject &run)
{
    return run.value(QStringLiteral("waiting")).toBool()
               ? str(run, "status") + QStringLiteral(" (waiting for approval)")
               : str(run, "status");
}

QString durationOrDash(const QJsonObject &o)
{
    return num(o, "duration_ms") > 0 ? duration(num(o, "duration_ms")) : QStringLiteral("-");
}

QString stepLabel(const QJsonObject &step)
{
    QString kind = str(step, "kind");
    const QString name = str(step, "name");
    if (name.isEmpty() || name == kind)
        return kind;
    return kind.isEmpty() ? name : kind + QLatin1Char(' ') + name;
}

void stepRows(const QJsonArray &steps, int depth, QList<QStringList> &rows)
{
    for (const QJsonValue value : steps) {
        const QJsonObject step = value.toObject();
        const bool cached = step.value(QStringLiteral("cached")).toBool();
        rows << QStringList{
            QString(depth * qsizetype{2}, QLatin1Char(' ')) + stepLabel(step),
            cached ? QStringLiteral("unchanged") : str(step, "status"),
            cached ? QStringLiteral("-") : durationOrDash(step),
            step.contains(QStringLiteral("attempt")) ? QString::number(num(step, "attempt")) : QStringLiteral("-"),
            step.contains(QStringLiteral("exit_code")) ? QString::number(num(step, "exit_code")) : QStringLiteral("-"),
            str(step, "error")};
        stepRows(step.value(QStringLiteral("children")).toArray(), depth + 1, rows);
    }
}

// "waiting for approval a0123… (approve ship): pando approvals approve a0123…", one per waiting step.
void waitingApprovals(const QJsonArray &steps, QStringList &lines)
{
    for (const QJsonValue value : steps) {
        const QJsonObject step = value.toObject();
        const QJsonObject approval = step.value(QStringLiteral("approval")).toObject();
        if (str(approval, "status") == QLatin1String("pending"))
            lines << QStringLiteral("waiting for approval %1 (%2): %3")
                         .arg(str(approval, "id"), stepLabel(step), str(approval, "approve"));
        waitingApprovals(step.value(QStringLiteral("children")).toArray(), lines);
    }
}

// "PIPELINE/JOB" with both parts; "PIPELINE" too when jobOptional.
Status checkPipelineJob(const QString &value, bool jobOptional, const QString &where)
{
    const auto [pipeline, job] = core::pipelines::splitPipelinePath(value);
    // "ci/" names a job and leaves it out.
    const bool namesJob = value.size() > pipeline.size();
    const bool ok = !pipeline.isEmpty() && !job.contains(QLatin1Char('/')) && (namesJob ? !job.isEmpty() : jobOptional);
    if (ok)
        return {};
    return fail(ErrorCode::Invalid,
                jobOptional ? QStringLiteral("expected PIPELINE or PIPELINE/JOB, got \"%1\"").arg(value)
                            : QStringLiteral("expected PIPELINE/JOB, got \"%1\"").arg(value),
                where);
}

Status checkJob(const Args &args)
{
    return checkPipelineJob(args.arguments.value(0), false, commandName(*args.command));
}

Status checkRunsTarget(const Args &args)
{
    if (args.arguments.isEmpty())
        return {};
    return checkPipelineJob(args.arguments.value(0), true, commandName(*args.command));
}

// "#3 succeeded 2026-12-07 10:02", for a run a job list shows; "-" for none.
QString jobRun(const QJsonValue &run)
{
    if (!run.isObject())
        return QStringLiteral("-");
    const QJsonObject r = run.toObject();
    const qint64 when = num(r, "finished_ms") > 0 ? num(r, "finished_ms") : num(r, "created_ms");
    return QStringLiteral("#%1 %2 %3").arg(num(r, "number")).arg(runStatus(r), timestamp(when));
}

// The pipeline's jobs as `fly jobs` lists them: paused or not, the last run and the next.
void listJobs(Cli &cli)
{
    const QString pipeline = cli.args().arguments.value(0);
    cli.api().jobs(pipeline, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("jobs")).toArray()) {
            const QJsonObject job = value.toObject();
            QString state =
                job.value(QStringLiteral("paused")).toBool() ? str(job, "paused_reason") : QStringLiteral("active");
            if (!job.value(QStringLiteral("manual_trigger")).toBool(true))
                state += QStringLiteral(", no manual trigger");
            rows << QStringList{str(job, "name"), state, jobRun(job.value(QStringLiteral("last_run"))),
                                jobRun(job.value(QStringLiteral("next_run")))};
        }
        printOut(
            table({QStringLiteral("JOB"), QStringLiteral("STATE"), QStringLiteral("LAST RUN"), QStringLiteral("NEXT")},
                  rows));
        cli.finish(ExitOk);
    }));
}

void setJobPaused(Cli &cli, bool pause)
{
    const auto [pipeline, job] = core::pipelines::splitPipelinePath(cli.args().arguments.value(0));
    const QStringList parts{pipeline, job};
    cli.api().setJobPaused(parts[0], parts[1], pause, cli.handle([&cli, parts, pause](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else if (pause)
            printOut(QStringLiteral("paused job %1/%2: its runs wait and none is queued until: pando jobs unpause "
                                    "%1/%2")
                         .arg(parts[0], parts[1]));
        else
            printOut(QStringLiteral("unpaused job %1/%2").arg(parts[0], parts[1]));
        cli.finish(ExitOk);
    }));
}

void triggerJob(Cli &cli)
{
    const auto [pipeline, job] = core::pipelines::splitPipelinePath(cli.args().arguments.value(0));
    const QStringList parts{pipeline, job};
    cli.api().triggerJob(parts[0], parts[1], cli.args().has(QStringLiteral("force")),
                         cli.handle([&cli](const client::ApiResponse &r) {
                             const QString id = str(r.json, "id");
                             if (cli.args().has(QStringLiteral("watch"))) {
                                 if (!cli.args().json)
                                     printOut(QStringLiteral("started %1 (run %2)").arg(runTitle(r.json), id));
                                 return watchRun(cli, id);
                             }
                             if (cli.args().json)
                                 printJson(r.json);
                             else
                                 printOut(QStringLiteral("queued %1 (run %2); follow it with: pando runs watch %2")
                                              .arg(runTitle(r.json), id));
                             cli.finish(ExitOk);
                         }));
}

void listRuns(Cli &cli)
{
    const QString target = cli.args().arguments.value(0);
    const auto [pipeline, job] = core::pipelines::splitPipelinePath(target);
    const QStringList parts{pipeline, job};
    cli.api().runs(target.isEmpty() ? QString() : parts.value(0), parts.value(1),
                   cli.args().count(QStringLiteral("limit")), cli.handle([&cli](const client::ApiResponse &r) {
                       if (cli.args().json) {
                           printJson(r.json);
                           return cli.finish(ExitOk);
                       }
                       const QJsonArray runs = r.json.value(QStringLiteral("runs")).toArray();
                       if (runs.isEmpty()) {
                           printOut(QStringLiteral("no runs yet"));
                           return cli.finish(ExitOk);
                       }
                       QList<QStringList> rows;
                       for (const QJsonValue value : runs) {
                           const QJsonObject run = value.toObject();
                           rows << QStringList{str(run, "id"),
                                               runTitle(run),
                                               runStatus(run),
                                               orDash(str(run, "trigger")),
                                               timestamp(num(run, "created_ms")),
                                               durationOrDash(run),
                                               str(run, "error")};
                       }
                       printOut(table({QStringLiteral("ID"), QStringLiteral("RUN"), QStringLiteral("STATUS"),
                                       QStringLiteral("TRIGGER"), QStringLiteral("CREATED"), QStringLiteral("DURATION"),
                                       QStringLiteral("ERROR")},
                                      rows));
                       cli.finish(ExitOk);
                   }));
}

void showRun(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().run(id, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject &run = r.json;
        QList<std::pair<QString, QString>> pairs = {
            {QStringLiteral("run"), str(run, "id")},
            {QStringLiteral("job"), runTitle(run)},
            {QStringLiteral("status"), runStatus(run)},
            {QStringLiteral("trigger"), run.value(QStringLiteral("force")).toBool()
                                            ? str(run, "trigger") + QStringLiteral(" (forced: every step ran)")
                                            : orDash(str(run, "trigger"))},
            {QStringLiteral("by"), orDash(str(run, "actor"))},
            {QStringLiteral("created"), timestamp(num(run, "created_ms"))},
            {QStringLiteral("duration"), durationOrDash(run)},
            {QStringLiteral("steps"), QStringLiteral("%1 (%2 unchanged, %3 failed)")
                                          .arg(num(run, "step_count"))
                                          .arg(num(run, "cached_count"))
                                          .arg(num(run, "failed_count"))},
        };
        if (!str(run, "error").isEmpty())
            pairs.append({QStringLiteral("error"), str(run, "error")});
        if (const qint64 removed = num(run, "log_removed_ms"); removed > 0)
            pairs.append({QStringLiteral("output"), logRemovedNote(removed)});
        printOut(keyValues(pairs));
        QList<QStringList> rows;
        stepRows(run.value(QStringLiteral("steps")).toArray(), 0, rows);
        if (!rows.isEmpty()) {
            printOut(QString());
            printOut(table({QStringLiteral("STEP"), QStringLiteral("STATUS"), QStringLiteral("DURATION"),
                            QStringLiteral("ATTEMPT"), QStringLiteral("EXIT"), QStringLiteral("ERROR")},
                           rows));
        }
        QStringList waiting;
        waitingApprovals(run.value(QStringLiteral("steps")).toArray(), waiting);
        if (!waiting.isEmpty()) {
            printOut(QString());
            printOut(waiting.join(QLatin1Char('\n')));
        }
        cli.finish(ExitOk);
    }));
}

void abortRun(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().abortRun(id, cli.handle([&cli, id](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("aborting run %1").arg(id));
        cli.finish(ExitOk);
    }));
}

void pauseJob(Cli &cli)
{
    setJobPaused(cli, true);
}

void unpauseJob(Cli &cli)
{
    setJobPaused(cli, false);
}

void watch(Cli &cli)
{
    watchRun(cli, cli.args().arguments.value(0));
}

constexpr CommandDef RunTable[] = {
    {"jobs", "list", "PIPELINE", 1, 1, {}, "the pipeline's jobs: paused or not, the last run, the next", &listJobs},
    {"jobs",
     "pause",
     "PIPELINE/JOB",
     1,
     1,
     {},
     "hold back the job's runs (running ones go on)",
     &pauseJob,
     Needs::Token,
     &checkJob},
    {"jobs",
     "unpause",
     "PIPELINE/JOB",
     1,
     1,
     {},
     "start the job's runs again, with what was found meanwhile",
     &unpauseJob,
     Needs::Token,
     &checkJob},
    {"jobs",
     "trigger",
     "PIPELINE/JOB",
     1,
     1,
     {{{&flags::Watch, 'w'}, {&flags::ForceRun}}},
     "queue a run; --watch (-w, as fly's) follows it to the end, --force runs every step",
     &triggerJob,
     Needs::Token,
     &checkJob},
    {"runs",
     "list",
     "[PIPELINE[/JOB]]",
     0,
     1,
     {{{&flags::Limit}}},
     "list runs, newest first",
     &listRuns,
     Needs::Token,
     &checkRunsTarget},
    {"runs", "show", "ID", 1, 1, {}, "show a run's step tree", &showRun},
    {"runs", "watch", "ID", 1, 1, {}, "follow a run to its end", &watch},
    {"runs", "abort", "ID", 1, 1, {}, "abort a queued or running run", &abortRun},
};
static_assert(isComplete(RunTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> runCommands()
{
    return RunTable;
}

} // namespace pando::cli
