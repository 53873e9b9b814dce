#include "core/common/periodic.h"

#include <chrono>

namespace pando::core {

void Periodic::start(int intervalMs, const QString &name, std::function<void()> work)
{
    stop();
    {
        std::lock_guard lock(m_mutex);
        m_stopping = false;
    }
    m_thread.reset(QThread::create([this, intervalMs, work = std::move(work)] {
        std::unique_lock lock(m_mutex);
        while (!m_stopping) {
            m_wake.wait_for(lock, std::chrono::milliseconds(intervalMs), [this] { return m_stopping; });
            if (m_stopping)
                break;
            lock.unlock();
            work();
            lock.lock();
        }
    }));
    m_thread->setObjectName(name);
    m_thread->start();
}

void Periodic::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread) {
        m_thread->wait();
        m_thread.reset();
    }
}

} // namespace pando::core
