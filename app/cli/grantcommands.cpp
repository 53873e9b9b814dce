// `pando grants list|add|rm`: who holds owner, deployer, operator or viewer on an app or a
// pipeline, and who may use a source connection. OBJECT is APP, app/APP, pipeline/NAME or
// connection/NAME (parseArgs checked it).
#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QJsonArray>

namespace pando::cli {

namespace {

struct GrantObject {
    client::GrantKind kind = client::GrantKind::App;
    QString word; // "app", "pipeline": for messages
    QString name;
};

// "hello" and "app/hello" are the app hello, "pipeline/ci" the pipeline ci (and
// "pipeline/preview/branch:main" an instance of preview); nullopt otherwise.
std::optional<GrantObject> parseGrantObject(const QString &object)
{
    // Split at the first '/' only: an instanced pipeline's name holds more (pipeline/preview/branch:main).
    const qsizetype slash = object.indexOf(QLatin1Char('/'));
    if (slash < 0)
        return object.isEmpty() ? std::nullopt
                                : std::optional(GrantObject{client::GrantKind::App, QStringLiteral("app"), object});
    const QStringList parts{object.left(slash), object.mid(slash + 1)};
    if (parts[1].isEmpty() || (parts[0] != QLatin1String("pipeline") && parts[1].contains(QLatin1Char('/'))))
        return std::nullopt;
    if (parts[0] == QLatin1String("app"))
        return GrantObject{client::GrantKind::App, QStringLiteral("app"), parts[1]};
    if (parts[0] == QLatin1String("pipeline"))
        return GrantObject{client::GrantKind::Pipeline, QStringLiteral("pipeline"), parts[1]};
    if (parts[0] == QLatin1String("connection"))
        return GrantObject{client::GrantKind::Connection, QStringLiteral("connection"), parts[1]};
    return std::nullopt;
}

Status checkGrantObject(const Args &args)
{
    if (parseGrantObject(args.arguments.value(0)))
        return {};
    return fail(ErrorCode::Invalid,
                QStringLiteral("expected APP, app/APP, pipeline/NAME or connection/NAME, got \"%1\"")
                    .arg(args.arguments.value(0)),
                commandName(*args.command));
}

GrantObject grantObject(const Args &args)
{
    return parseGrantObject(args.arguments.value(0)).value_or(GrantObject{});
}

void listGrants(Cli &cli)
{
    const GrantObject object = grantObject(cli.args());
    cli.api().grants(object.kind, object.name, cli.handle([&cli, object](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("grants")).toArray()) {
            const QJsonObject grant = value.toObject();
            rows << QStringList{str(grant, "user"), str(grant, "role"), timestamp(num(grant, "createdMs"))};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("no grants on %1/%2").arg(object.word, object.name));
        else
            printOut(table({QStringLiteral("USER"), QStringLiteral("ROLE"), QStringLiteral("GRANTED")}, rows));
        cli.finish(ExitOk);
    }));
}

void addGrant(Cli &cli)
{
    const GrantObject object = grantObject(cli.args());
    const QString user = cli.args().arguments.value(1);
    const QString role = cli.args().arguments.value(2);
    cli.api().addGrant(
        object.kind, object.name, user, role, cli.handle([&cli, object, user, role](const client::ApiResponse &r) {
            if (cli.args().json)
                printJson(r.json);
            else if (r.status == 200)
                printOut(QStringLiteral("%1 already holds %2 on %3/%4").arg(user, role, object.word, object.name));
            else
                printOut(QStringLiteral("%1 now holds %2 on %3/%4").arg(user, role, object.word, object.name));
            cli.finish(ExitOk);
        }));
}

void removeGrant(Cli &cli)
{
    const GrantObject object = grantObject(cli.args());
    const QString user = cli.args().arguments.value(1);
    const QString role = cli.args().arguments.value(2);
    cli.api().removeGrant(
        object.kind, object.name, user, role, cli.handle([&cli, object, user, role](const client::ApiResponse &) {
            if (cli.args().json)
                printJson(QJsonObject{{QStringLiteral("object"), QString(object.word + QLatin1Char('/') + object.name)},
                                      {QStringLiteral("user"), user},
                                      {QStringLiteral("role"), role},
                                      {QStringLiteral("status"), QStringLiteral("removed")}});
            else
                printOut(QStringLiteral("%1 no longer holds %2 on %3/%4").arg(user, role, object.word, object.name));
            cli.finish(ExitOk);
        }));
}

constexpr CommandDef GrantTable[] = {
    {"grants",
     "list",
     "OBJECT",
     1,
     1,
     {},
     "who holds which grant on OBJECT (APP, app/APP, pipeline/NAME or connection/NAME)",
     &listGrants,
     Needs::Token,
     &checkGrantObject},
    {"grants",
     "add",
     "OBJECT USER ROLE",
     3,
     3,
     {},
     "give USER a grant on OBJECT",
     &addGrant,
     Needs::Token,
     &checkGrantObject,
     "Roles: on apps owner, deployer, viewer; on pipelines owner, operator, viewer; on source connections\n"
     "user (who may read apps' sources through it)."},
    {"grants", "rm", "OBJECT USER ROLE", 3, 3, {}, "take a grant away", &removeGrant, Needs::Token, &checkGrantObject},
};
static_assert(isComplete(GrantTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> grantCommands()
{
    return GrantTable;
}

} // namespace pando::cli
