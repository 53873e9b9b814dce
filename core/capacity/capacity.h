#pragma once
// Package capacity is what GET /capacity shows: each runtime's room, beside what Pando has
// committed to apps on it. An app commits what its serving spec asks for (memory, CPUs, disk),
// or the host policy's default when it asks for none; each service slot of a serving app commits
// HostPolicy::serviceMemoryBytes on the runtime services run on. A deploy that would take its
// runtime past its total is refused at plan time with the figures (checkRoom); the app's own
// serving version does not count against it, as the deploy replaces it.
//
// Threading: free functions over the state store and a runtime; call from any thread but a GUI
// thread (they ask the runtime).

#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "core/planner/planner.h"
#include "core/spec/appspec.h"
#include "core/state/database.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <optional>

namespace pando::core::capacity {

// Services run on Docker (adapters/services/docker), whatever runtime their app is on.
inline constexpr const char *ServicesRuntimeKind = "docker";
// Builds run on Docker for every runtime, so their cache is on it.
inline constexpr const char *BuildCacheRuntimeKind = "docker";

struct Commitment {
    qint64 memoryBytes = 0;
    double cpus = 0;
    qint64 diskBytes = 0;
    int apps = 0;
    int services = 0;
    Commitment &operator+=(const Commitment &other);
};

struct RuntimeCapacity {
    adapters::RuntimeRoom room;
    Commitment committed;
    bool isDefault = false; // where specs that name no runtime go
    // The images builds left as their cache (core/deploy/buildcache.h): on the Docker engine,
    // which builds for every runtime; zero on the others.
    int buildCacheImages = 0;
    qint64 buildCacheBytes = 0;
    // The builder's own cache there (BuildKit's), every build's on the engine, not only the
    // install's: nullopt when the engine did not say.
    std::optional<adapters::BuilderCache> builderCache;
    QJsonObject toJson() const;
};

// What an app's container asks of its runtime: the spec's memory, else the policy's default
// (as the planner gives it); the spec's CPUs, else the policy's cap; its disk limit. apps is 1.
Commitment appRequest(const AppSpec &spec, const HostPolicy &policy);
// What its service slots commit (services counted; memory HostPolicy::serviceMemoryBytes each).
Commitment servicesRequest(const AppSpec &spec, const HostPolicy &policy);

// Committed by every app (but exceptApp) with a serving deploy or one in flight (queued or
// running: its spec counts in place of the serving one's), by runtime kind; specs that name no
// runtime count on defaultKind.
Result<QMap<QString, Commitment>> committed(Database &db, const HostPolicy &policy, const QString &defaultKind,
                                            const QString &exceptApp = {});

// Every runtime's room and what is committed on it.
Result<QList<RuntimeCapacity>> report(Database &db, adapters::Runtime &runtime, const HostPolicy &policy);
QJsonObject toJson(const QList<RuntimeCapacity> &capacity);

// Plan time: refuses (Invalid, with the figures) a deploy of app whose container (planned) and
// services would take its runtime (caps.kind) past its memory, CPUs or disk, and a disk limit
// on a runtime that cannot measure disk use. Returns a note for the plan when the check ran.
Result<QString> checkRoom(Database &db, adapters::Runtime &runtime, const HostPolicy &policy, const QString &app,
                          const AppSpec &spec, const adapters::RuntimeCapabilities &caps,
                          const adapters::ContainerSpec &planned);

} // namespace pando::core::capacity
