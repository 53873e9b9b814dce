#include "restartpacer.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::adapters {

qint64 RestartPacer::remainingMs() const
{
    if (m_delayMs == 0 || !m_since.isValid())
        return 0;
    return std::max<qint64>(0, m_delayMs - m_since.elapsed());
}

void RestartPacer::tried(bool ok)
{
    if (!ok) {
        failed();
        return;
    }
    m_runningSince.start();
}

void RestartPacer::ended()
{
    if (!m_runningSince.isValid())
        return; // seen already, or never started by this pacer (adopted): start again at once
    const bool stable = m_runningSince.elapsed() >= m_timing.stableMs;
    m_runningSince.invalidate();
    if (stable) {
        m_failures = 0;
        m_delayMs = 0;
        return;
    }
    failed();
}

void RestartPacer::failed()
{
    ++m_failures;
    m_runningSince.invalidate();
    // The first failure is tried again at once: a crash is often a one-off.
    m_delayMs =
        m_failures < 2 ? 0 : std::min(m_timing.maxDelayMs, m_timing.firstDelayMs << std::min(m_failures - 2, 20));
    m_since.start();
}

QString RestartPacer::waitText() const
{
    const qint64 remaining = remainingMs();
    if (remaining == 0)
        return {};
    return u"Pando starts it again in %1 s (after %2 failures in a row)"_s.arg((remaining + 999) / 1000)
        .arg(m_failures);
}

} // namespace pando::adapters
