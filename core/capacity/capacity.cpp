#include "core/capacity/capacity.h"

#include "core/state/repositories.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonValue>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::core::capacity {

namespace {

// What an app's volumes may hold, as their sizes say (a volume without one counts nothing).
qint64 volumeBytes(const AppSpec &spec)
{
    qint64 bytes = 0;
    for (const AppSpec::Run::Volume &volume : spec.run.volumes)
        bytes += volume.sizeBytes;
    return bytes;
}

QString cpusText(double cpus)
{
    return QString::number(cpus, 'g', 6);
}

QString whom(const Commitment &c)
{
    QString text = c.apps == 1 ? u"1 app"_s : u"%1 apps"_s.arg(c.apps);
    if (c.services > 0)
        text += c.services == 1 ? u" and 1 service"_s : u" and %1 services"_s.arg(c.services);
    return text;
}

QJsonValue orNull(qint64 value)
{
    return value < 0 ? QJsonValue() : QJsonValue(value);
}

std::optional<AppSpec> parsed(const QString &yaml)
{
    auto spec = parseAppSpec(yaml.toUtf8());
    return spec ? std::optional<AppSpec>(*spec) : std::nullopt;
}

// The spec an app's serving deploy runs: the deploy's own copy, else the app's.
std::optional<AppSpec> servingSpec(DeployRepository &deploys, const AppRecord &app)
{
    if (auto d = deploys.find(app.currentDeploy); d && !d->specYaml.isEmpty())
        return parsed(d->specYaml);
    return parsed(app.specYaml);
}

} // namespace

Commitment &Commitment::operator+=(const Commitment &other)
{
    memoryBytes += other.memoryBytes;
    cpus += other.cpus;
    diskBytes += other.diskBytes;
    apps += other.apps;
    services += other.services;
    return *this;
}

Commitment appRequest(const AppSpec &spec, const HostPolicy &policy)
{
    Commitment c;
    c.apps = 1;
    if (spec.run.memoryBytes > 0)
        c.memoryBytes = spec.run.memoryBytes;
    else if (policy.defaultMemoryBytes > 0)
        c.memoryBytes = policy.maxMemoryBytes > 0 ? std::min(policy.defaultMemoryBytes, policy.maxMemoryBytes)
                                                  : policy.defaultMemoryBytes;
    else
        c.memoryBytes = policy.maxMemoryBytes;
    c.cpus = spec.run.cpus > 0 ? spec.run.cpus : policy.maxCpus;
    c.diskBytes = spec.run.diskBytes + volumeBytes(spec);
    return c;
}

Commitment servicesRequest(const AppSpec &spec, const HostPolicy &policy)
{
    Commitment c;
    c.services = int(spec.services.size());
    c.memoryBytes = qint64(c.services) * policy.serviceMemoryBytes;
    return c;
}

Result<QMap<QString, Commitment>> committed(Database &db, const HostPolicy &policy, const QString &defaultKind,
                                            const QString &exceptApp)
{
    auto apps = AppRepository(db).list();
    if (!apps)
        return std::unexpected(apps.error());
    DeployRepository deploys(db);
    // A deploy in flight is about to run what its spec asks, in place of what serves now: it
    // counts already, so two deploys planned side by side see each other.
    auto inFlight = deploys.unfinished();
    if (!inFlight)
        return std::unexpected(inFlight.error());
    QHash<QString, QString> comingSpec; // app → the spec of its newest unfinished deploy
    for (const DeployRecord &d : std::as_const(*inFlight))
        if (!d.specYaml.isEmpty())
            comingSpec.insert(d.app, d.specYaml);
    QMap<QString, Commitment> byKind;
    for (const AppRecord &app : std::as_const(*apps)) {
        if (app.name == exceptApp || (app.currentDeploy.isEmpty() && !comingSpec.contains(app.name)))
            continue;
        const auto coming = comingSpec.constFind(app.name);
        const auto spec = coming != comingSpec.cend() ? parsed(*coming) : servingSpec(deploys, app);
        if (!spec)
            continue;
        byKind[spec->runtime.isEmpty() ? defaultKind : spec->runtime] += appRequest(*spec, policy);
        if (!spec->services.isEmpty())
            byKind[QLatin1String(ServicesRuntimeKind)] += servicesRequest(*spec, policy);
    }
    return byKind;
}

Result<QList<RuntimeCapacity>> report(Database &db, adapters::Runtime &runtime, const HostPolicy &policy)
{
    auto defaults = runtime.capabilitiesOf({});
    if (!defaults)
        return std::unexpected(defaults.error());
    auto rooms = runtime.rooms();
    if (!rooms)
        return std::unexpected(rooms.error());
    auto byKind = committed(db, policy, defaults->kind);
    if (!byKind)
        return std::unexpected(byKind.error());
    auto cache = BuildCacheRepository(db).totals();
    if (!cache)
        return std::unexpected(cache.error());
    QList<RuntimeCapacity> out;
    for (const adapters::RuntimeRoom &room : std::as_const(*rooms)) {
        RuntimeCapacity c;
        c.room = room;
        c.committed = byKind->value(room.kind);
        c.isDefault = room.kind == defaults->kind;
        if (room.kind == QLatin1String(BuildCacheRuntimeKind)) {
            c.buildCacheImages = cache->images;
            c.buildCacheBytes = cache->bytes;
            auto builder =
                room.reachable ? runtime.builderCache() : Result<adapters::BuilderCache>(std::unexpected(Error{}));
            if (builder)
                c.builderCache = *builder;
        }
        out.append(c);
    }
    return out;
}

QJsonObject RuntimeCapacity::toJson() const
{
    const QJsonValue builder = builderCache ? QJsonValue(QJsonObject{{u"bytes"_s, builderCache->bytes},
                                                                     {u"reclaimable"_s, builderCache->reclaimableBytes},
                                                                     {u"records"_s, builderCache->records}})
                                            : QJsonValue();
    return QJsonObject{
        {u"kind"_s, room.kind},
        {u"default"_s, isDefault},
        {u"apps"_s, committed.apps},
        {u"services"_s, committed.services},
        {u"cpus"_s, QJsonObject{{u"total"_s, room.cpus}, {u"committed"_s, committed.cpus}}},
        {u"memory"_s, QJsonObject{{u"total"_s, room.memoryBytes},
                                  {u"available"_s, orNull(room.memoryAvailableBytes)},
                                  {u"committed"_s, committed.memoryBytes}}},
        {u"disk"_s, QJsonObject{{u"total"_s, room.diskBytes},
                                {u"available"_s, orNull(room.diskAvailableBytes)},
                                {u"committed"_s, committed.diskBytes},
                                {u"of"_s, room.disk},
                                {u"measures_apps"_s, room.canMeasureDisk},
                                {u"build_cache"_s, QJsonObject{{u"images"_s, buildCacheImages},
                                                               {u"bytes"_s, buildCacheBytes},
                                                               {u"builder"_s, builder}}}}},
        {u"note"_s, room.note},
        {u"reachable"_s, room.reachable},
    };
}

QJsonObject toJson(const QList<RuntimeCapacity> &capacity)
{
    QJsonArray list;
    for (const RuntimeCapacity &c : capacity)
        list.append(c.toJson());
    return QJsonObject{{u"runtimes"_s, list}};
}

Result<QString> checkRoom(Database &db, adapters::Runtime &runtime, const HostPolicy &policy, const QString &app,
                          const AppSpec &spec, const adapters::RuntimeCapabilities &caps,
                          const adapters::ContainerSpec &planned)
{
    if (spec.run.diskBytes > 0 && !caps.canMeasureDisk)
        return fail(ErrorCode::Invalid,
                    u"the %1 runtime cannot measure an app's disk use, so it cannot hold this app to %2"_s.arg(
                        caps.kind, formatMemory(spec.run.diskBytes)),
                    u"run.resources.disk"_s,
                    u"leave run.resources.disk out, or deploy to a runtime that measures disk use (docker)"_s);

    // What this deploy asks, by runtime: its container on its own, its services on theirs.
    QMap<QString, Commitment> asks;
    Commitment own;
    own.apps = 1;
    own.memoryBytes = planned.memoryBytes;
    own.cpus = planned.cpus;
    own.diskBytes = spec.run.diskBytes + volumeBytes(spec);
    asks[caps.kind] += own;
    if (!spec.services.isEmpty())
        asks[QLatin1String(ServicesRuntimeKind)] += servicesRequest(spec, policy);

    auto defaults = caps.kind.isEmpty() ? Result<adapters::RuntimeCapabilities>(caps) : runtime.capabilitiesOf({});
    if (!defaults)
        return std::unexpected(defaults.error());
    auto others = committed(db, policy, defaults->kind, app);
    if (!others)
        return std::unexpected(others.error());

    QStringList notes;
    for (auto it = asks.cbegin(); it != asks.cend(); ++it) {
        const QString &kind = it.key();
        const Commitment &ask = it.value();
        const Commitment taken = others->value(kind);
        adapters::RuntimeCapabilities kindCaps = caps;
        if (kind != caps.kind) {
            auto found = runtime.capabilitiesOf(kind);
            if (!found)
                continue; // services on a runtime this install lacks: the services step says so
            kindCaps = *found;
        }
        const QString where = kind == caps.kind ? u"run.resources.%1"_s : u"services"_s;
        const QString hint =
            u"ask for less, or make room: `pando capacity` shows what each runtime has and what is committed"_s;
        if (ask.memoryBytes > 0 && kindCaps.maxMemoryBytes > 0 &&
            taken.memoryBytes + ask.memoryBytes > kindCaps.maxMemoryBytes) {
            return fail(ErrorCode::Invalid,
                        u"asks %1 memory; %2 has %3, %4 committed to %5: %6 free"_s.arg(
                            formatMemory(ask.memoryBytes), kind, formatMemory(kindCaps.maxMemoryBytes),
                            formatMemory(taken.memoryBytes), whom(taken),
                            formatMemory(std::max<qint64>(0, kindCaps.maxMemoryBytes - taken.memoryBytes))),
                        where.arg(u"memory"_s), hint);
        }
        if (ask.cpus > 0 && kindCaps.maxCpus > 0 && taken.cpus + ask.cpus > kindCaps.maxCpus + 1e-9) {
            return fail(ErrorCode::Invalid,
                        u"asks %1 CPUs; %2 has %3, %4 committed to %5: %6 free"_s.arg(
                            cpusText(ask.cpus), kind, cpusText(kindCaps.maxCpus), cpusText(taken.cpus), whom(taken),
                            cpusText(std::max(0.0, kindCaps.maxCpus - taken.cpus))),
                        where.arg(u"cpus"_s), hint);
        }
        if (ask.diskBytes > 0) {
            auto rooms = runtime.rooms();
            if (!rooms)
                return std::unexpected(rooms.error());
            for (const adapters::RuntimeRoom &room : std::as_const(*rooms)) {
                if (room.kind != kind || room.diskBytes <= 0)
                    continue;
                if (taken.diskBytes + ask.diskBytes > room.diskBytes)
                    return fail(ErrorCode::Invalid,
                                u"asks %1 disk; %2 has %3 (%4), %5 committed to %6: %7 free"_s.arg(
                                    formatMemory(ask.diskBytes), kind, formatMemory(room.diskBytes), room.disk,
                                    formatMemory(taken.diskBytes), whom(taken),
                                    formatMemory(std::max<qint64>(0, room.diskBytes - taken.diskBytes))),
                                u"run.resources.disk"_s, hint);
            }
        }
        if (kindCaps.maxMemoryBytes > 0)
            notes << u"%1: %2 of %3 memory committed with this app"_s.arg(
                kind, formatMemory(taken.memoryBytes + ask.memoryBytes), formatMemory(kindCaps.maxMemoryBytes));
    }
    return notes.join(u"; "_s);
}

} // namespace pando::core::capacity
