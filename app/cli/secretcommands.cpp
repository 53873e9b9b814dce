// `pando secrets`: an app's secrets (APP NAME), a pipeline's (--pipeline P) and the install's
// (--install), over the same API as everything else; who may read an install-wide one is
// secretaccess.cpp.

#include "cli.h"
#include "commands.h"
#include "output.h"
#include "prompt.h"
#include "secretaccess.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace pando::cli {
namespace {

QString scopeName(const QString &scope)
{
    return scope.isEmpty() ? QStringLiteral("the install") : QStringLiteral("pipeline ") + scope;
}

// `secrets set|rm APP NAME` and `secrets list APP`: an app's secrets, not a pipeline's.
bool isAppSecretCommand(const Args &args)
{
    const std::string_view name = args.command->name;
    return name == "list" ? args.arguments.size() == 1 : args.arguments.size() == 2;
}

Status checkAppSecret(const Args &args)
{
    const bool pipeline = args.has(QStringLiteral("pipeline"));
    const bool install = args.has(QStringLiteral("install"));
    const QString forms = QStringLiteral(
        "give APP NAME for an app's secret, NAME --pipeline P for a pipeline's, or NAME --install for the install's");
    if (pipeline && install)
        return fail(ErrorCode::Invalid, QStringLiteral("pass --pipeline or --install, not both"),
                    commandName(*args.command), forms);
    if (isAppSecretCommand(args)) {
        if (!pipeline && !install)
            return {};
        return fail(ErrorCode::Invalid,
                    QStringLiteral("%1 is a secret of app %2: --%3 does not apply")
                        .arg(args.arguments.constLast(), args.arguments.constFirst(),
                             pipeline ? QStringLiteral("pipeline") : QStringLiteral("install")),
                    commandName(*args.command), forms);
    }
    // `secrets set web` with the secret's name forgotten would otherwise set an install-wide
    // secret "web" that every pipeline reads: a secret meant for one place never lands in the
    // widest one by accident, so the scope of NAME alone is always spelled out.
    if (std::string_view(args.command->name) != "list" && !pipeline && !install)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("\"%1\" alone does not say whose secret it is").arg(args.arguments.value(0)),
                    commandName(*args.command), forms);
    return {};
}

void sendSecret(Cli &cli, const QString &value);

void setSecret(Cli &cli)
{
    const QString name = cli.args().arguments.constLast();
    readSecretValue(cli, QStringLiteral("secret ") + name, [&cli](const QString &value) { sendSecret(cli, value); });
}

void sendSecret(Cli &cli, const QString &value)
{
    const QString name = cli.args().arguments.constLast();
    const bool forApp = isAppSecretCommand(cli.args());
    const QString app = forApp ? cli.args().arguments.constFirst() : QString();
    if (value.isEmpty())
        return cli.failWith(
            Error{ErrorCode::Invalid, QStringLiteral("the secret's value is empty"),
                  cli.args().has(QStringLiteral("from-file")) ? QStringLiteral("--from-file") : QStringLiteral("stdin"),
                  QStringLiteral("pipe the value in: pando secrets set %1 < file")
                      .arg(forApp ? app + QLatin1Char(' ') + name : name)});
    if (forApp) {
        cli.api().setAppSecret(app, name, value, cli.handle([&cli, app, name](const client::ApiResponse &r) {
            if (cli.args().json)
                printJson(r.json);
            else
                printOut(QStringLiteral("set secret %1 of app %2 (as %3); it reaches the app on its "
                                        "next deploy: pando deploy %2")
                             .arg(name, app, str(r.json, "injected_as")));
            cli.finish(ExitOk);
        }));
        return;
    }
    const QString scope = cli.args().value(QStringLiteral("pipeline"));
    cli.api().setSecret(name, scope, value, cli.handle([&cli, name, scope](const client::ApiResponse &) {
        if (cli.args().json)
            printJson(QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("scope"), scope}});
        else
            printOut(scope.isEmpty() ? QStringLiteral("set secret %1 for the install; only the pipelines it is granted "
                                                      "to read it (pando secrets access %1 PIPELINE...)")
                                           .arg(name)
                                     : QStringLiteral("set secret %1 for %2").arg(name, scopeName(scope)));
        cli.finish(ExitOk);
    }));
}

void listSecrets(Cli &cli)
{
    if (isAppSecretCommand(cli.args())) {
        const QString app = cli.args().arguments.constFirst();
        cli.api().appSecrets(app, cli.handle([&cli, app](const client::ApiResponse &r) {
            if (cli.args().json) {
                printJson(r.json);
                return cli.finish(ExitOk);
            }
            QList<QStringList> rows;
            for (const QJsonValue v : r.json.value(QStringLiteral("secrets")).toArray()) {
                const QJsonObject o = v.toObject();
                const QString how = str(o, "injected_as") == QLatin1String("file")
                                        ? QStringLiteral("file ") + str(o, "file")
                                        : QStringLiteral("env");
                rows << QStringList{str(o, "name"), how, timestamp(num(o, "created_ms")),
                                    timestamp(num(o, "updated_ms"))};
            }
            if (rows.isEmpty())
                printOut(QStringLiteral("no secrets for app %1").arg(app));
            else
                printOut(table({QStringLiteral("NAME"), QStringLiteral("INJECTED AS"), QStringLiteral("SET"),
                                QStringLiteral("UPDATED")},
                               rows));
            for (const QJsonValue v : r.json.value(QStringLiteral("missing")).toArray())
                printErr(QStringLiteral("warning: the spec asks for secret %1, which is not set; "
                                        "the next deploy fails until it is")
                             .arg(v.toString()));
            cli.finish(ExitOk);
        }));
        return;
    }
    const QString scope = cli.args().value(QStringLiteral("pipeline"));
    cli.api().secrets(scope, cli.handle([&cli, scope](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray names = r.json.value(QStringLiteral("secrets")).toArray();
        if (names.isEmpty())
            printOut(QStringLiteral("no secrets for %1").arg(scopeName(scope)));
        else if (!scope.isEmpty())
            for (const QJsonValue name : names)
                printOut(name.toString());
        else
            printOut(table({QStringLiteral("NAME"), QStringLiteral("READ BY")}, accessRows(r.json)));
        cli.finish(ExitOk);
    }));
}

void removeSecret(Cli &cli)
{
    const QString name = cli.args().arguments.constLast();
    if (isAppSecretCommand(cli.args())) {
        const QString app = cli.args().arguments.constFirst();
        cli.api().removeAppSecret(app, name, cli.handle([&cli, app, name](const client::ApiResponse &) {
            if (cli.args().json)
                printJson(QJsonObject{{QStringLiteral("app"), app},
                                      {QStringLiteral("name"), name},
                                      {QStringLiteral("status"), QStringLiteral("removed")}});
            else
                printOut(QStringLiteral("removed secret %1 of app %2; the app keeps it until its "
                                        "next deploy")
                             .arg(name, app));
            cli.finish(ExitOk);
        }));
        return;
    }
    const QString scope = cli.args().value(QStringLiteral("pipeline"));
    cli.api().removeSecret(name, scope, cli.handle([&cli, name, scope](const client::ApiResponse &) {
        if (cli.args().json)
            printJson(QJsonObject{{QStringLiteral("name"), name},
                                  {QStringLiteral("scope"), scope},
                                  {QStringLiteral("status"), QStringLiteral("removed")}});
        else
            printOut(QStringLiteral("removed secret %1 from %2").arg(name, scopeName(scope)));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef SecretTable[] = {
    // NAME is a pipeline secret (--pipeline P, or the install's); APP NAME an app's.
    {"secrets",
     "set",
     "[APP] NAME",
     1,
     2,
     {{{&flags::Pipeline, 'p'}, {&flags::Install}, {&flags::FromFile}}},
     "set a secret from standard input or a file, never from the command line",
     &setSecret,
     Needs::Token,
     &checkAppSecret,
     "APP NAME is an app's secret (an env var or a file its spec names; the app sees it on its next deploy);\n"
     "NAME alone needs its scope: --pipeline P for a pipeline's, --install for the whole install's.\n"
     "On a terminal the value is asked without echo."},
    {"secrets",
     "list",
     "[APP]",
     0,
     1,
     {{{&flags::Pipeline, 'p'}, {&flags::Install}}},
     "list secret names (an app's: when each was set and how it is injected)",
     &listSecrets,
     Needs::Token,
     &checkAppSecret},
    {"secrets",
     "access",
     "NAME [PIPELINE...]",
     1,
     64,
     {{{&flags::AllPipelines}}},
     "set which pipelines may read an install-wide secret",
     &setSecretAccess,
     Needs::Token,
     nullptr,
     "The pipelines listed replace the current ones; none listed: no pipeline may read it.\n"
     "A new install-wide secret is read by no pipeline until this says which (docs/pipelines.md)."},
    {"secrets",
     "rm",
     "[APP] NAME",
     1,
     2,
     {{{&flags::Pipeline, 'p'}, {&flags::Install}}},
     "remove a secret (an app's, or a pipeline's)",
     &removeSecret,
     Needs::Token,
     &checkAppSecret},
};
static_assert(isComplete(SecretTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> secretCommands()
{
    return SecretTable;
}

} // namespace pando::cli
