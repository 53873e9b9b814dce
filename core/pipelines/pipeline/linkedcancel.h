#pragma once
// A cancel token of a step's own, cancelled when its parent's is, when its timeout runs out, or
// on request (fail_fast siblings). CancelToken is a plain flag that I/O loops poll, so the link
// is a small watcher thread that polls the parent and the clock; it ends with the object.

#include "adapters/api/cancel.h"

#include <QElapsedTimer>
#include <atomic>
#include <thread>

namespace pando::core::pipelines {

class LinkedCancel {
public:
    // timeoutMs 0: no timeout.
    LinkedCancel(const CancelToken &parent, qint64 timeoutMs) : m_parent(parent), m_timeoutMs(timeoutMs)
    {
        m_timer.start();
        m_watcher = std::thread([this] {
            while (!m_done.load()) {
                if (m_parent.isCancelled()) {
                    m_token.cancel();
                    return;
                }
                if (m_timeoutMs > 0 && m_timer.elapsed() >= m_timeoutMs) {
                    m_timedOut = true;
                    m_token.cancel();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        });
    }
    ~LinkedCancel()
    {
        m_done = true;
        m_watcher.join();
    }
    LinkedCancel(const LinkedCancel &) = delete;
    LinkedCancel &operator=(const LinkedCancel &) = delete;

    const CancelToken &token() const { return m_token; }
    bool timedOut() const { return m_timedOut.load(); }
    void cancelAll() const { m_token.cancel(); }

private:
    CancelToken m_parent;
    CancelToken m_token;
    qint64 m_timeoutMs;
    QElapsedTimer m_timer;
    std::atomic_bool m_done = false;
    std::atomic_bool m_timedOut = false;
    std::thread m_watcher;
};

} // namespace pando::core::pipelines
