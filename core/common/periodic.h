#pragma once
// A thread of its own that runs one piece of work every interval until stopped: the reconciler's
// passes, the disk limiter's checks. The work runs outside the lock, so stop() waits at most for
// the run in progress.
//
// Threading: start() and stop() from the owner's thread; the work runs on the periodic thread.
// The standard library's mutex and condition variable, which ThreadSanitizer follows (QWaitCondition
// hands its mutex over inside Qt, where it cannot see it, and reported a stop() as a double lock).

#include <QString>
#include <QThread>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace pando::core {

class Periodic {
public:
    ~Periodic() { stop(); }

    // Runs work every intervalMs (first after one interval) on a thread named name.
    void start(int intervalMs, const QString &name, std::function<void()> work);
    // Wakes the thread and waits for it to end; a no-op when not started.
    void stop();

private:
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::unique_ptr<QThread> m_thread;
};

} // namespace pando::core
