// `pando resources list|versions|pin|unpin|check`: a pipeline's resources, the versions checks
// found, pinning one (Concourse's fly pin-resource) and checking now. PIPELINE/RESOURCE is
// checked by the table's check before anything is sent.
#include "cli.h"
#include "commands.h"
#include "output.h"

#include "core/pipelines/config/instancename.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>

namespace pando::cli {

namespace {

// "PIPELINE/RESOURCE", both parts present.
std::optional<std::pair<QString, QString>> splitTarget(const QString &value)
{
    auto parts = core::pipelines::splitPipelinePath(value);
    if (parts.first.isEmpty() || parts.second.isEmpty() || parts.second.contains(QLatin1Char('/')))
        return std::nullopt;
    return parts;
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

// PIPELINE/RESOURCE, then KEY:VALUE words.
Status checkVersionWords(const Args &args)
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

// How long `resources check` waits for the install's trigger loop to run the check.
constexpr qint64 CheckWaitMs = qint64{10} * 60 * 1000;

// The resource's row in a resources listing; empty when it is not there.
QJsonObject resourceRow(const QJsonObject &listing, const QString &resource)
{
    for (const QJsonValue value : listing.value(QStringLiteral("resources")).toArray())
        if (value.toObject().value(QStringLiteral("name")).toString() == resource)
            return value.toObject();
    return {};
}

// The check has answered: its error (exit 1), or the newest version there is now.
void reportCheck(Cli &cli, const QString &pipeline, const QString &resource, const QJsonObject &row)
{
    const QString target = pipeline + QLatin1Char('/') + resource;
    if (const QString error = str(row, "check_error"); !error.isEmpty())
        return cli.failWith(Error{ErrorCode::Failed, QStringLiteral("the check failed: ") + error, target,
                                  QStringLiteral("fix the resource's source (pando pipelines show %1), then check "
                                                 "again: pando resources check %2")
                                      .arg(pipeline, target)});
    cli.api().resourceVersions(pipeline, resource, 1, cli.handle([&cli, resource, row](const client::ApiResponse &r) {
        const QJsonObject newest = r.json.value(QStringLiteral("versions")).toArray().at(0).toObject();
        if (cli.args().json)
            printJson(QJsonObject{{QStringLiteral("resource"), row}, {QStringLiteral("newest"), newest}});
        else if (newest.isEmpty())
            printOut(QStringLiteral("checked %1: no versions yet").arg(resource));
        else
            printOut(QStringLiteral("checked %1: the newest version is %2")
                         .arg(resource, versionText(newest.value(QStringLiteral("version")).toObject())));
        cli.finish(ExitOk);
    }));
}

// Reads the resource until its last check is another than `before`, then reports it.
void awaitCheck(Cli &cli, const QString &pipeline, const QString &resource, qint64 before, qint64 startedMs,
                int errors = 0)
{
    cli.api().resources(
        pipeline, [&cli, pipeline, resource, before, startedMs, errors](const Result<client::ApiResponse> &r) {
            if (cli.isFinished())
                return;
            if (r) {
                if (const QJsonObject row = resourceRow(r->json, resource); num(row, "checked_ms") != before)
                    return reportCheck(cli, pipeline, resource, row);
            } else if (errors + 1 >= MaxPollErrors) {
                return cli.failWith(r.error());
            }
            if (QDateTime::currentMSecsSinceEpoch() - startedMs > CheckWaitMs)
                return cli.failWith(
                    Error{ErrorCode::Failed, QStringLiteral("the check has not answered in 10 minutes"),
                          pipeline + QLatin1Char('/') + resource,
                          QStringLiteral("see whether it has since: pando resources list %1").arg(pipeline)});
            QTimer::singleShot(PollIntervalMs, &cli,
                               [&cli, pipeline, resource, before, startedMs, next = r ? errors : errors + 1] {
                                   awaitCheck(cli, pipeline, resource, before, startedMs, next);
                               });
        });
}

// As fly check-resource: asks for a check (from the version the words give, else the newest)
// and waits for its answer; --async returns once it is asked for.
void checkNow(Cli &cli)
{
    const auto [pipeline, resource] = targetOf(cli);
    QString bad;
    const QJsonObject from = versionOf(cli.args().arguments.mid(1), &bad).value_or(QJsonObject{});
    cli.api().resources(pipeline, cli.handle([&cli, pipeline, resource, from](const client::ApiResponse &listing) {
        const qint64 before = num(resourceRow(listing.json, resource), "checked_ms");
        cli.api().checkResourceNow(
            pipeline, resource, from,
            cli.handle([&cli, pipeline, resource, from, before](const client::ApiResponse &r) {
                const QString start = from.isEmpty() ? QString() : QStringLiteral(" from ") + versionText(from);
                if (cli.args().has(QStringLiteral("async"))) {
                    if (cli.args().json)
                        printJson(r.json);
                    else
                        printOut(QStringLiteral("checking %1%3; see what it finds with: pando resources versions %2/%1")
                                     .arg(resource, pipeline, start));
                    return cli.finish(ExitOk);
                }
                if (!cli.args().json)
                    printOut(QStringLiteral("checking %1%2 ...").arg(resource, start));
                cli.setOnInterrupt([pipeline] {
                    printErr(QStringLiteral("the check goes on; see it with: pando resources list %1").arg(pipeline));
                });
                awaitCheck(cli, pipeline, resource, before, QDateTime::currentMSecsSinceEpoch());
            }));
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
     &checkVersionWords,
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
     "PIPELINE/RESOURCE [KEY:VALUE...]",
     1,
     16,
     {{{&flags::Async}}},
     "check the resource for new versions now, and say what it found",
     &checkNow,
     Needs::Token,
     &checkVersionWords,
     "Like fly check-resource: waits for the check's answer and exits 1 when the check failed.\n"
     "KEY:VALUE words check from that version instead of the newest (fly's --from), which finds\n"
     "again what came after it: pando resources check ci/repo ref:abc123."},
};
static_assert(isComplete(ResourceTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> resourceCommands()
{
    return ResourceTable;
}

} // namespace pando::cli
