#include "observer.h"

namespace pando::core {

Result<QList<adapters::ContainerInfo>> Observer::containers(qint64 notBeforeMs)
{
    // Holding the mutex across the runtime call is what makes concurrent callers share it.
    QMutexLocker lock(&m_mutex);
    const qint64 now = m_clock.nowMs();
    if (m_fetchedMs >= 0 && now - m_fetchedMs < m_ttlMs && m_startedMs > notBeforeMs)
        return m_last;
    // What the runtime reports reflects the moment the request started.
    m_startedMs = now;
    m_last = m_runtime.containers(m_filter);
    m_fetchedMs = m_clock.nowMs();
    return m_last;
}

void Observer::invalidate()
{
    QMutexLocker lock(&m_mutex);
    m_fetchedMs = -1;
}

} // namespace pando::core
