#include "core/pipelines/retry/sleeper.h"

#include <QDeadlineTimer>
#include <QThread>
#include <algorithm>

namespace pando::core {

bool SystemSleeper::sleep(qint64 ms, const CancelToken &cancel)
{
    QDeadlineTimer deadline(std::max<qint64>(ms, 0));
    while (!cancel.isCancelled()) {
        const qint64 left = deadline.remainingTime();
        if (left <= 0)
            return true;
        QThread::msleep(static_cast<unsigned long>(std::min<qint64>(left, 10)));
    }
    return false;
}

Sleeper &SystemSleeper::instance()
{
    static SystemSleeper sleeper;
    return sleeper;
}

bool ManualSleeper::sleep(qint64 ms, const CancelToken &cancel)
{
    std::function<void(int, qint64)> hook;
    int index = 0;
    {
        QMutexLocker lock(&m_mutex);
        index = int(m_sleeps.size());
        m_sleeps.append(ms);
        hook = m_onSleep;
    }
    if (hook)
        hook(index, ms);
    if (cancel.isCancelled())
        return false;
    if (m_clock)
        m_clock->advance(ms);
    return true;
}

QList<qint64> ManualSleeper::sleeps() const
{
    QMutexLocker lock(&m_mutex);
    return m_sleeps;
}

void ManualSleeper::setOnSleep(std::function<void(int, qint64)> hook)
{
    QMutexLocker lock(&m_mutex);
    m_onSleep = std::move(hook);
}

} // namespace pando::core
