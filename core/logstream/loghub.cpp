#include "core/logstream/loghub.h"

#include <QPointer>
#include <deque>
#include <thread>

namespace pando::core {

// One app's upstream. Its lock guards the subscriber list and the recent lines; everything a
// subscriber receives is queued under it, so a subscriber joining while lines arrive gets each
// line exactly once: in its backlog or live, never both. The upstream thread never takes the
// hub's lock.
struct LogHub::Upstream {
    QString app;
    std::mutex mutex;
    QList<std::shared_ptr<LogSubscription>> subscribers;
    std::deque<adapters::LogLine> recent; // the container's last lines, at most BacklogLimit
    bool primed = false;                  // recent holds the container's history
    CancelToken cancel;
    std::thread thread;

    // With the lock held.
    void sendBacklog(LogSubscription &s)
    {
        const size_t n = std::min(recent.size(), size_t(std::max(s.m_backlog, 0)));
        for (auto it = recent.end() - qsizetype(n); it != recent.end(); ++it)
            s.deliver(*it);
        s.m_backlog = 0;
    }
    void remember(const adapters::LogLine &line)
    {
        recent.push_back(line);
        if (recent.size() > size_t(BacklogLimit))
            recent.pop_front();
    }
};

namespace {

// The spec: don't join the upstream from its own thread (a slot it reached directly dropped the
// last subscription); such a thread is cancelled and left to finish on its own.
void joinOrDetach(std::thread &thread)
{
    if (!thread.joinable())
        return;
    if (thread.get_id() == std::this_thread::get_id())
        thread.detach();
    else
        thread.join();
}

} // namespace

void LogSubscription::deliver(const adapters::LogLine &line)
{
    std::lock_guard lock(m_mutex);
    if (m_released)
        return;
    m_queue.append(Item{line, std::nullopt});
    if (m_queue.size() == 1)
        post();
}

void LogSubscription::deliverEnded(const QString &reason)
{
    std::lock_guard lock(m_mutex);
    if (m_released)
        return;
    m_queue.append(Item{{}, reason});
    if (m_queue.size() == 1)
        post();
}

void LogSubscription::post()
{
    // Posted to this object's thread: the signals are emitted there, after subscribe() returned.
    // The strong reference taken while draining keeps the object alive should a slot drop the
    // last handle.
    QMetaObject::invokeMethod(
        this,
        [weak = weak_from_this()] {
            if (auto self = weak.lock())
                self->drain();
        },
        Qt::QueuedConnection);
}

void LogSubscription::drain()
{
    QList<Item> items;
    {
        std::lock_guard lock(m_mutex);
        items.swap(m_queue);
    }
    for (const Item &item : std::as_const(items)) {
        {
            std::lock_guard lock(m_mutex);
            if (m_released)
                return;
        }
        if (item.ended)
            Q_EMIT ended(*item.ended);
        else
            Q_EMIT line(item.line);
    }
}

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

std::shared_ptr<LogSubscription> LogHub::subscribe(const QString &app, int backlog)
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
        subscription->m_backlog = std::clamp(backlog, 0, BacklogLimit);
        if (up->primed)
            up->sendBacklog(*subscription);
        up->subscribers.append(subscription);
    }
    if (first)
        startUpstream(app, up);

    // The caller's handle shares the object but not its ownership count: when the caller's
    // last copy goes, we unsubscribe, while the upstream's own reference keeps the object alive
    // for a line it may be queueing right now.
    std::weak_ptr<Upstream> weakUp = up;
    QPointer<LogHub> hub(this);
    return {subscription.get(), [hub, weakUp, app, keep = subscription](LogSubscription *s) mutable {
                {
                    std::lock_guard lock(s->m_mutex);
                    s->m_released = true;
                    s->m_queue.clear();
                }
                if (hub && !weakUp.expired())
                    hub->release(app, s);
                keep.reset();
            }};
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
    {
        // Those watching get the new container's lines from its start.
        std::lock_guard lock(up->mutex);
        up->recent.clear();
        up->primed = false;
        for (const auto &subscription : std::as_const(up->subscribers)) {
            subscription->deliverEnded(QStringLiteral("the container of %1 changed; following the new one").arg(app));
            subscription->m_backlog = BacklogLimit;
        }
    }
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
        auto ended = [&](const QString &reason) {
            if (cancel.isCancelled())
                return; // whoever cancelled tells the subscribers, if anyone is left to tell
            std::lock_guard lock(up->mutex);
            for (const auto &subscription : std::as_const(up->subscribers))
                subscription->deliverEnded(reason);
        };
        const QString container = resolve ? resolve(app) : QString();
        if (container.isEmpty()) {
            ended(QStringLiteral("no container serves %1").arg(app));
            return;
        }

        // The history first, as a read that ends, so its last line is known exactly...
        QList<adapters::LogLine> history;
        Status status = runtime->logs(container, BacklogLimit, false, cancel,
                                      [&history](const adapters::LogLine &line) { history.append(line); });
        if (cancel.isCancelled())
            return;
        if (!status) {
            ended(QStringLiteral("the log stream of %1 failed: %2").arg(app, status.error().text()));
            return;
        }
        {
            std::lock_guard lock(up->mutex);
            for (const adapters::LogLine &line : std::as_const(history))
                up->remember(line);
            up->primed = true;
            for (const auto &subscription : std::as_const(up->subscribers))
                up->sendBacklog(*subscription);
        }

        // ...then the follow, which starts with the history again plus whatever was written in
        // between: the lines up to and including the history's last one are skipped by their
        // timestamps (the lines sharing the last one's millisecond by count), so nothing written
        // between the two reads is lost or repeated.
        const qint64 lastTime = history.isEmpty() ? 0 : history.last().timestampMs;
        qsizetype sameTimeLeft = 0;
        for (qsizetype i = history.size() - 1; i >= 0 && history.at(i).timestampMs == lastTime; --i)
            ++sameTimeLeft;
        bool replaying = !history.isEmpty();
        status = runtime->logs(container, BacklogLimit, true, cancel, [&](const adapters::LogLine &line) {
            if (cancel.isCancelled())
                return;
            if (replaying) {
                if (line.timestampMs < lastTime)
                    return;
                if (line.timestampMs == lastTime && sameTimeLeft > 0) {
                    --sameTimeLeft;
                    return;
                }
                replaying = false;
            }
            std::lock_guard lock(up->mutex);
            up->remember(line);
            for (const auto &subscription : std::as_const(up->subscribers))
                subscription->deliver(line);
        });
        if (!status)
            ended(QStringLiteral("the log stream of %1 failed: %2").arg(app, status.error().text()));
        else
            ended(QStringLiteral("the container of %1 stopped").arg(app));
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
