// `pando audit list`, `pando audit verify` and `pando audit sinks`.
#include "cli.h"
#include "output.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

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
} // namespace

void Cli::listAudit()
{
    QStringList query;
    for (const char *option : {"actor", "action", "object"}) {
        const QString name = QLatin1String(option);
        if (m_args.has(name))
            query << queryItem(name, m_args.value(name));
    }
    for (const auto &[option, param] : {std::pair{"since", "since_ms"}, std::pair{"until", "until_ms"}}) {
        if (!m_args.has(QLatin1String(option)))
            continue;
        auto ms = parseTime(m_args.value(QLatin1String(option)), QLatin1String(option));
        if (!ms)
            return failWith(ms.error());
        query << QLatin1String(param) + QLatin1Char('=') + QString::number(*ms);
    }
    if (m_args.has(QStringLiteral("limit")))
        query << queryItem(QStringLiteral("limit"), m_args.value(QStringLiteral("limit")));
    m_client->get(withQuery(QStringLiteral("/api/v1/audit"), query), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : r.json.value(QStringLiteral("lines")).toArray()) {
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
                          printOut(table({QStringLiteral("SEQ"), QStringLiteral("TIME"), QStringLiteral("ACTOR"),
                                          QStringLiteral("ACTION"), QStringLiteral("OBJECT"), QStringLiteral("OUTCOME"),
                                          QStringLiteral("SOURCE")},
                                         rows));
                      finish(ExitOk);
                  }));
}

void Cli::verifyAudit()
{
    m_client->get(QStringLiteral("/api/v1/audit/verify"), handle([this](const client::ApiResponse &r) {
                      const bool ok = r.json.value(QStringLiteral("ok")).toBool();
                      if (m_args.json)
                          printJson(r.json);
                      else if (ok)
                          printOut(QStringLiteral("audit chain intact: %1 lines").arg(num(r.json, "lines")));
                      if (ok)
                          return finish(ExitOk);
                      const qint64 broken = num(r.json, "first_broken");
                      failWith(Error{ErrorCode::Failed,
                                     QStringLiteral("the audit chain is broken at line %1").arg(broken),
                                     QStringLiteral("audit"),
                                     QStringLiteral("line %1 was changed or removed after it was written; see pando "
                                                    "audit list --limit 5 and compare with your SIEM's copy")
                                         .arg(broken)});
                  }));
}

void Cli::listAuditSinks()
{
    m_client->get(QStringLiteral("/api/v1/audit/sinks"), handle([this](const client::ApiResponse &r) {
                      if (m_args.json) {
                          printJson(r.json);
                          return finish(ExitOk);
                      }
                      QList<QStringList> rows;
                      for (const QJsonValue &value : r.json.value(QStringLiteral("sinks")).toArray()) {
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
                                          QStringLiteral("NEWEST"), QStringLiteral("LAG"),
                                          QStringLiteral("LAST DELIVERY"), QStringLiteral("LAST ERROR")},
                                         rows));
                      finish(ExitOk);
                  }));
}

} // namespace pando::cli
