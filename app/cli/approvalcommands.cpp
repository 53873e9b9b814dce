// `pando approvals list|show|approve|reject`: what waits for sign-off and deciding it.
#include "cli.h"
#include "commands.h"
#include "output.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

namespace pando::cli {

namespace {

// "in 23h59m", "3m ago"; "-" for 0 (never expires).
QString relative(qint64 ms)
{
    if (ms <= 0)
        return QStringLiteral("-");
    const qint64 delta = ms - QDateTime::currentMSecsSinceEpoch();
    return delta >= 0 ? QStringLiteral("in ") + duration(delta) : duration(-delta) + QStringLiteral(" ago");
}

QString approvers(const QJsonObject &approval)
{
    QStringList names;
    for (const QJsonValue v : approval.value(QStringLiteral("approvers")).toArray())
        names << v.toString();
    return names.isEmpty() ? QStringLiteral("anyone who may, but not the requester") : names.join(QStringLiteral(", "));
}

void listApprovals(Cli &cli)
{
    if (cli.args().has(QStringLiteral("status")) && cli.args().has(QStringLiteral("all")))
        return cli.failWith(
            Error{ErrorCode::Invalid, QStringLiteral("give --status or --all, not both"), QStringLiteral("--all")});
    QString status;
    if (!cli.args().has(QStringLiteral("all")))
        status = cli.args().has(QStringLiteral("status")) ? cli.args().value(QStringLiteral("status"))
                                                          : QStringLiteral("pending");
    cli.api().approvals(
        status, cli.args().count(QStringLiteral("limit")), cli.handle([&cli](const client::ApiResponse &r) {
            if (cli.args().json) {
                printJson(r.json);
                return cli.finish(ExitOk);
            }
            QList<QStringList> rows;
            for (const QJsonValue value : r.json.value(QStringLiteral("approvals")).toArray()) {
                const QJsonObject a = value.toObject();
                rows << QStringList{str(a, "id"),
                                    str(a, "status"),
                                    str(a, "object"),
                                    str(a, "requester"),
                                    timestamp(num(a, "created_ms")),
                                    str(a, "status") == QLatin1String("pending") ? relative(num(a, "expires_ms"))
                                                                                 : orDash(str(a, "decided_by")),
                                    str(a, "summary").section(QLatin1Char('\n'), 0, 0).left(60)};
            }
            if (rows.isEmpty()) {
                printOut(cli.args().has(QStringLiteral("all")) || cli.args().has(QStringLiteral("status"))
                             ? QStringLiteral("no approvals match")
                             : QStringLiteral("nothing waits for approval"));
            } else {
                printOut(table({QStringLiteral("ID"), QStringLiteral("STATUS"), QStringLiteral("OBJECT"),
                                QStringLiteral("REQUESTER"), QStringLiteral("CREATED"), QStringLiteral("EXPIRES/BY"),
                                QStringLiteral("SUMMARY")},
                               rows));
            }
            cli.finish(ExitOk);
        }));
}

void showApproval(Cli &cli)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().approval(id, cli.handle([&cli](const client::ApiResponse &r) {
        if (cli.args().json) {
            printJson(r.json);
            return cli.finish(ExitOk);
        }
        const QJsonObject a = r.json;
        QList<std::pair<QString, QString>> pairs{
            {QStringLiteral("id"), str(a, "id")},
            {QStringLiteral("status"), str(a, "status")},
            {QStringLiteral("kind"), str(a, "kind")},
            {QStringLiteral("waiting"), str(a, "object")},
            {QStringLiteral("requester"), str(a, "requester")},
            {QStringLiteral("approvers"), approvers(a)},
            {QStringLiteral("created"), timestamp(num(a, "created_ms"))},
            {QStringLiteral("expires"), num(a, "expires_ms") > 0
                                            ? timestamp(num(a, "expires_ms")) + QStringLiteral(" (") +
                                                  relative(num(a, "expires_ms")) + QLatin1Char(')')
                                            : QStringLiteral("never")},
            {QStringLiteral("summary"), orDash(str(a, "summary"))}};
        if (!str(a, "decided_by").isEmpty()) {
            pairs.append({QStringLiteral("decided by"), str(a, "decided_by")});
            pairs.append({QStringLiteral("decided"), timestamp(num(a, "decided_ms"))});
            pairs.append({QStringLiteral("reason"), orDash(str(a, "reason"))});
        }
        printOut(keyValues(pairs));
        if (a.contains(QStringLiteral("plan"))) {
            printOut(QStringLiteral("\nplan:"));
            printOut(QString::fromUtf8(
                         QJsonDocument(a.value(QStringLiteral("plan")).toObject()).toJson(QJsonDocument::Indented))
                         .trimmed());
        }
        if (str(a, "status") == QLatin1String("pending"))
            printOut(QStringLiteral("\ndecide with: pando approvals approve %1  (or reject %1)").arg(str(a, "id")));
        cli.finish(ExitOk);
    }));
}

void decideApproval(Cli &cli, bool approve)
{
    const QString id = cli.args().arguments.value(0);
    cli.api().decideApproval(
        id, approve ? client::Decision::Approve : client::Decision::Reject, cli.args().value(QStringLiteral("reason")),
        cli.handle([&cli, approve](const client::ApiResponse &r) {
            if (cli.args().json) {
                printJson(r.json);
                return cli.finish(ExitOk);
            }
            printOut(QStringLiteral("%1 %2: %3 %4")
                         .arg(approve ? QStringLiteral("approved") : QStringLiteral("rejected"), str(r.json, "id"),
                              str(r.json, "object"),
                              approve ? QStringLiteral("goes on") : QStringLiteral("will not run")));
            cli.finish(ExitOk);
        }));
}

void approve(Cli &cli)
{
    decideApproval(cli, true);
}

void reject(Cli &cli)
{
    decideApproval(cli, false);
}

constexpr CommandDef ApprovalTable[] = {
    {"approvals",
     "list",
     "",
     0,
     0,
     {{{&flags::Status}, {&flags::All}, {&flags::Limit}}},
     "approvals, newest first (default: pending ones)",
     &listApprovals},
    {"approvals", "show", "ID", 1, 1, {}, "what waits for sign-off, why, and its plan", &showApproval},
    {"approvals",
     "approve",
     "ID",
     1,
     1,
     {{{&flags::Reason}}},
     "sign off: the deploy or pipeline step goes on",
     &approve},
    {"approvals", "reject", "ID", 1, 1, {{{&flags::Reason}}}, "refuse (or withdraw your own request)", &reject},
};
static_assert(isComplete(ApprovalTable),
              "every command needs its words, a summary, a handler and consistent arguments");

} // namespace

std::span<const CommandDef> approvalCommands()
{
    return ApprovalTable;
}

} // namespace pando::cli
