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
        {Command::AppsList, {QStringLiteral("apps"), QStringLiteral("list")}, 0, {}, {}, ""},
        {Command::AppsShow, {QStringLiteral("apps"), QStringLiteral("show")}, 1, {}, {}, "NAME"},
        {Command::AppsRemove,
         {QStringLiteral("apps"), QStringLiteral("rm")},
         1,
         {QStringLiteral("no-wait")},
         {},
         "NAME"},
        {Command::Deploy, {QStringLiteral("deploy")}, 1, {QStringLiteral("ref"), QStringLiteral("wait")}, {}, "NAME"},
        {Command::DeploysList,
         {QStringLiteral("deploys"), QStringLiteral("list")},
         1,
         {QStringLiteral("limit")},
         {},
         "NAME"},
        {Command::DeploysShow, {QStringLiteral("deploys"), QStringLiteral("show")}, 1, {}, {}, "ID"},
        {Command::Logs, {QStringLiteral("logs")}, 1, {QStringLiteral("follow"), QStringLiteral("tail")}, {}, "NAME"},
    };
    return list;
}

const QStringList GlobalOptions = {QStringLiteral("server"), QStringLiteral("token"), QStringLiteral("json"),
                                   QStringLiteral("help"), QStringLiteral("version")};
const QStringList ValueOptions = {QStringLiteral("server"), QStringLiteral("token"), QStringLiteral("file"),
                                  QStringLiteral("ref"),    QStringLiteral("tail"),  QStringLiteral("limit")};
const QStringList FlagOptions = {QStringLiteral("json"), QStringLiteral("help"),    QStringLiteral("version"),
                                 QStringLiteral("wait"), QStringLiteral("no-wait"), QStringLiteral("follow")};

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
        const bool group = words[0] == QLatin1String("apps") || words[0] == QLatin1String("deploys");
        return fail(ErrorCode::Invalid,
                    group ? QStringLiteral("unknown subcommand \"%1\"").arg(words.value(1))
                          : QStringLiteral("unknown command \"%1\"").arg(words[0]),
                    words.mid(0, group ? 2 : 1).join(QLatin1Char(' ')));
    }
    args.command = found->command;
    if (args.help)
        return args;
    args.arguments = words.mid(found->words.size());
    if (args.arguments.size() != found->args) {
        if (args.arguments.size() < found->args)
            return fail(ErrorCode::Invalid, QStringLiteral("missing %1").arg(QLatin1String(found->argName)),
                        commandName(*found));
        return fail(ErrorCode::Invalid,
                    QStringLiteral("unexpected argument \"%1\"").arg(args.arguments.value(found->args)),
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
    return args;
}

QString usageText()
{
    return QStringLiteral("usage: pando [--server URL] [--token TOKEN] [--json] COMMAND ...\n"
                          "\n"
                          "commands:\n"
                          "  apps create -f SPEC.yaml      create an app from its spec (-f - reads stdin)\n"
                          "  apps list                     list the apps\n"
                          "  apps show NAME                show an app: URL, status, current and last deploy\n"
                          "  apps rm NAME [--no-wait]      remove an app and wait until it is gone\n"
                          "  deploy NAME [--ref REF] [--wait]\n"
                          "                                deploy an app; --wait follows the steps to the end\n"
                          "  deploys list NAME [--limit N] list an app's deploys\n"
                          "  deploys show ID               show a deploy and its steps\n"
                          "  logs NAME [-f] [--tail N]     print an app's log; -f follows new lines\n"
                          "\n"
                          "options:\n"
                          "  --server URL    the Pando API (default: $PANDO_SERVER), e.g. http://127.0.0.1:7420\n"
                          "  --token TOKEN   the API token (default: $PANDO_TOKEN)\n"
                          "  --json          print the API's JSON instead of text\n"
                          "  -h, --help      print this help\n"
                          "\n"
                          "exit status: 0 ok, 1 failed, 2 usage error, 130 interrupted\n");
}

} // namespace pando::cli
