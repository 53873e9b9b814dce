// DockerRuntime's app volumes (AppSpec run.volumes): named Docker volumes labelled with their
// install, app and name, made at an app's first deploy that mounts them and kept until removed.
#include "adapters/runtime/docker/dockerruntime.h"

#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/kit/httpkit/devicesink.h"

#include <QCryptographicHash>
#include <QJsonObject>

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

} // namespace pando::adapters::docker
