#pragma once
// Package disklimit holds apps to their disk limits (run.resources.disk). A check measures what
// each serving container of an app with a limit has written on top of its image (the runtime's
// diskUsage(): Docker's SizeRw); an app over its limit is told once per deploy — event
// app.disk.exceeded and an audit line app.disk.exceed — and, with diskPolicy stop (the default),
// stopped. A stopped app stays stopped: the reconciler leaves it (diskstates.h) until a new
// deploy or an explicit start (release()). With diskPolicy warn it keeps running, and is told
// again only after it went back under its limit.
//
// Threading: check() blocks and may run on any thread; start() runs checks on a thread of the
// limiter's own every interval until stop(). Checks never overlap; each app's actions run under
// its app lock (as the reconciler's and a deploy's switch do).

#include "core/common/periodic.h"
#include "core/deploy/services.h"

#include <QMutex>
#include <QStringList>
#include <memory>

namespace pando::core::disklimit {

class DiskLimiter {
public:
    explicit DiskLimiter(Services &services) : m_s(services) {}
    ~DiskLimiter();

    // One check of every app with a disk limit; returns a line per thing it did or could not do
    // ("stopped hello: wrote 23Mi, over its disk limit of 20Mi").
    Result<QStringList> check();
    // Lets the app run again (an explicit start): forgets that it was stopped for its disk.
    // The reconciler's next pass starts it; it is measured again at the next check.
    Status release(const QString &app);
    void start(int intervalMs);
    void stop();

private:
    void checkApp(const QString &app, QStringList &changes);

    Services &m_s;
    QMutex m_checkMutex;
    Periodic m_periodic;
};

} // namespace pando::core::disklimit
