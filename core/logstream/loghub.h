#pragma once
// Package logstream shares one live log stream per app between everyone watching it: the first
// subscriber starts the upstream (the runtime's log stream of the app's current container), the
// last one to leave stops it. The upstream keeps the app's recent lines, so a subscriber can ask
// for the last N lines and then the live ones as one stream, with no line lost or repeated
// between the two.
//
// Threading: subscribe() may be called from any thread. A subscription delivers its line and
// ended signals in the thread it was made in, from that thread's event loop, never before
// subscribe() has returned: connect to it right after subscribing and nothing is missed.

#include "adapters/api/runtime.h"

#include <QHash>
#include <QMutex>
#include <QObject>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace pando::core {

class LogSubscription : public QObject, public std::enable_shared_from_this<LogSubscription> {
    Q_OBJECT
public:
    using QObject::QObject;

Q_SIGNALS:
    void line(const pando::adapters::LogLine &line);
    void ended(const QString &reason);

private:
    friend class LogHub;
    // Called from the upstream's thread or the subscriber's: queues and, when the queue was
    // empty, posts one delivery to this object's thread.
    void deliver(const adapters::LogLine &line);
    void deliverEnded(const QString &reason);
    void post();
    void drain();

    struct Item {
        adapters::LogLine line;
        std::optional<QString> ended; // set: the stream ended here (the reason), not a line
    };
    std::mutex m_mutex;
    QList<Item> m_queue;
    bool m_released = false; // unsubscribed: what is still queued is dropped
    int m_backlog = 0;       // recent lines owed to this subscriber (guarded by its upstream's lock)
};

class LogHub : public QObject {
    Q_OBJECT
public:
    // How many recent lines an upstream keeps, and so the most a subscriber can ask for.
    static constexpr int BacklogLimit = 5000;

    // resolveContainer returns the container serving the app now (empty when none).
    LogHub(std::shared_ptr<adapters::Runtime> runtime, std::function<QString(const QString &app)> resolveContainer,
           QObject *parent = nullptr);
    ~LogHub() override;

    // The app's last `backlog` lines (at most BacklogLimit) followed by its new lines as they are
    // written. Drop the pointer to unsubscribe.
    std::shared_ptr<LogSubscription> subscribe(const QString &app, int backlog = 0);
    // How many upstream streams are open (one per watched app).
    int upstreamCount() const;
    // Stops the app's upstream (its container changed); subscribers are told, and it is
    // restarted for those still watching, who then get the new container's lines from its start.
    void restart(const QString &app);

private:
    struct Upstream;
    void startUpstream(const QString &app, const std::shared_ptr<Upstream> &up);
    void release(const QString &app, LogSubscription *subscription);

    std::shared_ptr<adapters::Runtime> m_runtime;
    std::function<QString(const QString &)> m_resolve;
    mutable QMutex m_mutex;
    QHash<QString, std::shared_ptr<Upstream>> m_upstreams;
};

} // namespace pando::core

Q_DECLARE_METATYPE(pando::adapters::LogLine)
