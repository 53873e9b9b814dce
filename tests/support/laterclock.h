#pragma once
// The real clock, moved on by hand: work that waits on real time still runs, while a TTL or a
// retention of days is passed by a jump.
//
// Threading: any thread.

#include "core/common/clock.h"

#include <QDateTime>
#include <atomic>

namespace pando::test {

class LaterClock final : public core::Clock {
public:
    qint64 nowMs() const override { return QDateTime::currentMSecsSinceEpoch() + m_ahead.load(); }
    void advance(qint64 ms) { m_ahead += ms; }

private:
    std::atomic<qint64> m_ahead = 0;
};

} // namespace pando::test
