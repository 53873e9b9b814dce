#pragma once
// Package planner turns a spec plus host policy plus the runtime's capabilities into a plan,
// or into a plan-time error that says which limit the spec broke.

#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "core/spec/appspec.h"

#include <QList>
#include <QString>

namespace pando::core {

struct HostPolicy {
    qint64 maxMemoryBytes = 0;                       // per app; 0 = no cap beyond the runtime's
    double maxCpus = 0;                              // per app; 0 = no cap beyond the runtime's
    qint64 defaultMemoryBytes = 512LL * 1024 * 1024; // when the spec names none
    qint64 serviceMemoryBytes = 256LL * 1024 * 1024; // what capacity counts per service (they run unlimited)
    int minRoutePort = 1024;                         // stable ports apps may ask for
    int maxRoutePort = 65535;
    QList<int> deniedRoutePorts; // e.g. the API's own port
};

struct Plan {
    QString app;
    QString contextDir;                // absolute: checkout + build.context
    QString dockerfile;                // relative to contextDir
    adapters::ContainerSpec container; // everything but name and image, which the deploy fills
    int routePort = 0;                 // requested stable port (0 = any)
    QString healthPath;
    int healthTimeoutSeconds = 60;
    int healthIntervalMs = 100;
    QStringList notes; // what the planner decided for the user ("memory defaulted to 512Mi")
};

// checkoutDir is where the source was written; the planner checks that the Dockerfile and
// context stay inside it (detection has already found the Dockerfile).
// The environment of an app's container listening on port: run.env, with PORT set to the port
// (as Heroku, Render and Dokku set it) unless run.env sets PORT itself.
QMap<QString, QString> containerEnv(const AppSpec &spec, int port);

// The port the container of a deploy listens on: the one recorded when it was built, or for a
// deploy made before ports were recorded (recorded 0), the spec's run.port.
inline int listeningPort(int recorded, const AppSpec &spec)
{
    return recorded > 0 ? recorded : spec.run.port;
}

// The container a deploy of spec runs, listening on port: the spec's command, environment,
// labels, egress and volumes, and its memory and CPUs under the policy and the runtime (Invalid
// for a request over a cap). What the limits defaulted to goes to notes. makePlan plans with it,
// and the reconciler runs a vanished container again with it.
Result<adapters::ContainerSpec> planContainer(const AppSpec &spec, const HostPolicy &policy,
                                              const adapters::RuntimeCapabilities &caps, int port,
                                              QStringList *notes = nullptr);

Result<Plan> makePlan(const AppSpec &spec, const HostPolicy &policy, const adapters::RuntimeCapabilities &caps,
                      const QString &checkoutDir);

} // namespace pando::core
