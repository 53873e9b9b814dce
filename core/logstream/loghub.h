#pragma once
// Package logstream shares one live log stream per app between everyone watching it: the first
// subscriber starts the upstream (the runtime's follow stream of the app's current container),
// the last one to leave stops it.
//
// Threading: subscribe() may be called from any thread. A LogSubscription's line signal is
// emitted from the upstream's thread, its ended signal from the thread the subscription was
// made in (posted, so it is never missed before the caller connects); connect with the default
// (auto) connection so that both arrive queued in the receiver's thread.

#include "adapters/api/runtime.h"

#include <QHash>
#include <QMutex>
#include <QObject>
#include <functional>
#include <memory>

namespace pando::core {

class LogSubscription : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
Q_SIGNALS:
    void line(const pando::adapters::LogLine &line);
    void ended(const QString &reason);
};

class LogHub : public QObject {
    Q_OBJECT
public:
    // resolveContainer returns the container serving the app now (empty when none).
    LogHub(std::shared_ptr<adapters::Runtime> runtime, std::function<QString(const QString &app)> resolveContainer,
           QObject *parent = nullptr);
    ~LogHub() override;

    // The stream of the app's new lines from now on. Drop the pointer to unsubscribe.
    std::shared_ptr<LogSubscription> subscribe(const QString &app);
    // How many upstream streams are open (one per watched app).
    int upstreamCount() const;
    // Stops the app's upstream (its container changed); subscribers are told, and it is
    // restarted for those still watching.
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
