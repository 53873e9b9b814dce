#include "eventbus.h"

namespace pando::core {

QJsonObject Event::toJson() const
{
    QJsonObject o{{QStringLiteral("type"), toString(type)}, {QStringLiteral("time_ms"), timeMs}};
    if (!app.isEmpty())
        o.insert(QStringLiteral("app"), app);
    if (!deployId.isEmpty())
        o.insert(QStringLiteral("deploy"), deployId);
    if (!data.isEmpty())
        o.insert(QStringLiteral("data"), data);
    return o;
}

} // namespace pando::core
