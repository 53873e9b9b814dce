#pragma once
// Package health keeps probing the apps that serve, after their deploy's health check: every
// health.every the spec's health.path is asked on the serving container's address (the probe
// core/deploy uses, with its deadline). After health.failures failed probes in a row the app is
// unhealthy — its status says so with what the last probe got ("GET /health answered 503",
// "GET /: connection refused", "GET /: no answer within 2 s") and event app.unhealthy is sent —
// and with run.restart always or on-failure its container is restarted (event app.restarted,
// audit line app.restart, the route following the new address). The first probe that answers
// 2xx/3xx makes it healthy again (event app.healthy). What the monitor knows is kept in memory
// per serving deploy: a new deploy, a restart of pandod or an explicit start begin afresh.
//
// Threading: start() runs a scheduler on a thread of the monitor's own; each probe runs on the
// monitor's own pool, at most one per app at a time, so a hung app holds one pool thread for its
// probe's deadline and never delays the others' (nor an API thread). health() and forget() may
// be called from any thread.

#include "core/common/periodic.h"
#include "core/deploy/services.h"
#include "core/spec/appspec.h"

#include <QHash>
#include <QMutex>
#include <QSet>
#include <QThreadPool>
#include <optional>

namespace pando::core::health {

// What the monitor knows of an app's serving deploy.
struct AppHealth {
    QString deployId;
    bool unhealthy = false;
    QString reason;   // what the last failed probe got; empty after an answer
    int failures = 0; // failed probes in a row since the last answer (or restart)
    qint64 lastProbeMs = -1;
};

// How long one probe may take: its every, within 1 s to 5 s.
int probeDeadlineMs(const AppSpec::Health &health);

class HealthMonitor {
public:
    explicit HealthMonitor(Services &services, int probeThreads = 4);
    ~HealthMonitor();
    HealthMonitor(const HealthMonitor &) = delete;
    HealthMonitor &operator=(const HealthMonitor &) = delete;

    // Looks every tickMs which apps are due for a probe and hands those to the pool.
    void start(int tickMs);
    // Stops the scheduler and waits for the probes in flight (each ends by its deadline).
    void stop();
    // One look now (the scheduler's work); returns how many probes it started.
    int tick();

    // What is known of the app while deployId serves it; nullopt when nothing is.
    std::optional<AppHealth> health(const QString &app, const QString &deployId) const;
    // Forgets what is known of the app (its container was started again by hand).
    void forget(const QString &app);

private:
    struct Target {
        QString app;
        QString deployId;
        QString containerId;
        QString address;
        AppSpec spec;
        int port = 0; // where its container listens (core/planner's listeningPort)
    };
    QList<Target> dueTargets();
    void probe(const Target &target);
    void record(const Target &target, const Status &outcome);
    void restart(const Target &target, const QString &reason);

    Services &m_s;
    QThreadPool m_pool;
    Periodic m_periodic;
    mutable QMutex m_mutex; // guards the two below
    QHash<QString, AppHealth> m_health;
    QSet<QString> m_inFlight;
};

} // namespace pando::core::health
