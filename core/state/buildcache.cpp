// BuildCacheRepository: the build_cache table (migration 22).
#include "repositories.h"

#include "sql.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Status BuildCacheRepository::add(const QList<BuildCacheRecord> &images)
{
    if (images.isEmpty())
        return {};
    const QString what = u"keep the build cache of deploy "_s + images.first().deployId;
    auto tx = detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    for (const BuildCacheRecord &image : images) {
        // ON CONFLICT DO NOTHING: SQLite (3.24 on) and PostgreSQL read it alike.
        auto q = tx->run(u"INSERT INTO build_cache (image_id, app, deploy_id, position, bytes, made_ms)"
                         " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (image_id) DO NOTHING"_s,
                         {detail::text(image.imageId), detail::text(image.app), detail::text(image.deployId),
                          image.position, image.bytes, image.madeMs},
                         what);
        if (!q)
            return std::unexpected(q.error());
    }
    return tx->commit();
}

Result<QList<BuildCacheRecord>> BuildCacheRepository::list(const QString &app)
{
    auto q =
        detail::run(m_db,
                    u"SELECT image_id, app, deploy_id, position, bytes, made_ms FROM build_cache"_s +
                        (app.isEmpty() ? QString() : u" WHERE app = ?"_s) + u" ORDER BY made_ms DESC, position DESC"_s,
                    app.isEmpty() ? QVariantList{} : QVariantList{detail::text(app)}, u"list the build cache"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<BuildCacheRecord> out;
    while (q->next())
        out.append({q->value(0).toString(), q->value(1).toString(), q->value(2).toString(), q->value(3).toInt(),
                    q->value(4).toLongLong(), q->value(5).toLongLong()});
    return out;
}

Status BuildCacheRepository::remove(const QString &imageId)
{
    auto q = detail::run(m_db, u"DELETE FROM build_cache WHERE image_id = ?"_s, {detail::text(imageId)},
                         u"forget build cache image "_s + imageId);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<BuildCacheRepository::Totals> BuildCacheRepository::totals()
{
    auto q =
        detail::run(m_db, u"SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM build_cache"_s, {}, u"sum the build cache"_s);
    if (!q)
        return std::unexpected(q.error());
    Totals totals;
    if (q->next())
        totals = {q->value(0).toInt(), q->value(1).toLongLong()};
    return totals;
}

} // namespace pando::core
