#include "clock.h"

#include <QDateTime>

namespace pando::core {

qint64 SystemClock::nowMs() const
{
    return QDateTime::currentMSecsSinceEpoch();
}

Clock &SystemClock::instance()
{
    static SystemClock clock;
    return clock;
}

} // namespace pando::core
