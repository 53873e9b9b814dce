#include "adapters/runtime/set/runtimeset.h"

namespace pando::adapters {

void RuntimeSet::add(const QString &kind, std::shared_ptr<Runtime> runtime)
{
    m_members.append(Member{kind, std::move(runtime)});
}

Status RuntimeSet::setDefaultKind(const QString &kind)
{
    if (!find(kind))
        return fail(
            ErrorCode::Invalid,
            QStringLiteral("this install has no %1 runtime (it has %2)").arg(kind, kinds().join(QStringLiteral(", "))),
            QStringLiteral("default runtime"));
    m_defaultKind = kind;
    return {};
}

QStringList RuntimeSet::kinds() const
{
    QStringList out;
    for (const Member &m : m_members)
        out << m.kind;
    return out;
}

QString RuntimeSet::defaultKind() const
{
    if (!m_defaultKind.isEmpty())
        return m_defaultKind;
    return m_members.isEmpty() ? QString() : m_members.first().kind;
}

std::shared_ptr<Runtime> RuntimeSet::find(const QString &kind) const
{
    for (const Member &m : m_members)
        if (m.kind == kind)
            return m.runtime;
    return nullptr;
}

Result<const RuntimeSet::Member *> RuntimeSet::member(const QString &kind) const
{
    if (m_members.isEmpty())
        return fail(ErrorCode::Unavailable, QStringLiteral("this install has no runtime"), QStringLiteral("runtime"));
    const QString wanted = kind.isEmpty() ? defaultKind() : kind;
    for (const Member &m : m_members)
        if (m.kind == wanted)
            return &m;
    return fail(
        ErrorCode::NotFound,
        QStringLiteral("this install has no %1 runtime (it has %2)").arg(kind, kinds().join(QStringLiteral(", "))),
        QStringLiteral("runtime"),
        kind == QLatin1String("incus") ? QStringLiteral("start incusd and restart pandod, or pass --incus-socket")
                                       : QString());
}

std::pair<const RuntimeSet::Member *, QString> RuntimeSet::route(const QString &id) const
{
    const qsizetype colon = id.indexOf(QLatin1Char(':'));
    if (colon > 0) {
        const QString kind = id.left(colon);
        for (qsizetype i = 1; i < m_members.size(); ++i)
            if (m_members[i].kind == kind)
                return {&m_members[i], id.mid(colon + 1)};
    }
    return {m_members.isEmpty() ? nullptr : &m_members.first(), id};
}

QString RuntimeSet::prefixed(const Member &m, const QString &id) const
{
    return &m == &m_members.first() ? id : m.kind + QLatin1Char(':') + id;
}

RuntimeCapabilities RuntimeSet::capabilities()
{
    auto m = member({});
    return m ? (*m)->runtime->capabilities() : RuntimeCapabilities{};
}

Result<RuntimeCapabilities> RuntimeSet::capabilitiesOf(const QString &kind)
{
    auto m = member(kind);
    if (!m)
        return std::unexpected(m.error());
    return (*m)->runtime->capabilities();
}

Result<QList<RuntimeRoom>> RuntimeSet::rooms()
{
    QList<RuntimeRoom> out;
    for (const Member &m : m_members) {
        auto some = m.runtime->rooms();
        if (!some) {
            // One runtime not answering does not hide the others' room: it shows as unknown.
            RuntimeRoom unknown;
            unknown.kind = m.kind;
            unknown.note = some.error().text();
            unknown.reachable = false;
            out.append(unknown);
            continue;
        }
        for (RuntimeRoom &room : *some) {
            room.kind = m.kind;
            out.append(std::move(room));
        }
    }
    return out;
}

Result<qint64> RuntimeSet::diskUsage(const QString &id)
{
    auto [m, own] = route(id);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such container"), id);
    return m->runtime->diskUsage(own);
}

Result<QList<VolumeInfo>> RuntimeSet::volumes(const Labels &filter)
{
    QList<VolumeInfo> out;
    for (const Member &m : m_members) {
        auto some = m.runtime->volumes(filter);
        if (!some)
            return std::unexpected(some.error());
        for (VolumeInfo &info : *some) {
            info.id = prefixed(m, info.id);
            out.append(std::move(info));
        }
    }
    return out;
}

Status RuntimeSet::removeVolume(const QString &id)
{
    auto [m, own] = route(id);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such volume"), id);
    return m->runtime->removeVolume(own);
}

Result<qint64> RuntimeSet::exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel)
{
    auto [m, own] = route(what.volumeId);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such volume"), what.volumeId);
    VolumeExport theirs = what;
    theirs.volumeId = own;
    if (!what.containerId.isEmpty()) {
        auto [holder, container] = route(what.containerId);
        if (holder != m)
            return fail(ErrorCode::Invalid, QStringLiteral("the container is not on the volume's runtime"),
                        what.containerId);
        theirs.containerId = container;
    }
    return m->runtime->exportVolume(theirs, out, cancel);
}

Status RuntimeSet::checkVolumeArchive(const VolumeImport &what)
{
    auto [m, own] = route(what.volumeId);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such volume"), what.volumeId);
    VolumeImport theirs = what;
    theirs.volumeId = own;
    return m->runtime->checkVolumeArchive(theirs);
}

Status RuntimeSet::importVolume(const VolumeImport &what, const CancelToken &cancel)
{
    auto [m, own] = route(what.volumeId);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such volume"), what.volumeId);
    VolumeImport theirs = what;
    theirs.volumeId = own;
    if (!what.image.isEmpty()) {
        auto [holder, image] = route(what.image);
        if (holder != m)
            return fail(ErrorCode::Invalid, QStringLiteral("the image is not on the volume's runtime"), what.image);
        theirs.image = image;
    }
    return m->runtime->importVolume(theirs, cancel);
}

Status RuntimeSet::ping()
{
    auto m = member({});
    if (!m)
        return std::unexpected(m.error());
    return (*m)->runtime->ping();
}

Result<QString> RuntimeSet::build(const BuildRequest &request, const CancelToken &cancel,
                                  const std::function<void(const QString &line)> &progress)
{
    auto m = member(request.runtime);
    if (!m)
        return std::unexpected(m.error());
    BuildRequest routed = request;
    if (request.leftover)
        routed.leftover = [this, built = *m, told = request.leftover](const QString &id, qint64 bytes) {
            told(prefixed(*built, id), bytes);
        };
    auto id = (*m)->runtime->build(routed, cancel, progress);
    if (!id)
        return id;
    return prefixed(**m, *id);
}

Result<QString> RuntimeSet::run(const ContainerSpec &spec)
{
    auto [m, image] = route(spec.image);
    if (!m)
        return fail(ErrorCode::Unavailable, QStringLiteral("this install has no runtime"), spec.name);
    ContainerSpec own = spec;
    own.image = image;
    auto id = m->runtime->run(own);
    if (!id)
        return id;
    return prefixed(*m, *id);
}

Result<ContainerInfo> RuntimeSet::inspect(const QString &id)
{
    auto [m, own] = route(id);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such container"), id);
    auto info = m->runtime->inspect(own);
    if (info)
        info->id = prefixed(*m, info->id);
    return info;
}

Result<QList<ContainerInfo>> RuntimeSet::containers(const Labels &filter)
{
    QList<ContainerInfo> out;
    for (const Member &m : m_members) {
        auto some = m.runtime->containers(filter);
        if (!some)
            return std::unexpected(some.error());
        for (ContainerInfo &info : *some) {
            info.id = prefixed(m, info.id);
            out.append(std::move(info));
        }
    }
    return out;
}

Status RuntimeSet::start(const QString &id)
{
    auto [m, own] = route(id);
    return m ? m->runtime->start(own) : Status(fail(ErrorCode::NotFound, QStringLiteral("no such container"), id));
}

Status RuntimeSet::stop(const QString &id, int timeoutSeconds)
{
    auto [m, own] = route(id);
    return m ? m->runtime->stop(own, timeoutSeconds)
             : Status(fail(ErrorCode::NotFound, QStringLiteral("no such container"), id));
}

Status RuntimeSet::remove(const QString &id)
{
    auto [m, own] = route(id);
    return m ? m->runtime->remove(own) : Status{};
}

Result<QList<ImageInfo>> RuntimeSet::images(const Labels &filter)
{
    QList<ImageInfo> out;
    for (const Member &m : m_members) {
        auto some = m.runtime->images(filter);
        if (!some)
            return std::unexpected(some.error());
        for (ImageInfo &info : *some) {
            info.id = prefixed(m, info.id);
            out.append(std::move(info));
        }
    }
    return out;
}

Status RuntimeSet::removeImage(const QString &idOrTag)
{
    auto [m, own] = route(idOrTag);
    if (m && m != &m_members.first())
        return m->runtime->removeImage(own);
    // A tag (or a default-runtime id): whichever runtime has it.
    for (const Member &each : m_members)
        if (auto removed = each.runtime->removeImage(idOrTag); !removed)
            return removed;
    return {};
}

Result<bool> RuntimeSet::removeOwnImage(const QString &idOrTag, const Labels &owner)
{
    auto [m, own] = route(idOrTag);
    if (m && m != &m_members.first())
        return m->runtime->removeOwnImage(own, owner);
    bool removed = false;
    for (const Member &each : m_members) {
        auto done = each.runtime->removeOwnImage(idOrTag, owner);
        if (!done)
            return done;
        removed = removed || *done;
    }
    return removed;
}

Status RuntimeSet::tagImage(const QString &id, const QString &tag)
{
    auto [m, own] = route(id);
    return m ? m->runtime->tagImage(own, tag) : Status(fail(ErrorCode::NotFound, QStringLiteral("no such image"), id));
}

Result<BuilderCache> RuntimeSet::builderCache()
{
    auto m = member(QStringLiteral("docker"));
    if (!m)
        m = member({});
    if (!m)
        return std::unexpected(m.error());
    return (*m)->runtime->builderCache();
}

Result<QString> RuntimeSet::checkRegistry(const QString &image, const RegistryCredential &credential,
                                          const CancelToken &cancel)
{
    auto m = member({});
    if (!m)
        return std::unexpected(m.error());
    return (*m)->runtime->checkRegistry(image, credential, cancel);
}

Result<QList<int>> RuntimeSet::exposedPorts(const QString &imageId)
{
    auto [m, own] = route(imageId);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such image"), imageId);
    return m->runtime->exposedPorts(own);
}

Status RuntimeSet::logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                        const std::function<void(const LogLine &)> &sink)
{
    auto [m, own] = route(id);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such container"), id);
    return m->runtime->logs(own, tail, follow, cancel, sink);
}

Result<int> RuntimeSet::exec(const QString &id, const ExecRequest &request, const CancelToken &cancel,
                             const std::function<void(std::shared_ptr<ExecInput> input)> &opened,
                             const std::function<void(int stream, QByteArrayView data)> &onOutput)
{
    auto [m, own] = route(id);
    if (!m)
        return fail(ErrorCode::NotFound, QStringLiteral("no such container"), id);
    return m->runtime->exec(own, request, cancel, opened, onOutput);
}

} // namespace pando::adapters
