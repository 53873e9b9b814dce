#pragma once
// Package observe shares what the runtime reports about this install's containers between the
// requests that ask at the same moment: one listing serves every caller for a short while,
// and callers arriving while a listing is under way wait for it instead of asking again.
//
// Threading: containers() may be called from any thread.

#include "adapters/api/runtime.h"
#include "core/common/clock.h"

#include <QMutex>

namespace pando::core {

class Observer {
public:
    Observer(adapters::Runtime &runtime, adapters::Labels filter, Clock &clock, qint64 ttlMs = 1000)
        : m_runtime(runtime), m_filter(std::move(filter)), m_clock(clock), m_ttlMs(ttlMs)
    {}

    // A listing no older than the TTL, and taken after notBeforeMs: a caller that knows the
    // state changed at some moment (an app's switch) never gets a listing from before it.
    Result<QList<adapters::ContainerInfo>> containers(qint64 notBeforeMs = 0);
    // Forget the cached listing (after a change this process made).
    void invalidate();

private:
    adapters::Runtime &m_runtime;
    adapters::Labels m_filter;
    Clock &m_clock;
    qint64 m_ttlMs;
    QMutex m_mutex;
    qint64 m_fetchedMs = -1;
    qint64 m_startedMs = -1;
    Result<QList<adapters::ContainerInfo>> m_last = QList<adapters::ContainerInfo>{};
};

} // namespace pando::core
