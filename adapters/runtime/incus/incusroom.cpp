// IncusRuntime's room and disk use: what GET /capacity and the disk limits read; the root pool.
#include "adapters/runtime/incus/incusruntime.h"

#include <QJsonObject>

namespace pando::adapters::incus {

namespace {

QString rootPoolOf(const QJsonObject &profile)
{
    return profile.value(QLatin1String("devices"))
        .toObject()
        .value(QLatin1String("root"))
        .toObject()
        .value(QLatin1String("pool"))
        .toString();
}

} // namespace

Result<QString> IncusRuntime::rootPool()
{
    auto profile = m_client.get(QStringLiteral("/1.0/profiles/default"));
    if (!profile)
        return std::unexpected(profile.error());
    const QString pool = rootPoolOf(profile->toObject());
    if (pool.isEmpty())
        return fail(ErrorCode::Unavailable, QStringLiteral("Incus's default profile has no root disk pool"),
                    QStringLiteral("incus profile default"),
                    QStringLiteral("give it one: incus profile device add default root disk path=/ pool=POOL"));
    return pool;
}

Result<QList<RuntimeRoom>> IncusRuntime::rooms()
{
    auto resources = m_client.get(QStringLiteral("/1.0/resources"));
    if (!resources)
        return std::unexpected(resources.error());
    const QJsonObject r = resources->toObject();
    RuntimeRoom room;
    room.kind = QStringLiteral("incus");
    room.cpus = r.value(QLatin1String("cpu")).toObject().value(QLatin1String("total")).toDouble();
    const QJsonObject memory = r.value(QLatin1String("memory")).toObject();
    room.memoryBytes = memory.value(QLatin1String("total")).toInteger();
    if (memory.contains(QLatin1String("used")))
        room.memoryAvailableBytes = room.memoryBytes - memory.value(QLatin1String("used")).toInteger();
    QStringList notes;
    const QString pool = rootPool().value_or(QString());
    if (pool.isEmpty()) {
        notes << QStringLiteral("disk unknown: the default profile has no root disk pool");
    } else {
        auto info = m_client.get(QStringLiteral("/1.0/storage-pools/") + pool);
        const QString driver = info ? info->toObject().value(QLatin1String("driver")).toString() : QString();
        room.disk = QStringLiteral("storage pool %1%2")
                        .arg(pool, driver.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(driver));
        if (auto space = m_client.get(QStringLiteral("/1.0/storage-pools/%1/resources").arg(pool))) {
            const QJsonObject s = space->toObject().value(QLatin1String("space")).toObject();
            room.diskBytes = s.value(QLatin1String("total")).toInteger();
            if (s.contains(QLatin1String("used")))
                room.diskAvailableBytes = room.diskBytes - s.value(QLatin1String("used")).toInteger();
        } else {
            notes << QStringLiteral("disk unknown: %1").arg(space.error().text());
        }
    }
    // A dir pool (what Pando is tested with) reports no per-instance disk use, so disk limits
    // are refused on Incus at plan time; see capabilities().canMeasureDisk.
    room.canMeasureDisk = false;
    notes << QStringLiteral("per-app disk use is not measured on Incus: disk limits are refused");
    room.note = notes.join(QStringLiteral("; "));
    return QList<RuntimeRoom>{room};
}

Result<qint64> IncusRuntime::diskUsage(const QString &id)
{
    auto state = m_client.get(QStringLiteral("/1.0/instances/%1/state").arg(id));
    if (!state)
        return std::unexpected(state.error());
    const QJsonObject root =
        state->toObject().value(QLatin1String("disk")).toObject().value(QLatin1String("root")).toObject();
    if (!root.contains(QLatin1String("usage")))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("the instance's storage pool does not report its disk use (a dir pool without "
                                   "project quotas reports none)"),
                    id);
    return root.value(QLatin1String("usage")).toInteger();
}

} // namespace pando::adapters::incus
