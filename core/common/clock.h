#pragma once
// Package clock: the time source core depends on, so time-based behaviour (expiry, timeouts,
// the reconciler's period) is tested without sleeping.

#include <QtGlobal>
#include <atomic>

namespace pando::core {

class Clock {
public:
    virtual ~Clock() = default;
    virtual qint64 nowMs() const = 0; // milliseconds since the epoch, UTC
};

class SystemClock final : public Clock {
public:
    qint64 nowMs() const override;
    static Clock &instance();
};

// A clock tests move by hand. Thread-safe.
class ManualClock final : public Clock {
public:
    explicit ManualClock(qint64 startMs = 1'700'000'000'000) : m_now(startMs) {}
    qint64 nowMs() const override { return m_now.load(); }
    void advance(qint64 ms) { m_now += ms; }
    void set(qint64 ms) { m_now = ms; }

private:
    std::atomic<qint64> m_now;
};

} // namespace pando::core
