#include "adapters/runtime/docker/dockerruntime.h"

#include "adapters/kit/dockerapi/dockerbuild.h"
#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/kit/dockerapi/dockerpull.h"
#include "adapters/kit/dockerapi/tarball.h"
#include "adapters/runtime/docker/logdemux.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>

#include <algorithm>
#include <optional>

namespace pando::adapters::docker {

using dockerapi::compactJson;
using dockerapi::labelsJson;
using dockerapi::Request;

namespace {

// Zeroes bytes that held file contents (secrets) before they are freed. Volatile, so the
// compiler cannot drop the writes as dead stores.
void wipeBytes(QByteArray &bytes)
{
    if (bytes.isEmpty())
        return;
    volatile char *p = bytes.data();
    for (qsizetype i = 0; i < bytes.size(); ++i)
        p[i] = 0;
    bytes.clear();
}

Labels labelsFrom(const QJsonValue &value)
{
    Labels out;
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it)
        out.insert(it.key(), it.value().toString());
    return out;
}

// {"label":["k=v",...]} for the list endpoints; empty when there is nothing to filter by.
QString labelFilter(const Labels &filter)
{
    if (filter.isEmpty())
        return {};
    QJsonArray labels;
    for (auto it = filter.cbegin(); it != filter.cend(); ++it)
        labels.append(QString(it.key() + u'=' + it.value()));
    return QString::fromUtf8(compactJson(QJsonObject{{QStringLiteral("label"), labels}}));
}

ContainerInfo containerFromInspect(const QJsonObject &o)
{
    ContainerInfo info;
    info.id = o.value(QLatin1String("Id")).toString();
    info.name = o.value(QLatin1String("Name")).toString();
    if (info.name.startsWith(u'/'))
        info.name.remove(0, 1);
    info.image = o.value(QLatin1String("Image")).toString();
    info.labels = labelsFrom(o.value(QLatin1String("Config")).toObject().value(QLatin1String("Labels")));
    const QJsonObject state = o.value(QLatin1String("State")).toObject();
    info.state = state.value(QLatin1String("Status")).toString();
    info.exitCode = state.value(QLatin1String("ExitCode")).toInt();
    info.startedAt = state.value(QLatin1String("StartedAt")).toString();
    info.restartCount = o.value(QLatin1String("RestartCount")).toInt();
    // The host reaches a bridge-networked container at its own IP; no port publishing needed.
    const QJsonObject network = o.value(QLatin1String("NetworkSettings")).toObject();
    info.address = network.value(QLatin1String("IPAddress")).toString();
    if (info.address.isEmpty()) {
        const QJsonObject networks = network.value(QLatin1String("Networks")).toObject();
        for (auto it = networks.begin(); it != networks.end() && info.address.isEmpty(); ++it)
            info.address = it.value().toObject().value(QLatin1String("IPAddress")).toString();
    }
    return info;
}

QString containerPath(const QString &id, QStringView suffix = {})
{
    return QStringLiteral("/containers/") + id + suffix;
}

QString installLabel(const QString &installId)
{
    return QLatin1String(LabelInstall) + u'=' + installId;
}

// The install a container belongs to, and whether it sits on that install's egress-free network.
std::optional<QString> noEgressInstall(const QJsonObject &inspected)
{
    const QString install =
        labelsFrom(inspected.value(QLatin1String("Config")).toObject().value(QLatin1String("Labels")))
            .value(QLatin1String(LabelInstall));
    if (install.isEmpty())
        return std::nullopt;
    const QJsonObject networks =
        inspected.value(QLatin1String("NetworkSettings")).toObject().value(QLatin1String("Networks")).toObject();
    if (!networks.contains(DockerRuntime::noEgressNetworkName(install)))
        return std::nullopt;
    return install;
}

} // namespace

QString DockerRuntime::noEgressNetworkName(const QString &installId)
{
    // Docker allows [a-zA-Z0-9][a-zA-Z0-9_.-]* in names; an install id with anything else gets
    // those characters replaced and a digest of the original, so two ids never share a name.
    QString safe;
    for (const QChar ch : installId) {
        const bool ok = (ch >= u'a' && ch <= u'z') || (ch >= u'A' && ch <= u'Z') || (ch >= u'0' && ch <= u'9') ||
                        ch == u'_' || ch == u'.' || ch == u'-';
        safe += ok ? ch : u'-';
    }
    if (safe != installId || safe.size() > 64) {
        const QByteArray digest = QCryptographicHash::hash(installId.toUtf8(), QCryptographicHash::Sha256).toHex();
        safe = safe.left(64) + u'-' + QString::fromLatin1(digest.left(12));
    }
    return QStringLiteral("pando-") + safe + QStringLiteral("-noegress");
}

Result<QStringList> DockerRuntime::noEgressNetworks(const QString &installId)
{
    const QString name = noEgressNetworkName(installId);
    const QJsonObject filters{{QStringLiteral("name"), QJsonArray{name}},
                              {QStringLiteral("label"), QJsonArray{installLabel(installId)}}};
    auto response = m_client.get(QStringLiteral("/networks"),
                                 {{QStringLiteral("filters"), QString::fromUtf8(compactJson(filters))}});
    if (!response)
        return std::unexpected(response.error());
    struct Found {
        qint64 createdMs;
        QString id;
    };
    QList<Found> found;
    for (const QJsonValue v : response->json().array()) {
        const QJsonObject o = v.toObject();
        if (o.value(QLatin1String("Name")).toString() != name) // the name filter matches substrings
            continue;
        const QDateTime created =
            QDateTime::fromString(o.value(QLatin1String("Created")).toString(), Qt::ISODateWithMs);
        found.append({created.isValid() ? created.toMSecsSinceEpoch() : 0, o.value(QLatin1String("Id")).toString()});
    }
    std::sort(found.begin(), found.end(),
              [](const Found &a, const Found &b) { return std::tie(a.createdMs, a.id) < std::tie(b.createdMs, b.id); });
    QStringList ids;
    for (const Found &f : std::as_const(found))
        ids.append(f.id);
    return ids;
}

Result<QString> DockerRuntime::ensureNoEgressNetwork(const QString &installId)
{
    const QString name = noEgressNetworkName(installId);
    auto existing = noEgressNetworks(installId);
    if (!existing)
        return std::unexpected(existing.error());
    if (!existing->isEmpty())
        return existing->first();
    const QJsonObject body{
        {QStringLiteral("Name"), name},
        {QStringLiteral("Driver"), QStringLiteral("bridge")},
        // Docker puts no route off an internal network and drops what it would forward from it.
        {QStringLiteral("Internal"), true},
        // Nor may the install's isolated apps talk to each other across it.
        {QStringLiteral("Options"),
         QJsonObject{{QStringLiteral("com.docker.network.bridge.enable_icc"), QStringLiteral("false")}}},
        // Best effort on engines before API 1.44, which otherwise create a second one by the name.
        {QStringLiteral("CheckDuplicate"), true},
        {QStringLiteral("Labels"), labelsJson({{QLatin1String(LabelManaged), QStringLiteral("true")},
                                               {QLatin1String(LabelInstall), installId}})}};
    auto created = m_client.post(QStringLiteral("/networks/create"), {}, compactJson(body));
    // 409: another process created it in the meantime, which is just as good.
    if (!created && created.error().code != ErrorCode::Conflict)
        return std::unexpected(created.error());
    auto now = noEgressNetworks(installId);
    if (!now)
        return std::unexpected(now.error());
    // Two creators can both get past CheckDuplicate; everyone uses the oldest, and a creator
    // whose network lost removes it before anything joins it.
    const QString mine = created ? created->json().object().value(QLatin1String("Id")).toString() : QString();
    if (!now->isEmpty() && !mine.isEmpty() && mine != now->first()) {
        Request r;
        r.method = "DELETE";
        r.path = QStringLiteral("/networks/") + mine;
        r.timeoutMs = 60000;
        discardResult(m_client.call(r), "a duplicate left over stays unused: everyone joins the oldest");
    }
    if (now->isEmpty())
        return fail(ErrorCode::Conflict,
                    QStringLiteral("a network named %1 exists but does not belong to install %2").arg(name, installId),
                    QStringLiteral("docker network %1").arg(name),
                    QStringLiteral("remove or rename that network (docker network rm %1)").arg(name));
    return now->first();
}

Status DockerRuntime::releaseNoEgressNetwork(const QString &installId)
{
    auto networks = noEgressNetworks(installId);
    if (!networks)
        return std::unexpected(networks.error());
    for (const QString &id : std::as_const(*networks)) {
        // Stopped containers count too: the engine would not start them again without it.
        const QJsonObject filters{{QStringLiteral("network"), QJsonArray{id}}};
        auto users = m_client.get(QStringLiteral("/containers/json"),
                                  {{QStringLiteral("all"), QStringLiteral("1")},
                                   {QStringLiteral("filters"), QString::fromUtf8(compactJson(filters))}});
        if (!users)
            return std::unexpected(users.error());
        if (!users->json().array().isEmpty())
            continue;
        Request r;
        r.method = "DELETE";
        r.path = QStringLiteral("/networks/") + id;
        r.timeoutMs = 60000;
        auto removed = m_client.call(r);
        if (!removed && removed.error().code != ErrorCode::NotFound)
            return std::unexpected(removed.error());
    }
    return {};
}

DockerRuntime::DockerRuntime(QString socketPath) : m_client(std::move(socketPath))
{}

RuntimeCapabilities DockerRuntime::capabilities()
{
    RuntimeCapabilities caps;
    caps.kind = QStringLiteral("docker");
    caps.canBuild = true;
    caps.canIsolateEgress = true;
    caps.canMeasureDisk = true;
    caps.canMountVolumes = true;
    if (auto info = m_client.get(QStringLiteral("/info"))) {
        const QJsonObject o = info->json().object();
        caps.maxMemoryBytes = qint64(o.value(QLatin1String("MemTotal")).toDouble());
        caps.maxCpus = o.value(QLatin1String("NCPU")).toDouble();
    }
    return caps;
}

Status DockerRuntime::ping()
{
    Request r;
    r.path = QStringLiteral("/_ping");
    r.timeoutMs = 5000;
    auto response = m_client.call(r);
    if (!response)
        return std::unexpected(response.error());
    return {};
}

Result<QString> DockerRuntime::build(const BuildRequest &request, const CancelToken &cancel,
                                     const std::function<void(const QString &line)> &progress)
{
    return dockerapi::buildImage(m_client, request, cancel, progress, m_builder.load());
}

Result<BuilderCache> DockerRuntime::builderCache()
{
    return dockerapi::builderCache(m_client);
}

Result<QString> DockerRuntime::checkRegistry(const QString &image, const RegistryCredential &credential,
                                             const CancelToken & /*cancel*/)
{
    return dockerapi::checkRegistry(m_client, image, credential);
}

Result<QString> DockerRuntime::run(const ContainerSpec &spec)
{
    QJsonObject body;
    body.insert(QStringLiteral("Image"), spec.image);
    if (!spec.command.isEmpty())
        body.insert(QStringLiteral("Cmd"), QJsonArray::fromStringList(spec.command));
    QJsonArray env;
    for (auto it = spec.env.cbegin(); it != spec.env.cend(); ++it)
        env.append(QString(it.key() + u'=' + it.value()));
    body.insert(QStringLiteral("Env"), env);
    body.insert(QStringLiteral("Labels"), labelsJson(spec.labels));
    if (spec.port > 0)
        body.insert(QStringLiteral("ExposedPorts"),
                    QJsonObject{{QStringLiteral("%1/tcp").arg(spec.port), QJsonObject()}});
    QJsonObject host;
    if (spec.memoryBytes > 0)
        host.insert(QStringLiteral("Memory"), double(spec.memoryBytes));
    if (spec.cpus > 0)
        host.insert(QStringLiteral("NanoCpus"), double(qint64(spec.cpus * 1e9)));
    host.insert(QStringLiteral("RestartPolicy"), QJsonObject{{QStringLiteral("Name"), QStringLiteral("no")}});
    host.insert(QStringLiteral("Init"), spec.init);
    if (!spec.volumes.isEmpty()) {
        auto mounts = volumeMounts(spec);
        if (!mounts)
            return std::unexpected(mounts.error());
        host.insert(QStringLiteral("Mounts"), *mounts);
    }

    // Held from finding the network until the container refers to it, so that a concurrent
    // remove() of the network's last container cannot take the network away in between.
    std::optional<QMutexLocker<QMutex>> networkLock;
    QString install;
    if (!spec.egress) {
        install = spec.labels.value(QLatin1String(LabelInstall));
        if (install.isEmpty())
            return fail(ErrorCode::Invalid,
                        QStringLiteral("a container without egress needs the %1 label: its network belongs to the "
                                       "install")
                            .arg(QLatin1String(LabelInstall)),
                        spec.name);
        networkLock.emplace(&m_networkLock);
        auto network = ensureNoEgressNetwork(install);
        if (!network)
            return std::unexpected(network.error());
        host.insert(QStringLiteral("NetworkMode"), *network);
        // With the network's id in the endpoint, the engine finds it by id when it starts the
        // container, not by name, which a duplicate made in a race would make ambiguous.
        body.insert(QStringLiteral("NetworkingConfig"),
                    QJsonObject{{QStringLiteral("EndpointsConfig"),
                                 QJsonObject{{*network, QJsonObject{{QStringLiteral("NetworkID"), *network}}}}}});
    }
    body.insert(QStringLiteral("HostConfig"), host);

    QList<QPair<QString, QString>> query;
    if (!spec.name.isEmpty())
        query.append({QStringLiteral("name"), spec.name});
    auto created = m_client.post(QStringLiteral("/containers/create"), query, compactJson(body));
    if (!created) {
        if (networkLock)
            // A network made just for this container goes too.
            discardResult(releaseNoEgressNetwork(install), "the create error is the one to report");
        return std::unexpected(created.error());
    }
    networkLock.reset();
    const QString id = created->json().object().value(QLatin1String("Id")).toString();
    if (id.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("the engine created a container without an id"),
                    QStringLiteral("docker POST /containers/create"));
    if (!spec.files.isEmpty()) {
        // Into the created container's file system, so the process finds them when it starts.
        auto tar = dockerapi::tarOfFiles(spec.files);
        if (!tar) {
            discardResult(remove(id), "the error being returned is the one to report");
            return std::unexpected(tar.error());
        }
        Request put;
        put.method = "PUT";
        put.path = containerPath(id, u"/archive");
        put.addQuery(QStringLiteral("path"), QStringLiteral("/"));
        put.body = std::move(*tar);
        put.contentType = "application/x-tar";
        put.timeoutMs = 60000;
        auto written = m_client.call(put);
        wipeBytes(put.body);
        if (!written) {
            discardResult(remove(id), "the error being returned is the one to report");
            return std::unexpected(written.error());
        }
    }
    for (const QString &network : spec.networks) {
        const QJsonObject join{{QStringLiteral("Container"), id}};
        if (auto joined = m_client.post(QStringLiteral("/networks/%1/connect").arg(network), {}, compactJson(join));
            !joined) {
            discardResult(remove(id), "the error being returned is the one to report");
            return std::unexpected(joined.error());
        }
    }
    if (auto started = start(id); !started) {
        // The contract: on failure nothing is left behind.
        discardResult(remove(id), "the start error is the one to report");
        return std::unexpected(started.error());
    }
    return id;
}

Result<ContainerInfo> DockerRuntime::inspect(const QString &id)
{
    auto response = m_client.get(containerPath(id, u"/json"));
    if (!response)
        return std::unexpected(response.error());
    return containerFromInspect(response->json().object());
}

Result<QList<ContainerInfo>> DockerRuntime::containers(const Labels &filter)
{
    QList<QPair<QString, QString>> query{{QStringLiteral("all"), QStringLiteral("1")}};
    if (const QString f = labelFilter(filter); !f.isEmpty())
        query.append({QStringLiteral("filters"), f});
    auto response = m_client.get(QStringLiteral("/containers/json"), query);
    if (!response)
        return std::unexpected(response.error());
    QList<ContainerInfo> out;
    // The list lacks exit codes, restart counts and start times: inspect each (cheap locally).
    for (const QJsonValue v : response->json().array()) {
        const QString id = v.toObject().value(QLatin1String("Id")).toString();
        auto info = inspect(id);
        if (!info) {
            if (info.error().code == ErrorCode::NotFound)
                continue; // removed between the list and the inspect
            return std::unexpected(info.error());
        }
        out.append(*info);
    }
    return out;
}

Status DockerRuntime::start(const QString &id)
{
    auto response = m_client.post(containerPath(id, u"/start"));
    if (!response)
        return std::unexpected(response.error());
    return {}; // 304: already running
}

Status DockerRuntime::stop(const QString &id, int timeoutSeconds)
{
    Request r;
    r.method = "POST";
    r.path = containerPath(id, u"/stop");
    r.addQuery(QStringLiteral("t"), QString::number(qMax(0, timeoutSeconds)));
    r.timeoutMs = (qMax(0, timeoutSeconds) + 30) * 1000;
    auto response = m_client.call(r);
    if (!response)
        return std::unexpected(response.error());
    return {}; // 304: already stopped
}

Status DockerRuntime::remove(const QString &id)
{
    // Whether this may be the last user of its install's egress-free network.
    std::optional<QString> install;
    if (auto inspected = m_client.get(containerPath(id, u"/json")))
        install = noEgressInstall(inspected->json().object());
    Request r;
    r.method = "DELETE";
    r.path = containerPath(id);
    r.addQuery(QStringLiteral("force"), QStringLiteral("1")).addQuery(QStringLiteral("v"), QStringLiteral("1"));
    r.timeoutMs = 60000;
    auto response = m_client.call(r);
    if (!response && response.error().code != ErrorCode::NotFound)
        return std::unexpected(response.error());
    if (install) {
        QMutexLocker lock(&m_networkLock);
        // The container is gone, which is what was asked; a network that stays is reused.
        if (auto released = releaseNoEgressNetwork(*install); !released)
            qWarning("docker: could not remove the network %s: %s", qPrintable(noEgressNetworkName(*install)),
                     qPrintable(released.error().text()));
    }
    return {};
}

Result<QList<ImageInfo>> DockerRuntime::images(const Labels &filter)
{
    QList<QPair<QString, QString>> query;
    if (const QString f = labelFilter(filter); !f.isEmpty())
        query.append({QStringLiteral("filters"), f});
    auto response = m_client.get(QStringLiteral("/images/json"), query);
    if (!response)
        return std::unexpected(response.error());
    QList<ImageInfo> out;
    for (const QJsonValue v : response->json().array()) {
        const QJsonObject o = v.toObject();
        ImageInfo info;
        info.id = o.value(QLatin1String("Id")).toString();
        for (const QJsonValue tag : o.value(QLatin1String("RepoTags")).toArray()) {
            if (tag.toString() != QLatin1String("<none>:<none>"))
                info.tags.append(tag.toString());
        }
        info.labels = labelsFrom(o.value(QLatin1String("Labels")));
        out.append(info);
    }
    return out;
}

Status DockerRuntime::removeImage(const QString &idOrTag)
{
    return dockerapi::removeImage(m_client, idOrTag, true);
}

Result<bool> DockerRuntime::removeOwnImage(const QString &idOrTag, const Labels &owner)
{
    auto inspected = m_client.get(QStringLiteral("/images/") + idOrTag + QStringLiteral("/json"));
    if (!inspected)
        return inspected.error().code == ErrorCode::NotFound ? Result<bool>(false)
                                                             : Result<bool>(std::unexpected(inspected.error()));
    const Labels labels =
        labelsFrom(inspected->json().object().value(QLatin1String("Config")).toObject().value(QLatin1String("Labels")));
    for (auto it = owner.cbegin(); it != owner.cend(); ++it)
        if (!labels.contains(it.key()) || labels.value(it.key()) != it.value())
            return false;
    if (auto removed = removeImage(idOrTag); !removed)
        return std::unexpected(removed.error());
    return true;
}

Status DockerRuntime::tagImage(const QString &id, const QString &tag)
{
    const qsizetype colon = tag.lastIndexOf(u':');
    if (colon <= tag.lastIndexOf(u'/'))
        return fail(ErrorCode::Invalid, QStringLiteral("a tag names a repository and a tag (\"pando/app:d42\")"), tag);
    Request r;
    r.method = "POST";
    r.path = QStringLiteral("/images/") + id + QStringLiteral("/tag");
    r.addQuery(QStringLiteral("repo"), tag.left(colon)).addQuery(QStringLiteral("tag"), tag.mid(colon + 1));
    r.timeoutMs = 60000;
    auto response = m_client.call(r);
    if (!response)
        return std::unexpected(response.error());
    return {};
}

Result<QList<int>> DockerRuntime::exposedPorts(const QString &imageId)
{
    auto inspected = m_client.get(QStringLiteral("/images/") + imageId + QStringLiteral("/json"));
    if (!inspected)
        return std::unexpected(inspected.error());
    // {"80/tcp": {}, "53/udp": {}}: an app is reached over TCP.
    const QJsonObject exposed = inspected->json()
                                    .object()
                                    .value(QLatin1String("Config"))
                                    .toObject()
                                    .value(QLatin1String("ExposedPorts"))
                                    .toObject();
    QList<int> ports;
    for (auto it = exposed.begin(); it != exposed.end(); ++it) {
        const QString port = it.key().section(u'/', 0, 0);
        const QString protocol = it.key().section(u'/', 1, 1);
        const int number = port.toInt();
        if ((protocol.isEmpty() || protocol == QLatin1String("tcp")) && number >= 1 && number <= 65535)
            ports.append(number);
    }
    std::sort(ports.begin(), ports.end());
    return ports;
}

Status DockerRuntime::logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                           const std::function<void(const LogLine &)> &sink)
{
    // TTY containers send raw bytes, the others the multiplexed frame format.
    auto inspected = m_client.get(containerPath(id, u"/json"));
    if (!inspected)
        return std::unexpected(inspected.error());
    const bool tty =
        inspected->json().object().value(QLatin1String("Config")).toObject().value(QLatin1String("Tty")).toBool();

    Request r;
    r.path = containerPath(id, u"/logs");
    r.addQuery(QStringLiteral("stdout"), QStringLiteral("1"))
        .addQuery(QStringLiteral("stderr"), QStringLiteral("1"))
        .addQuery(QStringLiteral("timestamps"), QStringLiteral("1"))
        .addQuery(QStringLiteral("tail"), tail < 0 ? QStringLiteral("all") : QString::number(tail))
        .addQuery(QStringLiteral("follow"), follow ? QStringLiteral("1") : QStringLiteral("0"));
    LogDemuxer demux(!tty, true, sink);
    auto status = m_client.stream(r, cancel, [&](QByteArrayView chunk) {
        demux.feed(chunk);
        return true;
    });
    if (!status && status.error().code == ErrorCode::Cancelled)
        return {}; // cancelling is how a follow is meant to end
    if (!status)
        return std::unexpected(status.error());
    demux.finish();
    return {};
}

Result<QString> DockerRuntime::imageId(const QString &idOrTag)
{
    return dockerapi::imageId(m_client, idOrTag);
}

Result<QString> DockerRuntime::importImage(const QString &rootfsDir, const QString &repoTag)
{
    return dockerapi::importImage(m_client, rootfsDir, repoTag);
}

} // namespace pando::adapters::docker
