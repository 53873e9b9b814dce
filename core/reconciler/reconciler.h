#pragma once
// Package reconciler runs the loop that converges what runs toward the pinned specs: an app
// whose container crashed or vanished is started again as its run.restart says (and its route
// follows the new address), and a container or image that carries this install's labels but that no app or
// running deploy owns is removed.
//
// Threading: pass() blocks and may run on any thread; start() runs passes on a thread of the
// reconciler's own every interval until stop(). Passes never overlap.

#include "core/common/periodic.h"
#include "core/deploy/services.h"

#include <QMutex>
#include <QStringList>
#include <memory>

namespace pando::core {

class Reconciler {
public:
    explicit Reconciler(Services &services) : m_s(services) {}
    ~Reconciler();

    // One pass; returns a line per change it made ("restarted hello", "removed container ...").
    Result<QStringList> pass();
    // One app's part of a pass, now, by a caller that holds the app's lock (AppLocks) and has
    // just changed what runs (a restored volume: the container it removed is made again).
    Result<QStringList> passOf(const QString &app);
    void start(int intervalMs);
    void stop();

private:
    struct Listed {
        QList<adapters::ContainerInfo> containers;
        QStringList imageTags; // "pando/<app>:<deploy>"
    };
    void reconcileApp(const QString &name, const Listed &listed, QStringList &changes);

    Services &m_s;
    QMutex m_passMutex;
    Periodic m_periodic;
};

} // namespace pando::core
