// `pando pipelines|jobs|runs|settings`: the pipeline runner's commands, over the same API as
// everything else. Following a run lives in runwatch.cpp, secrets in secretcommands.cpp.

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QStringDecoder>

namespace pando::cli {
namespace {

Result<QByteArray> readInput(const QString &path, const QString &what)
{
    QFile file;
    bool opened = false;
    if (path == QLatin1String("-")) {
        opened = file.open(stdin, QIODevice::ReadOnly);
    } else {
        file.setFileName(path);
        opened = file.open(QIODevice::ReadOnly);
    }
    if (!opened)
        return fail(ErrorCode::Invalid, QStringLiteral("cannot read the %1: %2").arg(what, file.errorString()), path);
    return file.readAll();
}

bool useColour()
{
    return stdoutIsTerminal() && qEnvironmentVariableIsEmpty("NO_COLOR");
}

QString colouredDiffLine(const QString &line)
{
    if (!useColour())
        return line;
    const char *colour = nullptr;
    if (line.startsWith(QLatin1String("+++")) || line.startsWith(QLatin1String("---")))
        colour = "\033[1m";
    else if (line.startsWith(QLatin1Char('+')))
        colour = "\033[32m";
    else if (line.startsWith(QLatin1Char('-')))
        colour = "\033[31m";
    else if (line.startsWith(QLatin1String("@@")))
        colour = "\033[36m";
    if (!colour)
        return line;
    return QLatin1String(colour) + line + QStringLiteral("\033[0m");
}

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
    const QStringList parts = value.split(QLatin1Char('/'));
    const bool ok = (parts.size() == 2 && !parts[0].isEmpty() && !parts[1].isEmpty()) ||
                    (jobOptional && parts.size() == 1 && !parts[0].isEmpty());
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

void applyPipeline(Cli &cli, client::Api::PipelineSet set);

// -v NAME=VALUE and --yaml-var NAME=YAML as the API takes them.
Result<QJsonArray> varFlagsOf(const Args &args)
{
    QJsonArray flags;
    for (const auto &[option, yaml] : {std::pair{QStringLiteral("var"), false}, {QStringLiteral("yaml-var"), true}}) {
        for (const QString &given : args.values(option)) {
            const qsizetype equals = given.indexOf(QLatin1Char('='));
            if (equals <= 0)
                return fail(ErrorCode::Invalid, QStringLiteral("write NAME=VALUE"),
                            QStringLiteral("--%1 %2").arg(option, given));
            flags.append(QJsonObject{{QStringLiteral("name"), given.left(equals)},
                                     {QStringLiteral("value"), given.mid(equals + 1)},
                                     {QStringLiteral("yaml"), yaml}});
        }
    }
    return flags;
}

void setPipeline(Cli &cli)
{
    const QString name = cli.args().arguments.value(0);
    auto config = readInput(cli.args().value(QStringLiteral("config")), QStringLiteral("pipeline config"));
    if (!config)
        return cli.failWith(config.error());
    QByteArray vars;
    if (cli.args().has(QStringLiteral("vars"))) {
        auto read = readInput(cli.args().value(QStringLiteral("vars")), QStringLiteral("vars file"));
        if (!read)
            return cli.failWith(read.error());
        vars = *read;
    }
    auto varFlags = varFlagsOf(cli.args());
    if (!varFlags)
        return cli.failWith(varFlags.error());
    client::Api::PipelineSet set{.config = QString::fromUtf8(*config),
                                 .vars = QString::fromUtf8(vars),
                                 .varFlags = *varFlags,
                                 .dryRun = true,
                                 .unpaused = cli.args().has(QStringLiteral("unpaused"))};
    cli.api().setPipeline(name, set, cli.handle([&cli, name, set](const client::ApiResponse &r) {
        const bool changed = r.json.value(QStringLiteral("changed")).toBool();
        const QJsonObject pipeline = r.json.value(QStringLiteral("pipeline")).toObject();
        if (!changed) {
            if (cli.args().json)
                printJson(r.json);
            else
                printOut(QStringLiteral("pipeline %1 is unchanged (version %2)")
                             .arg(name)
                             .arg(num(pipeline, "config_version")));
            return cli.finish(ExitOk);
        }
        if (!cli.args().json) {
            if (r.json.value(QStringLiteral("created")).toBool())
                printOut(QStringLiteral("pipeline %1 is new:").arg(name));
            for (const QJsonValue line : r.json.value(QStringLiteral("diff")).toArray())
                printOut(colouredDiffLine(line.toString()));
            if (const QStringList ignored = r.json.value(QStringLiteral("ignored_keys")).toVariant().toStringList();
                !ignored.isEmpty())
                printErr(QStringLiteral("note: Pando does not read the top-level keys %1 (as fly, it takes "
                                        "them to hold anchors and leaves them out)")
                             .arg(ignored.join(QStringLiteral(", "))));
            QStringList sources;
            for (const QJsonValue source : r.json.value(QStringLiteral("var_sources")).toArray())
                sources << QStringLiteral("%1 (%2)").arg(source[QStringLiteral("name")].toString(),
                                                         source[QStringLiteral("type")].toString());
            if (!sources.isEmpty())
                printErr(QStringLiteral("note: runs read ((source:...)) vars from %1 when they start; a var a "
                                        "source lacks errors the run")
                             .arg(sources.join(QStringLiteral(", "))));
            for (const QJsonValue var : r.json.value(QStringLiteral("undefined_vars")).toArray()) {
                // "secrets:db.password" is the secret db.
                const QString written = var.toString();
                const QString secret = written.section(QLatin1Char(':'), -1).section(QLatin1Char('.'), 0, 0);
                printErr(QStringLiteral("note: ((%1)) has no value yet; runs that use it fail until it is set: "
                                        "pando secrets set %2 --pipeline %3")
                             .arg(written, secret, name));
            }
        }
        cli.confirm(QStringLiteral("apply these changes?"), QStringLiteral("pipelines set ") + name,
                    [&cli, set] { applyPipeline(cli, set); });
    }));
}

void applyPipeline(Cli &cli, client::Api::PipelineSet set)
{
    const QString name = cli.args().arguments.value(0);
    set.dryRun = false;
    cli.api().setPipeline(name, set, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject pipeline = r.json.value(QStringLiteral("pipeline")).toObject();
        printOut(QStringLiteral("%1 pipeline %2 (version %3)")
                     .arg(r.json.value(QStringLiteral("created")).toBool() ? QStringLiteral("created")
                                                                           : QStringLiteral("updated"),
                          name)
                     .arg(num(pipeline, "config_version")));
        if (pipeline.value(QStringLiteral("paused")).toBool())
            printOut(QStringLiteral("it is paused (%1); start it with: pando pipelines unpause %2")
                         .arg(orDash(str(pipeline, "paused_reason")), name));
        cli.finish(ExitOk);
    }));
}

void listPipelines(Cli &cli)
{
    cli.api().pipelines(cli.handle([&cli](const client::ApiResponse &r) {
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
            const bool paused = p.value(QStringLiteral("paused")).toBool();
            rows << QStringList{str(p, "name"), QString::number(p.value(QStringLiteral("jobs")).toArray().size()),
                                QString::number(num(p, "config_version")), timestamp(num(p, "updated_ms")),
                                paused ? QStringLiteral("paused: ") + orDash(str(p, "paused_reason"))
                                       : QStringLiteral("active")};
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
        const bool paused = r.json.value(QStringLiteral("paused")).toBool();
        printOut(keyValues({
            {QStringLiteral("name"), str(r.json, "name")},
            {QStringLiteral("version"), QString::number(num(r.json, "config_version"))},
            {QStringLiteral("state"),
             paused ? QStringLiteral("paused: ") + orDash(str(r.json, "paused_reason")) : QStringLiteral("active")},
            {QStringLiteral("max runs"), QString::number(num(r.json, "max_runs"))},
            {QStringLiteral("host execution"), r.json.value(QStringLiteral("host_execution")).toBool()
                                                   ? QStringLiteral("allowed by an administrator")
                                                   : QStringLiteral("not allowed")},
            {QStringLiteral("jobs"), orDash(jobs.join(QStringLiteral(", ")))},
            {QStringLiteral("set by"), str(r.json, "set_by").isEmpty()
                                           ? QStringLiteral("a person")
                                           : QStringLiteral("pipeline ") + str(r.json, "set_by")},
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

void pausePipeline(Cli &cli, bool pause)
{
    const QString name = cli.args().arguments.value(0);
    cli.api().setPipelinePaused(name, pause, cli.handle([&cli, name, pause](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(pause ? QStringLiteral("paused %1").arg(name) : QStringLiteral("unpaused %1").arg(name));
        cli.finish(ExitOk);
    }));
}

// "on"/"allow" or "off"/"deny"; anything else is refused with the words that work.
std::optional<bool> onOff(Cli &cli, const QString &word, const QString &yes, const QString &no)
{
    if (word == yes)
        return true;
    if (word == no)
        return false;
    cli.failWith(Error{ErrorCode::Invalid,
                       QStringLiteral("expected %1 or %2, got \"%3\"").arg(yes, no, word),
                       QStringLiteral("arguments"),
                       {}});
    return std::nullopt;
}

QString orNone(const QString &value)
{
    return value.isEmpty() ? QStringLiteral("none") : value;
}

// "any" when the install serves any name.
QString allowedDomains(const QJsonObject &settings)
{
    QStringList names;
    for (const QJsonValue name : settings.value(QStringLiteral("allowed_domains")).toArray())
        names << name.toString();
    return names.isEmpty() ? QStringLiteral("any") : names.join(QStringLiteral(","));
}

// "90 days" or "forever": how long a deploy's output is kept after it ended.
QString deployLogDays(const QJsonObject &settings)
{
    const int days = settings.value(QStringLiteral("deploy_log_days")).toInt();
    return days == 0 ? QStringLiteral("forever") : QStringLiteral("%1 days").arg(days);
}

void showSettings(Cli &cli)
{
    cli.api().settings(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const auto onOff = [&r](const QString &key, const QString &on) {
            return r.json.value(key).toBool() ? on : QStringLiteral("off");
        };
        const QString members = QStringLiteral("on (for apps whose spec a member writes)");
        printOut(keyValues(
            {{QStringLiteral("host-execution"),
              onOff(QStringLiteral("host_execution"), QStringLiteral("on (for pipelines an administrator allowed)"))},
             {QStringLiteral("local-repositories"), onOff(QStringLiteral("local_repositories"), members)},
             {QStringLiteral("ssh-agent"), onOff(QStringLiteral("ssh_agent"), members)},
             {QStringLiteral("internal-hosts"), onOff(QStringLiteral("internal_hosts"), members)},
             {QStringLiteral("member-ports"), r.json.value(QStringLiteral("member_ports")).toString()},
             {QStringLiteral("preview-forks"),
              onOff(QStringLiteral("preview_forks"), QStringLiteral("on (pull requests from forks get previews)"))},
             {QStringLiteral("deploy-log-days"), deployLogDays(r.json)},
             {QStringLiteral("base-domain"), orNone(r.json.value(QStringLiteral("base_domain")).toString())},
             {QStringLiteral("allowed-domains"), allowedDomains(r.json)},
             {QStringLiteral("wildcard-domains"), onOff(QStringLiteral("wildcard_domains"), QStringLiteral("on"))}}));
        cli.finish(ExitOk);
    }));
}

// The settings `pando settings set` knows: the CLI's name, the API's, and whether it is on|off.
struct SettingName {
    const char *cli;
    const char *api;
    bool onOff;
};
constexpr SettingName settingNames[] = {
    {"host-execution", "host_execution", true},
    {"local-repositories", "local_repositories", true},
    {"ssh-agent", "ssh_agent", true},
    {"internal-hosts", "internal_hosts", true},
    {"member-ports", "member_ports", false},
    {"preview-forks", "preview_forks", true},
    {"deploy-log-days", "deploy_log_days", false},
    {"base-domain", "base_domain", false},
    {"allowed-domains", "allowed_domains", false},
    {"wildcard-domains", "wildcard_domains", true},
};

void setSetting(Cli &cli)
{
    const QString key = cli.args().arguments.value(0);
    const QString word = cli.args().arguments.value(1);
    const SettingName *setting = nullptr;
    QStringList known;
    for (const SettingName &name : settingNames) {
        known.append(QLatin1String(name.cli));
        if (key == QLatin1String(name.cli))
            setting = &name;
    }
    if (!setting)
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("unknown setting \"%1\"").arg(key),
                                  QStringLiteral("arguments"),
                                  QStringLiteral("settings: ") + known.join(QStringLiteral(", "))});
    // member-ports, base-domain, allowed-domains: the server checks them; "none" and "any" clear.
    QJsonValue value =
        (word == QLatin1String("none") && key != QLatin1String("member-ports")) || word == QLatin1String("any")
            ? QString()
            : word;
    if (setting->onOff) {
        const auto enabled = onOff(cli, word, QStringLiteral("on"), QStringLiteral("off"));
        if (!enabled)
            return;
        value = *enabled;
    }
    const QString api = QLatin1String(setting->api);
    cli.api().updateSettings(QJsonObject{{api, value}}, cli.handle([&cli, key, api](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonValue now = r.json.value(api);
        if (api == QLatin1String("host_execution")) {
            printOut(now.toBool() ? QStringLiteral("host execution is on for pipelines an administrator allows "
                                                   "(pando pipelines host-execution NAME allow)")
                                  : QStringLiteral("host execution is off: tasks need an image_resource"));
            return cli.finish(ExitOk);
        }
        if (api == QLatin1String("allowed_domains"))
            printOut(QStringLiteral("%1 is %2").arg(key, allowedDomains(r.json)));
        else if (api == QLatin1String("deploy_log_days"))
            printOut(QStringLiteral("%1 is %2").arg(key, deployLogDays(r.json)));
        else
            printOut(QStringLiteral("%1 is %2")
                         .arg(key, now.isBool() ? (now.toBool() ? QStringLiteral("on") : QStringLiteral("off"))
                                                : orNone(now.toString())));
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
    const QStringList parts = cli.args().arguments.value(0).split(QLatin1Char('/'));
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
    const QStringList parts = cli.args().arguments.value(0).split(QLatin1Char('/'));
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
    const QStringList parts = target.split(QLatin1Char('/'));
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

void pause(Cli &cli)
{
    pausePipeline(cli, true);
}

void unpause(Cli &cli)
{
    pausePipeline(cli, false);
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

constexpr CommandDef PipelineTable[] = {
    {"pipelines",
     "set",
     "NAME",
     1,
     1,
     {{{&flags::Config, 'c', Required},
       {&flags::Vars, 'l'},
       {&flags::Var, 'v'},
       {&flags::YamlVar},
       {&flags::Unpaused},
       {&flags::Yes, 'y'}}},
     "show the changes, ask, then set the pipeline",
     &setPipeline},
    {"pipelines", "list", "", 0, 0, {}, "list the pipelines", &listPipelines},
    {"pipelines", "show", "NAME", 1, 1, {}, "show a pipeline and its jobs", &showPipeline},
    {"pipelines",
     "config",
     "NAME",
     1,
     1,
     {{{&flags::Diff}}},
     "print the pipeline's config as set; --diff: what its last change changed",
     &showConfig},
    {"pipelines", "pause", "NAME", 1, 1, {}, "stop starting runs (running ones go on)", &pause},
    {"pipelines", "unpause", "NAME", 1, 1, {}, "start runs again", &unpause},
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
    {"settings", "show", "", 0, 0, {}, "show the install's settings", &showSettings},
    {"settings",
     "set",
     "KEY VALUE",
     2,
     2,
     {},
     "change an install setting (administrators): host-execution, local-repositories, ssh-agent, "
     "internal-hosts, preview-forks, wildcard-domains on|off; member-ports FIRST-LAST|none; base-domain NAME|none; "
     "allowed-domains NAME,NAME|any; deploy-log-days DAYS|forever",
     &setSetting},
    {"pipelines",
     "rm",
     "NAME",
     1,
     1,
     {{{&flags::Yes, 'y'}}},
     "remove a pipeline with its runs and secrets",
     &removePipeline},
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
static_assert(isComplete(PipelineTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> pipelineCommands()
{
    return PipelineTable;
}

} // namespace pando::cli
