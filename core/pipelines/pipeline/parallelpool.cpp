#include "parallelpool.h"

#include <QGlobalStatic>
#include <QtGlobal>

namespace pando::core::pipelines {

ParallelPool::ParallelPool(int threads) : m_ceiling(qMax(1, threads))
{}

ParallelPool::~ParallelPool()
{
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    for (std::thread &thread : m_threads)
        thread.join();
}

Q_GLOBAL_STATIC(ParallelPool, sharedPool, ParallelPool::SharedThreads)

ParallelPool &ParallelPool::shared()
{
    return *sharedPool;
}

bool ParallelPool::tryStart(std::function<void()> work)
{
    const std::lock_guard lock(m_mutex);
    if (m_stopping)
        return false;
    if (m_idle > int(m_handed.size())) {
        m_handed.push_back(std::move(work));
        m_wake.notify_one();
        return true;
    }
    if (int(m_threads.size()) >= m_ceiling)
        return false;
    m_handed.push_back(std::move(work));
    m_threads.emplace_back([this] { workerLoop(); });
    return true;
}

void ParallelPool::workerLoop()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        if (!m_handed.empty()) {
            std::function<void()> work = std::move(m_handed.front());
            m_handed.pop_front();
            lock.unlock();
            work();
            work = nullptr; // what the branch captured goes before the thread is counted idle
            lock.lock();
            continue;
        }
        if (m_stopping)
            return;
        ++m_idle;
        m_wake.wait(lock, [this] { return m_stopping || !m_handed.empty(); });
        --m_idle;
    }
}

void ParallelGroup::run(const std::function<void()> &branch)
{
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_limit <= 0 || m_running < m_limit; });
        ++m_running;
    }
    const bool started = m_pool.tryStart([this, branch] {
        branch();
        ended();
    });
    if (!started) {
        branch();
        ended();
    }
}

void ParallelGroup::wait()
{
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [this] { return m_running == 0; });
}

void ParallelGroup::ended()
{
    std::lock_guard lock(m_mutex);
    --m_running;
    m_changed.notify_all();
}

} // namespace pando::core::pipelines
