// `pando pipelines`: the pipeline runner's pipelines as the install has them, over the same API
// as everything else. Setting, checking and formatting pipeline files live in
// pipelinefilecommands.cpp, jobs and runs in runcommands.cpp, following a run in runwatch.cpp,
// resources in resourcecommands.cpp, secrets in secretcommands.cpp, the install's settings in
// settingscommands.cpp.

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"

#include <QJsonArray>
#include <QRandomGenerator>
#include <QUrl>

namespace pando::cli {
namespace {

// "active", "paused: why" or "archived: why", as list and show print it.
QString pipelineState(const QJsonObject &p)
{
    if (p.value(QStringLiteral("archived")).toBool())
        return QStringLiteral("archived: ") + orDash(str(p, "paused_reason"));
    if (p.value(QStringLiteral("paused")).toBool())
        return QStringLiteral("paused: ") + orDash(str(p, "paused_reason"));
    return QStringLiteral("active");
}

void listPipelines(Cli &cli)
{
    const bool archivedToo = cli.args().has(QStringLiteral("include-archived"));
    cli.api().pipelines(archivedToo, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray pipelines = r.json.value(QStringLiteral("pipelines")).toArray();
        if (pipelines.isEmpty()) {
            printOut(QStringLiteral("no pipelines yet; set one with: pando pipelines set NAME -c "
                                    "pipeline.yml"));
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : pipelines) {
            const QJsonObject p = value.toObject();
            rows << QStringList{str(p, "name"), QString::number(p.value(QStringLiteral("jobs")).toArray().size()),
                                QString::number(num(p, "config_version")), timestamp(num(p, "updated_ms")),
                                pipelineState(p)};
        }
        printOut(table({QStringLiteral("NAME"), QStringLiteral("JOBS"), QStringLiteral("VERSION"),
                        QStringLiteral("UPDATED"), QStringLiteral("STATE")},
                       rows));
        cli.finish(ExitOk);
    }));
}

void showPipeline(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().pipeline(name, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QStringList jobs;
        const QJsonObject pausedJobs = r.json.value(QStringLiteral("paused_jobs")).toObject();
        for (const QJsonValue job : r.json.value(QStringLiteral("jobs")).toArray())
            jobs << (pausedJobs.contains(job.toString()) ? job.toString() + QStringLiteral(" (paused)")
                                                         : job.toString());
        QString setBy = QStringLiteral("a person");
        if (!str(r.json, "set_by").isEmpty())
            setBy = str(r.json, "set_by_job").isEmpty()
                        ? QStringLiteral("pipeline ") + str(r.json, "set_by")
                        : QStringLiteral("job %1 of pipeline %2").arg(str(r.json, "set_by_job"), str(r.json, "set_by"));
        printOut(keyValues({
            {QStringLiteral("name"), str(r.json, "name")},
            {QStringLiteral("version"), QString::number(num(r.json, "config_version"))},
            {QStringLiteral("state"), pipelineState(r.json)},
            {QStringLiteral("max runs"), QString::number(num(r.json, "max_runs"))},
            {QStringLiteral("host execution"), r.json.value(QStringLiteral("host_execution")).toBool()
                                                   ? QStringLiteral("allowed by an administrator")
                                                   : QStringLiteral("not allowed")},
            {QStringLiteral("jobs"), orDash(jobs.join(QStringLiteral(", ")))},
            {QStringLiteral("set by"), setBy},
            {QStringLiteral("updated"), timestamp(num(r.json, "updated_ms"))},
        }));
        cli.finish(ExitOk);
    }));
}

// The config as it was set; with --diff, what the last change to it changed.
void showConfig(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().pipeline(name, cli.handle([&cli, name](const client::ApiResponse &r) {
        const bool diff = cli.args().has(QStringLiteral("diff"));
        if (cli.args().json) {
            printJson(
                QJsonObject{{QStringLiteral("name"), name},
                            {QStringLiteral("config_version"), r.json.value(QStringLiteral("config_version"))},
                            {diff ? QStringLiteral("config_diff") : QStringLiteral("config_yaml"),
                             r.json.value(diff ? QStringLiteral("config_diff") : QStringLiteral("config_yaml"))}});
            return cli.finish(ExitOk);
        }
        if (!diff) {
            // The text as set, without an added newline, so that it can be saved and set again.
            const QString yaml = str(r.json, "config_yaml");
            printOut(yaml.endsWith(QLatin1Char('\n')) ? yaml.chopped(1) : yaml);
            return cli.finish(ExitOk);
        }
        const QJsonArray lines = r.json.value(QStringLiteral("config_diff")).toArray();
        if (lines.isEmpty())
            printOut(QStringLiteral("pipeline %1 was not changed since it was created (version %2)")
                         .arg(name)
                         .arg(num(r.json, "config_version")));
        for (const QJsonValue line : lines)
            printOut(colouredDiffLine(line.toString()));
        cli.finish(ExitOk);
    }));
}

// pause, unpause and archive name one pipeline unless --all says every one.
bool namesOne(Cli &cli)
{
    if (!cli.args().arguments.isEmpty())
        return true;
    cli.failWithCode(Error{ErrorCode::Invalid, QStringLiteral("missing NAME"), QStringLiteral("arguments"),
                           QStringLiteral("or --all for every pipeline")},
                     ExitUsage);
    return false;
}

// What one pipeline's pause, unpause or archive is asked with, and how its answer is told.
using PipelineAction = std::function<void(Cli &cli, const QString &name, client::ApiClient::Callback done)>;

// --all: the action on every pipeline that is not archived, or on every instance of the group
// NAME, one request after another. Each is told as it ends; one that fails is told and the rest go
// on, and the command then exits 1 naming how many failed.
void onEveryPipeline(Cli &cli, const QString &verb, const PipelineAction &action, bool ask)
{
    const QString group = cli.args().arguments.value(0);
    if (group.contains(u'/'))
        return cli.failWithCode(Error{ErrorCode::Invalid,
                                      QStringLiteral("--all takes an instance group's name, not an instance's"),
                                      QStringLiteral("NAME"), QStringLiteral("give %1").arg(group.section(u'/', 0, 0))},
                                ExitUsage);
    cli.api().pipelines(false, cli.handle([&cli, verb, action, ask, group](const client::ApiResponse &r) {
        QStringList names;
        for (const QJsonValue value : r.json.value(QStringLiteral("pipelines")).toArray()) {
            const QString name = str(value.toObject(), "name");
            if (group.isEmpty() || (name.contains(u'/') && name.section(u'/', 0, 0) == group))
                names << name;
        }
        if (names.isEmpty())
            return cli.failWith(Error{ErrorCode::NotFound,
                                      group.isEmpty() ? QStringLiteral("there are no pipelines to %1").arg(verb)
                                                      : QStringLiteral("no pipeline is an instance of %1").arg(group),
                                      group.isEmpty() ? QString() : QStringLiteral("NAME"),
                                      QStringLiteral("pando pipelines list shows them")});
        const auto run = [&cli, verb, action, names] {
            auto failed = std::make_shared<QStringList>();
            auto next = std::make_shared<std::function<void(qsizetype)>>();
            *next = [&cli, verb, action, names, failed, next](qsizetype i) {
                if (i == names.size()) {
                    // Breaks the cycle the function holds on itself.
                    const auto keep = std::exchange(*next, nullptr);
                    if (cli.args().json)
                        printJson(QJsonObject{{QStringLiteral("pipelines"), QJsonArray::fromStringList(names)},
                                              {QStringLiteral("failed"), QJsonArray::fromStringList(*failed)}});
                    if (failed->isEmpty())
                        return cli.finish(ExitOk);
                    return cli.failWith(Error{ErrorCode::Failed,
                                              QStringLiteral("%1 of %2 pipelines were not %3: %4")
                                                  .arg(failed->size())
                                                  .arg(names.size())
                                                  .arg(verb + QStringLiteral("d"), failed->join(QStringLiteral(", "))),
                                              {},
                                              {}});
                }
                const QString &name = names.at(i);
                action(cli, name, [&cli, verb, name, failed, next, i](const Result<client::ApiResponse> &r) {
                    if (r) {
                        if (!cli.args().json)
                            printOut(QStringLiteral("%1d %2").arg(verb, name));
                    } else {
                        printError(r.error());
                        failed->append(name);
                    }
                    (*next)(i + 1);
                });
            };
            (*next)(0);
        };
        if (!ask)
            return run();
        cli.confirm(
            QStringLiteral("%1 %2 pipeline(s): %3?").arg(verb).arg(names.size()).arg(names.join(QStringLiteral(", "))),
            QStringLiteral("pipelines %1 %2--all").arg(verb, group.isEmpty() ? QString() : group + u' '), run);
    }));
}

void pausePipeline(Cli &cli, bool pause)
{
    if (cli.args().has(QStringLiteral("all")))
        return onEveryPipeline(
            cli, pause ? QStringLiteral("pause") : QStringLiteral("unpause"),
            [pause](Cli &c, const QString &name, client::ApiClient::Callback done) {
                c.api().setPipelinePaused(name, pause, std::move(done));
            },
            false);
    if (!namesOne(cli))
        return;
    const QString name = cli.args().arguments.value(0);
    cli.api().setPipelinePaused(name, pause, cli.handle([&cli, name, pause](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(pause ? QStringLiteral("paused %1").arg(name) : QStringLiteral("unpaused %1").arg(name));
        cli.finish(ExitOk);
    }));
}

void pipelineHostExecution(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    const auto allowed = onOff(cli, cli.args().arguments.value(1), QStringLiteral("allow"), QStringLiteral("deny"));
    if (!allowed)
        return;
    cli.api().setPipelineHostExecution(name, *allowed, cli.handle([&cli, name, allowed](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(*allowed ? QStringLiteral("pipeline %1 may run tasks on the host (while the install's "
                                               "host-execution setting is on)")
                                    .arg(name)
                              : QStringLiteral("pipeline %1 may not run tasks on the host").arg(name));
        cli.finish(ExitOk);
    }));
}

// 256 bits from the system's generator as 64 hex digits: well past the 128 bits a webhook
// token needs. Printed once; nothing is stored.
void webhookToken(Cli &cli)
{
    QByteArray bytes(32, Qt::Uninitialized);
    QRandomGenerator::system()->generate(bytes.begin(), bytes.end());
    const QString token = QString::fromLatin1(bytes.toHex());
    if (cli.args().json)
        printJson(QJsonObject{{QStringLiteral("token"), token}});
    else
        printOut(token);
    cli.finish(ExitOk);
}

void removePipeline(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    cli.confirm(QStringLiteral("remove pipeline %1 with its runs and secrets?").arg(name),
                QStringLiteral("pipelines rm ") + name, [&cli, name] {
                    cli.api().removePipeline(name, cli.handle([&cli, name](const client::ApiResponse &) {
                        if (cli.args().json)
                            printJson(QJsonObject{{QStringLiteral("name"), name},
                                                  {QStringLiteral("status"), QStringLiteral("removed")}});
                        else
                            printOut(QStringLiteral("removed pipeline %1").arg(name));
                        cli.finish(ExitOk);
                    }));
                });
}

// As fly archive-pipeline: asks first, since its config goes.
void archivePipeline(Cli &cli)
{
    if (cli.args().has(QStringLiteral("all")))
        return onEveryPipeline(
            cli, QStringLiteral("archive"),
            [](Cli &c, const QString &name, client::ApiClient::Callback done) {
                c.api().archivePipeline(name, std::move(done));
            },
            true);
    if (!namesOne(cli))
        return;
    const QString name = cli.args().arguments.value(0);
    cli.confirm(
        QStringLiteral("archive pipeline %1? It stops for good and its config is dropped; its runs are kept").arg(name),
        QStringLiteral("pipelines archive ") + name, [&cli, name] {
            cli.api().archivePipeline(name, cli.handle([&cli, name](const client::ApiResponse &r) {
                if (cli.args().json) {
                    printJson(r.json);
                    return cli.finish(ExitOk);
                }
                printOut(QStringLiteral("archived pipeline %1; set it again to bring it back: pando "
                                        "pipelines set %1 -c FILE")
                             .arg(name));
                cli.finish(ExitOk);
            }));
        });
}

// As fly rename-pipeline; names the resources whose webhook address changed with it.
void renamePipeline(Cli &cli)
{
    const QString name = cli.args().arguments.value(0), to = cli.args().arguments.value(1);
    cli.api().renamePipeline(name, to, cli.handle([&cli, name, to](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        printOut(QStringLiteral("renamed pipeline %1 to %2").arg(name, to));
        QStringList hooked;
        const QJsonArray resources =
            r.json.value(QStringLiteral("config")).toObject().value(QStringLiteral("resources")).toArray();
        for (const QJsonValue resource : resources)
            if (resource.toObject().value(QStringLiteral("webhook")).toBool())
                hooked << str(resource.toObject(), "name");
        if (!hooked.isEmpty())
            printOut(QStringLiteral("the webhook addresses of %1 name the pipeline: give the forges the new ones, "
                                    "/api/v1/pipelines/%2/resources/RESOURCE/check")
                         .arg(hooked.join(QStringLiteral(", ")), QString::fromLatin1(QUrl::toPercentEncoding(to))));
        cli.finish(ExitOk);
    }));
}

void pause(Cli &cli)
{
    pausePipeline(cli, true);
}

void unpause(Cli &cli)
{
    pausePipeline(cli, false);
}

constexpr CommandDef PipelineTable[] = {
    {"pipelines",
     "list",
     "",
     0,
     0,
     {{{&flags::IncludeArchived, 'a'}}},
     "list the pipelines (archived ones with --include-archived)",
     &listPipelines},
    {"pipelines", "show", "NAME", 1, 1, {}, "show a pipeline and its jobs", &showPipeline},
    {"pipelines",
     "config",
     "NAME",
     1,
     1,
     {{{&flags::Diff}}},
     "print the pipeline's config as set; --diff: what its last change changed",
     &showConfig},
    {"pipelines",
     "rename",
     "NAME NEW-NAME",
     2,
     2,
     {},
     "rename a pipeline; its runs, versions, secrets and grants go with it",
     &renamePipeline,
     Needs::Token,
     nullptr,
     "Like fly rename-pipeline. Refused while one of its runs is running, when NEW-NAME exists, and\n"
     "when secrets or grants wait for a pipeline named NEW-NAME. Webhook addresses name the pipeline:\n"
     "a forge calling one needs the new address."},
    {"pipelines",
     "pause",
     "[NAME]",
     0,
     1,
     {{{&flags::AllPipelinesOrInstances, 'a'}}},
     "stop starting runs (running ones go on)",
     &pause,
     Needs::Token,
     nullptr,
     "With --all, every pipeline; with NAME and --all, every instance of the instance group NAME (an\n"
     "instanced pipeline's name without /KEY:VALUE). Each is told as it is paused; one that cannot be is\n"
     "told, the rest go on, and the command exits 1."},
    {"pipelines",
     "archive",
     "[NAME]",
     0,
     1,
     {{{&flags::AllPipelinesOrInstances, 'a'}, {&flags::Yes, 'y'}}},
     "stop a pipeline for good and drop its config, keeping its runs (fly archive-pipeline)",
     &archivePipeline,
     Needs::Token,
     nullptr,
     "Its queued and running runs are aborted, and what its set_pipeline steps set is archived with\n"
     "it. Unpause, triggers, checks and webhooks are refused; pipelines list hides it unless\n"
     "--include-archived. pando pipelines set NAME brings it back, paused as a new one. With --all,\n"
     "every pipeline; with NAME and --all, every instance of the instance group NAME (asked once)."},
    {"pipelines",
     "unpause",
     "[NAME]",
     0,
     1,
     {{{&flags::AllPipelinesOrInstances, 'a'}}},
     "start runs again",
     &unpause,
     Needs::Token,
     nullptr,
     "With --all, every pipeline; with NAME and --all, every instance of the instance group NAME."},
    {"pipelines",
     "host-execution",
     "NAME allow|deny",
     2,
     2,
     {},
     "let a pipeline's tasks run on the host, or stop them (administrators)",
     &pipelineHostExecution},
    {"pipelines",
     "webhook-token",
     "",
     0,
     0,
     {},
     "print a new random webhook token (store it as a secret)",
     &webhookToken,
     Needs::Nothing,
     nullptr,
     "Prints 64 hex digits (256 bits). Keep it as a secret (pando secrets set NAME) and write\n"
     "webhook_token: ((NAME)) in the resource; give the forge the same value."},
    {"pipelines",
     "rm",
     "NAME",
     1,
     1,
     {{{&flags::Yes, 'y'}}},
     "remove a pipeline with its runs and secrets",
     &removePipeline},
};
static_assert(isComplete(PipelineTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> pipelineCommands()
{
    return PipelineTable;
}

} // namespace pando::cli
