#include "core/common/periodic.h"

namespace pando::core {

void Periodic::start(int intervalMs, const QString &name, std::function<void()> work)
{
    stop();
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = false;
    }
    m_thread.reset(QThread::create([this, intervalMs, work = std::move(work)] {
        QMutexLocker lock(&m_mutex);
        while (!m_stopping) {
            m_wake.wait(&m_mutex, quint64(intervalMs));
            if (m_stopping)
                break;
            lock.unlock();
            work();
            lock.relock();
        }
    }));
    m_thread->setObjectName(name);
    m_thread->start();
}

void Periodic::stop()
{
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = true;
        m_wake.wakeAll();
    }
    if (m_thread) {
        m_thread->wait();
        m_thread.reset();
    }
}

} // namespace pando::core
