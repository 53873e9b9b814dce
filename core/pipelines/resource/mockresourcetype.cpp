#include "core/pipelines/resource/mockresourcetype.h"

#include "adapters/api/goduration.h"
#include "adapters/api/resourceio.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QThread>

namespace pando::core::pipelines {

using namespace Qt::StringLiterals;
using adapters::Version;
using adapters::VersionMetadata;

namespace {

constexpr qint64 MaxCheckDelayMs = 10LL * 60 * 1000;
constexpr qint64 MaxVersionFileBytes = 64LL * 1024;

const QStringList &sourceKeys()
{
    static const QStringList keys{u"initial_version"_s, u"no_initial_version"_s, u"force_version"_s, u"create_files"_s,
                                  u"check_delay"_s,     u"check_failure"_s,      u"metadata"_s,      u"log"_s,
                                  u"mirror_self"_s};
    return keys;
}

Status checkSource(const QJsonObject &source)
{
    for (auto it = source.begin(); it != source.end(); ++it)
        if (!sourceKeys().contains(it.key()))
            return fail(
                ErrorCode::Invalid,
                u"unknown field \"%1\" (the mock resource takes %2)"_s.arg(it.key(), sourceKeys().join(u", "_s)),
                u"source."_s + it.key());
    if (source.value(u"mirror_self"_s).toBool())
        return fail(ErrorCode::Invalid, u"mirror_self is not supported: Pando's mock resource is no image"_s,
                    u"source.mirror_self"_s, u"give the task an image_resource of a local image"_s);
    return {};
}

QList<QPair<QString, QString>> metadataOf(const QJsonObject &source)
{
    QList<QPair<QString, QString>> out;
    for (const QJsonValue entry : source.value(u"metadata"_s).toArray())
        out.append({entry.toObject().value(u"name"_s).toString(), entry.toObject().value(u"value"_s).toString()});
    return out;
}

void say(const QJsonObject &source, const adapters::LogSink &log)
{
    if (const QString message = source.value(u"log"_s).toString(); !message.isEmpty() && log)
        log(message);
}

// Writes the files of `files` (name → text) below dir; a name that would leave it is refused.
Status createFiles(const QString &dir, const QJsonObject &files, const QString &where)
{
    const QString root = QDir(dir).canonicalPath();
    for (auto it = files.begin(); it != files.end(); ++it) {
        const QString name = it.key();
        const QString cleaned = QDir::cleanPath(name);
        if (name.isEmpty() || QDir::isAbsolutePath(name) || cleaned == u".."_s || cleaned.startsWith(u"../"_s))
            return fail(ErrorCode::Invalid, u"\"%1\" is not a path inside the resource's directory"_s.arg(name),
                        where + name);
        if (!it.value().isString())
            return fail(ErrorCode::Invalid, u"a file's content must be text"_s, where + name);
        const QString path = root + u'/' + cleaned;
        if (!QDir().mkpath(QFileInfo(path).absolutePath()))
            return fail(ErrorCode::Internal, u"cannot make the directory of %1"_s.arg(name), where + name);
        // A directory the archive of an earlier file made cannot be a link: only this code writes here.
        if (auto written = adapters::writeResourceFile(path, it.value().toString().toUtf8()); !written) {
            Error error = written.error();
            error.where = where + name;
            return std::unexpected(error);
        }
    }
    return {};
}

} // namespace

Result<QList<Version>> MockResourceType::check(const QJsonObject &source, const Version &from,
                                               const CancelToken &cancel, const adapters::LogSink &log)
{
    if (auto ok = checkSource(source); !ok)
        return std::unexpected(ok.error());
    say(source, log);
    auto delayText = adapters::sourceText(source, u"check_delay"_s, u"source."_s);
    if (!delayText)
        return std::unexpected(delayText.error());
    if (!delayText->isEmpty()) {
        const std::optional<qint64> delay = adapters::parseGoDurationMs(*delayText, MaxCheckDelayMs);
        if (!delay)
            return fail(ErrorCode::Invalid, u"\"%1\" is not a duration of at most 10m"_s.arg(*delayText),
                        u"source.check_delay"_s);
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < *delay && !cancel.isCancelled())
            QThread::msleep(20);
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"the check was cancelled"_s);
    }
    auto failure = adapters::sourceText(source, u"check_failure"_s, u"source."_s);
    if (!failure)
        return std::unexpected(failure.error());
    if (!failure->isEmpty())
        return fail(ErrorCode::Failed, *failure, u"source.check_failure"_s);
    auto forced = adapters::sourceText(source, u"force_version"_s, u"source."_s);
    if (!forced)
        return std::unexpected(forced.error());
    if (!forced->isEmpty())
        return QList<Version>{Version{{u"version"_s, *forced}}};
    if (!from.isEmpty())
        return QList<Version>{from};
    if (source.value(u"no_initial_version"_s).toBool())
        return QList<Version>{};
    auto initial = adapters::sourceText(source, u"initial_version"_s, u"source."_s);
    if (!initial)
        return std::unexpected(initial.error());
    return QList<Version>{Version{{u"version"_s, initial->isEmpty() ? u"mock"_s : *initial}}};
}

Result<VersionMetadata> MockResourceType::in(const QJsonObject &source, const Version &version,
                                             const QJsonObject &params, const QString &dir,
                                             const adapters::BuildMetadata &, const CancelToken &,
                                             const adapters::LogSink &log)
{
    if (auto ok = checkSource(source); !ok)
        return std::unexpected(ok.error());
    if (params.value(u"mirror_self_via_params"_s).toBool())
        return fail(ErrorCode::Invalid, u"mirror_self_via_params is not supported: Pando's mock resource is no image"_s,
                    u"params.mirror_self_via_params"_s);
    say(source, log);
    if (!QDir(dir).exists())
        return fail(ErrorCode::Invalid, u"the directory %1 does not exist"_s.arg(dir), u"dir"_s);
    QJsonObject files{{u"version"_s, version.value(u"version"_s)}, {u"privileged"_s, u"false"_s}};
    const QJsonObject fromSource = source.value(u"create_files"_s).toObject();
    for (auto it = fromSource.begin(); it != fromSource.end(); ++it)
        files.insert(it.key(), it.value());
    const QJsonObject fromParams = params.value(u"create_files_via_params"_s).toObject();
    for (auto it = fromParams.begin(); it != fromParams.end(); ++it)
        files.insert(it.key(), it.value());
    if (auto written = createFiles(dir, files, u"create_files."_s); !written)
        return std::unexpected(written.error());
    return VersionMetadata{version, metadataOf(source)};
}

Result<VersionMetadata> MockResourceType::out(const QJsonObject &source, const QJsonObject &params,
                                              const QString &workDir, const adapters::BuildMetadata &build,
                                              const CancelToken &, const adapters::LogSink &log)
{
    if (auto ok = checkSource(source); !ok)
        return std::unexpected(ok.error());
    say(source, log);
    if (params.value(u"print_env"_s).toBool() && log)
        for (auto it = build.begin(); it != build.end(); ++it)
            log(it.key() + u'=' + it.value());
    auto version = adapters::sourceText(params, u"version"_s, u"params."_s);
    if (!version)
        return std::unexpected(version.error());
    auto fileName = adapters::sourceText(params, u"file"_s, u"params."_s);
    if (!fileName)
        return std::unexpected(fileName.error());
    if (version->isEmpty() && !fileName->isEmpty()) {
        auto path = adapters::fileInInputs(workDir, *fileName, u"params.file"_s);
        if (!path)
            return std::unexpected(path.error());
        QFile file(*path);
        if (!file.open(QIODevice::ReadOnly) || file.size() > MaxVersionFileBytes)
            return fail(ErrorCode::Invalid, u"\"%1\" cannot be read (or is over 64 KiB)"_s.arg(*fileName),
                        u"params.file"_s);
        *version = QString::fromUtf8(file.readAll()).trimmed();
    }
    if (version->isEmpty())
        return fail(ErrorCode::Invalid, u"a put of a mock resource needs params.version or params.file"_s, u"params"_s);
    return VersionMetadata{Version{{u"version"_s, *version}}, metadataOf(source)};
}

} // namespace pando::core::pipelines
