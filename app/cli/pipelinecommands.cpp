// `pando pipelines|settings`: the pipeline runner's pipelines and the install's settings, over the
// same API as everything else. Jobs and runs live in runcommands.cpp, following a run in
// runwatch.cpp, resources in resourcecommands.cpp, secrets in secretcommands.cpp.

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"

#include "core/pipelines/config/format.h"
#include "core/pipelines/config/instancename.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/template/interpolate.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStringDecoder>
#include <QUrl>

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

void applyPipeline(Cli &cli, const QString &name, client::Api::PipelineSet set);

// The pipeline `set` names: NAME, or an instance of it (NAME/KEY:VALUE as fly's -p writes it,
// -i KEY=VALUE as fly's -i), in the one form the install knows it by.
Result<QString> pipelineToSet(const Args &args)
{
    auto identity = core::pipelines::parsePipelineName(args.arguments.value(0), QStringLiteral("NAME"));
    if (!identity)
        return std::unexpected(identity.error());
    for (const QString &given : args.values(QStringLiteral("instance-var"))) {
        const qsizetype equals = given.indexOf(QLatin1Char('='));
        const QString where = QStringLiteral("--instance-var ") + given;
        if (equals <= 0)
            return fail(ErrorCode::Invalid, QStringLiteral("write NAME=VALUE"), where);
        const QString key = given.left(equals);
        if (identity->instanceVars.contains(key))
            return fail(ErrorCode::Invalid, QStringLiteral("instance var %1 is given twice").arg(key), where);
        identity->instanceVars.insert(key, core::pipelines::instanceVarValue(given.mid(equals + 1)));
    }
    return core::pipelines::instanceName(identity->group, identity->instanceVars, QStringLiteral("--instance-var"));
}

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

// What -c, -l, -v and --yaml-var give `pipelines set` and `validate`.
struct PipelineFiles {
    QByteArray config;
    QByteArray vars;
    QJsonArray varFlags;
};

Result<PipelineFiles> readPipelineFiles(const Args &args)
{
    PipelineFiles files;
    auto config = readInput(args.value(QStringLiteral("config")), QStringLiteral("pipeline config"));
    if (!config)
        return std::unexpected(config.error());
    files.config = *config;
    if (args.has(QStringLiteral("vars"))) {
        auto read = readInput(args.value(QStringLiteral("vars")), QStringLiteral("vars file"));
        if (!read)
            return std::unexpected(read.error());
        files.vars = *read;
    }
    auto varFlags = varFlagsOf(args);
    if (!varFlags)
        return std::unexpected(varFlags.error());
    files.varFlags = *varFlags;
    return files;
}

void setPipeline(Cli &cli)
{
    auto named = pipelineToSet(cli.args());
    if (!named)
        return cli.failWith(named.error());
    const QString name = *named;
    auto files = readPipelineFiles(cli.args());
    if (!files)
        return cli.failWith(files.error());
    client::Api::PipelineSet set{.config = QString::fromUtf8(files->config),
                                 .vars = QString::fromUtf8(files->vars),
                                 .varFlags = files->varFlags,
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
                    [&cli, name, set] { applyPipeline(cli, name, set); });
    }));
}

// As fly validate-pipeline: the file parsed and checked here, with no install. A placeholder no
// vars file or flag gives is left for the install (secrets, var sources) and listed; --strict
// fails on that and on top-level keys Pando does not read, which are otherwise notes.
void validatePipeline(Cli &cli)
{
    const QString given = cli.args().value(QStringLiteral("config"));
    const QString path = given == QLatin1String("-") ? QStringLiteral("standard input") : given;
    auto files = readPipelineFiles(cli.args());
    if (!files)
        return cli.failWith(files.error());
    QByteArray vars = files->vars;
    QList<core::pipelines::VarFlag> flags;
    for (const QJsonValue flag : std::as_const(files->varFlags))
        flags.append({str(flag.toObject(), "name"), str(flag.toObject(), "value"),
                      flag.toObject().value(QStringLiteral("yaml")).toBool()});
    if (!flags.isEmpty()) {
        auto merged = core::pipelines::withVarFlags(vars, flags);
        if (!merged)
            return cli.failWith(merged.error());
        vars = *merged;
    }
    core::pipelines::InterpolationSources sources;
    if (!vars.trimmed().isEmpty()) {
        auto read = core::pipelines::readVarsFile(vars);
        if (!read) {
            Error e = read.error();
            e.where = QStringLiteral("vars file") + (e.where.isEmpty() ? QString() : QStringLiteral(": ") + e.where);
            return cli.failWith(e);
        }
        sources.vars = *read;
    }
    sources.secretMode = core::pipelines::InterpolationSources::SecretMode::Placeholder;
    sources.allowUndefined = true;
    auto pipeline = core::pipelines::parsePipeline(files->config, sources);
    if (!pipeline) {
        Error e = pipeline.error();
        e.where = path + (e.where.isEmpty() ? QString() : QStringLiteral(": ") + e.where);
        return cli.failWith(e);
    }
    const bool strict = cli.args().has(QStringLiteral("strict"));
    QStringList notes;
    if (!pipeline->ignoredKeys.isEmpty())
        notes << QStringLiteral("Pando does not read the top-level keys %1 (as fly, it takes them to hold anchors)")
                     .arg(pipeline->ignoredKeys.join(QStringLiteral(", ")));
    if (!pipeline->undefinedVars.isEmpty())
        notes << QStringLiteral("no value here for ((%1)): the install gives it at run time (a secret or a var "
                                "source), or runs that use it fail")
                     .arg(pipeline->undefinedVars.join(QStringLiteral(")), ((")));
    if (cli.args().json) {
        printJson(QJsonObject{{QStringLiteral("valid"), !strict || notes.isEmpty()},
                              {QStringLiteral("jobs"), int(pipeline->jobs.size())},
                              {QStringLiteral("resources"), int(pipeline->resources.size())},
                              {QStringLiteral("ignored_keys"), QJsonArray::fromStringList(pipeline->ignoredKeys)},
                              {QStringLiteral("undefined_vars"), QJsonArray::fromStringList(pipeline->undefinedVars)}});
        return cli.finish(strict && !notes.isEmpty() ? ExitFailed : ExitOk);
    }
    for (const QString &note : std::as_const(notes))
        printErr((strict ? QStringLiteral("error: ") : QStringLiteral("note: ")) + note);
    if (strict && !notes.isEmpty())
        return cli.finish(ExitFailed);
    printOut(QStringLiteral("looks good: %1 jobs, %2 resources (what only an install can check, such as secrets "
                            "and privileged tasks, is checked when it is set)")
                 .arg(pipeline->jobs.size())
                 .arg(pipeline->resources.size()));
    cli.finish(ExitOk);
}

void applyPipeline(Cli &cli, const QString &name, client::Api::PipelineSet set)
{
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

// As fly archive-pipeline: asks first, since its config goes.
void archivePipeline(Cli &cli)
{
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

// As fly format-pipeline: the file in one layout, printed, or written back with --write.
void formatPipelineFile(Cli &cli)
{
    const QString given = cli.args().value(QStringLiteral("config"));
    const bool write = cli.args().has(QStringLiteral("write"));
    if (write && given == QLatin1String("-"))
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("--write needs a file, not standard input"),
                                  QStringLiteral("--config"), QStringLiteral("give -c FILE, or drop --write")});
    auto text = readInput(given, QStringLiteral("pipeline config"));
    if (!text)
        return cli.failWith(text.error());
    auto formatted = core::pipelines::formatPipeline(*text);
    if (!formatted) {
        Error e = formatted.error();
        e.where = (given == QLatin1String("-") ? QStringLiteral("standard input") : given) +
                  (e.where.isEmpty() ? QString() : QStringLiteral(": ") + e.where);
        return cli.failWith(e);
    }
    if (!write) {
        printOut(QString::fromUtf8(formatted->chopped(1)));
        return cli.finish(ExitOk);
    }
    if (*formatted == *text) {
        printErr(QStringLiteral("%1 is formatted already").arg(given));
        return cli.finish(ExitOk);
    }
    // Whole or not at all, with the file's own permissions.
    const QFileDevice::Permissions mode = QFileInfo(given).permissions();
    QSaveFile file(given);
    if (!file.open(QIODevice::WriteOnly) || file.write(*formatted) != formatted->size() || !file.commit())
        return cli.failWith(
            Error{ErrorCode::Failed, QStringLiteral("cannot write it: %1").arg(file.errorString()), given});
    QFile::setPermissions(given, mode);
    printErr(QStringLiteral("formatted %1").arg(given));
    cli.finish(ExitOk);
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
     "set",
     "NAME",
     1,
     1,
     {{{&flags::Config, 'c', Required},
       {&flags::Vars, 'l'},
       {&flags::Var, 'v'},
       {&flags::YamlVar},
       {&flags::InstanceVar, 'i'},
       {&flags::Unpaused},
       {&flags::Yes, 'y'}}},
     "show the changes, ask, then set the pipeline",
     &setPipeline,
     Needs::Token,
     nullptr,
     "NAME/KEY:VALUE[,KEY:VALUE] or -i KEY=VALUE sets one instance of NAME (an instanced pipeline, as\n"
     "fly's -p NAME/KEY:VALUE and -i): a pipeline of its own, whose instance vars are vars of its\n"
     "config. Other commands name it as set prints it, quoted for the shell."},
    {"pipelines",
     "validate",
     "",
     0,
     0,
     {{{&flags::Config, 'c', Required}, {&flags::Vars, 'l'}, {&flags::Var, 'v'}, {&flags::YamlVar}, {&flags::Strict}}},
     "check a pipeline file here, without an install, as fly validate-pipeline",
     &validatePipeline,
     Needs::Nothing,
     nullptr,
     "Parses and checks the file as pando pipelines set does, with the same vars flags; exit 1 with\n"
     "where it is wrong. Vars nothing gives here are left for the install and listed; --strict fails\n"
     "on them, and on top-level keys Pando does not read."},
    {"pipelines",
     "format",
     "",
     0,
     0,
     {{{&flags::Config, 'c', Required}, {&flags::Write, 'w'}}},
     "print a pipeline file in one layout, or --write it back, as fly format-pipeline",
     &formatPipelineFile,
     Needs::Nothing,
     nullptr,
     "Anchors and aliases are expanded and comments dropped, as fly does; the pipeline's own keys come\n"
     "in one order (a step's kind first, hooks last), your source:, params: and vars: keep theirs,\n"
     "and every value reads back the same."},
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
    {"pipelines", "pause", "NAME", 1, 1, {}, "stop starting runs (running ones go on)", &pause},
    {"pipelines",
     "archive",
     "NAME",
     1,
     1,
     {{{&flags::Yes, 'y'}}},
     "stop a pipeline for good and drop its config, keeping its runs (fly archive-pipeline)",
     &archivePipeline,
     Needs::Token,
     nullptr,
     "Its queued and running runs are aborted, and what its set_pipeline steps set is archived with\n"
     "it. Unpause, triggers, checks and webhooks are refused; pipelines list hides it unless\n"
     "--include-archived. pando pipelines set NAME brings it back, paused as a new one."},
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
};
static_assert(isComplete(PipelineTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> pipelineCommands()
{
    return PipelineTable;
}

} // namespace pando::cli
