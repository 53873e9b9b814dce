// `pando grants list|add|rm`: who holds owner, deployer, operator or viewer on an app or a
// pipeline. OBJECT is APP, app/APP or pipeline/NAME (parseArgs checked it).
#include "cli.h"
#include "output.h"

#include <QJsonArray>

namespace pando::cli {

namespace {

GrantObject grantObject(const Args &args)
{
    return parseGrantObject(args.arguments.value(0)).value_or(GrantObject{});
}

QString grantsPath(const GrantObject &object)
{
    return QStringLiteral("/api/v1/") + object.collection + QLatin1Char('/') + segment(object.name) +
           QStringLiteral("/grants");
}

} // namespace

void Cli::listGrants()
{
    const GrantObject object = grantObject(m_args);
    m_client->get(
        grantsPath(object), handle([this, object](const client::ApiResponse &r) {
            if (m_args.json) {
                printJson(r.json);
                return finish(ExitOk);
            }
            QList<QStringList> rows;
            for (const QJsonValue &value : r.json.value(QStringLiteral("grants")).toArray()) {
                const QJsonObject grant = value.toObject();
                rows << QStringList{str(grant, "user"), str(grant, "role"), timestamp(num(grant, "createdMs"))};
            }
            if (rows.isEmpty())
                printOut(QStringLiteral("no grants on %1/%2").arg(object.kind, object.name));
            else
                printOut(table({QStringLiteral("USER"), QStringLiteral("ROLE"), QStringLiteral("GRANTED")}, rows));
            finish(ExitOk);
        }));
}

void Cli::addGrant()
{
    const GrantObject object = grantObject(m_args);
    const QString user = m_args.arguments.value(1);
    const QString role = m_args.arguments.value(2);
    m_client->postJson(
        grantsPath(object), QJsonObject{{QStringLiteral("user"), user}, {QStringLiteral("role"), role}},
        handle([this, object, user, role](const client::ApiResponse &r) {
            if (m_args.json)
                printJson(r.json);
            else if (r.status == 200)
                printOut(QStringLiteral("%1 already holds %2 on %3/%4").arg(user, role, object.kind, object.name));
            else
                printOut(QStringLiteral("%1 now holds %2 on %3/%4").arg(user, role, object.kind, object.name));
            finish(ExitOk);
        }));
}

void Cli::removeGrant()
{
    const GrantObject object = grantObject(m_args);
    const QString user = m_args.arguments.value(1);
    const QString role = m_args.arguments.value(2);
    m_client->remove(
        grantsPath(object) + QLatin1Char('/') + segment(user) + QLatin1Char('/') + segment(role),
        handle([this, object, user, role](const client::ApiResponse &) {
            if (m_args.json)
                printJson(QJsonObject{{QStringLiteral("object"), QString(object.kind + QLatin1Char('/') + object.name)},
                                      {QStringLiteral("user"), user},
                                      {QStringLiteral("role"), role},
                                      {QStringLiteral("status"), QStringLiteral("removed")}});
            else
                printOut(QStringLiteral("%1 no longer holds %2 on %3/%4").arg(user, role, object.kind, object.name));
            finish(ExitOk);
        }));
}

} // namespace pando::cli
