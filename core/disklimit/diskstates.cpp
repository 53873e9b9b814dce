#include "core/disklimit/diskstates.h"

#include "core/spec/appspec.h"
#include "core/state/sql.h"

using namespace Qt::StringLiterals;

namespace pando::core::disklimit {

namespace {

Result<QSqlQuery> query(Database &db, const QString &sql, const QVariantList &values, const QString &what)
{
    auto connection = db.connection();
    if (!connection)
        return std::unexpected(connection.error());
    return core::detail::run(*connection, db.isPostgres(), sql, values, what);
}

} // namespace

QString DiskState::reason() const
{
    return u"%1: wrote %2, over its disk limit of %3"_s.arg(action, formatMemory(usedBytes), formatMemory(limitBytes));
}

Result<std::optional<DiskState>> DiskStates::find(const QString &app)
{
    auto q =
        query(m_db, u"SELECT deploy_id, action, used_bytes, limit_bytes, since_ms FROM app_disk_states WHERE app = ?"_s,
              {core::detail::text(app)}, u"read the disk state of app %1"_s.arg(app));
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return std::optional<DiskState>();
    DiskState s;
    s.app = app;
    s.deployId = q->value(0).toString();
    s.action = q->value(1).toString();
    s.usedBytes = q->value(2).toLongLong();
    s.limitBytes = q->value(3).toLongLong();
    s.sinceMs = q->value(4).toLongLong();
    return std::optional<DiskState>(s);
}

Status DiskStates::put(const DiskState &state)
{
    const QString what = u"record the disk state of app %1"_s.arg(state.app);
    auto tx = core::detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    if (auto gone = tx->run(u"DELETE FROM app_disk_states WHERE app = ?"_s, {core::detail::text(state.app)}, what);
        !gone)
        return std::unexpected(gone.error());
    if (auto put = tx->run(u"INSERT INTO app_disk_states (app, deploy_id, action, used_bytes, limit_bytes, since_ms) "
                           u"VALUES (?, ?, ?, ?, ?, ?)"_s,
                           {core::detail::text(state.app), core::detail::text(state.deployId),
                            core::detail::text(state.action), state.usedBytes, state.limitBytes, state.sinceMs},
                           what);
        !put)
        return std::unexpected(put.error());
    return tx->commit();
}

Status DiskStates::clear(const QString &app)
{
    auto q = query(m_db, u"DELETE FROM app_disk_states WHERE app = ?"_s, {core::detail::text(app)},
                   u"clear the disk state of app %1"_s.arg(app));
    if (!q)
        return std::unexpected(q.error());
    return {};
}

bool isHeldStopped(Database &db, const QString &app, const QString &deployId)
{
    auto state = DiskStates(db).find(app);
    // Unreadable: hold. Restarting an app that may be over its disk limit is the worse mistake.
    if (!state)
        return true;
    const auto &held = *state;
    return held && held->deployId == deployId && held->action == ActionStopped;
}

} // namespace pando::core::disklimit
