// DockerRuntime's app volumes (AppSpec run.volumes): named Docker volumes labelled with their
// install, app and name, made at an app's first deploy that mounts them and kept until removed.
#include "adapters/runtime/docker/dockerruntime.h"

#include "adapters/kit/dockerapi/archivecheck.h"
#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/kit/httpkit/devicesink.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QScopeGuard>

using namespace Qt::StringLiterals;

namespace pando::adapters::docker {

using dockerapi::compactJson;
using dockerapi::labelsJson;

QString DockerRuntime::volumeName(const QString &installId, const QString &app, const QString &name)
{
    const QByteArray digest = QCryptographicHash::hash(installId.toUtf8(), QCryptographicHash::Sha256).toHex().left(10);
    return u"pando-%1-%2-%3"_s.arg(app, name, QString::fromLatin1(digest));
}

Result<QJsonArray> DockerRuntime::volumeMounts(const ContainerSpec &spec)
{
    const QString install = spec.labels.value(QLatin1String(LabelInstall));
    const QString app = spec.labels.value(QLatin1String(LabelApp));
    if (install.isEmpty() || app.isEmpty())
        return fail(ErrorCode::Invalid, u"a container with volumes needs the install and app labels"_s, spec.name);
    QJsonArray mounts;
    for (const VolumeMount &mount : spec.volumes) {
        const QString name = volumeName(install, app, mount.name);
        auto found = m_client.get(u"/volumes/"_s + name);
        if (found) {
            // A volume of this name that is not this app's (made by hand, or by another install
            // whose digest collides) is not handed to the app.
            const QJsonObject labels = found->json().object().value(u"Labels"_s).toObject();
            if (labels.value(QLatin1String(LabelInstall)).toString() != install ||
                labels.value(QLatin1String(LabelApp)).toString() != app)
                return fail(ErrorCode::Conflict, u"Docker has a volume %1 that is not this app's"_s.arg(name),
                            u"run.volumes"_s, u"rename or remove that volume (docker volume rm %1)"_s.arg(name));
        } else if (found.error().code == ErrorCode::NotFound) {
            Labels labels{{QLatin1String(LabelManaged), u"true"_s},
                          {QLatin1String(LabelInstall), install},
                          {QLatin1String(LabelApp), app},
                          {QLatin1String(LabelVolume), mount.name}};
            auto created =
                m_client.post(u"/volumes/create"_s, {},
                              compactJson(QJsonObject{{u"Name"_s, name}, {u"Labels"_s, labelsJson(labels)}}));
            if (!created)
                return std::unexpected(created.error());
        } else {
            return std::unexpected(found.error());
        }
        mounts.append(QJsonObject{{u"Type"_s, u"volume"_s}, {u"Source"_s, name}, {u"Target"_s, mount.path}});
    }
    return mounts;
}

Result<QList<VolumeInfo>> DockerRuntime::volumes(const Labels &filter)
{
    QJsonArray labels{QString(QLatin1String(LabelVolume))};
    for (auto it = filter.cbegin(); it != filter.cend(); ++it)
        labels.append(QString(it.key() + u'=' + it.value()));
    const QList<QPair<QString, QString>> query{
        {u"filters"_s, QString::fromUtf8(compactJson(QJsonObject{{u"label"_s, labels}}))}};
    auto response = m_client.get(u"/volumes"_s, query);
    if (!response)
        return std::unexpected(response.error());
    QList<VolumeInfo> out;
    for (const QJsonValue v : response->json().object().value(u"Volumes"_s).toArray()) {
        const QJsonObject o = v.toObject();
        VolumeInfo info;
        info.id = o.value(u"Name"_s).toString();
        const QJsonObject l = o.value(u"Labels"_s).toObject();
        for (auto it = l.begin(); it != l.end(); ++it)
            info.labels.insert(it.key(), it.value().toString());
        info.name = info.labels.value(QLatin1String(LabelVolume));
        out.append(info);
    }
    return out;
}

Status DockerRuntime::removeVolume(const QString &id)
{
    dockerapi::Request r;
    r.method = "DELETE";
    r.path = u"/volumes/"_s + id;
    r.timeoutMs = 60000;
    auto response = m_client.call(r);
    if (!response && response.error().code != ErrorCode::NotFound)
        return std::unexpected(response.error());
    return {};
}

Result<qint64> DockerRuntime::exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel)
{
    if (what.containerId.isEmpty())
        return fail(ErrorCode::Conflict,
                    u"Docker reads a volume through a container that mounts it, and there is none"_s, what.volumeId,
                    u"deploy the app, then back the volume up"_s);
    // GET /containers/{id}/archive: a tar of the path, as `docker cp CONTAINER:PATH -` writes it.
    dockerapi::Request r;
    r.path = u"/containers/%1/archive"_s.arg(what.containerId);
    r.addQuery(u"path"_s, what.path);
    r.stallMs = 120000;
    httpkit::DeviceSink sink{out};
    auto streamed = m_client.stream(r, cancel, std::ref(sink));
    if (sink.failed)
        return fail(ErrorCode::Internal, u"cannot write the volume's archive: %1"_s.arg(out.errorString()),
                    what.volumeId);
    if (!streamed)
        return std::unexpected(streamed.error());
    return sink.written;
}

Status DockerRuntime::checkVolumeArchive(const VolumeImport &what)
{
    auto top = dockerapi::checkArchiveTree(what.archivePath);
    if (!top)
        return std::unexpected(top.error());
    return {};
}

// The volume is removed and made again with its labels (Docker cannot empty one), and the
// archive unpacked into it through a container that mounts it and is never started: PUT
// /containers/{id}/archive, as `docker cp - CONTAINER:PATH` does. The archive's top directory
// is where that container mounts the volume, so its name does not have to match the app's path.
Status DockerRuntime::importVolume(const VolumeImport &what, const CancelToken &cancel)
{
    if (what.image.isEmpty())
        return fail(ErrorCode::Invalid, u"Docker writes a volume through a container, and no image was given"_s,
                    what.volumeId);
    auto top = dockerapi::checkArchiveTree(what.archivePath);
    if (!top)
        return std::unexpected(top.error());
    if (auto removed = removeVolume(what.volumeId); !removed)
        return removed;
    if (auto made =
            m_client.post(u"/volumes/create"_s, {},
                          compactJson(QJsonObject{{u"Name"_s, what.volumeId}, {u"Labels"_s, labelsJson(what.labels)}}));
        !made)
        return std::unexpected(made.error());

    const QString mountRoot = u"/pando-restore"_s;
    Labels helperLabels;
    for (const char *key : {LabelManaged, LabelInstall, LabelApp})
        if (const QString value = what.labels.value(QLatin1String(key)); !value.isEmpty())
            helperLabels.insert(QLatin1String(key), value);
    const QJsonObject create{
        {u"Image"_s, what.image},
        {u"Entrypoint"_s, QJsonArray{u"/never-started"_s}},
        {u"Labels"_s, labelsJson(helperLabels)},
        {u"NetworkDisabled"_s, true},
        {u"HostConfig"_s,
         QJsonObject{{u"Mounts"_s, QJsonArray{QJsonObject{{u"Type"_s, u"volume"_s},
                                                          {u"Source"_s, what.volumeId},
                                                          {u"Target"_s, QString(mountRoot + u'/' + *top)}}}}}}};
    const QString name = u"%1-restore-%2"_s.arg(what.volumeId).arg(QDateTime::currentMSecsSinceEpoch());
    auto helper = m_client.post(u"/containers/create"_s, {{u"name"_s, name}}, compactJson(create));
    if (!helper)
        return std::unexpected(helper.error());
    const QString helperId = helper->json().object().value(u"Id"_s).toString();
    const auto removeHelper = qScopeGuard([&] {
        dockerapi::Request r;
        r.method = "DELETE";
        r.path = u"/containers/"_s + helperId;
        r.addQuery(u"force"_s, u"true"_s);
        r.timeoutMs = 60000;
        discardResult(m_client.call(r), "a helper left over carries the app's labels and goes with its next pass");
    });

    QFile archive(what.archivePath);
    if (!archive.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the archive: %1"_s.arg(archive.errorString()), what.archivePath);
    dockerapi::Request put;
    put.method = "PUT";
    put.path = u"/containers/%1/archive"_s.arg(helperId);
    put.addQuery(u"path"_s, mountRoot);
    put.bodyDevice = &archive;
    put.contentType = "application/x-tar";
    put.stallMs = 120000;
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, u"cancelled"_s, what.volumeId);
    if (auto unpacked = m_client.call(put); !unpacked)
        return fail(unpacked.error().code,
                    u"unpacking the archive into volume %1: %2"_s.arg(what.volumeId, unpacked.error().message),
                    what.archivePath);
    return {};
}

} // namespace pando::adapters::docker
