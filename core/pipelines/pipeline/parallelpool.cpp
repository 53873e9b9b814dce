#include "parallelpool.h"

#include <QGlobalStatic>

namespace pando::core::pipelines {

ParallelPool::ParallelPool(int threads)
{
    m_pool.setMaxThreadCount(qMax(1, threads));
}

ParallelPool::~ParallelPool()
{
    m_pool.waitForDone();
}

Q_GLOBAL_STATIC(ParallelPool, sharedPool, ParallelPool::SharedThreads)

ParallelPool &ParallelPool::shared()
{
    return *sharedPool;
}

bool ParallelPool::tryStart(std::function<void()> work)
{
    return m_pool.tryStart(std::move(work));
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
