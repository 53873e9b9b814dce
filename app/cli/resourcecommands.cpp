// `pando resources list|versions|pin|unpin|check`: a pipeline's resources, the versions checks
// found, pinning one (Concourse's fly pin-resource) and checking now. PIPELINE/RESOURCE is
// checked by the table's check before anything is sent.
#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace pando::cli {

namespace {

// "PIPELINE/RESOURCE", both parts present.
std::optional<std::pair<QString, QString>> splitTarget(const QString &value)
{
    const QStringList parts = value.split(QLatin1Char('/'));
    if (parts.size() != 2 || parts[0].isEmpty() || parts[1].isEmpty())
        return std::nullopt;
    return std::pair{parts[0], parts[1]};
}

Status checkTarget(const Args &args)
{
    if (splitTarget(args.arguments.value(0)))
        return {};
    return fail(ErrorCode::Invalid,
                QStringLiteral("expected PIPELINE/RESOURCE, got \"%1\"").arg(args.arguments.value(0)),
                commandName(*args.command));
}

// The command's PIPELINE/RESOURCE, which checkTarget vouched for before the command ran.
std::pair<QString, QString> targetOf(const Cli &cli)
{
    return splitTarget(cli.args().arguments.value(0)).value_or(std::pair<QString, QString>{});
}

// "KEY:VALUE" words (fly's -v ref:abc) as a version object; nullopt, with the word, when one
// has no colon or no key.
std::optional<QJsonObject> versionOf(const QStringList &words, QString *bad)
{
    QJsonObject version;
    for (const QString &word : words) {
        const qsizetype colon = word.indexOf(QLatin1Char(':'));
        if (colon <= 0) {
            *bad = word;
            return std::nullopt;
        }
        version.insert(word.left(colon), word.mid(colon + 1));
    }
    return version;
}

Status checkPin(const Args &args)
{
    if (auto target = checkTarget(args); !target)
        return target;
    QString bad;
    if (!versionOf(args.arguments.mid(1), &bad))
        return fail(ErrorCode::Invalid, QStringLiteral("expected KEY:VALUE, got \"%1\"").arg(bad),
                    commandName(*args.command));
    return {};
}

QString versionText(const QJsonObject &version)
{
    QStringList parts;
    for (auto it = version.begin(); it != version.end(); ++it)
        parts << it.key() + QLatin1Char(':') + it.value().toString();
    return parts.join(QLatin1Char(' '));
}

void listResources(Cli &cli)
{
    const QString pipeline = cli.args().arguments.value(0);
    cli.api().resources(pipeline, cli.handle([&cli, pipeline](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray resources = r.json.value(QStringLiteral("resources")).toArray();
        if (resources.isEmpty()) {
            printOut(QStringLiteral("pipeline %1 has no resources").arg(pipeline));
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : resources) {
            const QJsonObject res = value.toObject();
            const QJsonObject pinned = res.value(QStringLiteral("pinned_version")).toObject();
            QString pin = QStringLiteral("-");
            if (!pinned.isEmpty())
                pin = versionText(pinned) + (res.value(QStringLiteral("pinned_in_config")).toBool()
                                                 ? QStringLiteral(" (in the config)")
                                                 : QStringLiteral(" (by %1)").arg(str(res, "pinned_by")));
            const QString checkError = str(res, "check_error");
            rows << QStringList{str(res, "name"), str(res, "type"), timestamp(num(res, "checked_ms")),
                                checkError.isEmpty() ? QStringLiteral("ok") : QStringLiteral("failed: ") + checkError,
                                pin};
        }
        printOut(table({QStringLiteral("NAME"), QStringLiteral("TYPE"), QStringLiteral("CHECKED"),
                        QStringLiteral("CHECK"), QStringLiteral("PINNED")},
                       rows));
        cli.finish(ExitOk);
    }));
}

void listVersions(Cli &cli)
{
    const auto [pipeline, resource] = targetOf(cli);
    std::optional<int> limit;
    if (cli.args().has(QStringLiteral("limit")))
        limit = cli.args().value(QStringLiteral("limit")).toInt();
    cli.api().resourceVersions(pipeline, resource, limit, cli.handle([&cli, resource](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonArray versions = r.json.value(QStringLiteral("versions")).toArray();
        if (versions.isEmpty()) {
            printOut(QStringLiteral("no versions of %1 found yet; check now with: pando resources check %2")
                         .arg(resource, cli.args().arguments.value(0)));
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : versions) {
            const QJsonObject v = value.toObject();
            rows << QStringList{QString::number(num(v, "seq")),
                                versionText(v.value(QStringLiteral("version")).toObject()),
                                timestamp(num(v, "found_ms")),
                                v.value(QStringLiteral("pinned")).toBool() ? QStringLiteral("pinned") : QString()};
        }
        printOut(
            table({QStringLiteral("#"), QStringLiteral("VERSION"), QStringLiteral("FOUND"), QStringLiteral("")}, rows));
        cli.finish(ExitOk);
    }));
}

void pin(Cli &cli)
{
    const auto [pipeline, resource] = targetOf(cli);
    QString bad;
    const QJsonObject version = versionOf(cli.args().arguments.mid(1), &bad).value_or(QJsonObject{});
    cli.api().pinResource(pipeline, resource, version, cli.handle([&cli, resource](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("pinned %1 to %2")
                         .arg(resource, versionText(r.json.value(QStringLiteral("pinned_version")).toObject())));
        cli.finish(ExitOk);
    }));
}

void unpin(Cli &cli)
{
    const auto [pipeline, resource] = targetOf(cli);
    cli.api().unpinResource(pipeline, resource, cli.handle([&cli, resource](const client::ApiResponse &) {
        if (cli.args().json)
            printJson(QJsonObject{{QStringLiteral("unpinned"), resource}});
        else
            printOut(QStringLiteral("unpinned %1: gets use its newest version again").arg(resource));
        cli.finish(ExitOk);
    }));
}

void checkNow(Cli &cli)
{
    const auto [pipeline, resource] = targetOf(cli);
    cli.api().checkResourceNow(pipeline, resource, cli.handle([&cli, pipeline, resource](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("checking %1; see what it finds with: pando resources versions %2/%1")
                         .arg(resource, pipeline));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef ResourceTable[] = {
    {"resources",
     "list",
     "PIPELINE",
     1,
     1,
     {},
     "list a pipeline's resources, their last check and pin",
     &listResources},
    {"resources",
     "versions",
     "PIPELINE/RESOURCE",
     1,
     1,
     {{{&flags::Limit}}},
     "list the versions checks found, newest first",
     &listVersions,
     Needs::Token,
     &checkTarget},
    {"resources",
     "pin",
     "PIPELINE/RESOURCE KEY:VALUE...",
     2,
     16,
     {},
     "pin the newest version with these fields; every get uses it",
     &pin,
     Needs::Token,
     &checkPin,
     "Like fly pin-resource: pando resources pin ci/repo ref:abc123. The version must be one a\n"
     "check found (pando resources versions); runs use it until pando resources unpin."},
    {"resources",
     "unpin",
     "PIPELINE/RESOURCE",
     1,
     1,
     {},
     "unpin the resource: gets use its newest version again",
     &unpin,
     Needs::Token,
     &checkTarget},
    {"resources",
     "check",
     "PIPELINE/RESOURCE",
     1,
     1,
     {},
     "check the resource for new versions now",
     &checkNow,
     Needs::Token,
     &checkTarget},
};
static_assert(isComplete(ResourceTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> resourceCommands()
{
    return ResourceTable;
}

} // namespace pando::cli
