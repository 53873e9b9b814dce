#include "args.h"

namespace pando::cli {
namespace {

struct CommandSpec {
    Command command;
    QStringList words;
    int args;             // exact number of positional arguments
    QStringList options;  // allowed besides the global ones
    QStringList required; // options that must be given
    const char *argName;  // for messages
    int optionalArgs = 0; // how many more positional arguments may follow
};

const QList<CommandSpec> &commands()
{
    static const QList<CommandSpec> list = {
        {Command::AppsCreate,
         {QStringLiteral("apps"), QStringLiteral("create")},
         0,
         {QStringLiteral("file")},
         {QStringLiteral("file")},
         ""},
        {Command::AppsUpdate,
         {QStringLiteral("apps"), QStringLiteral("update")},
         1,
         {QStringLiteral("file")},
         {QStringLiteral("file")},
         "NAME"},
        {Command::AppsList, {QStringLiteral("apps"), QStringLiteral("list")}, 0, {}, {}, ""},
        {Command::AppsShow, {QStringLiteral("apps"), QStringLiteral("show")}, 1, {}, {}, "NAME"},
        {Command::AppsRemove,
         {QStringLiteral("apps"), QStringLiteral("rm")},
         1,
         {QStringLiteral("no-wait"), QStringLiteral("keep-data"), QStringLiteral("delete-data")},
         {},
         "NAME"},
        {Command::AppsStart, {QStringLiteral("apps"), QStringLiteral("start")}, 1, {}, {}, "NAME"},
        {Command::Capacity, {QStringLiteral("capacity")}, 0, {}, {}, ""},
        {Command::Deploy, {QStringLiteral("deploy")}, 1, {QStringLiteral("ref"), QStringLiteral("wait")}, {}, "NAME"},
        {Command::DeploysList,
         {QStringLiteral("deploys"), QStringLiteral("list")},
         1,
         {QStringLiteral("limit")},
         {},
         "NAME"},
        {Command::DeploysShow, {QStringLiteral("deploys"), QStringLiteral("show")}, 1, {}, {}, "ID"},
        {Command::Logs, {QStringLiteral("logs")}, 1, {QStringLiteral("follow"), QStringLiteral("tail")}, {}, "NAME"},
        {Command::PipelinesSet,
         {QStringLiteral("pipelines"), QStringLiteral("set")},
         1,
         {QStringLiteral("config"), QStringLiteral("vars"), QStringLiteral("yes")},
         {QStringLiteral("config")},
         "NAME"},
        {Command::PipelinesList, {QStringLiteral("pipelines"), QStringLiteral("list")}, 0, {}, {}, ""},
        {Command::PipelinesShow, {QStringLiteral("pipelines"), QStringLiteral("show")}, 1, {}, {}, "NAME"},
        {Command::PipelinesPause, {QStringLiteral("pipelines"), QStringLiteral("pause")}, 1, {}, {}, "NAME"},
        {Command::PipelinesUnpause, {QStringLiteral("pipelines"), QStringLiteral("unpause")}, 1, {}, {}, "NAME"},
        {Command::PipelinesRemove,
         {QStringLiteral("pipelines"), QStringLiteral("rm")},
         1,
         {QStringLiteral("yes")},
         {},
         "NAME"},
        {Command::JobsTrigger,
         {QStringLiteral("jobs"), QStringLiteral("trigger")},
         1,
         {QStringLiteral("watch")},
         {},
         "PIPELINE/JOB"},
        {Command::RunsList,
         {QStringLiteral("runs"), QStringLiteral("list")},
         0,
         {QStringLiteral("limit")},
         {},
         "PIPELINE[/JOB]",
         1},
        {Command::RunsShow, {QStringLiteral("runs"), QStringLiteral("show")}, 1, {}, {}, "ID"},
        {Command::RunsWatch, {QStringLiteral("runs"), QStringLiteral("watch")}, 1, {}, {}, "ID"},
        {Command::RunsAbort, {QStringLiteral("runs"), QStringLiteral("abort")}, 1, {}, {}, "ID"},
        // NAME is a pipeline secret (--pipeline P, or the install's); APP NAME an app's.
        {Command::SecretsSet,
         {QStringLiteral("secrets"), QStringLiteral("set")},
         1,
         {QStringLiteral("pipeline"), QStringLiteral("from-file")},
         {},
         "[APP] NAME",
         1},
        {Command::SecretsList,
         {QStringLiteral("secrets"), QStringLiteral("list")},
         0,
         {QStringLiteral("pipeline")},
         {},
         "[APP]",
         1},
        {Command::SecretsRemove,
         {QStringLiteral("secrets"), QStringLiteral("rm")},
         1,
         {QStringLiteral("pipeline")},
         {},
         "[APP] NAME",
         1},
        {Command::AuditList,
         {QStringLiteral("audit"), QStringLiteral("list")},
         0,
         {QStringLiteral("actor"), QStringLiteral("action"), QStringLiteral("object"), QStringLiteral("since"),
          QStringLiteral("until"), QStringLiteral("limit")},
         {},
         ""},
        {Command::AuditVerify, {QStringLiteral("audit"), QStringLiteral("verify")}, 0, {}, {}, ""},
        {Command::AuditSinks, {QStringLiteral("audit"), QStringLiteral("sinks")}, 0, {}, {}, ""},
        {Command::GrantsList, {QStringLiteral("grants"), QStringLiteral("list")}, 1, {}, {}, "OBJECT"},
        {Command::GrantsAdd, {QStringLiteral("grants"), QStringLiteral("add")}, 3, {}, {}, "OBJECT USER ROLE"},
        {Command::GrantsRemove, {QStringLiteral("grants"), QStringLiteral("rm")}, 3, {}, {}, "OBJECT USER ROLE"},
        {Command::ApprovalsList,
         {QStringLiteral("approvals"), QStringLiteral("list")},
         0,
         {QStringLiteral("status"), QStringLiteral("all"), QStringLiteral("limit")},
         {},
         ""},
        {Command::ApprovalsShow, {QStringLiteral("approvals"), QStringLiteral("show")}, 1, {}, {}, "ID"},
        {Command::ApprovalsApprove,
         {QStringLiteral("approvals"), QStringLiteral("approve")},
         1,
         {QStringLiteral("reason")},
         {},
         "ID"},
        {Command::ApprovalsReject,
         {QStringLiteral("approvals"), QStringLiteral("reject")},
         1,
         {QStringLiteral("reason")},
         {},
         "ID"},
        {Command::Login, {QStringLiteral("login")}, 0, {QStringLiteral("username")}, {}, ""},
        {Command::UsersCreate,
         {QStringLiteral("users"), QStringLiteral("create")},
         1,
         {QStringLiteral("role")},
         {QStringLiteral("role")},
         "NAME"},
        {Command::UsersList, {QStringLiteral("users"), QStringLiteral("list")}, 0, {}, {}, ""},
        {Command::UsersDisable, {QStringLiteral("users"), QStringLiteral("disable")}, 1, {}, {}, "NAME"},
        {Command::TokensCreate,
         {QStringLiteral("tokens"), QStringLiteral("create")},
         1,
         {QStringLiteral("scope"), QStringLiteral("expires")},
         {},
         "NAME"},
        {Command::TokensList, {QStringLiteral("tokens"), QStringLiteral("list")}, 0, {}, {}, ""},
        {Command::TokensRevoke, {QStringLiteral("tokens"), QStringLiteral("revoke")}, 1, {}, {}, "ID"},
        {Command::ServicesList, {QStringLiteral("services"), QStringLiteral("list")}, 0, {}, {}, "[APP]", 1},
        {Command::ServicesBackup,
         {QStringLiteral("services"), QStringLiteral("backup")},
         2,
         {QStringLiteral("out"), QStringLiteral("force")},
         {QStringLiteral("out")},
         "APP SLOT"},
        {Command::ServicesRemove,
         {QStringLiteral("services"), QStringLiteral("rm")},
         2,
         {QStringLiteral("keep-data"), QStringLiteral("delete-data")},
         {},
         "APP SLOT"},
    };
    return list;
}

const QStringList GlobalOptions = {QStringLiteral("server"), QStringLiteral("token"), QStringLiteral("json"),
                                   QStringLiteral("help"), QStringLiteral("version")};
const QStringList ValueOptions = {
    QStringLiteral("server"),    QStringLiteral("token"),   QStringLiteral("file"),     QStringLiteral("ref"),
    QStringLiteral("tail"),      QStringLiteral("limit"),   QStringLiteral("config"),   QStringLiteral("vars"),
    QStringLiteral("pipeline"),  QStringLiteral("actor"),   QStringLiteral("action"),   QStringLiteral("object"),
    QStringLiteral("since"),     QStringLiteral("until"),   QStringLiteral("username"), QStringLiteral("role"),
    QStringLiteral("scope"),     QStringLiteral("expires"), QStringLiteral("status"),   QStringLiteral("reason"),
    QStringLiteral("from-file"), QStringLiteral("out")};
const QStringList FlagOptions = {QStringLiteral("json"),      QStringLiteral("help"),        QStringLiteral("version"),
                                 QStringLiteral("wait"),      QStringLiteral("no-wait"),     QStringLiteral("follow"),
                                 QStringLiteral("yes"),       QStringLiteral("watch"),       QStringLiteral("all"),
                                 QStringLiteral("keep-data"), QStringLiteral("delete-data"), QStringLiteral("force")};
const QStringList Groups = {QStringLiteral("apps"),   QStringLiteral("deploys"),   QStringLiteral("pipelines"),
                            QStringLiteral("jobs"),   QStringLiteral("runs"),      QStringLiteral("secrets"),
                            QStringLiteral("audit"),  QStringLiteral("users"),     QStringLiteral("tokens"),
                            QStringLiteral("grants"), QStringLiteral("approvals"), QStringLiteral("services")};

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

QString commandName(const CommandSpec &spec)
{
    return spec.words.join(QLatin1Char(' '));
}

} // namespace

Result<Args> parseArgs(const QStringList &argv)
{
    Args args;
    QStringList words;
    for (qsizetype i = 0; i < argv.size(); ++i) {
        const QString &word = argv[i];
        QString name;
        QString value;
        bool hasValue = false;
        if (word == QLatin1String("--")) {
            words += argv.mid(i + 1);
            break;
        }
        if (word.startsWith(QLatin1String("--"))) {
            name = word.mid(2);
            const qsizetype eq = name.indexOf(QLatin1Char('='));
            if (eq >= 0) {
                value = name.mid(eq + 1);
                name = name.left(eq);
                hasValue = true;
            }
        } else if (word == QLatin1String("-f")) {
            // A file for `apps create`, follow for `logs`.
            name = words.value(0) == QLatin1String("logs") ? QStringLiteral("follow") : QStringLiteral("file");
        } else if (word == QLatin1String("-c")) {
            name = QStringLiteral("config");
        } else if (word == QLatin1String("-l")) {
            name = QStringLiteral("vars");
        } else if (word == QLatin1String("-y")) {
            name = QStringLiteral("yes");
        } else if (word == QLatin1String("-p")) {
            name = QStringLiteral("pipeline");
        } else if (word == QLatin1String("-h")) {
            name = QStringLiteral("help");
        } else if (word.startsWith(QLatin1Char('-')) && word.size() > 1) {
            return fail(ErrorCode::Invalid, QStringLiteral("unknown option"), word);
        } else {
            words << word;
            continue;
        }
        if (ValueOptions.contains(name)) {
            if (!hasValue) {
                if (i + 1 >= argv.size())
                    return fail(ErrorCode::Invalid, QStringLiteral("needs a value"), word);
                value = argv[++i];
            }
        } else if (FlagOptions.contains(name)) {
            if (hasValue)
                return fail(ErrorCode::Invalid, QStringLiteral("takes no value"), QStringLiteral("--") + name);
        } else {
            return fail(ErrorCode::Invalid, QStringLiteral("unknown option"), word);
        }
        // A token may carry several scopes: --scope a --scope b.
        if (name == QLatin1String("scope") && args.options.contains(name))
            value = args.options.value(name) + QLatin1Char(',') + value;
        args.options.insert(name, value);
    }
    args.json = args.has(QStringLiteral("json"));
    args.help = args.has(QStringLiteral("help"));
    args.version = args.has(QStringLiteral("version"));
    if ((args.help || args.version) && words.isEmpty())
        return args;
    if (words.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("no command given"));

    const CommandSpec *found = nullptr;
    for (const CommandSpec &spec : commands()) {
        if (words.size() >= spec.words.size() && words.mid(0, spec.words.size()) == spec.words) {
            found = &spec;
            break;
        }
    }
    if (!found) {
        const bool group = Groups.contains(words[0]);
        return fail(ErrorCode::Invalid,
                    group ? QStringLiteral("unknown subcommand \"%1\"").arg(words.value(1))
                          : QStringLiteral("unknown command \"%1\"").arg(words[0]),
                    words.mid(0, group ? 2 : 1).join(QLatin1Char(' ')));
    }
    args.command = found->command;
    if (args.help)
        return args;
    args.arguments = words.mid(found->words.size());
    if (args.arguments.size() < found->args || args.arguments.size() > found->args + found->optionalArgs) {
        if (args.arguments.size() < found->args)
            return fail(ErrorCode::Invalid, QStringLiteral("missing %1").arg(QLatin1String(found->argName)),
                        commandName(*found));
        return fail(
            ErrorCode::Invalid,
            QStringLiteral("unexpected argument \"%1\"").arg(args.arguments.value(found->args + found->optionalArgs)),
            commandName(*found));
    }
    for (auto it = args.options.cbegin(); it != args.options.cend(); ++it) {
        if (!GlobalOptions.contains(it.key()) && !found->options.contains(it.key()))
            return fail(ErrorCode::Invalid,
                        QStringLiteral("--%1 does not apply to \"%2\"").arg(it.key(), commandName(*found)),
                        commandName(*found));
    }
    for (const QString &option : found->required) {
        if (!args.has(option))
            return fail(ErrorCode::Invalid, QStringLiteral("needs --%1").arg(option), commandName(*found));
    }
    for (const QString &option : {QStringLiteral("tail"), QStringLiteral("limit")}) {
        if (!args.has(option))
            continue;
        bool ok = false;
        const int n = args.value(option).toInt(&ok);
        if (!ok || n < 0)
            return fail(ErrorCode::Invalid,
                        QStringLiteral("must be a whole number, got \"%1\"").arg(args.value(option)),
                        QStringLiteral("--") + option);
    }
    if (found->command == Command::JobsTrigger || (found->command == Command::RunsList && !args.arguments.isEmpty())) {
        if (auto checked =
                checkPipelineJob(args.arguments.value(0), found->command == Command::RunsList, commandName(*found));
            !checked)
            return std::unexpected(checked.error());
    }
    if (isAppSecretCommand(args) && args.has(QStringLiteral("pipeline")))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("%1 is a secret of app %2: --pipeline does not apply")
                        .arg(args.arguments.constLast(), args.arguments.constFirst()),
                    commandName(*found),
                    QStringLiteral("give APP NAME for an app's secret, or NAME --pipeline P for a pipeline's"));
    if (found->command == Command::GrantsList || found->command == Command::GrantsAdd ||
        found->command == Command::GrantsRemove) {
        if (!parseGrantObject(args.arguments.value(0)))
            return fail(
                ErrorCode::Invalid,
                QStringLiteral("expected APP, app/APP or pipeline/NAME, got \"%1\"").arg(args.arguments.value(0)),
                commandName(*found));
    }
    return args;
}

bool isAppSecretCommand(const Args &args)
{
    switch (args.command) {
    case Command::SecretsSet:
    case Command::SecretsRemove:
        return args.arguments.size() == 2;
    case Command::SecretsList:
        return args.arguments.size() == 1;
    default:
        return false;
    }
}

std::optional<GrantObject> parseGrantObject(const QString &object)
{
    const QStringList parts = object.split(QLatin1Char('/'));
    if (parts.size() == 1 && !parts[0].isEmpty())
        return GrantObject{QStringLiteral("apps"), QStringLiteral("app"), parts[0]};
    if (parts.size() != 2 || parts[1].isEmpty())
        return std::nullopt;
    if (parts[0] == QLatin1String("app"))
        return GrantObject{QStringLiteral("apps"), QStringLiteral("app"), parts[1]};
    if (parts[0] == QLatin1String("pipeline"))
        return GrantObject{QStringLiteral("pipelines"), QStringLiteral("pipeline"), parts[1]};
    return std::nullopt;
}

QString usageText()
{
    return QStringLiteral("usage: pando [--server URL] [--token TOKEN] [--json] COMMAND ...\n"
                          "\n"
                          "commands:\n"
                          "  apps create -f SPEC.yaml      create an app from its spec (-f - reads stdin)\n"
                          "  apps update NAME -f SPEC.yaml replace an app's spec; the next deploy runs it\n"
                          "  apps list                     list the apps\n"
                          "  apps show NAME                show an app: URL, status, current and last deploy\n"
                          "  apps start NAME               start an app's serving version again (after its disk\n"
                          "                                limit stopped it, say)\n"
                          "  capacity                      each runtime's CPUs, memory and disk beside what apps\n"
                          "                                and services committed\n"
                          "  apps rm NAME [--no-wait] [--keep-data | --delete-data]\n"
                          "                                remove an app and wait until it is gone; an app with\n"
                          "                                services needs a flag (asked on a terminal)\n"
                          "  deploy NAME [--ref REF] [--wait]\n"
                          "                                deploy an app; --wait follows the steps to the end\n"
                          "  deploys list NAME [--limit N] list an app's deploys\n"
                          "  deploys show ID               show a deploy and its steps\n"
                          "  logs NAME [-f] [--tail N]     print an app's log; -f follows new lines\n"
                          "\n"
                          "  pipelines set NAME -c PIPELINE.yml [-l VARS.yml] [--yes]\n"
                          "                                show the changes, ask, then set the pipeline\n"
                          "  pipelines list                list the pipelines\n"
                          "  pipelines show NAME           show a pipeline and its jobs\n"
                          "  pipelines pause|unpause NAME  stop or restart starting runs\n"
                          "  pipelines rm NAME [--yes]     remove a pipeline with its runs and secrets\n"
                          "  jobs trigger PIPELINE/JOB [--watch]\n"
                          "                                queue a run; --watch follows it to the end\n"
                          "  runs list [PIPELINE[/JOB]] [--limit N]\n"
                          "                                list runs, newest first\n"
                          "  runs show ID                  show a run's step tree\n"
                          "  runs watch ID                 follow a run to its end\n"
                          "  runs abort ID                 abort a queued or running run\n"
                          "  secrets set NAME [--pipeline P] [--from-file F]\n"
                          "                                set a pipeline secret from standard input (prompted on\n"
                          "                                a terminal) or a file; never from the command line\n"
                          "  secrets list [--pipeline P]   list pipeline secret names\n"
                          "  secrets rm NAME [--pipeline P]\n"
                          "                                remove a pipeline secret\n"
                          "  secrets set APP NAME [--from-file F]\n"
                          "                                set an app secret (an env var of the app, or a file its\n"
                          "                                spec names); the app sees it on its next deploy\n"
                          "  secrets list APP              an app's secret names, when each was set, how injected\n"
                          "  secrets rm APP NAME           remove an app secret\n"
                          "  services list [APP]           backing services: slot, kind, status, volume\n"
                          "  services backup APP SLOT --out FILE [--force]\n"
                          "                                dump a service's data to FILE (pg_dump, mysqldump,\n"
                          "                                redis RDB); --force replaces an existing FILE\n"
                          "  services rm APP SLOT --keep-data|--delete-data\n"
                          "                                remove a service the app's spec no longer declares\n"
                          "  audit list [--actor A] [--action X] [--object O] [--since T] [--until T] [--limit N]\n"
                          "                                audit lines, newest first (T: ISO 8601 or epoch ms)\n"
                          "  audit verify                  check the hash chain; exit 1 naming the first broken line\n"
                          "  audit sinks                   each audit sink's cursor, lag and last error\n"
                          "\n"
                          "  login [--username U]          log in (password prompted, or read from stdin); the\n"
                          "                                session is saved to ~/.config/pando/session (0600)\n"
                          "  users create NAME --role R    create a user (admin, operator, member, viewer); the\n"
                          "                                password is read from standard input\n"
                          "  users list                    list the users\n"
                          "  users disable NAME            disable a user: sessions end, tokens stop working\n"
                          "  tokens create NAME [--scope S]... [--expires 30d]\n"
                          "                                create an API token (at least one scope); its secret is\n"
                          "                                printed once\n"
                          "  tokens list                   list API tokens (never their secrets)\n"
                          "  tokens revoke ID              revoke a token; its WebSockets close\n"
                          "  grants list OBJECT            who holds which grant; OBJECT is APP, app/APP or\n"
                          "                                pipeline/NAME\n"
                          "  grants add OBJECT USER ROLE   give USER a grant (apps: owner, deployer, viewer;\n"
                          "                                pipelines: owner, operator, viewer)\n"
                          "  grants rm OBJECT USER ROLE    take a grant away\n"
                          "\n"
                          "  approvals list [--status S | --all] [--limit N]\n"
                          "                                approvals, newest first (default: pending ones)\n"
                          "  approvals show ID             what waits for sign-off, why, and its plan\n"
                          "  approvals approve ID [--reason TEXT]\n"
                          "                                sign off: the deploy or pipeline step goes on\n"
                          "  approvals reject ID [--reason TEXT]\n"
                          "                                refuse (or withdraw your own request)\n"
                          "\n"
                          "options:\n"
                          "  --server URL    the Pando API (default: $PANDO_SERVER), e.g. http://127.0.0.1:7420\n"
                          "  --token TOKEN   the API token (default: $PANDO_TOKEN, else the saved login session)\n"
                          "  --json          print the API's JSON instead of text\n"
                          "  -h, --help      print this help\n"
                          "\n"
                          "exit status: 0 ok, 1 failed, 2 usage error, 130 interrupted;\n"
                          "  watching a run: 0 succeeded, 1 failed, 3 errored, 4 aborted\n");
}

} // namespace pando::cli
