#include "secretaccess.h"

#include "output.h"

#include <QJsonArray>

namespace pando::cli {

namespace {

// Who reads an install-wide secret, from its {"all", "pipelines"}.
QString readers(const QJsonObject &access)
{
    if (access.value(QStringLiteral("all")).toBool())
        return QStringLiteral("every pipeline");
    QStringList names;
    for (const QJsonValue v : access.value(QStringLiteral("pipelines")).toArray())
        names << v.toString();
    return names.isEmpty() ? QStringLiteral("no pipeline (pando secrets access NAME PIPELINE grants one)")
                           : names.join(QStringLiteral(", "));
}

} // namespace

QList<QStringList> accessRows(const QJsonObject &answer)
{
    QList<QStringList> rows;
    for (const QJsonValue v : answer.value(QStringLiteral("access")).toArray())
        rows << QStringList{v.toObject().value(QStringLiteral("name")).toString(), readers(v.toObject())};
    return rows;
}

void setSecretAccess(Cli &cli)
{
    const QString name = cli.args().arguments.constFirst();
    const QStringList pipelines = cli.args().arguments.mid(1);
    const bool all = cli.args().has(QStringLiteral("all-pipelines"));
    if (all && !pipelines.isEmpty())
        return cli.failWith(Error{ErrorCode::Invalid, QStringLiteral("give --all-pipelines or pipelines, not both"),
                                  QStringLiteral("--all-pipelines"),
                                  QStringLiteral("pando secrets access %1 P1 P2, or pando secrets access %1 "
                                                 "--all-pipelines")
                                      .arg(name)});
    cli.api().setSecretAccess(name, all, pipelines, cli.handle([&cli, name](const client::ApiResponse &r) {
        if (cli.args().json)
            printJson(r.json);
        else
            printOut(QStringLiteral("install-wide secret %1 is read by %2").arg(name, readers(r.json)));
        cli.finish(ExitOk);
    }));
}

} // namespace pando::cli
