#pragma once
// The bounded pool in_parallel branches run on. Before it, every branch had a std::thread of
// its own, so a pipeline of nested in_parallel steps could start any number of threads (each
// with a cancel watcher beside it). One pool for the process caps the branch threads, whatever
// the pipelines nest and however many runs are in flight.
//
// Deadlock: a branch never waits for a pool thread. A group starts a branch on a pool thread
// when one is free now and otherwise runs the branch itself, on the thread that would have
// waited. The only waits are of a group for its own branches (its `limit:`, and the end), and
// a branch never waits for its parents, so nesting deeper than the pool still completes, with
// the parallelism the pool has left. At most ceiling() branches run on pool threads at once,
// plus the threads that run jobs (the scheduler's), which run branches inline.
//
// Threading: every member is thread-safe.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pando::core::pipelines {

class ParallelPool {
public:
    // Threads of the process-wide pool: branches mostly wait on containers and hosts, so more
    // than the cores, but not without bound.
    static constexpr int SharedThreads = 16;

    explicit ParallelPool(int threads);
    ~ParallelPool(); // waits for the branches running on it
    ParallelPool(const ParallelPool &) = delete;
    ParallelPool &operator=(const ParallelPool &) = delete;

    // The one every JobRunner uses unless it is given its own.
    static ParallelPool &shared();

    int ceiling() const { return m_ceiling; }
    // Runs work on a pool thread when one is free now; false (and nothing runs) when none is.
    bool tryStart(std::function<void()> work);

private:
    void workerLoop();

    // Threads are started as branches need them, up to the ceiling, and stay until the pool
    // goes. The standard library's threads and locks, not QThreadPool: ThreadSanitizer sees a
    // branch handed over here, and not one handed over inside libQt6Core (Debian's Qt is not
    // built with it).
    const int m_ceiling;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::function<void()>> m_handed; // taken by idle workers, never more than idle
    std::vector<std::thread> m_threads;
    int m_idle = 0;
    bool m_stopping = false;
};

// The branches of one in_parallel: started in order, at most `limit` at once (0: no limit of
// its own), each on a pool thread or, when none is free, on the calling thread.
class ParallelGroup {
public:
    ParallelGroup(ParallelPool &pool, int limit) : m_pool(pool), m_limit(limit) {}
    ~ParallelGroup() { wait(); }
    ParallelGroup(const ParallelGroup &) = delete;
    ParallelGroup &operator=(const ParallelGroup &) = delete;

    // Starts branch once fewer than `limit` of the group run; returns when it has started on a
    // pool thread, or when it ended if it ran here.
    void run(const std::function<void()> &branch);
    // Returns when every branch started has ended.
    void wait();

private:
    void ended();

    ParallelPool &m_pool;
    const int m_limit;
    // std::mutex, not QMutex: a branch's last act is to unlock it, and the group may be gone
    // the moment it is unlocked, which POSIX mutexes allow.
    std::mutex m_mutex;
    std::condition_variable m_changed;
    int m_running = 0;
};

} // namespace pando::core::pipelines
