#include "s3resourcetype.h"

#include "adapters/api/archiveptr.h"
#include "adapters/api/resourceio.h"
#include "adapters/kit/s3kit/s3client.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonValue>
#include <QRegularExpression>
#include <algorithm>
#include <archive.h>
#include <archive_entry.h>
#include <memory>

namespace pando::adapters::s3 {

using namespace Qt::StringLiterals;

namespace {

// What an unpacked archive may hold, against archive bombs.
constexpr qint64 MaxUnpackedBytes = 64LL * 1024 * 1024 * 1024;
constexpr qint64 MaxUnpackedEntries = 2'000'000;

struct Source {
    s3kit::Config client;
    QString regexpText;
    QRegularExpression regexp;
    int versionGroup = 1;
    QString versionedFile;
    QString initialPath;
    QString initialVersion;
    QByteArray initialContent;
    bool privateBucket = false;
    bool skipDownload = false;
};

const QStringList &sourceKeys()
{
    static const QStringList keys{u"bucket"_s,
                                  u"regexp"_s,
                                  u"versioned_file"_s,
                                  u"access_key_id"_s,
                                  u"secret_access_key"_s,
                                  u"session_token"_s,
                                  u"region_name"_s,
                                  u"endpoint"_s,
                                  u"disable_ssl"_s,
                                  u"skip_ssl_verification"_s,
                                  u"private"_s,
                                  u"skip_download"_s,
                                  u"server_side_encryption"_s,
                                  u"sse_kms_key_id"_s,
                                  u"disable_multipart"_s,
                                  u"initial_path"_s,
                                  u"initial_version"_s,
                                  u"initial_content_text"_s,
                                  u"initial_content_binary"_s,
                                  u"aws_role_arn"_s,
                                  u"use_v2_signing"_s,
                                  u"cloudfront_url"_s};
    return keys;
}

Result<Source> readSource(const QJsonObject &o, const LogSink &log)
{
    const QString at = u"source."_s;
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!sourceKeys().contains(it.key()) && log)
            log(u"warning: source.%1 is not a field of the s3 resource and is ignored"_s.arg(it.key()));
    Source s;
    QString roleArn;
    QString cloudfront;
    QString contentText;
    QString contentBinary;
    QString region;
    bool v2 = false;
    if (auto ok = readTexts(o,
                            {{u"bucket"_s, &s.client.bucket},
                             {u"regexp"_s, &s.regexpText},
                             {u"versioned_file"_s, &s.versionedFile},
                             {u"access_key_id"_s, &s.client.credentials.accessKeyId},
                             {u"secret_access_key"_s, &s.client.credentials.secretAccessKey},
                             {u"session_token"_s, &s.client.credentials.sessionToken},
                             {u"endpoint"_s, &s.client.endpoint},
                             {u"initial_path"_s, &s.initialPath},
                             {u"initial_version"_s, &s.initialVersion},
                             {u"initial_content_text"_s, &contentText},
                             {u"initial_content_binary"_s, &contentBinary},
                             {u"aws_role_arn"_s, &roleArn},
                             {u"cloudfront_url"_s, &cloudfront},
                             {u"region_name"_s, &region}},
                            at);
        !ok)
        return std::unexpected(ok.error());
    if (!region.isEmpty())
        s.client.region = region;
    if (auto ok = readFlags(o,
                            {{u"disable_ssl"_s, &s.client.disableSsl},
                             {u"skip_ssl_verification"_s, &s.client.skipSslVerification},
                             {u"private"_s, &s.privateBucket},
                             {u"skip_download"_s, &s.skipDownload},
                             {u"use_v2_signing"_s, &v2}},
                            at);
        !ok)
        return std::unexpected(ok.error());
    if (v2)
        return fail(ErrorCode::Invalid, u"Signature Version 2 is not supported: Pando signs with Version 4"_s,
                    u"source.use_v2_signing"_s, u"remove it; current S3-compatible servers accept Version 4"_s);
    if (!roleArn.isEmpty())
        return fail(ErrorCode::Invalid, u"assuming an AWS role is not supported"_s, u"source.aws_role_arn"_s,
                    u"give the role's access_key_id, secret_access_key and session_token instead"_s);
    if (!cloudfront.isEmpty())
        return fail(ErrorCode::Invalid, u"fetching through CloudFront is not supported"_s, u"source.cloudfront_url"_s,
                    u"remove it: the object is fetched from the bucket itself"_s);
    if (s.client.bucket.isEmpty())
        return fail(ErrorCode::Invalid, u"is required"_s, u"source.bucket"_s);
    if (s.client.credentials.accessKeyId.isEmpty() != s.client.credentials.secretAccessKey.isEmpty())
        return fail(ErrorCode::Invalid, u"access_key_id and secret_access_key go together"_s,
                    s.client.credentials.accessKeyId.isEmpty() ? u"source.access_key_id"_s
                                                               : u"source.secret_access_key"_s);
    if (s.regexpText.isEmpty() == s.versionedFile.isEmpty())
        return fail(ErrorCode::Invalid, u"give exactly one of regexp and versioned_file"_s,
                    s.regexpText.isEmpty() ? u"source"_s : u"source.versioned_file"_s);
    if (!s.initialPath.isEmpty() && s.regexpText.isEmpty())
        return fail(ErrorCode::Invalid, u"goes with regexp (versioned_file takes initial_version)"_s,
                    u"source.initial_path"_s);
    if (!s.initialVersion.isEmpty() && s.versionedFile.isEmpty())
        return fail(ErrorCode::Invalid, u"goes with versioned_file (regexp takes initial_path)"_s,
                    u"source.initial_version"_s);
    if (!contentText.isEmpty() && !contentBinary.isEmpty())
        return fail(ErrorCode::Invalid, u"give one of initial_content_text and initial_content_binary"_s,
                    u"source.initial_content_binary"_s);
    if (!contentBinary.isEmpty()) {
        auto decoded =
            QByteArray::fromBase64Encoding(contentBinary.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded)
            return fail(ErrorCode::Invalid, u"is not base64"_s, u"source.initial_content_binary"_s);
        s.initialContent = *decoded;
    } else {
        s.initialContent = contentText.toUtf8();
    }
    if (!s.regexpText.isEmpty()) {
        s.regexp.setPattern(u"^(?:"_s + s.regexpText + u")$"_s);
        if (!s.regexp.isValid())
            return fail(ErrorCode::Invalid,
                        u"is not a regular expression: %1 at %2"_s.arg(s.regexp.errorString())
                            .arg(s.regexp.patternErrorOffset() - 4),
                        u"source.regexp"_s);
        if (s.regexp.captureCount() < 1)
            return fail(ErrorCode::Invalid, u"needs a capture group, in parentheses, around the version"_s,
                        u"source.regexp"_s);
        const int named = int(s.regexp.namedCaptureGroups().indexOf(u"version"_s));
        s.versionGroup = named > 0 ? named : 1;
        if (!s.initialPath.isEmpty() && !s.regexp.match(s.initialPath).hasMatch())
            return fail(ErrorCode::Invalid, u"\"%1\" does not match the regexp"_s.arg(s.initialPath),
                        u"source.initial_path"_s);
    }
    return s;
}

// The version a key carries under the regexp; none when it does not match or is no version.
std::optional<std::pair<QString, SemiVersion>> versionOfKey(const Source &s, const QString &key)
{
    const auto match = s.regexp.match(key);
    if (!match.hasMatch())
        return std::nullopt;
    const QString captured = match.captured(s.versionGroup);
    auto parsed = parseSemiVersion(captured);
    if (!parsed)
        return std::nullopt;
    return std::make_pair(captured, *parsed);
}

QString baseName(const QString &key)
{
    return key.section(u'/', -1);
}

// Unpacks the archive at file into dir. Nothing may land outside dir: absolute names, "..",
// paths through symlinks and links out of the tree are refused, as are devices and fifos.
Status unpackArchive(const QString &file, const QString &dir, const CancelToken &cancel)
{
    ArchiveReader in(archive_read_new());
    archive_read_support_filter_all(in.get());
    archive_read_support_format_tar(in.get());
    archive_read_support_format_zip(in.get());
    archive_read_support_format_raw(in.get());
    const QByteArray path = QFile::encodeName(file);
    constexpr size_t BlockSize = size_t(64) * 1024;
    if (archive_read_open_filename(in.get(), path.constData(), BlockSize) != ARCHIVE_OK)
        return fail(ErrorCode::Failed,
                    u"cannot read %1 as an archive: %2"_s.arg(baseName(file), archiveError(in.get())));
    ArchiveWriter out(archive_write_disk_new());
    // Entries are named by absolute paths below the directory's real path (so no link is on the
    // way to it); absolute and ".." names were refused above, links on the way inside it are
    // refused by libarchive.
    archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                  ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_UNLINK);
    const QByteArray root = QFile::encodeName(QDir(dir).canonicalPath()) + '/';
    qint64 entries = 0;
    qint64 bytes = 0;
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"unpacking was cancelled"_s);
        archive_entry *entry = nullptr;
        const int r = archive_read_next_header(in.get(), &entry);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN)
            return fail(ErrorCode::Failed,
                        u"%1 is not an archive Pando can unpack: %2"_s.arg(baseName(file), archiveError(in.get())), {},
                        u"unpack takes a tar (compressed or not), a gzipped file or a zip"_s);
        const bool raw = archive_format(in.get()) == ARCHIVE_FORMAT_RAW;
        if (raw && archive_filter_count(in.get()) < 2)
            return fail(
                ErrorCode::Failed, u"%1 is not an archive or a compressed file"_s.arg(baseName(file)), {},
                u"unpack takes a tar (compressed or not), a gzipped file or a zip; drop unpack for other files"_s);
        QByteArray name;
        if (raw) {
            // A compressed single file: its name without the compression's extension.
            const QString own = baseName(file);
            const qsizetype dot = own.lastIndexOf(u'.');
            name = QFile::encodeName(dot > 0 ? own.left(dot) : own + u".unpacked"_s);
        } else {
            name = archive_entry_pathname(entry);
        }
        const QString shown = QString::fromUtf8(name);
        const auto type = archive_entry_filetype(entry);
        if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
            return fail(ErrorCode::Failed, u"the archive holds a device, fifo or socket; refused"_s,
                        u"archive entry "_s + shown);
        if (name.isEmpty() || name.startsWith('/') || name == ".." || name.startsWith("../") || name.contains("/../") ||
            name.endsWith("/.."))
            return fail(ErrorCode::Failed, u"the entry would land outside the resource's directory"_s,
                        u"archive entry "_s + shown);
        if (const char *link = archive_entry_hardlink(entry)) {
            const QByteArray target(link);
            if (target.startsWith('/') || target == ".." || target.startsWith("../") || target.contains("/../"))
                return fail(ErrorCode::Failed, u"a hard link to outside the directory; refused"_s,
                            u"archive entry "_s + shown);
            archive_entry_set_hardlink(entry, QByteArray(root + target).constData());
        }
        if (++entries > MaxUnpackedEntries)
            return fail(ErrorCode::TooLarge, u"the archive has more than %1 entries"_s.arg(MaxUnpackedEntries));
        archive_entry_set_pathname(entry, QByteArray(root + name).constData());
        archive_entry_set_perm(entry, archive_entry_perm(entry) & 0777);
        if (archive_write_header(out.get(), entry) < ARCHIVE_WARN)
            return fail(ErrorCode::Failed, u"cannot unpack: "_s + archiveError(out.get()), u"archive entry "_s + shown);
        const void *block = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        for (;;) {
            const int d = archive_read_data_block(in.get(), &block, &size, &offset);
            if (d == ARCHIVE_EOF)
                break;
            if (d < ARCHIVE_WARN)
                return fail(ErrorCode::Failed, u"the archive is damaged: "_s + archiveError(in.get()),
                            u"archive entry "_s + shown);
            bytes += qint64(size);
            if (bytes > MaxUnpackedBytes)
                return fail(ErrorCode::TooLarge, u"the archive unpacks to more than %1 bytes"_s.arg(MaxUnpackedBytes));
            if (archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN)
                return fail(ErrorCode::Failed, u"cannot unpack: "_s + archiveError(out.get()),
                            u"archive entry "_s + shown);
        }
        if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN)
            return fail(ErrorCode::Failed, u"cannot unpack: "_s + archiveError(out.get()), u"archive entry "_s + shown);
    }
    if (archive_write_close(out.get()) != ARCHIVE_OK)
        return fail(ErrorCode::Failed, u"cannot unpack: "_s + archiveError(out.get()));
    return {};
}

// The directory the regexp's keys live in, as a key prefix ("" for the bucket's top).
Result<QString> uploadDirectory(const QString &regexp)
{
    const qsizetype slash = regexp.lastIndexOf(u'/');
    if (slash < 0)
        return QString();
    const QString dir = regexp.left(slash);
    static const QRegularExpression special(uR"([\\^$.|?*+()\[\]{}])"_s);
    if (dir.contains(special))
        return fail(
            ErrorCode::Invalid,
            u"the directory part of the regexp (\"%1\") is a pattern, so where to upload is not known"_s.arg(dir),
            u"source.regexp"_s, u"keep patterns to the file name: dir/app-(.*).tgz"_s);
    return dir + u'/';
}

QList<QPair<QString, QString>> metadataFor(const Source &s, const QString &key, const QString &url)
{
    QList<QPair<QString, QString>> out{{u"filename"_s, baseName(key)}};
    if (!s.privateBucket)
        out.append({u"url"_s, url});
    return out;
}

} // namespace

std::optional<SemiVersion> parseSemiVersion(const QString &text)
{
    static const QRegularExpression component(uR"(^[0-9A-Za-z_]+$)"_s);
    auto split = [](const QString &part) -> std::optional<QStringList> {
        const QStringList pieces = part.split(u'.');
        for (const QString &piece : pieces)
            if (!component.match(piece).hasMatch())
                return std::nullopt;
        return pieces;
    };
    if (text.isEmpty())
        return std::nullopt;
    // "release-pre+post": each part after its separator, which may not end the text.
    QString rest = text;
    auto takeAfter = [&rest](QChar separator) -> std::optional<QString> {
        const qsizetype at = rest.indexOf(separator);
        if (at < 0)
            return QString();
        QString part = rest.mid(at + 1);
        rest.truncate(at);
        return part.isEmpty() ? std::nullopt : std::optional<QString>(part);
    };
    const auto postPart = takeAfter(u'+');
    const auto prePart = takeAfter(u'-');
    if (!postPart || !prePart)
        return std::nullopt;
    QString post = *postPart;
    QString pre = *prePart;
    auto release = split(rest);
    if (!release || !release->first().front().isDigit())
        return std::nullopt;
    SemiVersion v;
    v.release = *release;
    if (!pre.isEmpty()) {
        auto pieces = split(pre.replace(u'-', u'.'));
        if (!pieces)
            return std::nullopt;
        v.pre = *pieces;
    }
    if (!post.isEmpty()) {
        auto pieces = split(post.replace(u'-', u'.'));
        if (!pieces)
            return std::nullopt;
        v.post = *pieces;
    }
    return v;
}

namespace {

int compareComponent(const QString &a, const QString &b)
{
    bool aNumber = false;
    bool bNumber = false;
    const qulonglong an = a.toULongLong(&aNumber);
    const qulonglong bn = b.toULongLong(&bNumber);
    if (aNumber && bNumber)
        return an < bn ? -1 : an > bn ? 1 : 0;
    if (aNumber != bNumber)
        return aNumber ? -1 : 1;
    return a.compare(b);
}

int compareSegments(const QStringList &a, const QStringList &b)
{
    for (qsizetype i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i >= a.size())
            return -1;
        if (i >= b.size())
            return 1;
        if (const int c = compareComponent(a[i], b[i]); c != 0)
            return c < 0 ? -1 : 1;
    }
    return 0;
}

} // namespace

int compareSemiVersions(const SemiVersion &a, const SemiVersion &b)
{
    if (const int c = compareSegments(a.release, b.release); c != 0)
        return c;
    // A pre-release comes before its release.
    if (a.pre.isEmpty() != b.pre.isEmpty())
        return a.pre.isEmpty() ? 1 : -1;
    if (const int c = compareSegments(a.pre, b.pre); c != 0)
        return c;
    // A post-release comes after it.
    if (a.post.isEmpty() != b.post.isEmpty())
        return a.post.isEmpty() ? -1 : 1;
    return compareSegments(a.post, b.post);
}

QString regexpPrefix(const QString &regexp)
{
    static const QString special = u"\\^$.|?*+()[]{}"_s;
    qsizetype end = 0;
    while (end < regexp.size() && !special.contains(regexp[end]))
        ++end;
    const qsizetype slash = regexp.left(end).lastIndexOf(u'/');
    return slash < 0 ? QString() : regexp.left(slash + 1);
}

Result<QList<Version>> S3ResourceType::check(const QJsonObject &sourceJson, const Version &from,
                                             const CancelToken &cancel, const LogSink &log)
{
    auto source = readSource(sourceJson, log);
    if (!source)
        return std::unexpected(source.error());
    const s3kit::S3Client client(source->client);
    QList<Version> out;
    if (!source->versionedFile.isEmpty()) {
        auto versions = client.listVersions(source->versionedFile, cancel);
        if (!versions) {
            Error error = versions.error();
            if (error.message.contains(u"NotImplemented"_s) || error.message.contains(u"MethodNotAllowed"_s))
                error.hint = u"versioned_file needs a server that keeps object versions and a bucket with versioning "
                             u"on; else version by file name with regexp"_s;
            return std::unexpected(error);
        }
        if (versions->isEmpty()) {
            if (!source->initialVersion.isEmpty())
                out.append(Version{{u"version_id"_s, source->initialVersion}});
            return out;
        }
        // Oldest first, after from when S3 still has it.
        QList<Version> all;
        for (const s3kit::ObjectVersion &version : std::as_const(*versions))
            all.prepend(Version{{u"version_id"_s, version.versionId}});
        const qsizetype at = all.indexOf(from);
        if (from.isEmpty() || at < 0)
            return QList<Version>{all.last()};
        return all.mid(at + 1);
    }
    const QString prefix = regexpPrefix(source->regexpText);
    auto objects = client.listObjects(prefix, cancel);
    if (!objects)
        return std::unexpected(objects.error());
    QList<std::pair<SemiVersion, QString>> found;
    for (const s3kit::ObjectInfo &object : std::as_const(*objects))
        if (auto version = versionOfKey(*source, object.key))
            found.append({version->second, object.key});
    std::stable_sort(found.begin(), found.end(),
                     [](const auto &a, const auto &b) { return compareSemiVersions(a.first, b.first) < 0; });
    if (found.isEmpty()) {
        if (!source->initialPath.isEmpty())
            out.append(Version{{u"path"_s, source->initialPath}});
        return out;
    }
    const auto fromVersion = versionOfKey(*source, from.value(u"path"_s));
    if (!fromVersion)
        return QList<Version>{Version{{u"path"_s, found.last().second}}};
    for (const auto &[version, key] : std::as_const(found))
        if (compareSemiVersions(version, fromVersion->second) > 0)
            out.append(Version{{u"path"_s, key}});
    return out;
}

Result<VersionMetadata> S3ResourceType::in(const QJsonObject &sourceJson, const Version &version,
                                           const QJsonObject &params, const QString &dir, const BuildMetadata &,
                                           const CancelToken &cancel, const LogSink &log)
{
    auto source = readSource(sourceJson, log);
    if (!source)
        return std::unexpected(source.error());
    bool skipParam = false;
    bool unpack = false;
    if (auto ok = readFlags(params, {{u"skip_download"_s, &skipParam}, {u"unpack"_s, &unpack}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    const bool skip = source->skipDownload || skipParam;
    const bool versioned = !source->versionedFile.isEmpty();
    const QString key = versioned ? source->versionedFile : version.value(u"path"_s);
    const QString versionId = versioned ? version.value(u"version_id"_s) : QString();
    if (key.isEmpty() || (versioned && versionId.isEmpty()))
        return fail(ErrorCode::Invalid,
                    versioned ? u"the version names no version_id"_s : u"the version names no path"_s, u"version"_s);
    QString versionText = versionId;
    if (!versioned) {
        const auto parsed = versionOfKey(*source, key);
        if (!parsed)
            return fail(ErrorCode::Invalid, u"\"%1\" does not match source.regexp"_s.arg(key), u"version.path"_s);
        versionText = parsed->first;
    }
    VersionMetadata result;
    result.version = version;
    const QString file = dir + u'/' + baseName(key);
    const bool initial = versioned ? versionId == source->initialVersion : key == source->initialPath;
    if (initial) {
        // The initial version is not in the bucket: its content comes from the source.
        if (auto written = writeResourceFile(file, source->initialContent); !written)
            return std::unexpected(written.error());
        if (auto written = writeResourceFile(dir + u"/version"_s, versionText.toUtf8()); !written)
            return std::unexpected(written.error());
        result.metadata.append({u"filename"_s, baseName(key)});
        return result;
    }
    const s3kit::S3Client client(source->client);
    const QString url = client.objectUrl(key, versionId, source->privateBucket);
    if (!skip) {
        QFile out(file);
        if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return fail(ErrorCode::Failed, u"cannot write %1: %2"_s.arg(baseName(key), out.errorString()));
        auto fetched = client.download(key, versionId, out, cancel);
        out.close();
        if (!fetched) {
            QFile::remove(file);
            return std::unexpected(fetched.error());
        }
        if (log)
            log(u"fetched %1 (%2 bytes)"_s.arg(key).arg(*fetched));
        if (unpack) {
            if (auto unpacked = unpackArchive(file, dir, cancel); !unpacked)
                return std::unexpected(unpacked.error());
            QFile::remove(file);
            if (log)
                log(u"unpacked %1"_s.arg(baseName(key)));
        }
    }
    if (auto written = writeResourceFile(dir + u"/url"_s, url.toUtf8()); !written)
        return std::unexpected(written.error());
    if (auto written = writeResourceFile(dir + u"/version"_s, versionText.toUtf8()); !written)
        return std::unexpected(written.error());
    result.metadata = metadataFor(*source, key, url);
    return result;
}

Result<VersionMetadata> S3ResourceType::out(const QJsonObject &sourceJson, const QJsonObject &params,
                                            const QString &workDir, const BuildMetadata &, const CancelToken &cancel,
                                            const LogSink &log)
{
    auto source = readSource(sourceJson, log);
    if (!source)
        return std::unexpected(source.error());
    auto pattern = sourceText(params, u"file"_s, u"params."_s);
    if (!pattern)
        return std::unexpected(pattern.error());
    if (pattern->isEmpty())
        return fail(ErrorCode::Invalid, u"is required: the file to upload, as a glob below the step's inputs"_s,
                    u"params.file"_s);
    s3kit::UploadOptions options;
    if (auto ok =
            readTexts(params, {{u"acl"_s, &options.acl}, {u"content_type"_s, &options.contentType}}, u"params."_s);
        !ok)
        return std::unexpected(ok.error());
    if (auto ok = readTexts(
            sourceJson,
            {{u"server_side_encryption"_s, &options.serverSideEncryption}, {u"sse_kms_key_id"_s, &options.kmsKeyId}},
            u"source."_s);
        !ok)
        return std::unexpected(ok.error());
    auto local = findOneFileInInputs(workDir, *pattern, u"params.file"_s);
    if (!local)
        return std::unexpected(local.error());
    const bool versioned = !source->versionedFile.isEmpty();
    QString key = source->versionedFile;
    if (!versioned) {
        auto dir = uploadDirectory(source->regexpText);
        if (!dir)
            return std::unexpected(dir.error());
        key = *dir + QFileInfo(*local).fileName();
        if (!versionOfKey(*source, key) && log)
            log(u"warning: %1 does not match source.regexp with a version, so check will not find it"_s.arg(key));
    }
    QFile in(*local);
    if (!in.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Failed,
                    u"cannot read %1: %2"_s.arg(QDir(workDir).relativeFilePath(*local), in.errorString()),
                    u"params.file"_s);
    const s3kit::S3Client client(source->client);
    if (log)
        log(u"uploading %1 (%2 bytes) to %3"_s.arg(key).arg(in.size()).arg(client.description()));
    auto versionId = client.upload(key, in, options, cancel);
    if (!versionId)
        return std::unexpected(versionId.error());
    VersionMetadata result;
    if (versioned) {
        if (versionId->isEmpty())
            return fail(ErrorCode::Failed, u"S3 kept no version of %1: versioning is off on the bucket"_s.arg(key),
                        u"source.versioned_file"_s,
                        u"turn versioning on for the bucket, or version by file name with regexp"_s);
        result.version = Version{{u"version_id"_s, *versionId}};
    } else {
        result.version = Version{{u"path"_s, key}};
    }
    result.metadata = metadataFor(*source, key, client.objectUrl(key, *versionId, source->privateBucket));
    return result;
}

} // namespace pando::adapters::s3
