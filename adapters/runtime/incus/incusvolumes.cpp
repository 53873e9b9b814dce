// IncusRuntime's app volumes (AppSpec run.volumes): custom storage volumes in the pool instances
// get their root disk from, labelled in their user.* config with their install, app and name,
// made at an app's first deploy that mounts them and kept until removed. An instance mounts each
// as a disk device; Incus shifts the files' owners to the instance's id map on first attach.
#include "adapters/runtime/incus/incusruntime.h"

#include "adapters/kit/dockerapi/archivecheck.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::incus {

namespace {

constexpr int VolumeTimeoutMs = 60000;
const QString VolumeLabelPrefix = u"user."_s;

// A volume's Incus name: unique per install, app and volume, within Incus's name rules.
QString incusVolumeName(const QString &installId, const QString &app, const QString &name)
{
    const QByteArray digest = QCryptographicHash::hash(installId.toUtf8(), QCryptographicHash::Sha256).toHex().left(10);
    return u"pando-%1-%2-%3"_s.arg(app, name, QString::fromLatin1(digest));
}

QString customVolumesPath(const QString &pool)
{
    return u"/1.0/storage-pools/%1/volumes/custom"_s.arg(QString::fromUtf8(QUrl::toPercentEncoding(pool)));
}

Labels volumeLabelsOf(const QJsonObject &config)
{
    Labels labels;
    for (auto it = config.begin(); it != config.end(); ++it)
        if (it.key().startsWith(VolumeLabelPrefix))
            labels.insert(it.key().mid(VolumeLabelPrefix.size()), it.value().toString());
    return labels;
}

} // namespace

Result<QMap<QString, incusapi::StringMap>> IncusRuntime::volumeDevices(const ContainerSpec &spec)
{
    const QString install = spec.labels.value(QLatin1String(LabelInstall));
    const QString app = spec.labels.value(QLatin1String(LabelApp));
    if (install.isEmpty() || app.isEmpty())
        return fail(ErrorCode::Invalid, u"an instance with volumes needs the install and app labels"_s, spec.name);
    auto pool = rootPool();
    if (!pool)
        return std::unexpected(pool.error());
    QMap<QString, incusapi::StringMap> devices;
    for (const VolumeMount &mount : spec.volumes) {
        const QString name = incusVolumeName(install, app, mount.name);
        auto found = m_client.get(customVolumesPath(*pool) + u'/' + name);
        if (found) {
            // One of this name that is not this app's (made by hand, or by another install whose
            // digest collides) is not handed to the app.
            const Labels labels = volumeLabelsOf(found->toObject().value(u"config"_s).toObject());
            if (labels.value(QLatin1String(LabelInstall)) != install || labels.value(QLatin1String(LabelApp)) != app)
                return fail(ErrorCode::Conflict,
                            u"Incus has a storage volume %1 in pool %2 that is not this app's"_s.arg(name, *pool),
                            u"run.volumes"_s,
                            u"rename or remove that volume (incus storage volume delete %1 %2)"_s.arg(*pool, name));
        } else if (found.error().code == ErrorCode::NotFound) {
            QJsonObject config;
            const Labels labels{{QLatin1String(LabelManaged), u"true"_s},
                                {QLatin1String(LabelInstall), install},
                                {QLatin1String(LabelApp), app},
                                {QLatin1String(LabelVolume), mount.name}};
            for (auto it = labels.begin(); it != labels.end(); ++it)
                config.insert(VolumeLabelPrefix + it.key(), it.value());
            httpkit::Request create;
            create.method = "POST";
            create.path = customVolumesPath(*pool);
            create.body = QJsonDocument(QJsonObject{{u"name"_s, name},
                                                    {u"type"_s, u"custom"_s},
                                                    {u"content_type"_s, u"filesystem"_s},
                                                    {u"config"_s, config}})
                              .toJson(QJsonDocument::Compact);
            create.timeoutMs = VolumeTimeoutMs;
            if (auto made = m_client.run(create, VolumeTimeoutMs); !made)
                return std::unexpected(made.error());
        } else {
            return std::unexpected(found.error());
        }
        devices.insert(u"pando-volume-"_s + mount.name,
                       incusapi::StringMap{
                           {u"type"_s, u"disk"_s}, {u"pool"_s, *pool}, {u"source"_s, name}, {u"path"_s, mount.path}});
    }
    return devices;
}

Result<QList<VolumeInfo>> IncusRuntime::volumes(const Labels &filter)
{
    auto pool = rootPool();
    if (!pool)
        return std::unexpected(pool.error());
    auto listed = m_client.get(customVolumesPath(*pool), {{u"recursion"_s, u"1"_s}});
    if (!listed)
        return std::unexpected(listed.error());
    QList<VolumeInfo> out;
    for (const QJsonValue v : listed->toArray()) {
        const QJsonObject o = v.toObject();
        VolumeInfo info;
        info.id = o.value(u"name"_s).toString();
        info.labels = volumeLabelsOf(o.value(u"config"_s).toObject());
        info.name = info.labels.value(QLatin1String(LabelVolume));
        if (!info.name.isEmpty() && carriesLabels(info.labels, filter))
            out.append(info);
    }
    return out;
}

Status IncusRuntime::removeVolume(const QString &id)
{
    auto pool = rootPool();
    if (!pool)
        return std::unexpected(pool.error());
    httpkit::Request r;
    r.method = "DELETE";
    r.path = customVolumesPath(*pool) + u'/' + QString::fromUtf8(QUrl::toPercentEncoding(id));
    r.timeoutMs = VolumeTimeoutMs;
    if (auto removed = m_client.run(r, VolumeTimeoutMs); !removed && removed.error().code != ErrorCode::NotFound)
        return std::unexpected(removed.error());
    return {};
}

Result<qint64> IncusRuntime::exportVolume(const VolumeExport &what, QIODevice &out, const CancelToken &cancel)
{
    auto pool = rootPool();
    if (!pool)
        return std::unexpected(pool.error());
    const QString backups =
        customVolumesPath(*pool) + u'/' + QString::fromUtf8(QUrl::toPercentEncoding(what.volumeId)) + u"/backups"_s;
    const QString name = u"pando-export-%1"_s.arg(QDateTime::currentMSecsSinceEpoch());
    httpkit::Request make;
    make.method = "POST";
    make.path = backups;
    // Uncompressed: the caller's file is a plain tarball, and an app's data rarely shrinks much.
    make.body = QJsonDocument(QJsonObject{{u"name"_s, name},
                                          {u"volume_only"_s, true},
                                          {u"optimized_storage"_s, false},
                                          {u"compression_algorithm"_s, u"none"_s}})
                    .toJson(QJsonDocument::Compact);
    make.timeoutMs = VolumeTimeoutMs;
    if (auto made = m_client.run(make, 30 * 60 * 1000, &cancel); !made)
        return std::unexpected(made.error());
    auto written = m_client.downloadTo(backups + u'/' + name + u"/export"_s, out, &cancel);
    httpkit::Request drop;
    drop.method = "DELETE";
    drop.path = backups + u'/' + name;
    drop.timeoutMs = VolumeTimeoutMs;
    if (auto dropped = m_client.run(drop, VolumeTimeoutMs); !dropped && written)
        return std::unexpected(dropped.error()); // a backup left in the pool takes its space
    return written;
}

Status IncusRuntime::checkVolumeArchive(const VolumeImport &what)
{
    // An Incus volume backup: backup/index.yaml and the volume's files below backup/volume/.
    auto top = dockerapi::checkArchiveTree(what.archivePath, u"backup"_s);
    if (!top)
        return fail(top.error().code, top.error().message, top.error().where,
                    u"restore a backup `pando volumes backup` wrote of a volume on Incus"_s);
    return {};
}

// Incus imports a volume backup only as a volume it makes: the old one is deleted first, and
// its labels are set on the new one (the backup's own may be another app's).
Status IncusRuntime::importVolume(const VolumeImport &what, const CancelToken &cancel)
{
    if (auto valid = checkVolumeArchive(what); !valid)
        return valid;
    auto pool = rootPool();
    if (!pool)
        return std::unexpected(pool.error());
    const QString path = customVolumesPath(*pool) + u'/' + QString::fromUtf8(QUrl::toPercentEncoding(what.volumeId));
    if (auto removed = removeVolume(what.volumeId); !removed)
        return removed;

    QFile archive(what.archivePath);
    if (!archive.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the archive: %1"_s.arg(archive.errorString()), what.archivePath);
    httpkit::Request import;
    import.method = "POST";
    import.path = customVolumesPath(*pool);
    import.bodyDevice = &archive;
    import.contentType = "application/octet-stream";
    import.headers = {{ "X-Incus-name", what.volumeId.toUtf8() }};
    import.stallMs = 120000;
    if (auto imported = m_client.run(import, 30 * 60 * 1000, &cancel); !imported)
        return fail(imported.error().code,
                    u"importing the archive as volume %1: %2"_s.arg(what.volumeId, imported.error().message),
                    what.archivePath);
    httpkit::Request relabel;
    relabel.method = "PATCH";
    relabel.path = path;
    QJsonObject labels;
    for (auto it = what.labels.begin(); it != what.labels.end(); ++it)
        labels.insert(VolumeLabelPrefix + it.key(), it.value());
    relabel.body = QJsonDocument(QJsonObject{{u"config"_s, labels}}).toJson(QJsonDocument::Compact);
    relabel.timeoutMs = VolumeTimeoutMs;
    if (auto patched = m_client.run(relabel, VolumeTimeoutMs); !patched)
        return std::unexpected(patched.error());
    return {};
}

} // namespace pando::adapters::incus
