// `pando approvals list|show|approve|reject`: what waits for sign-off and deciding it.
#include "cli.h"
#include "output.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

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
    for (const QJsonValue &v : approval.value(QStringLiteral("approvers")).toArray())
        names << v.toString();
    return names.isEmpty() ? QStringLiteral("anyone who may, but not the requester") : names.join(QStringLiteral(", "));
}

} // namespace

void Cli::listApprovals()
{
    QStringList query;
    if (m_args.has(QStringLiteral("status")) && m_args.has(QStringLiteral("all")))
        return failWith(
            Error{ErrorCode::Invalid, QStringLiteral("give --status or --all, not both"), QStringLiteral("--all")});
    if (!m_args.has(QStringLiteral("all")))
        query << queryItem(QStringLiteral("status"), m_args.has(QStringLiteral("status"))
                                                         ? m_args.value(QStringLiteral("status"))
                                                         : QStringLiteral("pending"));
    if (m_args.has(QStringLiteral("limit")))
        query << queryItem(QStringLiteral("limit"), m_args.value(QStringLiteral("limit")));
    m_client->get(withQuery(QStringLiteral("/api/v1/approvals"), query), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : r.json.value(QStringLiteral("approvals")).toArray()) {
                          const QJsonObject a = value.toObject();
                          rows << QStringList{str(a, "id"),
                                              str(a, "status"),
                                              str(a, "object"),
                                              str(a, "requester"),
                                              timestamp(num(a, "created_ms")),
                                              str(a, "status") == QLatin1String("pending")
                                                  ? relative(num(a, "expires_ms"))
                                                  : orDash(str(a, "decided_by")),
                                              str(a, "summary").section(QLatin1Char('\n'), 0, 0).left(60)};
                      }
                      if (rows.isEmpty()) {
                          printOut(m_args.has(QStringLiteral("all")) || m_args.has(QStringLiteral("status"))
                                       ? QStringLiteral("no approvals match")
                                       : QStringLiteral("nothing waits for approval"));
                      } else {
                          printOut(table({QStringLiteral("ID"), QStringLiteral("STATUS"), QStringLiteral("OBJECT"),
                                          QStringLiteral("REQUESTER"), QStringLiteral("CREATED"),
                                          QStringLiteral("EXPIRES/BY"), QStringLiteral("SUMMARY")},
                                         rows));
                      }
                      finish(ExitOk);
                  }));
}

void Cli::showApproval()
{
    const QString id = m_args.arguments.value(0);
    m_client->get(
        QStringLiteral("/api/v1/approvals/") + segment(id), handle([this](const client::ApiResponse &r) {
            if (m_args.json) {
                printJson(r.json);
                return finish(ExitOk);
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
            finish(ExitOk);
        }));
}

void Cli::decideApproval(bool approve)
{
    const QString id = m_args.arguments.value(0);
    QJsonObject body;
    if (m_args.has(QStringLiteral("reason")))
        body.insert(QStringLiteral("reason"), m_args.value(QStringLiteral("reason")));
    const QString path = QStringLiteral("/api/v1/approvals/") + segment(id) +
                         (approve ? QStringLiteral("/approve") : QStringLiteral("/reject"));
    m_client->postJson(path, body, handle([this, approve](const client::ApiResponse &r) {
                           if (m_args.json) {
                               printJson(r.json);
                               return finish(ExitOk);
                           }
                           printOut(QStringLiteral("%1 %2: %3 %4")
                                        .arg(approve ? QStringLiteral("approved") : QStringLiteral("rejected"),
                                             str(r.json, "id"), str(r.json, "object"),
                                             approve ? QStringLiteral("goes on") : QStringLiteral("will not run")));
                           finish(ExitOk);
                       }));
}

} // namespace pando::cli
