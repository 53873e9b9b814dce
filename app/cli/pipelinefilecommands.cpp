// `pando pipelines set|validate|format`: a pipeline file set on the install after its changes
// are shown and agreed to, or checked and formatted here with no install, as fly's
// set-pipeline, validate-pipeline and format-pipeline.

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
#include <QSaveFile>

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

constexpr CommandDef PipelineFileTable[] = {
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
};
static_assert(isComplete(PipelineFileTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> pipelineFileCommands()
{
    return PipelineFileTable;
}

} // namespace pando::cli
