#pragma once
// The sleeping half of the clock seam: whatever waits between retries waits through a Sleeper,
// so tests run the waits instantly and see exactly how long each would have been.
//
// (It sits here rather than in core/common/clock.h because that file belongs to another package;
// it can move there unchanged.)

#include "adapters/api/cancel.h"
#include "core/common/clock.h"

#include <QList>
#include <QMutex>
#include <functional>

namespace pando::core {

class Sleeper {
public:
    virtual ~Sleeper() = default;
    // Waits ms milliseconds or until cancel fires, whichever is first. Returns false when the
    // wait was cut short by cancel. Thread-safe.
    virtual bool sleep(qint64 ms, const CancelToken &cancel) = 0;
};

// Really waits, looking at the token every few milliseconds (CancelToken has nothing to block
// on, and a retry wait is coarse enough that 10 ms of lag does not matter).
class SystemSleeper final : public Sleeper {
public:
    bool sleep(qint64 ms, const CancelToken &cancel) override;
    static Sleeper &instance();
};

// Returns at once, records each wait and moves an optional ManualClock forward by it. A test
// can cancel "during" a wait with setOnSleep. Thread-safe.
class ManualSleeper final : public Sleeper {
public:
    explicit ManualSleeper(ManualClock *clock = nullptr) : m_clock(clock) {}
    bool sleep(qint64 ms, const CancelToken &cancel) override;
    QList<qint64> sleeps() const;
    // Called at the start of every wait with its index (0-based) and length.
    void setOnSleep(std::function<void(int index, qint64 ms)> hook);

private:
    ManualClock *m_clock;
    mutable QMutex m_mutex;
    QList<qint64> m_sleeps;
    std::function<void(int, qint64)> m_onSleep;
};

} // namespace pando::core
