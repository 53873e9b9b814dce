#include "repositories.h"

#include "sql.h"

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

const QString kAppColumns =
    u"name, spec_yaml, route_port, current_deploy, created_ms, updated_ms, creator_id, source_trusted, "
    u"source_connection, stopped_deploy, stopped_by, stopped_ms, spec_writer"_s;

AppRecord appFrom(const QSqlQuery &q)
{
    AppRecord app;
    app.name = q.value(0).toString();
    app.specYaml = q.value(1).toString();
    app.routePort = q.value(2).toInt();
    app.currentDeploy = q.value(3).toString();
    app.createdMs = q.value(4).toLongLong();
    app.updatedMs = q.value(5).toLongLong();
    app.creatorId = q.value(6).toString();
    app.sourceTrusted = q.value(7).toInt() != 0;
    app.sourceConnection = q.value(8).toString();
    app.stoppedDeploy = q.value(9).toString();
    app.stoppedBy = q.value(10).toString();
    app.stoppedMs = q.value(11).toLongLong();
    app.specWriter = q.value(12).toString();
    return app;
}

// One UPDATE of some app columns; NotFound when the app is not there.
Status updateApp(Database &database, const QString &name, const QList<std::pair<QString, QVariant>> &columns,
                 qint64 nowMs)
{
    auto db = database.connection();
    if (!db)
        return std::unexpected(db.error());
    // The columns are our own names, never input.
    QString set;
    QVariantList values;
    for (const auto &[column, value] : columns) {
        set += column + u" = ?, "_s;
        values << value;
    }
    values << nowMs << detail::text(name);
    auto q = detail::run(*db, database.isPostgres(), u"UPDATE apps SET "_s + set + u"updated_ms = ? WHERE name = ?"_s,
                         values, u"update app "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no app named "_s + name, u"apps"_s);
    return {};
}

} // namespace

Status AppRepository::create(const AppRecord &app)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        detail::run(*db, m_db.isPostgres(),
                    u"INSERT INTO apps ("_s + kAppColumns + u") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s,
                    {detail::text(app.name), detail::text(app.specYaml), app.routePort, detail::text(app.currentDeploy),
                     app.createdMs, app.updatedMs, detail::text(app.creatorId), app.sourceTrusted ? 1 : 0,
                     detail::text(app.sourceConnection), detail::text(app.stoppedDeploy), detail::text(app.stoppedBy),
                     app.stoppedMs, detail::text(app.specWriter)},
                    u"create app "_s + app.name);
    if (!q) {
        if (q.error().code == ErrorCode::Conflict)
            return fail(ErrorCode::Conflict, u"an app named "_s + app.name + u" already exists"_s, u"apps"_s);
        return std::unexpected(q.error());
    }
    return {};
}

Result<AppRecord> AppRepository::find(const QString &name)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT "_s + kAppColumns + u" FROM apps WHERE name = ?"_s,
                         {detail::text(name)}, u"find app "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no app named "_s + name, u"apps"_s);
    AppRecord app = appFrom(*q);
    q->finish();
    return app;
}

Result<QList<AppRecord>> AppRepository::list()
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT "_s + kAppColumns + u" FROM apps ORDER BY name"_s, {},
                         u"list apps"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<AppRecord> apps;
    while (q->next())
        apps.append(appFrom(*q));
    return apps;
}

Status AppRepository::setSpec(const QString &name, const QString &specYaml, qint64 nowMs)
{
    return updateApp(m_db, name, {{u"spec_yaml"_s, detail::text(specYaml)}}, nowMs);
}

Status AppRepository::setSourceReader(const QString &name, bool trusted, const QString &connection,
                                      const QString &writer, qint64 nowMs)
{
    return updateApp(m_db, name,
                     {{u"source_trusted"_s, trusted ? 1 : 0},
                      {u"source_connection"_s, detail::text(connection)},
                      {u"spec_writer"_s, detail::text(writer)}},
                     nowMs);
}

Result<int> AppRepository::countCreatedBy(const QString &userId)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"SELECT COUNT(*) FROM apps WHERE creator_id = ?"_s,
                         {detail::text(userId)}, u"count the apps a user made"_s);
    if (!q)
        return std::unexpected(q.error());
    const int n = q->next() ? q->value(0).toInt() : 0;
    q->finish();
    return n;
}

Status AppRepository::setRoutePort(const QString &name, int port, qint64 nowMs)
{
    return updateApp(m_db, name, {{u"route_port"_s, port}}, nowMs);
}

Status AppRepository::setCurrentDeploy(const QString &name, const QString &deployId, qint64 nowMs)
{
    return updateApp(m_db, name, {{u"current_deploy"_s, detail::text(deployId)}}, nowMs);
}

Status AppRepository::setStopped(const QString &name, const QString &deployId, const QString &by, qint64 nowMs)
{
    return updateApp(m_db, name,
                     {{u"stopped_deploy"_s, detail::text(deployId)},
                      {u"stopped_by"_s, detail::text(by)},
                      {u"stopped_ms"_s, deployId.isEmpty() ? 0 : nowMs}},
                     nowMs);
}

Status AppRepository::remove(const QString &name)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    // Deploys and their steps go through ON DELETE CASCADE (foreign_keys=ON on every SQLite connection).
    auto q = detail::run(*db, m_db.isPostgres(), u"DELETE FROM apps WHERE name = ?"_s, {detail::text(name)},
                         u"remove app "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"no app named "_s + name, u"apps"_s);
    return {};
}

} // namespace pando::core
