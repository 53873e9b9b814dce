// `pando audit list`, `pando audit verify` and `pando audit sinks`.
#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

namespace pando::cli {

namespace {
// "2026-11-29T18:00:00Z", "2026-11-29", or milliseconds since the epoch.
Result<qint64> parseTime(const QString &text, const QString &option)
{
    bool ok = false;
    const qint64 ms = text.toLongLong(&ok);
    if (ok && ms >= 0)
        return ms;
    QDateTime t = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!t.isValid())
        t = QDateTime::fromString(text, Qt::ISODate);
    if (!t.isValid())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("expected an ISO 8601 time (2026-11-29T18:00:00Z) or epoch milliseconds, got \"%1\"")
                        .arg(text),
                    QStringLiteral("--") + option);
    return t.toMSecsSinceEpoch();
}

void listAudit(Cli &cli)
{
    const Args &args = cli.args();
    client::AuditQuery query{args.value(QStringLiteral("actor")),
                             args.value(QStringLiteral("action")),
                             args.value(QStringLiteral("object")),
                             {},
                             {},
                             args.count(QStringLiteral("limit"))};
    for (const auto &[option, ms] : {std::pair{"since", &query.sinceMs}, std::pair{"until", &query.untilMs}}) {
        if (!args.has(QLatin1String(option)))
            continue;
        auto parsed = parseTime(args.value(QLatin1String(option)), QLatin1String(option));
        if (!parsed)
            return cli.failWith(parsed.error());
        *ms = *parsed;
    }
    cli.api().audit(query, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("lines")).toArray()) {
            const QJsonObject line = value.toObject();
            rows << QStringList{QString::number(num(line, "seq")),
                                timestamp(num(line, "time_ms")),
                                str(line, "actor"),
                                str(line, "action"),
                                str(line, "object"),
                                str(line, "outcome"),
                                orDash(str(line, "source"))};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("no audit lines match"));
        else
            printOut(
                table({QStringLiteral("SEQ"), QStringLiteral("TIME"), QStringLiteral("ACTOR"), QStringLiteral("ACTION"),
                       QStringLiteral("OBJECT"), QStringLiteral("OUTCOME"), QStringLiteral("SOURCE")},
                      rows));
        cli.finish(ExitOk);
    }));
}

void verifyAudit(Cli &cli)
{
    cli.api().verifyAudit(cli.handle([&cli](const client::ApiResponse &r) {
        const bool ok = r.json.value(QStringLiteral("ok")).toBool();
        if (cli.args().json)
            printJson(r.json);
        else if (ok)
            printOut(QStringLiteral("audit chain intact: %1 lines").arg(num(r.json, "lines")));
        if (ok)
            return cli.finish(ExitOk);
        const qint64 broken = num(r.json, "first_broken");
        cli.failWith(Error{ErrorCode::Failed, QStringLiteral("the audit chain is broken at line %1").arg(broken),
                           QStringLiteral("audit"),
                           QStringLiteral("line %1 was changed or removed after it was written; see pando "
                                          "audit list --limit 5 and compare with your SIEM's copy")
                               .arg(broken)});
    }));
}

void listAuditSinks(Cli &cli)
{
    cli.api().auditSinks(cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        QList<QStringList> rows;
        for (const QJsonValue value : r.json.value(QStringLiteral("sinks")).toArray()) {
            const QJsonObject sink = value.toObject();
            rows << QStringList{str(sink, "name"),
                                str(sink, "kind"),
                                QString::number(num(sink, "cursor")),
                                QString::number(num(sink, "newest")),
                                QString::number(num(sink, "lag")),
                                timestamp(num(sink, "last_delivery_ms")),
                                orDash(str(sink, "last_error"))};
        }
        if (rows.isEmpty())
            printOut(QStringLiteral("no audit sinks (pandod --audit-sinks FILE starts them)"));
        else
            printOut(table({QStringLiteral("NAME"), QStringLiteral("KIND"), QStringLiteral("CURSOR"),
                            QStringLiteral("NEWEST"), QStringLiteral("LAG"), QStringLiteral("LAST DELIVERY"),
                            QStringLiteral("LAST ERROR")},
                           rows));
        cli.finish(ExitOk);
    }));
}

constexpr CommandDef AuditTable[] = {
    {"audit",
     "list",
     "",
     0,
     0,
     {{{&flags::Actor}, {&flags::Action}, {&flags::Object}, {&flags::Since}, {&flags::Until}, {&flags::Limit}}},
     "audit lines, newest first (T: ISO 8601 or epoch ms)",
     &listAudit},
    {"audit", "verify", "", 0, 0, {}, "check the hash chain; exit 1 naming the first broken line", &verifyAudit},
    {"audit", "sinks", "", 0, 0, {}, "each audit sink's cursor, lag and last error", &listAuditSinks},
};
static_assert(isComplete(AuditTable), "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> auditCommands()
{
    return AuditTable;
}

} // namespace pando::cli
