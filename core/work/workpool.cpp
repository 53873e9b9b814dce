#include "workpool.h"

#include <QCoreApplication>
#include <QRandomGenerator>
#include <QThread>
#include <chrono>

namespace pando::core {

namespace {
constexpr auto IdlePoll = std::chrono::seconds(1); // another process may enqueue into the same table
}

WorkPool::WorkPool(Database &db, Clock &clock, int threads)
    : m_db(db), m_clock(clock), m_threadCount(qMax(1, threads)),
      m_owner(QStringLiteral("p%1-%2")
                  .arg(QCoreApplication::applicationPid())
                  .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0')))
{}

WorkPool::~WorkPool()
{
    shutdown();
}

void WorkPool::setHandler(const QString &kind, Handler handler)
{
    m_handlers.emplace(kind, std::move(handler));
}

void WorkPool::start()
{
    const std::lock_guard lock(m_mutex);
    m_stopping = false;
    for (int i = 0; i < m_threadCount; ++i) {
        auto thread = std::unique_ptr<QThread>(QThread::create([this] { runWorker(); }));
        thread->setObjectName(QStringLiteral("pando-work-%1").arg(i));
        thread->start();
        m_threads.push_back(std::move(thread));
    }
}

void WorkPool::shutdown()
{
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = true;
        for (const CancelToken &token : std::as_const(m_running))
            token.cancel();
        m_wake.notify_all();
    }
    for (const auto &thread : m_threads)
        thread->wait();
    m_threads.clear();
}

Result<qint64> WorkPool::enqueue(const QString &kind, const QString &key, const QString &payload)
{
    JobRepository jobs(m_db);
    auto id = jobs.enqueue(kind, key, payload, m_clock.nowMs());
    if (id) {
        const std::lock_guard lock(m_mutex);
        ++m_pendingWakeups;
        m_wake.notify_one();
    }
    return id;
}

bool WorkPool::cancel(qint64 jobId)
{
    const std::lock_guard lock(m_mutex);
    auto it = m_running.find(jobId);
    if (it == m_running.end())
        return false;
    it->cancel();
    return true;
}

void WorkPool::runWorker()
{
    JobRepository jobs(m_db);
    for (;;) {
        {
            const std::lock_guard lock(m_mutex);
            if (m_stopping)
                return;
        }
        auto claimed = jobs.claimNext(m_owner, m_clock.nowMs());
        if (!claimed)
            qWarning("work: claiming a job failed: %s", qPrintable(claimed.error().text()));
        const std::optional<JobRecord> next = claimed ? std::move(*claimed) : std::nullopt;
        if (!next) {
            std::unique_lock lock(m_mutex);
            if (m_stopping)
                return;
            if (m_pendingWakeups > 0) {
                --m_pendingWakeups;
                continue;
            }
            m_wake.wait_for(lock, IdlePoll);
            if (m_pendingWakeups > 0)
                --m_pendingWakeups;
            continue;
        }
        const JobRecord &job = *next;
        CancelToken token;
        {
            const std::lock_guard lock(m_mutex);
            m_running.insert(job.id, token);
            if (m_stopping)
                token.cancel();
        }
        Status result = fail(ErrorCode::Internal, QStringLiteral("no handler for job kind \"%1\"").arg(job.kind));
        if (auto handler = m_handlers.constFind(job.kind); handler != m_handlers.constEnd())
            result = (*handler)(job, token);
        {
            const std::lock_guard lock(m_mutex);
            m_running.remove(job.id);
            // A job interrupted by our own shutdown stays 'running' so that the next start
            // settles it through recovery, exactly as after a crash.
            if (m_stopping && token.isCancelled() && !result)
                return;
        }
        if (auto done =
                jobs.finish(job.id, result.has_value(), result ? QString() : result.error().text(), m_clock.nowMs());
            !done)
            qWarning("work: recording the end of job %lld failed: %s", job.id, qPrintable(done.error().text()));
        // Finishing a job may unblock a queued job with the same key.
        const std::lock_guard lock(m_mutex);
        m_wake.notify_all();
    }
}

} // namespace pando::core
