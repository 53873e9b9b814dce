#include "core/logstream/loghub.h"

#include <QPointer>
#include <mutex>
#include <thread>

namespace pando::core {

// One app's upstream. The subscriber list has its own lock so that the upstream thread never
// takes the hub's lock: it copies the list and emits without holding any lock, which keeps a
// directly connected slot free to subscribe or unsubscribe.
struct LogHub::Upstream {
    QString app;
    std::mutex mutex;
    QList<std::shared_ptr<LogSubscription>> subscribers;
    CancelToken cancel;
    std::thread thread;

    QList<std::shared_ptr<LogSubscription>> snapshot()
    {
        std::lock_guard lock(mutex);
        return subscribers;
    }
};

namespace {

// The spec: don't join the upstream from its own thread (a direct slot dropped the last
// subscription); such a thread is cancelled and left to finish on its own.
void joinOrDetach(std::thread &thread)
{
    if (!thread.joinable())
        return;
    if (thread.get_id() == std::this_thread::get_id())
        thread.detach();
    else
        thread.join();
}

// "ended" is delivered through the subscription's own thread rather than emitted from the
// upstream's: an upstream may end at once (no container), before the caller of subscribe() has
// had a chance to connect. Posted after any lines queued before it, so the order holds.
void tellEnded(const std::shared_ptr<LogSubscription> &subscription, const QString &reason)
{
    LogSubscription *target = subscription.get();
    QMetaObject::invokeMethod(
        target, [target, reason] { Q_EMIT target->ended(reason); }, Qt::QueuedConnection);
}

} // namespace

LogHub::LogHub(std::shared_ptr<adapters::Runtime> runtime, std::function<QString(const QString &app)> resolveContainer,
               QObject *parent)
    : QObject(parent), m_runtime(std::move(runtime)), m_resolve(std::move(resolveContainer))
{
    qRegisterMetaType<pando::adapters::LogLine>();
}

LogHub::~LogHub()
{
    QHash<QString, std::shared_ptr<Upstream>> upstreams;
    {
        QMutexLocker lock(&m_mutex);
        upstreams.swap(m_upstreams);
    }
    for (const auto &up : std::as_const(upstreams))
        up->cancel.cancel();
    for (const auto &up : std::as_const(upstreams)) {
        joinOrDetach(up->thread);
        // Subscriptions still held by someone live on, silent; their release finds no hub entry.
        std::lock_guard lock(up->mutex);
        up->subscribers.clear();
    }
}

std::shared_ptr<LogSubscription> LogHub::subscribe(const QString &app)
{
    auto subscription = std::make_shared<LogSubscription>();
    QMutexLocker lock(&m_mutex);
    std::shared_ptr<Upstream> &up = m_upstreams[app];
    const bool first = !up;
    if (first) {
        up = std::make_shared<Upstream>();
        up->app = app;
    }
    {
        std::lock_guard subLock(up->mutex);
        up->subscribers.append(subscription);
    }
    if (first)
        startUpstream(app, up);

    // The caller's handle shares the object but not its ownership count: when the caller's
    // last copy goes, we unsubscribe, while the upstream's own reference keeps the object alive
    // for a line it may be emitting right now.
    std::weak_ptr<Upstream> weakUp = up;
    QPointer<LogHub> hub(this);
    return std::shared_ptr<LogSubscription>(subscription.get(),
                                            [hub, weakUp, app, keep = subscription](LogSubscription *s) mutable {
                                                if (hub && !weakUp.expired())
                                                    hub->release(app, s);
                                                keep.reset();
                                            });
}

int LogHub::upstreamCount() const
{
    QMutexLocker lock(&m_mutex);
    return int(m_upstreams.size());
}

void LogHub::restart(const QString &app)
{
    std::shared_ptr<Upstream> up;
    std::thread old;
    {
        QMutexLocker lock(&m_mutex);
        up = m_upstreams.value(app);
        if (!up)
            return;
        up->cancel.cancel();
        old = std::move(up->thread);
    }
    joinOrDetach(old);
    for (const auto &subscription : up->snapshot())
        tellEnded(subscription, QStringLiteral("the container of %1 changed; following the new one").arg(app));
    QMutexLocker lock(&m_mutex);
    // Restart only if nobody released the last subscription or restarted it meanwhile.
    if (m_upstreams.value(app) == up && !up->thread.joinable())
        startUpstream(app, up);
}

// Called with m_mutex held.
void LogHub::startUpstream(const QString &app, const std::shared_ptr<Upstream> &up)
{
    up->cancel = CancelToken();
    // The thread gets copies of everything it uses, not the hub: a thread that had to be
    // detached may outlive the hub.
    up->thread = std::thread([runtime = m_runtime, resolve = m_resolve, app, up, cancel = up->cancel] {
        auto emitEnded = [&](const QString &reason) {
            if (cancel.isCancelled())
                return; // whoever cancelled tells the subscribers, if anyone is left to tell
            for (const auto &subscription : up->snapshot())
                tellEnded(subscription, reason);
        };
        const QString container = resolve ? resolve(app) : QString();
        if (container.isEmpty()) {
            emitEnded(QStringLiteral("no container serves %1").arg(app));
            return;
        }
        const Status status = runtime->logs(container, 0, true, cancel, [&](const adapters::LogLine &line) {
            if (cancel.isCancelled())
                return;
            for (const auto &subscription : up->snapshot())
                Q_EMIT subscription->line(line);
        });
        if (!status)
            emitEnded(QStringLiteral("the log stream of %1 failed: %2").arg(app, status.error().text()));
        else
            emitEnded(QStringLiteral("the container of %1 stopped").arg(app));
    });
}

void LogHub::release(const QString &app, LogSubscription *subscription)
{
    std::thread finished;
    {
        QMutexLocker lock(&m_mutex);
        const std::shared_ptr<Upstream> up = m_upstreams.value(app);
        if (!up)
            return;
        bool empty = false;
        {
            std::lock_guard subLock(up->mutex);
            up->subscribers.removeIf([subscription](const auto &s) { return s.get() == subscription; });
            empty = up->subscribers.isEmpty();
        }
        if (!empty)
            return;
        m_upstreams.remove(app);
        up->cancel.cancel();
        finished = std::move(up->thread);
    }
    // Joined outside the lock: the upstream may be about to call into the hub's runtime.
    joinOrDetach(finished);
}

} // namespace pando::core
