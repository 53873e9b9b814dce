#include "registryimageresourcetype.h"

#include "adapters/api/archiveptr.h"
#include "adapters/api/resourceio.h"
#include "adapters/kit/dockerapi/tarball.h"
#include "adapters/kit/registrykit/layerunpack.h"
#include "adapters/kit/registrykit/registryclient.h"
#include "adapters/resource/registryimage/localimage.h"
#include "adapters/resource/registryimage/semverconstraint.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QUrl>
#include <algorithm>
#include <archive.h>
#include <archive_entry.h>
#include <memory>

namespace pando::adapters::registryimage {

using namespace Qt::StringLiterals;
using registrykit::ImageName;
using registrykit::Manifest;
using registrykit::RegistryClient;
using registrykit::RegistryLogin;

namespace {

struct Platform {
    QString os = u"linux"_s;
    QString architecture = u"amd64"_s;
    QString variant;
};

struct Source {
    QString repository; // as written, for the repository file
    ImageName image;
    QString tag;
    QString variant;
    bool preReleases = false;
    SemverConstraint constraint; // empty: every version tag
    RegistryLogin login;
    Platform platform;
    std::unique_ptr<QTemporaryDir> caDir; // holds ca_certs for curl, 0700
};

const QStringList &sourceKeys()
{
    static const QStringList keys{u"repository"_s,        u"tag"_s,      u"variant"_s,         u"pre_releases"_s,
                                  u"semver_constraint"_s, u"username"_s, u"password"_s,        u"insecure"_s,
                                  u"ca_certs"_s,          u"platform"_s, u"registry_mirror"_s, u"debug"_s};
    return keys;
}

// Fields of Concourse's registry-image that Pando does not have, refused with the reason.
const QStringList &refusedKeys()
{
    static const QStringList keys{u"content_trust"_s, u"tag_regex"_s, u"created_at_sort"_s, u"bump_aliases"_s};
    return keys;
}

bool isRefused(const QString &key)
{
    return key.startsWith(u"aws_"_s) || refusedKeys().contains(key);
}

Status refuseUnsupported(const QJsonObject &o, const QString &prefix)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        const QString &key = it.key();
        // What is off asks for nothing Pando lacks.
        const QJsonValue &value = it.value();
        if (!isRefused(key) || value.isNull() || value == QJsonValue(false) || value == QJsonValue(u"false"_s) ||
            value == QJsonValue(QString()))
            continue;
        if (key.startsWith(u"aws_"_s))
            return fail(ErrorCode::Invalid, u"Amazon ECR's own login is not supported"_s, prefix + key,
                        u"give username AWS and, as password, a token from `aws ecr get-login-password`"_s);
        return fail(ErrorCode::Invalid, u"is not supported by Pando's registry-image yet"_s, prefix + key,
                    key == u"bump_aliases"_s ? u"name the alias tags in params.additional_tags"_s
                                             : u"track one tag with source.tag, or version tags with variant and "
                                               u"semver_constraint"_s);
    }
    return {};
}

Result<Source> readSource(const QJsonObject &o, const QJsonObject &params, const LogSink &log)
{
    const QString at = u"source."_s;
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!sourceKeys().contains(it.key()) && !isRefused(it.key()) && log)
            log(u"warning: source.%1 is not a field of the registry-image resource and is ignored"_s.arg(it.key()));
    if (auto refused = refuseUnsupported(o, at); !refused)
        return std::unexpected(refused.error());
    Source s;
    if (auto ok = readTexts(o,
                            {{u"repository"_s, &s.repository},
                             {u"tag"_s, &s.tag},
                             {u"variant"_s, &s.variant},
                             {u"username"_s, &s.login.username},
                             {u"password"_s, &s.login.password}},
                            at);
        !ok)
        return std::unexpected(ok.error());
    // A get or put may log in as someone else (credentials made in the build).
    for (const auto &[key, field] :
         {std::pair{u"username"_s, &s.login.username}, std::pair{u"password"_s, &s.login.password}}) {
        if (!params.contains(key))
            continue;
        auto text = sourceText(params, key, u"params."_s);
        if (!text)
            return std::unexpected(text.error());
        *field = *text;
    }
    if (auto ok = readFlags(o, {{u"pre_releases"_s, &s.preReleases}, {u"insecure"_s, &s.login.insecure}}, at); !ok)
        return std::unexpected(ok.error());
    QString constraint;
    if (auto ok = readTexts(o, {{u"semver_constraint"_s, &constraint}}, at); !ok)
        return std::unexpected(ok.error());
    if (!constraint.trimmed().isEmpty()) {
        auto parsed = SemverConstraint::parse(constraint, at + u"semver_constraint"_s);
        if (!parsed)
            return std::unexpected(parsed.error());
        s.constraint = *parsed;
    }
    auto image = registrykit::parseImageName(s.repository, at + u"repository"_s);
    if (!image)
        return std::unexpected(image.error());
    s.image = *image;
    const QJsonValue mirror = o.value("registry_mirror"_L1);
    const bool namesRegistry = s.repository.section(u'/', 0, 0).contains(u'.') ||
                               s.repository.section(u'/', 0, 0).contains(u':') ||
                               s.repository.section(u'/', 0, 0) == u"localhost"_s;
    if (mirror.isObject() && !namesRegistry) {
        // Docker Hub names go to the mirror, with its own login.
        QString host;
        if (auto ok =
                readTexts(mirror.toObject(),
                          {{u"host"_s, &host}, {u"username"_s, &s.login.username}, {u"password"_s, &s.login.password}},
                          at + u"registry_mirror."_s);
            !ok)
            return std::unexpected(ok.error());
        if (host.isEmpty() || host.contains(u'/'))
            return fail(ErrorCode::Invalid, u"is required: the mirror's HOST[:PORT]"_s, at + u"registry_mirror.host"_s);
        s.image.registry = host;
    } else if (!mirror.isUndefined() && !mirror.isNull() && !mirror.isObject()) {
        return fail(ErrorCode::Invalid, u"must be a map with host (and username, password)"_s,
                    at + u"registry_mirror"_s);
    }
    const QJsonValue platform = o.value("platform"_L1);
    if (platform.isObject()) {
        QString os;
        QString arch;
        if (auto ok = readTexts(platform.toObject(),
                                {{u"os"_s, &os}, {u"architecture"_s, &arch}, {u"variant"_s, &s.platform.variant}},
                                at + u"platform."_s);
            !ok)
            return std::unexpected(ok.error());
        if (!os.isEmpty())
            s.platform.os = os;
        if (!arch.isEmpty())
            s.platform.architecture = arch;
    }
    const QJsonValue cas = o.value("ca_certs"_L1);
    if (!cas.isUndefined() && !cas.isNull()) {
        if (!cas.isArray())
            return fail(ErrorCode::Invalid, u"must be a list of PEM certificates"_s, at + u"ca_certs"_s);
        QByteArray pem;
        for (const auto &ca : cas.toArray()) {
            if (!ca.isString() || !ca.toString().contains(u"-----BEGIN CERTIFICATE-----"_s))
                return fail(ErrorCode::Invalid, u"must be a list of PEM certificates"_s, at + u"ca_certs"_s);
            pem += ca.toString().toUtf8() + '\n';
        }
        s.caDir = std::make_unique<QTemporaryDir>();
        QFile file(s.caDir->filePath(u"ca.pem"_s));
        if (!s.caDir->isValid() || !file.open(QIODevice::WriteOnly) || file.write(pem) != pem.size())
            return fail(ErrorCode::Internal, u"cannot write the registry's CA certificates"_s, at + u"ca_certs"_s);
        s.login.caFile = file.fileName();
    }
    return s;
}

QByteArray json(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

// The tags that are versions registry-image tracks, oldest first.
QList<std::pair<TagVersion, QString>> versionTags(const QStringList &tags, const Source &source)
{
    QList<std::pair<TagVersion, QString>> out;
    for (const QString &tag : tags) {
        const auto version = parseTagVersion(tag);
        if (version && version->variant == source.variant && (source.preReleases || version->preRelease.isEmpty()) &&
            source.constraint.matches(*version))
            out.append({*version, tag});
    }
    std::ranges::stable_sort(out,
                             [](const auto &a, const auto &b) { return compareTagVersions(a.first, b.first) < 0; });
    return out;
}

// The image manifest for this platform: manifest itself, or the one its index names.
Result<Manifest> platformManifest(RegistryClient &client, const Manifest &manifest, const Platform &platform,
                                  const CancelToken &cancel)
{
    if (!manifest.isIndex())
        return manifest;
    QStringList offered;
    for (const auto &v : QJsonDocument::fromJson(manifest.body).object().value("manifests"_L1).toArray()) {
        const QJsonObject entry = v.toObject();
        const QJsonObject p = entry.value("platform"_L1).toObject();
        const QString os = p.value("os"_L1).toString();
        const QString arch = p.value("architecture"_L1).toString();
        if (os == u"unknown"_s)
            continue; // attestations, not images
        offered.append(
            os + u'/' + arch +
            (p.value("variant"_L1).toString().isEmpty() ? QString() : u'/' + p.value("variant"_L1).toString()));
        if (os == platform.os && arch == platform.architecture &&
            (platform.variant.isEmpty() || p.value("variant"_L1).toString() == platform.variant))
            return client.manifest(entry.value("digest"_L1).toString(), cancel);
    }
    return fail(ErrorCode::NotFound,
                u"the image has no %1/%2 variant (it has %3)"_s.arg(
                    platform.os, platform.architecture, offered.isEmpty() ? u"none"_s : offered.join(u", "_s)),
                u"source.platform"_s);
}

// A tar being written entry by entry.
class TarWriter {
public:
    explicit TarWriter(const QString &file) : m_file(file), m_archive(archive_write_new())
    {
        archive_write_set_format_pax_restricted(m_archive.get());
        m_open = archive_write_open_filename(m_archive.get(), QFile::encodeName(file).constData()) == ARCHIVE_OK;
    }
    Status add(const QString &name, const QByteArray &data)
    {
        if (auto head = header(name, data.size()); !head)
            return head;
        if (archive_write_data(m_archive.get(), data.constData(), size_t(data.size())) != data.size())
            return failure();
        return {};
    }
    Status addFile(const QString &name, const QString &path)
    {
        QFile in(path);
        if (!in.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Internal, u"cannot read %1: %2"_s.arg(path, in.errorString()));
        if (auto head = header(name, in.size()); !head)
            return head;
        QByteArray buffer(qsizetype{256} * 1024, Qt::Uninitialized);
        for (qint64 n; (n = in.read(buffer.data(), buffer.size())) > 0;)
            if (archive_write_data(m_archive.get(), buffer.constData(), size_t(n)) != n)
                return failure();
        return {};
    }
    Status close()
    {
        if (!m_open || archive_write_close(m_archive.get()) != ARCHIVE_OK)
            return failure();
        return {};
    }

private:
    Status header(const QString &name, qint64 size)
    {
        if (!m_open)
            return failure();
        ArchiveEntry entry(archive_entry_new());
        archive_entry_set_pathname(entry.get(), name.toUtf8().constData());
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_perm(entry.get(), 0644);
        archive_entry_set_size(entry.get(), size);
        if (archive_write_header(m_archive.get(), entry.get()) != ARCHIVE_OK)
            return failure();
        return {};
    }
    std::unexpected<Error> failure() const
    {
        return fail(ErrorCode::Failed,
                    u"cannot write %1: %2"_s.arg(QFileInfo(m_file).fileName(), archiveError(m_archive.get())));
    }

    QString m_file;
    ArchiveWriter m_archive;
    bool m_open = false;
};

Status writeImageTar(RegistryClient &client, const Source &source, const QString &tag, const Manifest &manifest,
                     const QByteArray &config, const QString &configDigest, const QJsonArray &layers,
                     const QString &dir, const QString &fileName, const CancelToken &cancel, const LogSink &log)
{
    // One copy of each blob serves both: docker load reads manifest.json, OCI tools index.json.
    TarWriter tar(dir + u'/' + fileName);
    QJsonArray layerPaths;
    if (auto ok = tar.add(u"oci-layout"_s, R"({"imageLayoutVersion":"1.0.0"})"); !ok)
        return ok;
    if (auto ok = tar.add(u"blobs/sha256/"_s + hexOf(configDigest), config); !ok)
        return ok;
    if (auto ok = tar.add(u"blobs/sha256/"_s + hexOf(manifest.digest), manifest.body); !ok)
        return ok;
    for (const auto &layer : layers) {
        const QString digest = layer.toObject().value("digest"_L1).toString();
        if (log)
            log(u"fetching layer %1 (%2 MB)"_s.arg(digest.left(19))
                    .arg(layer.toObject().value("size"_L1).toDouble() / 1e6, 0, 'f', 1));
        const QString temporary = dir + u"/.layer"_s;
        if (auto fetched = client.blobToFile(digest, temporary, cancel); !fetched) {
            QFile::remove(temporary);
            return fetched;
        }
        const QString name = u"blobs/sha256/"_s + hexOf(digest);
        auto added = tar.addFile(name, temporary);
        QFile::remove(temporary);
        if (!added)
            return added;
        layerPaths.append(name);
    }
    const QString repoTag = source.repository + u':' + tag;
    const QJsonArray dockerManifest{QJsonObject{{u"Config"_s, QString(u"blobs/sha256/"_s + hexOf(configDigest))},
                                                {u"RepoTags"_s, QJsonArray{repoTag}},
                                                {u"Layers"_s, layerPaths}}};
    if (auto ok = tar.add(u"manifest.json"_s, QJsonDocument(dockerManifest).toJson(QJsonDocument::Compact)); !ok)
        return ok;
    const QJsonObject index{
        {u"schemaVersion"_s, 2},
        {u"mediaType"_s, QString(registrykit::OciIndex)},
        {u"manifests"_s,
         QJsonArray{QJsonObject{{u"mediaType"_s, manifest.mediaType},
                                {u"digest"_s, manifest.digest},
                                {u"size"_s, manifest.body.size()},
                                {u"annotations"_s, QJsonObject{{u"io.containerd.image.name"_s, repoTag},
                                                               {u"org.opencontainers.image.ref.name"_s, tag}}}}}}};
    if (auto ok = tar.add(u"index.json"_s, json(index)); !ok)
        return ok;
    return tar.close();
}

Status writeRootfs(RegistryClient &client, const QByteArray &config, const QJsonArray &layers, const QString &dir,
                   const CancelToken &cancel, const LogSink &log)
{
    registrykit::RootfsBuilder rootfs(dir + u"/rootfs"_s);
    int n = 0;
    for (const auto &layer : layers) {
        ++n;
        const QString digest = layer.toObject().value("digest"_L1).toString();
        if (log)
            log(u"fetching layer %1 of %2 (%3 MB)"_s.arg(n)
                    .arg(layers.size())
                    .arg(layer.toObject().value("size"_L1).toDouble() / 1e6, 0, 'f', 1));
        const QString temporary = dir + u"/.layer"_s;
        Status done = client.blobToFile(digest, temporary, cancel);
        if (done)
            done = rootfs.apply(temporary, u"layer %1"_s.arg(digest), cancel);
        QFile::remove(temporary);
        if (!done)
            return done;
    }
    if (rootfs.devicesSkipped() > 0 && log)
        log(u"left out %1 device node(s) of the image"_s.arg(rootfs.devicesSkipped()));
    const QJsonObject imageConfig = QJsonDocument::fromJson(config).object().value("config"_L1).toObject();
    const QJsonObject metadata{{u"env"_s, imageConfig.value("Env"_L1).toArray()},
                               {u"user"_s, imageConfig.value("User"_L1).toString()}};
    return writeResourceFile(dir + u"/metadata.json"_s, json(metadata));
}

// An image's manifest for the platform, its config and its layers.
struct FetchedImage {
    Manifest manifest;
    QByteArray config;
    QString configDigest;
    QJsonArray layers;
};

Result<FetchedImage> fetchImage(RegistryClient &client, const Source &source, const QString &digest,
                                const CancelToken &cancel)
{
    auto top = client.manifest(digest, cancel);
    if (!top)
        return std::unexpected(top.error());
    auto manifest = platformManifest(client, *top, source.platform, cancel);
    if (!manifest)
        return std::unexpected(manifest.error());
    FetchedImage image;
    image.manifest = *manifest;
    const QJsonObject m = QJsonDocument::fromJson(manifest->body).object();
    image.configDigest = m.value("config"_L1).toObject().value("digest"_L1).toString();
    auto config = client.blob(image.configDigest, cancel);
    if (!config)
        return std::unexpected(config.error());
    image.config = *config;
    image.layers = m.value("layers"_L1).toArray();
    return image;
}

// docker-image's source in registry-image's words: insecure_registries, a registry_mirror URL and
// ca_certs by domain become insecure, registry_mirror.host and ca_certs for this registry.
Result<QJsonObject> fromDockerImageSource(const QJsonObject &o, const LogSink &log)
{
    const QString at = u"source."_s;
    static const QStringList known{u"repository"_s,
                                   u"tag"_s,
                                   u"username"_s,
                                   u"password"_s,
                                   u"insecure_registries"_s,
                                   u"registry_mirror"_s,
                                   u"ca_certs"_s,
                                   u"max_concurrent_downloads"_s,
                                   u"max_concurrent_uploads"_s,
                                   u"debug"_s};
    QJsonObject out;
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == u"client_certs"_s || it.key() == u"additional_private_registries"_s ||
            it.key().startsWith(u"aws_"_s))
            return fail(ErrorCode::Invalid, u"is not supported by Pando's docker-image"_s, at + it.key(),
                        u"use registry-image, whose username and password work for ECR too"_s);
        if (!known.contains(it.key()) && log)
            log(u"warning: source.%1 is not a field of the docker-image resource and is ignored"_s.arg(it.key()));
    }
    for (const QString &key : {u"repository"_s, u"tag"_s, u"username"_s, u"password"_s, u"debug"_s})
        if (o.contains(key))
            out.insert(key, o.value(key));
    if (out.value("tag"_L1).toString().isEmpty())
        out.insert(u"tag"_s, u"latest"_s);
    auto image = registrykit::parseImageName(o.value("repository"_L1).toString(), at + u"repository"_s);
    if (!image)
        return std::unexpected(image.error());
    const QJsonValue insecure = o.value("insecure_registries"_L1);
    if (!insecure.isUndefined() && !insecure.isNull() && !insecure.isArray())
        return fail(ErrorCode::Invalid, u"must be a list of HOST:PORT"_s, at + u"insecure_registries"_s);
    for (const auto &host : insecure.toArray())
        if (host.toString() == image->registry)
            out.insert(u"insecure"_s, true);
    if (const QJsonValue mirror = o.value("registry_mirror"_L1); mirror.isString() && !mirror.toString().isEmpty()) {
        const QUrl url(mirror.toString());
        if (!url.isValid() || url.host().isEmpty())
            return fail(ErrorCode::Invalid, u"must be a URL, e.g. https://mirror.example:5000"_s,
                        at + u"registry_mirror"_s);
        out.insert(u"registry_mirror"_s,
                   QJsonObject{{u"host"_s, url.port() > 0 ? u"%1:%2"_s.arg(url.host()).arg(url.port()) : url.host()}});
    }
    const QJsonValue cas = o.value("ca_certs"_L1);
    if (!cas.isUndefined() && !cas.isNull()) {
        QJsonArray pems;
        for (const auto &ca : cas.toArray()) {
            const QJsonObject entry = ca.toObject();
            if (entry.value("domain"_L1).toString().isEmpty() || entry.value("cert"_L1).toString().isEmpty())
                return fail(ErrorCode::Invalid, u"must be a list of {domain, cert}"_s, at + u"ca_certs"_s);
            if (entry.value("domain"_L1).toString() == image->registry)
                pems.append(entry.value("cert"_L1));
        }
        if (!pems.isEmpty())
            out.insert(u"ca_certs"_s, pems);
    }
    return out;
}

} // namespace

Result<QList<Version>> RegistryImageResourceType::check(const QJsonObject &sourceJson, const Version &from,
                                                        const CancelToken &cancel, const LogSink &log)
{
    auto source = readSource(sourceJson, {}, log);
    if (!source)
        return std::unexpected(source.error());
    RegistryClient client(source->image, source->login);
    if (!source->tag.isEmpty()) {
        auto manifest = client.manifest(source->tag, cancel);
        if (!manifest && manifest.error().code == ErrorCode::NotFound) {
            if (log)
                log(u"%1 has no tag %2 yet"_s.arg(source->image.text(), source->tag));
            return QList<Version>{};
        }
        if (!manifest)
            return std::unexpected(manifest.error());
        const Version now{{u"tag"_s, source->tag}, {u"digest"_s, manifest->digest}};
        if (from.value(u"digest"_s) == manifest->digest)
            return QList<Version>{};
        return QList<Version>{now};
    }
    auto tags = client.tags(u"source.repository"_s, cancel);
    if (!tags)
        return std::unexpected(tags.error());
    const auto versions = versionTags(*tags, *source);
    if (versions.isEmpty()) {
        if (log)
            log(u"%1 has no tag that is a version%2%3"_s.arg(
                source->image.text(), source->variant.isEmpty() ? QString() : u" with variant "_s + source->variant,
                source->constraint.isEmpty() ? QString() : u" that semver_constraint allows"_s));
        return QList<Version>{};
    }
    // Newer than the last version (the newest alone the first time); each digest once, under its
    // most specific tag (the aliases "1" and "1.2" point where "1.2.3" does).
    qsizetype first = versions.size() - 1;
    if (const auto last = parseTagVersion(from.value(u"tag"_s)); last && !from.isEmpty()) {
        first = versions.size();
        while (first > 0 && compareTagVersions(versions[first - 1].first, *last) > 0)
            --first;
    }
    QList<Version> out;
    QHash<QString, qsizetype> byDigest;
    for (qsizetype i = first; i < versions.size(); ++i) {
        auto manifest = client.manifest(versions[i].second, cancel);
        if (!manifest)
            return std::unexpected(manifest.error());
        if (manifest->digest == from.value(u"digest"_s))
            continue;
        const Version version{{u"tag"_s, versions[i].second}, {u"digest"_s, manifest->digest}};
        if (const auto it = byDigest.constFind(manifest->digest); it != byDigest.constEnd()) {
            out[*it] = version; // later in the order: more specific
            continue;
        }
        byDigest.insert(manifest->digest, out.size());
        out.append(version);
    }
    return out;
}

Result<VersionMetadata> RegistryImageResourceType::in(const QJsonObject &sourceJson, const Version &version,
                                                      const QJsonObject &params, const QString &dir,
                                                      const BuildMetadata &, const CancelToken &cancel,
                                                      const LogSink &log)
{
    auto source = readSource(sourceJson, params, log);
    if (!source)
        return std::unexpected(source.error());
    if (auto refused = refuseUnsupported(params, u"params."_s); !refused)
        return std::unexpected(refused.error());
    QString format;
    bool skipDownload = false;
    if (auto ok = readTexts(params, {{u"format"_s, &format}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    if (auto ok = readFlags(params, {{u"skip_download"_s, &skipDownload}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    if (format.isEmpty())
        format = u"rootfs"_s;
    if (format != u"rootfs"_s && format != u"oci"_s)
        return fail(ErrorCode::Invalid, u"\"%1\" is not a format: use rootfs or oci"_s.arg(format), u"params.format"_s);
    const QString digest = version.value(u"digest"_s);
    if (!digest.startsWith(u"sha256:"_s))
        return fail(ErrorCode::Invalid, u"the version names no sha256 digest"_s, u"version.digest"_s);
    const QString tag = version.value(u"tag"_s, source->tag.isEmpty() ? u"latest"_s : source->tag);
    for (const auto &[name, content] :
         {std::pair{u"repository"_s, source->repository}, std::pair{u"tag"_s, tag}, std::pair{u"digest"_s, digest}})
        if (auto written = writeResourceFile(dir + u'/' + name, content.toUtf8()); !written)
            return std::unexpected(written.error());
    VersionMetadata result{version, {{u"repository"_s, source->image.text()}, {u"tag"_s, tag}}};
    if (skipDownload)
        return result;

    RegistryClient client(source->image, source->login);
    auto image = fetchImage(client, *source, digest, cancel);
    if (!image)
        return std::unexpected(image.error());
    const Status written = format == u"oci"_s
                               ? writeImageTar(client, *source, tag, image->manifest, image->config,
                                               image->configDigest, image->layers, dir, u"image.tar"_s, cancel, log)
                               : writeRootfs(client, image->config, image->layers, dir, cancel, log);
    if (!written)
        return std::unexpected(written.error());
    if (log)
        log(u"fetched %1@%2 (%3 layers) as %4"_s.arg(source->image.text(), digest.left(19))
                .arg(image->layers.size())
                .arg(format));
    return result;
}

Result<VersionMetadata> RegistryImageResourceType::out(const QJsonObject &sourceJson, const QJsonObject &params,
                                                       const QString &workDir, const BuildMetadata &,
                                                       const CancelToken &cancel, const LogSink &log)
{
    auto source = readSource(sourceJson, params, log);
    if (!source)
        return std::unexpected(source.error());
    if (auto refused = refuseUnsupported(params, u"params."_s); !refused)
        return std::unexpected(refused.error());
    QString pattern;
    QString versionTag;
    QString additional;
    if (auto ok = readTexts(params,
                            {{u"image"_s, &pattern}, {u"version"_s, &versionTag}, {u"additional_tags"_s, &additional}},
                            u"params."_s);
        !ok)
        return std::unexpected(ok.error());
    if (pattern.isEmpty())
        return fail(ErrorCode::Invalid, u"is required: the image tarball to push, as a glob below the step's inputs"_s,
                    u"params.image"_s);
    auto file = findOneFileInInputs(workDir, pattern, u"params.image"_s);
    if (!file)
        return std::unexpected(file.error());

    QStringList tags;
    if (!source->tag.isEmpty())
        tags.append(source->tag);
    if (!versionTag.isEmpty())
        tags.append(source->variant.isEmpty() ? versionTag : versionTag + u'-' + source->variant);
    if (!additional.isEmpty()) {
        auto list = fileInInputs(workDir, additional, u"params.additional_tags"_s);
        if (!list)
            return std::unexpected(list.error());
        QFile in(*list);
        if (!in.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Invalid, u"cannot read %1: %2"_s.arg(additional, in.errorString()),
                        u"params.additional_tags"_s);
        tags += QString::fromUtf8(in.read(qint64{64} * 1024)).split(QRegularExpression(u"\\s+"_s), Qt::SkipEmptyParts);
    }
    if (tags.isEmpty())
        tags.append(u"latest"_s);
    static const QRegularExpression tagShape(u"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"_s);
    for (const QString &tag : std::as_const(tags))
        if (!tagShape.match(tag).hasMatch())
            return fail(ErrorCode::Invalid,
                        u"\"%1\" is not a tag: letters, digits, _ . - (not first), at most 128"_s.arg(tag),
                        additional.isEmpty() ? u"params.version"_s : u"params.additional_tags"_s);
    tags.removeDuplicates();

    QTemporaryDir unpacked;
    if (!unpacked.isValid())
        return fail(ErrorCode::Internal, u"no temporary directory to read the image tarball in"_s);
    if (auto ok = unpackImageTarball(*file, unpacked.path(), cancel); !ok)
        return std::unexpected(ok.error());
    auto image = readLocalImage(unpacked.path());
    if (!image)
        return std::unexpected(image.error());

    RegistryClient client(source->image, source->login);
    QList<LocalImage::Blob> blobs = image->blobs;
    if (image->manifests.isEmpty())
        blobs = QList<LocalImage::Blob>{image->config} + image->layers;
    for (const LocalImage::Blob &blob : std::as_const(blobs)) {
        if (log)
            log(u"pushing %1 (%2 MB)"_s.arg(blob.digest.left(19)).arg(double(blob.size) / 1e6, 0, 'f', 1));
        if (auto pushed = client.pushBlob(blob.file, blob.digest, cancel); !pushed)
            return std::unexpected(pushed.error());
    }
    QByteArray body;
    QString mediaType;
    if (image->manifests.isEmpty()) {
        QJsonArray layers;
        for (const LocalImage::Blob &layer : std::as_const(image->layers))
            layers.append(descriptor(layer));
        body = json({{u"schemaVersion"_s, 2},
                     {u"mediaType"_s, QString(registrykit::OciManifest)},
                     {u"config"_s, descriptor(image->config)},
                     {u"layers"_s, layers}});
        mediaType = registrykit::OciManifest;
    } else {
        // Children first, by their digests; the top one is tagged.
        for (qsizetype i = 0; i + 1 < image->manifests.size(); ++i)
            if (auto pushed = client.pushManifest(registrykit::sha256Digest(image->manifests[i].first),
                                                  image->manifests[i].first, image->manifests[i].second, cancel);
                !pushed)
                return std::unexpected(pushed.error());
        std::tie(body, mediaType) = image->manifests.last();
    }
    QString digest;
    for (const QString &tag : std::as_const(tags)) {
        auto pushed = client.pushManifest(tag, body, mediaType, cancel);
        if (!pushed)
            return std::unexpected(pushed.error());
        digest = *pushed;
        if (log)
            log(u"pushed %1:%2"_s.arg(source->image.text(), tag));
    }
    return VersionMetadata{Version{{u"tag"_s, tags.first()}, {u"digest"_s, digest}},
                           {{u"repository"_s, source->image.text()}, {u"tags"_s, tags.join(u' ')}}};
}

Result<QList<Version>> DockerImageResourceType::check(const QJsonObject &sourceJson, const Version &from,
                                                      const CancelToken &cancel, const LogSink &log)
{
    auto source = fromDockerImageSource(sourceJson, log);
    if (!source)
        return std::unexpected(source.error());
    auto found = m_registryImage.check(*source, from, cancel, log);
    if (!found)
        return std::unexpected(found.error());
    // docker-image's versions are the digest alone.
    for (Version &version : *found)
        version.remove(u"tag"_s);
    return found;
}

Result<VersionMetadata> DockerImageResourceType::in(const QJsonObject &sourceJson, const Version &version,
                                                    const QJsonObject &params, const QString &dir,
                                                    const BuildMetadata &, const CancelToken &cancel,
                                                    const LogSink &log)
{
    auto translated = fromDockerImageSource(sourceJson, log);
    if (!translated)
        return std::unexpected(translated.error());
    auto source = readSource(*translated, {}, log);
    if (!source)
        return std::unexpected(source.error());
    bool save = false;
    bool rootfs = false;
    bool skipDownload = false;
    if (auto ok = readFlags(params, {{u"save"_s, &save}, {u"rootfs"_s, &rootfs}, {u"skip_download"_s, &skipDownload}},
                            u"params."_s);
        !ok)
        return std::unexpected(ok.error());
    const QString digest = version.value(u"digest"_s);
    if (!digest.startsWith(u"sha256:"_s))
        return fail(ErrorCode::Invalid, u"the version names no sha256 digest"_s, u"version.digest"_s);
    RegistryClient client(source->image, source->login);
    const bool download = !skipDownload && (save || rootfs);
    // image-id is the config's digest, what `docker inspect` calls the image's Id.
    auto image = fetchImage(client, *source, digest, cancel);
    if (!image)
        return std::unexpected(image.error());
    for (const auto &[name, content] :
         {std::pair{u"repository"_s, source->repository}, std::pair{u"tag"_s, source->tag},
          std::pair{u"digest"_s, digest}, std::pair{u"image-id"_s, image->configDigest}})
        if (auto written = writeResourceFile(dir + u'/' + name, content.toUtf8()); !written)
            return std::unexpected(written.error());
    VersionMetadata result{version, {{u"image"_s, source->image.text() + u':' + source->tag}}};
    if (!download)
        return result;
    if (save)
        if (auto ok = writeImageTar(client, *source, source->tag, image->manifest, image->config, image->configDigest,
                                    image->layers, dir, u"image"_s, cancel, log);
            !ok)
            return std::unexpected(ok.error());
    if (rootfs) {
        // rootfs.tar and metadata.json, the layers flattened as docker export would give them.
        QTemporaryDir work(dir + u"/.rootfs-XXXXXX"_s);
        if (!work.isValid())
            return fail(ErrorCode::Internal, u"no directory to unpack the image in"_s);
        if (auto ok = writeRootfs(client, image->config, image->layers, work.path(), cancel, log); !ok)
            return std::unexpected(ok.error());
        QFile tar(dir + u"/rootfs.tar"_s);
        if (!tar.open(QIODevice::WriteOnly))
            return fail(ErrorCode::Failed, u"cannot write rootfs.tar: %1"_s.arg(tar.errorString()));
        if (auto ok = dockerapi::writeTar(work.path() + u"/rootfs"_s, &tar, {.skipTopLevelGit = false}); !ok)
            return std::unexpected(ok.error());
        if (!QFile::rename(work.path() + u"/metadata.json"_s, dir + u"/metadata.json"_s))
            return fail(ErrorCode::Failed, u"cannot write metadata.json"_s);
    }
    return result;
}

Result<VersionMetadata> DockerImageResourceType::out(const QJsonObject &, const QJsonObject &, const QString &,
                                                     const BuildMetadata &, const CancelToken &, const LogSink &)
{
    return fail(
        ErrorCode::Invalid,
        u"docker-image's put builds and pushes with a Docker daemon inside the step, which Pando does not run"_s,
        u"put"_s,
        u"build the image in a task (e.g. oci-build-task, or docker save) and push the tarball with a "
        u"registry-image resource: put: NAME, params: {image: built/image.tar}"_s);
}

} // namespace pando::adapters::registryimage
