// `pando apps env list|set|unset`: what an app's container finds in its environment, and run.env
// changed as a new revision of the spec that keeps the rest of its text (docs/cli.md).

#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QJsonArray>

namespace pando::cli {
namespace {

QString fromText(const QJsonObject &variable)
{
    const QString from = str(variable, "from");
    const QString detail = str(variable, "detail");
    if (from == u"spec")
        return detail.isEmpty() ? QStringLiteral("run.env") : QStringLiteral("run.env (%1)").arg(detail);
    if (from == u"pando")
        return QStringLiteral("Pando (%1)").arg(detail);
    if (from == u"service")
        return QStringLiteral("service %1").arg(detail);
    return detail.isEmpty() ? QStringLiteral("secret") : QStringLiteral("secret (%1)").arg(detail);
}

void listEnv(Cli &cli, const QString &app)
{
    cli.api().appEnv(app, cli.handle([&cli, app](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray variables = r.json.value(QStringLiteral("variables")).toArray();
        if (variables.isEmpty()) {
            printOut(
                QStringLiteral("app %1 gets no variables; set one with: pando apps env set %1 NAME=VALUE").arg(app));
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : variables) {
            const QJsonObject variable = value.toObject();
            rows << QStringList{str(variable, "name"),
                                variable.contains(QStringLiteral("value")) ? str(variable, "value")
                                                                           : QStringLiteral("(hidden)"),
                                fromText(variable)};
        }
        printOut(table({QStringLiteral("NAME"), QStringLiteral("VALUE"), QStringLiteral("FROM")}, rows));
        cli.finish(ExitOk);
    }));
}

// "+ NAME=value", "~ NAME: old → new", "- NAME": what a change did, for people.
QString changeLine(const QJsonObject &change)
{
    const QString name = str(change, "name");
    if (!change.contains(QStringLiteral("before")))
        return QStringLiteral("  + %1=%2").arg(name, str(change, "after"));
    if (!change.contains(QStringLiteral("after")))
        return QStringLiteral("  - %1 (was %2)").arg(name, str(change, "before"));
    return QStringLiteral("  ~ %1: %2 → %3").arg(name, str(change, "before"), str(change, "after"));
}

void changeEnv(Cli &cli, const QString &app, bool setting, const QStringList &words)
{
    QJsonObject set;
    QJsonArray unset;
    for (qsizetype i = 0; i < words.size(); ++i) {
        const QString &word = words[i];
        if (!setting) {
            unset.append(word);
            continue;
        }
        const qsizetype eq = word.indexOf(u'=');
        if (eq <= 0)
            return cli.failWithCode(
                Error{ErrorCode::Invalid, QStringLiteral("expected NAME=VALUE, got \"%1\"").arg(word),
                      QStringLiteral("argument %1").arg(i + 2),
                      QStringLiteral("pando apps env set %1 LOG_LEVEL=debug (an empty value: NAME=)").arg(app)},
                ExitUsage);
        set.insert(word.left(eq), word.mid(eq + 1));
    }
    QJsonObject change;
    if (setting)
        change.insert(QStringLiteral("set"), set);
    else
        change.insert(QStringLiteral("unset"), unset);
    cli.api().changeAppEnv(app, change, cli.handle([&cli, app, unset](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray changes = r.json.value(QStringLiteral("changes")).toArray();
        QStringList changed;
        for (const QJsonValue value : changes)
            changed << str(value.toObject(), "name");
        // An unset name run.env does not hold may be a secret's, which is removed elsewhere.
        for (const QJsonValue value : unset)
            if (!changed.contains(value.toString()))
                printErr(QStringLiteral("%1 is not in run.env (a secret is removed with: pando secrets rm %2 %1)")
                             .arg(value.toString(), app));
        if (changes.isEmpty()) {
            printOut(QStringLiteral("run.env of app %1 already says so; nothing changed").arg(app));
            return cli.finish(ExitOk);
        }
        printOut(QStringLiteral("changed run.env of app %1 (a new revision of its spec):").arg(app));
        for (const QJsonValue value : changes)
            printOut(changeLine(value.toObject()));
        printOut(QStringLiteral("the next deploy runs it: pando deploy %1 --wait").arg(app));
        cli.finish(ExitOk);
    }));
}

void env(Cli &cli)
{
    const QStringList arguments = cli.args().arguments;
    const QString verb = arguments.value(0);
    const QString app = arguments.value(1);
    const QStringList words = arguments.mid(2);
    if (verb == u"list") {
        if (!words.isEmpty())
            return cli.failWithCode(Error{ErrorCode::Invalid, QStringLiteral("apps env list takes the app's name only"),
                                          QStringLiteral("argument 3")},
                                    ExitUsage);
        return listEnv(cli, app);
    }
    if (verb != u"set" && verb != u"unset")
        return cli.failWithCode(Error{ErrorCode::Invalid,
                                      QStringLiteral("unknown env command \"%1\": list, set or unset").arg(verb),
                                      QStringLiteral("argument 1")},
                                ExitUsage);
    if (words.isEmpty())
        return cli.failWithCode(Error{ErrorCode::Invalid,
                                      verb == u"set" ? QStringLiteral("missing NAME=VALUE: what to set")
                                                     : QStringLiteral("missing NAME: what to unset"),
                                      QStringLiteral("argument 3")},
                                ExitUsage);
    changeEnv(cli, app, verb == u"set", words);
}

constexpr CommandDef EnvTable[] = {
    {"apps",
     "env",
     "list|set|unset NAME [VAR=VALUE... | VAR...]",
     2,
     100,
     {},
     "list what an app's container finds in its environment, or set or unset run.env's variables",
     &env,
     Needs::Token,
     nullptr,
     "list: each variable and where it comes from (run.env, Pando's PORT, a service, a secret); the\n"
     "values of services and secrets are never shown.\n"
     "set APP VAR=VALUE..., unset APP VAR...: a new revision of the app's spec with only those lines\n"
     "changed (comments and the rest of the text stay); the next deploy runs it. A secret's value\n"
     "belongs in pando secrets set, not in run.env."},
};
static_assert(isComplete(EnvTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> envCommands()
{
    return EnvTable;
}

} // namespace pando::cli
