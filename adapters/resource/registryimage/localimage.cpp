#include "adapters/resource/registryimage/localimage.h"

#include "adapters/api/archiveptr.h"
#include "adapters/kit/registrykit/registryclient.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

namespace pando::adapters::registryimage {

using namespace Qt::StringLiterals;

namespace {

constexpr QLatin1StringView OciConfig{"application/vnd.oci.image.config.v1+json"};

Result<QString> fileDigest(const QString &path)
{
    QFile in(path);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!in.open(QIODevice::ReadOnly) || !hash.addData(&in))
        return fail(ErrorCode::Failed, u"cannot read %1: %2"_s.arg(QFileInfo(path).fileName(), in.errorString()));
    return u"sha256:"_s + QString::fromLatin1(hash.result().toHex());
}

QString layerMediaType(const QString &path)
{
    QFile in(path);
    const QByteArray head = in.open(QIODevice::ReadOnly) ? in.read(4) : QByteArray();
    if (head.startsWith("\x1f\x8b"))
        return u"application/vnd.oci.image.layer.v1.tar+gzip"_s;
    if (head == QByteArray("\x28\xb5\x2f\xfd", 4))
        return u"application/vnd.oci.image.layer.v1.tar+zstd"_s;
    return u"application/vnd.oci.image.layer.v1.tar"_s;
}

// A path inside the unpacked tarball, as its manifest names it.
Result<QString> inside(const QString &root, const QString &relative)
{
    const QString cleaned = QDir::cleanPath(relative);
    if (cleaned.isEmpty() || QDir::isAbsolutePath(cleaned) || cleaned.startsWith(u".."_s) ||
        !QFileInfo(root + u'/' + cleaned).isFile())
        return fail(ErrorCode::Invalid, u"the image tarball names %1, which it does not hold"_s.arg(relative),
                    u"params.image"_s);
    return root + u'/' + cleaned;
}

} // namespace

QString hexOf(const QString &digest)
{
    return digest.section(u':', 1);
}

Status unpackImageTarball(const QString &file, const QString &dir, const CancelToken &cancel)
{
    ArchiveReader in(archive_read_new());
    archive_read_support_filter_all(in.get());
    archive_read_support_format_tar(in.get());
    if (archive_read_open_filename(in.get(), QFile::encodeName(file).constData(), size_t{64} * 1024) != ARCHIVE_OK)
        return fail(ErrorCode::Invalid, u"is no image tarball: %1"_s.arg(archiveError(in.get())), u"params.image"_s);
    ArchiveWriter out(archive_write_disk_new());
    archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT);
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"the push was cancelled"_s);
        archive_entry *entry = nullptr;
        const int r = archive_read_next_header(in.get(), &entry);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN)
            return fail(ErrorCode::Invalid, u"is no image tarball: %1"_s.arg(archiveError(in.get())),
                        u"params.image"_s);
        const mode_t type = archive_entry_filetype(entry);
        if (type != AE_IFREG && type != AE_IFDIR)
            continue; // an image tarball holds files; links would lead elsewhere
        const QString name = QString::fromUtf8(archive_entry_pathname(entry));
        if (QDir::isAbsolutePath(name) || name.split(u'/').contains(u".."_s))
            return fail(ErrorCode::Invalid, u"the image tarball holds %1, which lies outside it"_s.arg(name),
                        u"params.image"_s);
        archive_entry_set_pathname(entry, QFile::encodeName(dir + u'/' + name).constData());
        if (archive_write_header(out.get(), entry) < ARCHIVE_WARN)
            return fail(ErrorCode::Invalid,
                        u"cannot take %1 from the image tarball: %2"_s.arg(name, archiveError(out.get())),
                        u"params.image"_s);
        const void *block = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        for (int d; (d = archive_read_data_block(in.get(), &block, &size, &offset)) != ARCHIVE_EOF;) {
            if (d < ARCHIVE_WARN || archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN)
                return fail(ErrorCode::Invalid, u"the image tarball is cut short at %1"_s.arg(name), u"params.image"_s);
        }
    }
    return {};
}

Result<LocalImage> readLocalImage(const QString &root)
{
    LocalImage image;
    if (QFile index(root + u"/index.json"_s); index.open(QIODevice::ReadOnly)) {
        // An OCI layout: pushed as it is, blobs and manifests with their own digests.
        const QJsonArray manifests = QJsonDocument::fromJson(index.readAll()).object().value("manifests"_L1).toArray();
        if (manifests.size() != 1)
            return fail(ErrorCode::Invalid,
                        u"the OCI layout holds %1 images; push one at a time"_s.arg(manifests.size()),
                        u"params.image"_s);
        QList<QString> pending{manifests.first().toObject().value("digest"_L1).toString()};
        for (int guard = 0; !pending.isEmpty() && guard < 256; ++guard) {
            const QString digest = pending.takeFirst();
            auto file = inside(root, u"blobs/sha256/"_s + hexOf(digest));
            if (!file)
                return std::unexpected(file.error());
            QFile in(*file);
            if (!in.open(QIODevice::ReadOnly))
                return fail(ErrorCode::Invalid, u"cannot read %1 in the image tarball"_s.arg(digest),
                            u"params.image"_s);
            const QByteArray body = in.readAll();
            if (registrykit::sha256Digest(body) != digest)
                return fail(ErrorCode::Invalid, u"%1 in the image tarball has other content"_s.arg(digest),
                            u"params.image"_s);
            const QJsonObject o = QJsonDocument::fromJson(body).object();
            const QString type = o.value("mediaType"_L1).toString();
            image.manifests.prepend({body, type.isEmpty() ? QString(registrykit::OciManifest) : type});
            for (const auto &child : o.value("manifests"_L1).toArray())
                pending.append(child.toObject().value("digest"_L1).toString());
            QJsonArray blobs = o.value("layers"_L1).toArray();
            if (o.contains("config"_L1))
                blobs.prepend(o.value("config"_L1));
            for (const auto &blob : std::as_const(blobs)) {
                const QString blobDigest = blob.toObject().value("digest"_L1).toString();
                auto blobFile = inside(root, u"blobs/sha256/"_s + hexOf(blobDigest));
                if (!blobFile)
                    return std::unexpected(blobFile.error());
                image.blobs.append({*blobFile, blobDigest, QFileInfo(*blobFile).size(), {}});
            }
        }
        return image;
    }
    QFile manifest(root + u"/manifest.json"_s);
    if (!manifest.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid,
                    u"is neither a `docker save` tarball (manifest.json) nor an OCI layout (index.json)"_s,
                    u"params.image"_s);
    const QJsonArray entries = QJsonDocument::fromJson(manifest.readAll()).array();
    if (entries.size() != 1)
        return fail(ErrorCode::Invalid, u"the tarball holds %1 images; push one at a time"_s.arg(entries.size()),
                    u"params.image"_s);
    const QJsonObject entry = entries.first().toObject();
    auto config = inside(root, entry.value("Config"_L1).toString());
    if (!config)
        return std::unexpected(config.error());
    auto configDigest = fileDigest(*config);
    if (!configDigest)
        return std::unexpected(configDigest.error());
    image.config = {*config, *configDigest, QFileInfo(*config).size(), QString(OciConfig)};
    for (const auto &layer : entry.value("Layers"_L1).toArray()) {
        auto file = inside(root, layer.toString());
        if (!file)
            return std::unexpected(file.error());
        auto digest = fileDigest(*file);
        if (!digest)
            return std::unexpected(digest.error());
        image.layers.append({*file, *digest, QFileInfo(*file).size(), layerMediaType(*file)});
    }
    return image;
}

QJsonObject descriptor(const LocalImage::Blob &blob)
{
    return {{u"mediaType"_s, blob.mediaType}, {u"digest"_s, blob.digest}, {u"size"_s, blob.size}};
}

} // namespace pando::adapters::registryimage
