#include "services.h"

namespace pando::core {

adapters::Labels Services::labels(const QString &app, const QString &deployId) const
{
    adapters::Labels l{{QLatin1String(adapters::LabelManaged), QStringLiteral("true")},
                       {QLatin1String(adapters::LabelInstall), installId}};
    if (!app.isEmpty())
        l.insert(QLatin1String(adapters::LabelApp), app);
    if (!deployId.isEmpty())
        l.insert(QLatin1String(adapters::LabelDeploy), deployId);
    return l;
}

void Services::publish(const QString &type, const QString &app, const QString &deployId, const QJsonObject &data) const
{
    events.publish(Event{type, app, deployId, data, clock.nowMs()});
}

std::shared_ptr<QMutex> AppLocks::lockFor(const QString &app)
{
    QMutexLocker lock(&m_mutex);
    auto &slot = m_locks[app];
    if (!slot)
        slot = std::make_shared<QMutex>();
    return slot;
}

QString imageTag(const QString &app, const QString &deployId)
{
    return QStringLiteral("pando/%1:%2").arg(app, deployId);
}

QString containerName(const QString &app, const QString &deployId)
{
    return QStringLiteral("pando-%1-%2").arg(app, deployId);
}

} // namespace pando::core
