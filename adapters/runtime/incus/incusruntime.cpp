#include "adapters/runtime/incus/incusruntime.h"

#include "adapters/kit/dockerapi/dockerbuild.h"
#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/kit/dockerapi/dockerpull.h"
#include "adapters/runtime/incus/imageconvert.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QJsonObject>
#include <QThread>

namespace pando::adapters::incus {

namespace {

const QString UserPrefix = QStringLiteral("user.");
const QString PortKey = QStringLiteral("user.dev.pando.port");
// An Incus image has no tags: Pando keeps them in a property, space-separated, as Docker keeps
// several tags on one image; the Docker image it was made from is named too, so a build Docker
// answers from its cache finds the Incus image already there.
const QString TagsProperty = QStringLiteral("dev.pando.tags");
const QString SourceProperty = QStringLiteral("dev.pando.source");
constexpr int MaxTapLines = 5000;
constexpr int LogPollMs = 200;
// Incus refuses to stop or delete an instance while another operation holds it (a start that
// outlived its caller's deadline, on a loaded host, for minutes): remove() waits this long for it.
constexpr int BusyPatienceMs = 300000;

// "Instance is busy running a "start" operation", however Incus answered it; or "Instance is
// running" from a delete, when that start ended between reading the instance (stopped) and
// deleting it: the next try stops it first.
bool isBusy(const Error &error)
{
    return error.message.contains(QStringLiteral("is busy running")) ||
           error.message.contains(QStringLiteral("Instance is running"));
}

// The init Pando puts in every image runs the app; SIGTERM (not LXC's SIGPWR) asks it to stop.
const QString RawLxc = QStringLiteral("lxc.init.cmd = /.pando/init\nlxc.signal.halt = SIGTERM\n");

Labels labelsOf(const incusapi::StringMap &config)
{
    Labels labels;
    for (auto it = config.begin(); it != config.end(); ++it)
        if (it.key().startsWith(UserPrefix) && it.key() != PortKey)
            labels.insert(it.key().mid(UserPrefix.size()), it.value());
    return labels;
}

QString stateOf(const QString &status)
{
    if (status == QLatin1String("Running"))
        return QStringLiteral("running");
    if (status == QLatin1String("Stopped"))
        return QStringLiteral("exited");
    if (status == QLatin1String("Frozen"))
        return QStringLiteral("paused");
    return status.toLower();
}

bool sleepUnlessCancelled(int ms, const CancelToken &cancel)
{
    for (int waited = 0; waited < ms; waited += 50) {
        if (cancel.isCancelled())
            return false;
        QThread::msleep(50);
    }
    return !cancel.isCancelled();
}

} // namespace

// One instance's console, as read so far: complete lines (the last MaxTapLines) and the start of
// a line still being written.
struct IncusRuntime::Tap {
    QMutex lock;
    QList<LogLine> lines;
    qint64 total = 0; // lines ever appended: a reader's position survives the trimming
    QByteArray partial;

    void append(const QByteArray &bytes, qint64 nowMs)
    {
        partial += bytes;
        qsizetype nl;
        while ((nl = partial.indexOf('\n')) >= 0) {
            QByteArray line = partial.left(nl);
            if (line.endsWith('\r'))
                line.chop(1);
            partial.remove(0, nl + 1);
            lines.append(LogLine{nowMs, false, QString::fromUtf8(line)});
            ++total;
        }
        if (lines.size() > MaxTapLines)
            lines.remove(0, lines.size() - MaxTapLines);
    }
    // Lines from position `from` (a `total` seen before) on; `from` moves to the end.
    QList<LogLine> since(qint64 &from)
    {
        const qint64 first = total - lines.size();
        const qint64 start = std::max(from, first);
        from = total;
        return lines.mid(qsizetype(start - first));
    }
};

IncusRuntime::IncusRuntime(IncusOptions options) : m_options(std::move(options)), m_client(m_options.connection)
{
    if (m_options.dockerSocket)
        m_builder = std::make_unique<dockerapi::DockerClient>(*m_options.dockerSocket);
}

IncusRuntime::~IncusRuntime() = default;

bool carriesLabels(const Labels &labels, const Labels &filter)
{
    for (auto it = filter.begin(); it != filter.end(); ++it)
        if (labels.value(it.key()) != it.value() || !labels.contains(it.key()))
            return false;
    return true;
}

RuntimeCapabilities IncusRuntime::capabilities()
{
    RuntimeCapabilities caps;
    caps.kind = QStringLiteral("incus");
    caps.canBuild = m_builder != nullptr;
    caps.canIsolateEgress = false;
    caps.canMountVolumes = true;
    caps.maxNameLength = 63;
    if (auto resources = m_client.get(QStringLiteral("/1.0/resources"))) {
        const QJsonObject r = resources->toObject();
        caps.maxCpus = r.value(QLatin1String("cpu")).toObject().value(QLatin1String("total")).toDouble();
        caps.maxMemoryBytes = r.value(QLatin1String("memory")).toObject().value(QLatin1String("total")).toInteger();
    }
    return caps;
}

Status IncusRuntime::ping()
{
    auto server = m_client.server();
    if (!server)
        return std::unexpected(server.error());
    if (server->auth != QLatin1String("trusted"))
        return fail(ErrorCode::Forbidden, QStringLiteral("%1 does not trust this client").arg(m_client.description()),
                    QStringLiteral("incus GET /1.0"),
                    QStringLiteral("add Pando's client certificate with `incus config trust add-certificate`"));
    if (!server->drivers.contains(QLatin1String("lxc")))
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("%1 cannot run containers (its drivers: %2)")
                        .arg(m_client.description(), server->drivers.join(QStringLiteral(", "))),
                    QStringLiteral("incus GET /1.0"));
    return {};
}

Result<QString> IncusRuntime::importFromDocker(const QString &dockerImage, const Labels &properties,
                                               const QString &description, const CancelToken &cancel)
{
    if (!m_builder)
        return fail(ErrorCode::Unavailable, QStringLiteral("no Docker engine is set up to build Incus images"),
                    QStringLiteral("Incus runtime"));
    auto tarball =
        convertDockerImage(*m_builder, ConvertRequest{dockerImage, m_options.busybox, description, properties}, cancel);
    if (!tarball)
        return std::unexpected(tarball.error());
    return m_client.importImage(tarball->get(), 10 * 60 * 1000, &cancel);
}

Result<BuilderCache> IncusRuntime::builderCache()
{
    if (!m_builder)
        return fail(ErrorCode::Unavailable, QStringLiteral("the Incus runtime has no Docker engine to build with"),
                    QStringLiteral("runtime"));
    return dockerapi::builderCache(*m_builder);
}

Result<QString> IncusRuntime::checkRegistry(const QString &image, const RegistryCredential &credential,
                                            const CancelToken & /*cancel*/)
{
    if (!m_builder)
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("the Incus runtime pulls images with a Docker engine, and none is set up"),
                    QStringLiteral("runtime"), QStringLiteral("start dockerd on this host"));
    return dockerapi::checkRegistry(*m_builder, image, credential);
}

Result<QString> IncusRuntime::build(const BuildRequest &request, const CancelToken &cancel,
                                    const std::function<void(const QString &line)> &progress)
{
    if (!m_builder)
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("the Incus runtime builds images with a Docker engine, and none is set up"),
                    QStringLiteral("build of ") + request.tag,
                    QStringLiteral("start dockerd on this host, or deploy a prebuilt image"));
    // What the build leaves beside its image is the builder's alone: removed at once, newest
    // first (an image with a child stays), so the Docker engine that builds for Incus keeps
    // nothing nobody tracks.
    BuildRequest own = request;
    QStringList leftovers;
    own.leftover = [&leftovers](const QString &id, qint64) {
        leftovers.prepend(id);
    };
    auto built = dockerapi::buildImage(*m_builder, own, cancel, progress, dockerapi::builderFromEnvironment());
    for (const QString &id : std::as_const(leftovers))
        discardResult(dockerapi::removeImage(*m_builder, id), "a leftover still there is a cache entry, no harm");
    if (!built)
        return built;
    // Docker's copy stays, with the same tag: a build of the same tree then comes from its cache
    // and finds its Incus image here, and untagging goes to both (RuntimeSet).
    auto images = m_client.images();
    if (!images)
        return std::unexpected(images.error());
    for (const incusapi::Image &image : *images) {
        if (image.properties.value(SourceProperty) != *built)
            continue;
        if (auto tagged = addTag(image, request.tag); !tagged)
            return std::unexpected(tagged.error());
        if (progress)
            progress(QStringLiteral("Incus image %1 (unchanged)").arg(image.fingerprint.left(12)));
        return image.fingerprint;
    }
    if (progress)
        progress(QStringLiteral("importing the image into Incus"));
    Labels properties = request.labels;
    properties.insert(TagsProperty, request.tag);
    properties.insert(SourceProperty, *built);
    auto fingerprint = importFromDocker(*built, properties, QStringLiteral("Pando app image ") + request.tag, cancel);
    if (fingerprint && progress)
        progress(QStringLiteral("Incus image %1").arg(fingerprint->left(12)));
    return fingerprint;
}

Status IncusRuntime::tagImage(const QString &id, const QString &tag)
{
    auto images = m_client.images();
    if (!images)
        return std::unexpected(images.error());
    for (const incusapi::Image &image : *images)
        if (id.size() >= 12 && image.fingerprint.startsWith(id))
            return addTag(image, tag);
    return fail(ErrorCode::NotFound, QStringLiteral("Incus has no image %1").arg(id), tag);
}

Status IncusRuntime::addTag(const incusapi::Image &image, const QString &tag)
{
    QStringList tags = image.properties.value(TagsProperty).split(u' ', Qt::SkipEmptyParts);
    if (tags.contains(tag))
        return {};
    tags << tag;
    incusapi::StringMap properties = image.properties;
    properties.insert(TagsProperty, tags.join(u' '));
    return m_client.updateImageProperties(image.fingerprint, properties);
}

Result<QString> IncusRuntime::run(const ContainerSpec &spec)
{
    if (auto valid = incusapi::checkInstanceName(spec.name); !valid)
        return std::unexpected(valid.error());
    if (!spec.egress)
        return fail(ErrorCode::Invalid, QStringLiteral("the Incus runtime cannot cut an instance's egress"), spec.name,
                    QStringLiteral("deploy this app to Docker, or allow egress"));
    if (!spec.networks.isEmpty())
        return fail(ErrorCode::Invalid,
                    QStringLiteral("the Incus runtime cannot join Docker networks (%1)").arg(spec.networks.join(u',')),
                    spec.name, QStringLiteral("services run on Docker: deploy apps with services to Docker"));
    for (auto it = spec.files.begin(); it != spec.files.end(); ++it)
        if (!it.key().startsWith(u'/') || it.key().contains(QLatin1String("/../")) ||
            it.key().endsWith(QLatin1String("/..")))
            return fail(ErrorCode::Invalid, QStringLiteral("a file's path must be absolute and not climb with .."),
                        it.key());
    incusapi::InstancesPost post;
    post.name = spec.name;
    post.sourceFingerprint = spec.image;
    post.config.insert(QStringLiteral("raw.lxc"), RawLxc);
    for (auto it = spec.env.begin(); it != spec.env.end(); ++it)
        post.config.insert(QStringLiteral("environment.") + it.key(), it.value());
    if (!spec.command.isEmpty())
        post.config.insert(QStringLiteral("environment.PANDO_ARGV"), shellQuote(spec.command));
    for (auto it = spec.labels.begin(); it != spec.labels.end(); ++it)
        post.config.insert(UserPrefix + it.key(), it.value());
    if (spec.port > 0)
        post.config.insert(PortKey, QString::number(spec.port));
    if (spec.memoryBytes > 0)
        post.config.insert(QStringLiteral("limits.memory"), QString::number(spec.memoryBytes) + u'B');
    if (spec.cpus > 0)
        post.config.insert(QStringLiteral("limits.cpu.allowance"),
                           QStringLiteral("%1ms/100ms").arg(std::max(1, qRound(spec.cpus * 100))));
    if (!spec.volumes.isEmpty()) {
        auto devices = volumeDevices(spec);
        if (!devices)
            return std::unexpected(devices.error());
        post.devices = std::move(*devices);
    }
    // Files go in before the app starts: the instance is made stopped, filled, then started.
    post.start = spec.files.isEmpty();
    const QDeadlineTimer deadline(m_options.startTimeoutMs);
    auto cleanUp = [this, &spec](Error error) -> Result<QString> {
        // Nothing half-made stays behind: a later deploy would trip over the name.
        if (auto removed = remove(spec.name); !removed)
            error.message += QStringLiteral("; removing the half-made instance failed too: ") + removed.error().text();
        return std::unexpected(error);
    };
    if (auto created = m_client.createInstance(post, m_options.startTimeoutMs); !created) {
        if (created.error().code == ErrorCode::Conflict)
            return std::unexpected(created.error()); // the name belongs to an instance we did not make now
        return cleanUp(created.error());
    }
    if (!spec.files.isEmpty()) {
        for (auto it = spec.files.begin(); it != spec.files.end(); ++it) {
            const QStringList parts = it.key().split(u'/', Qt::SkipEmptyParts);
            QString dir;
            for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
                dir += u'/' + parts[i];
                if (auto made = m_client.makeDirectory(spec.name, dir, 0755); !made)
                    return cleanUp(made.error());
            }
            const ContainerFile &file = it.value();
            if (auto pushed = m_client.pushFile(spec.name, it.key(), file.content, file.mode, file.uid, file.gid);
                !pushed)
                return cleanUp(pushed.error());
        }
        if (auto started = m_client.changeState(spec.name, QStringLiteral("start"), 30, false); !started)
            return cleanUp(started.error());
    }
    if (auto addressed = awaitAddress(spec.name, int(std::max<qint64>(deadline.remainingTime(), 1000))); !addressed)
        return cleanUp(addressed.error());
    return spec.name;
}

Status IncusRuntime::awaitAddress(const QString &name, int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    int pauseMs = 5;
    for (;;) {
        auto state = readState(name);
        if (!state)
            return std::unexpected(state.error());
        if (state->status != QLatin1String("Running"))
            return {}; // stopped already: the caller's health check says why
        if (!state->inetAddresses.value(QStringLiteral("eth0")).isEmpty())
            return {};
        if (deadline.hasExpired())
            return fail(ErrorCode::Timeout,
                        QStringLiteral("the instance got no IPv4 address in %1 s").arg(timeoutMs / 1000.0),
                        QStringLiteral("instance ") + name,
                        QStringLiteral("check that the default profile's eth0 is on a bridge with DHCP "
                                       "(`incus network show incusbr0`)"));
        // DHCP answers within tens of milliseconds; a state read costs a few.
        QThread::msleep(pauseMs);
        pauseMs = std::min(pauseMs * 2, 10);
    }
}

Result<incusapi::InstanceState> IncusRuntime::readState(const QString &name)
{
    // While an instance's init ends, its state cannot be read for a moment ("Invalid PID"):
    // ask again until Incus has settled it.
    const QDeadlineTimer deadline(5000);
    for (;;) {
        auto state = m_client.state(name);
        if (state || state.error().code == ErrorCode::NotFound || deadline.hasExpired())
            return state;
        QThread::msleep(50);
    }
}

ContainerInfo IncusRuntime::toInfo(const incusapi::Instance &instance,
                                   const std::optional<incusapi::InstanceState> &state)
{
    ContainerInfo info;
    info.id = instance.name;
    info.name = instance.name;
    info.image = instance.config.value(QStringLiteral("volatile.base_image"));
    info.labels = labelsOf(instance.config);
    info.state = stateOf(state ? state->status : instance.status);
    info.startedAt = instance.lastUsedAt;
    if (state)
        info.address = state->inetAddresses.value(QStringLiteral("eth0")).value(0);
    if (info.state == QLatin1String("exited")) {
        // The init keeps the app's exit code; an instance that never ran has none.
        if (auto code = m_client.pullFile(instance.name, QStringLiteral("/.pando/exit")))
            info.exitCode = code->trimmed().toInt();
    }
    return info;
}

Result<ContainerInfo> IncusRuntime::inspect(const QString &id)
{
    auto instance = m_client.instance(id);
    if (!instance)
        return std::unexpected(instance.error());
    auto state = readState(id);
    if (!state)
        return std::unexpected(state.error());
    return toInfo(*instance, *state);
}

Result<QList<ContainerInfo>> IncusRuntime::containers(const Labels &filter)
{
    auto instances = m_client.instances();
    if (!instances)
        return std::unexpected(instances.error());
    QList<ContainerInfo> out;
    for (const incusapi::Instance &instance : *instances) {
        if (!carriesLabels(labelsOf(instance.config), filter))
            continue;
        std::optional<incusapi::InstanceState> state;
        if (instance.status == QLatin1String("Running")) {
            // One try: a listing is a snapshot, and an instance whose init is just ending
            // (its state unreadable for a moment) is listed by its status, without an address.
            auto s = m_client.state(instance.name);
            if (!s && s.error().code == ErrorCode::NotFound)
                continue; // removed between the list and now
            if (s)
                state = *s;
        }
        out.append(toInfo(instance, state));
    }
    return out;
}

Status IncusRuntime::start(const QString &id)
{
    auto instance = m_client.instance(id);
    if (!instance)
        return std::unexpected(instance.error());
    if (instance->status != QLatin1String("Running"))
        if (auto started = m_client.changeState(id, QStringLiteral("start"), 30, false); !started)
            return started;
    return awaitAddress(id, m_options.startTimeoutMs);
}

Status IncusRuntime::stop(const QString &id, int timeoutSeconds)
{
    auto stopped = m_client.changeState(id, QStringLiteral("stop"), std::max(timeoutSeconds, 1), false);
    if (stopped || stopped.error().code == ErrorCode::NotFound)
        return stopped;
    // A clean stop that did not happen in time (or an instance already stopped): force it.
    auto instance = m_client.instance(id);
    if (instance && instance->status == QLatin1String("Stopped"))
        return {};
    return m_client.changeState(id, QStringLiteral("stop"), 0, true);
}

Status IncusRuntime::remove(const QString &id)
{
    // Nothing half-made stays behind when a deploy gave up on a start Incus is still running:
    // the instance is removed once that start lets go of it.
    const QDeadlineTimer patience(BusyPatienceMs);
    const auto removeNow = [this, &id]() -> Status {
        auto instance = m_client.instance(id);
        if (!instance)
            return instance.error().code == ErrorCode::NotFound ? Status{} : Status(std::unexpected(instance.error()));
        if (instance->status != QLatin1String("Stopped")) {
            auto stopped = m_client.changeState(id, QStringLiteral("stop"), 0, true);
            if (!stopped && stopped.error().code != ErrorCode::NotFound)
                return stopped;
        }
        auto deleted = m_client.deleteInstance(id, 60000);
        if (!deleted && deleted.error().code == ErrorCode::NotFound)
            return {};
        return deleted;
    };
    for (;;) {
        Status removed = removeNow();
        if (removed || !isBusy(removed.error()) || patience.hasExpired()) {
            forgetTap(id);
            return removed;
        }
        QThread::msleep(250);
    }
}

Result<QList<ImageInfo>> IncusRuntime::images(const Labels &filter)
{
    auto images = m_client.images();
    if (!images)
        return std::unexpected(images.error());
    QList<ImageInfo> out;
    for (const incusapi::Image &image : *images) {
        Labels labels = image.properties;
        const QStringList tags = labels.take(TagsProperty).split(u' ', Qt::SkipEmptyParts);
        labels.remove(SourceProperty);
        labels.remove(QStringLiteral("description"));
        if (!carriesLabels(labels, filter))
            continue;
        out.append(ImageInfo{image.fingerprint, tags + image.aliases, labels});
    }
    return out;
}

Status IncusRuntime::removeImage(const QString &idOrTag)
{
    auto removed = removeImageWhere(idOrTag, {});
    if (!removed)
        return std::unexpected(removed.error());
    return {};
}

Result<bool> IncusRuntime::removeOwnImage(const QString &idOrTag, const Labels &owner)
{
    auto removed = removeImageWhere(idOrTag, owner);
    if (!removed)
        return std::unexpected(removed.error());
    return *removed > 0;
}

Result<int> IncusRuntime::removeImageWhere(const QString &idOrTag, const Labels &owner)
{
    auto images = m_client.images();
    if (!images)
        return std::unexpected(images.error());
    int changed = 0;
    for (const incusapi::Image &image : *images) {
        QStringList tags = image.properties.value(TagsProperty).split(u' ', Qt::SkipEmptyParts);
        const bool byId = idOrTag.size() >= 12 && image.fingerprint.startsWith(idOrTag);
        if (!byId && !tags.contains(idOrTag))
            continue;
        if (!carriesLabels(image.properties, owner))
            continue; // another install's: not ours to touch
        tags.removeAll(idOrTag);
        Status done;
        if (byId || tags.isEmpty()) {
            // Its last tag goes: the image goes too, as with Docker.
            done = m_client.deleteImage(image.fingerprint, 60000);
        } else {
            incusapi::StringMap properties = image.properties;
            properties.insert(TagsProperty, tags.join(u' '));
            done = m_client.updateImageProperties(image.fingerprint, properties);
        }
        if (!done && done.error().code != ErrorCode::NotFound)
            return std::unexpected(done.error());
        ++changed;
    }
    return changed;
}

Status IncusRuntime::drainConsole(const QString &name)
{
    std::shared_ptr<Tap> tap;
    {
        QMutexLocker locker(&m_tapsLock);
        auto &slot = m_taps[name];
        if (!slot)
            slot = std::make_shared<Tap>();
        tap = slot;
    }
    // The read and the append happen under the tap's lock, so two readers keep the order.
    QMutexLocker locker(&tap->lock);
    auto bytes = m_client.consoleLog(name);
    if (!bytes)
        return std::unexpected(bytes.error());
    if (!bytes->isEmpty())
        tap->append(*bytes, QDateTime::currentMSecsSinceEpoch());
    return {};
}

void IncusRuntime::forgetTap(const QString &name)
{
    QMutexLocker locker(&m_tapsLock);
    m_taps.remove(name);
}

Status IncusRuntime::logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                          const std::function<void(const LogLine &)> &sink)
{
    if (auto drained = drainConsole(id); !drained)
        return drained;
    std::shared_ptr<Tap> tap;
    {
        QMutexLocker locker(&m_tapsLock);
        tap = m_taps.value(id);
    }
    if (!tap)
        return {}; // removed meanwhile
    qint64 position = 0;
    QList<LogLine> first;
    {
        QMutexLocker locker(&tap->lock);
        first = tap->since(position);
    }
    if (tail >= 0 && first.size() > tail)
        first = first.mid(first.size() - tail);
    for (const LogLine &line : first)
        sink(line);
    while (follow && sleepUnlessCancelled(LogPollMs, cancel)) {
        auto drained = drainConsole(id);
        if (!drained)
            return drained.error().code == ErrorCode::NotFound ? Status{} : drained;
        QList<LogLine> fresh;
        {
            QMutexLocker locker(&tap->lock);
            fresh = tap->since(position);
        }
        for (const LogLine &line : fresh)
            sink(line);
        auto instance = m_client.instance(id);
        if (!instance || instance->status == QLatin1String("Stopped"))
            break; // the app ended (what it wrote last was drained above)
    }
    return {};
}

} // namespace pando::adapters::incus
