// The git resource's get and put (see gitresourcetype.h).

#include "adapters/api/resourceio.h"
#include "adapters/kit/gitkit/gitptr.h"
#include "adapters/kit/gitkit/gittree.h"
#include "adapters/resource/git/gitresourcetype.h"
#include "adapters/resource/git/gitsource.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QUrl>

#include <git2.h>

namespace pando::adapters::git {

using namespace Qt::StringLiterals;
using detail::GitSourceConfig;
using detail::lastGitError;
using detail::parseSource;

namespace {

// The largest tag name or annotation a put reads from its files.
constexpr qint64 MaxTagFileBytes = qint64(64) * 1024;

QString signatureText(const git_signature *signature)
{
    if (!signature)
        return {};
    return QString::fromUtf8(signature->name) + u" <"_s + QString::fromUtf8(signature->email) + u'>';
}

QString signatureTime(const git_signature *signature)
{
    if (!signature)
        return {};
    const QDateTime time =
        QDateTime::fromSecsSinceEpoch(signature->when.time, Qt::OffsetFromUTC, signature->when.offset * 60);
    return time.toString(Qt::ISODate);
}

// The uri a clone's origin shows: its password (an https URL may carry one) left out.
QString originUrl(const QString &uri)
{
    if (!uri.contains(u"://"_s))
        return uri;
    QUrl url(uri);
    if (url.password().isEmpty())
        return uri;
    url.setPassword({});
    return url.toString();
}

// short_ref_format as Concourse applies it with printf: one %s for the short ref, %% for '%'.
Result<QString> shortRef(const QString &format, const QString &ref)
{
    if (format.isEmpty())
        return ref;
    QString out;
    bool used = false;
    for (qsizetype i = 0; i < format.size(); ++i) {
        if (format.at(i) != u'%') {
            out += format.at(i);
            continue;
        }
        const QChar next = i + 1 < format.size() ? format.at(i + 1) : QChar();
        if (next == u'%') {
            out += u'%';
        } else if (next == u's' && !used) {
            out += ref;
            used = true;
        } else {
            return fail(ErrorCode::Invalid, u"\"%1\" may hold one %s (the short ref) and %% only"_s.arg(format),
                        u"params.short_ref_format"_s);
        }
        ++i;
    }
    return out;
}

QString describe(git_commit *commit)
{
    git_describe_options options;
    git_describe_options_init(&options, GIT_DESCRIBE_OPTIONS_VERSION);
    options.show_commit_oid_as_fallback = 1;
    git_describe_result *raw = nullptr;
    if (git_describe_commit(&raw, reinterpret_cast<git_object *>(commit), &options) != 0) {
        git_error_clear();
        return {};
    }
    git_describe_format_options format;
    git_describe_format_options_init(&format, GIT_DESCRIBE_FORMAT_OPTIONS_VERSION);
    git_buf buffer = GIT_BUF_INIT;
    QString text;
    if (git_describe_format(&buffer, raw, &format) == 0)
        text = QString::fromUtf8(buffer.ptr);
    git_buf_dispose(&buffer);
    git_describe_result_free(raw);
    git_error_clear();
    return text;
}

// The files Concourse's git resource leaves in .git for the tasks that follow.
Status writeGitFiles(const QString &gitDir, const QString &commitId, const QString &shortRefText, git_commit *commit,
                     const QList<QPair<QString, QString>> &metadata)
{
    const git_signature *author = git_commit_author(commit);
    const git_signature *committer = git_commit_committer(commit);
    QJsonArray fields;
    for (const auto &[name, value] : metadata)
        fields.append(QJsonObject{{u"name"_s, name}, {u"value"_s, value}});
    const QList<std::pair<QString, QByteArray>> files{
        {u"ref"_s, commitId.toUtf8() + '\n'},
        {u"short_ref"_s, shortRefText.toUtf8()},
        {u"commit_message"_s, QByteArray(git_commit_message(commit)).trimmed()},
        {u"committer"_s, QByteArray(author->email)},
        {u"committer_name"_s, QByteArray(author->name)},
        {u"author"_s, QByteArray(author->name)},
        {u"author_date"_s, signatureTime(author).toUtf8()},
        {u"committer_date"_s, signatureTime(committer).toUtf8()},
        {u"describe_ref"_s, describe(commit).toUtf8()},
        {u"metadata.json"_s, QJsonDocument(fields).toJson()},
    };
    for (const auto &[name, content] : files)
        if (Status ok = writeResourceFile(gitDir + u'/' + name, content); !ok)
            return ok;
    return {};
}

Result<QByteArray> readParamFile(const QString &workDir, const QString &relative, const QString &where)
{
    Result<QString> path = fileInInputs(workDir, relative, where);
    if (!path)
        return std::unexpected(path.error());
    QFile file(*path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Failed, u"cannot read %1: %2"_s.arg(relative, file.errorString()), where);
    if (file.size() > MaxTagFileBytes)
        return fail(ErrorCode::TooLarge, u"%1 is larger than %2 KiB"_s.arg(relative).arg(MaxTagFileBytes / 1024),
                    where);
    return file.readAll();
}

} // namespace

Result<VersionMetadata> GitResourceType::in(const QJsonObject &source, const Version &version,
                                            const QJsonObject &params, const QString &dir, const BuildMetadata &,
                                            const CancelToken &cancel, const LogSink &log)
{
    Result<GitSourceConfig> config = parseSource(source);
    if (!config)
        return std::unexpected(config.error());
    QString shortRefFormat;
    CloneRequest request;
    if (Status ok = readTexts(params, {{u"short_ref_format"_s, &shortRefFormat}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    if (Status ok = readFlags(params, {{u"clean_tags"_s, &request.cleanTags}}, u"params."_s); !ok)
        return std::unexpected(ok.error());
    if (Result<QString> checked = shortRef(shortRefFormat, {}); !checked)
        return std::unexpected(checked.error());
    request.ref = version.value(u"ref"_s);
    if (request.ref.isEmpty())
        return fail(ErrorCode::Invalid, u"a git version needs a ref"_s, u"version.ref"_s);
    const QDir target(dir);
    if (!target.exists())
        return fail(ErrorCode::Invalid, u"the directory does not exist"_s, dir);
    if (!target.isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System))
        return fail(ErrorCode::Invalid, u"the directory is not empty"_s, dir);
    request.branch = config->branch;
    request.originUrl = originUrl(config->uri);

    const auto progress = [&log](const QString &line) {
        if (log)
            log(line);
    };
    GitMirrors mirrors = config->mirrors(m_cacheRoot, m_credentials);
    Result<QString> commitId = mirrors.clone(config->uri, request, target.absolutePath(), cancel, progress);
    if (!commitId) {
        Error error = commitId.error();
        if (error.where == u"ref"_s)
            error.where = u"version.ref"_s;
        else if (error.where == u"branch"_s)
            error.where = u"source.branch"_s;
        return std::unexpected(error);
    }
    git_repository *rawRepo = nullptr;
    const QString gitDir = target.absoluteFilePath(u".git"_s);
    if (git_repository_open_bare(&rawRepo, QFile::encodeName(gitDir).constData()) != 0)
        return fail(ErrorCode::Internal, u"cannot open the clone: %1"_s.arg(lastGitError()), dir);
    RepoPtr repo(rawRepo);
    git_oid oid;
    git_commit *rawCommit = nullptr;
    if (git_oid_fromstr(&oid, commitId->toLatin1().constData()) != 0 ||
        git_commit_lookup(&rawCommit, repo.get(), &oid) != 0)
        return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(*commitId, lastGitError()), config->uri);
    CommitPtr commit(rawCommit);

    VersionMetadata result;
    result.version = version;
    result.version.insert(u"ref"_s, *commitId);
    result.metadata.append({u"commit"_s, *commitId});
    result.metadata.append({u"author"_s, signatureText(git_commit_author(commit.get()))});
    result.metadata.append({u"author_date"_s, signatureTime(git_commit_author(commit.get()))});
    result.metadata.append({u"committer"_s, signatureText(git_commit_committer(commit.get()))});
    result.metadata.append({u"message"_s, QString::fromUtf8(git_commit_message(commit.get())).trimmed()});
    if (!config->branch.isEmpty())
        result.metadata.append({u"branch"_s, config->branch});
    if (version.contains(u"tag"_s))
        result.metadata.append({u"tag"_s, version.value(u"tag"_s)});
    Result<QString> shortText = shortRef(shortRefFormat, commitId->left(7));
    if (Status ok = writeGitFiles(gitDir, *commitId, *shortText, commit.get(), result.metadata); !ok)
        return std::unexpected(ok.error());
    return result;
}

Result<VersionMetadata> GitResourceType::out(const QJsonObject &source, const QJsonObject &params,
                                             const QString &workDir, const BuildMetadata &, const CancelToken &cancel,
                                             const LogSink &log)
{
    Result<GitSourceConfig> config = parseSource(source);
    if (!config)
        return std::unexpected(config.error());
    if (params.contains(u"notes"_s))
        return fail(ErrorCode::Invalid, u"git notes are not pushed by Pando's git resource"_s, u"params.notes"_s,
                    u"add the note in a task and push refs/notes/commits from there"_s);
    QString repository, branch, returning, tagFile, tagPrefix, annotateFile;
    bool rebase = false, merge = false;
    PushRequest request;
    if (Status ok = readTexts(params,
                              {{u"repository"_s, &repository},
                               {u"branch"_s, &branch},
                               {u"returning"_s, &returning},
                               {u"tag"_s, &tagFile},
                               {u"tag_prefix"_s, &tagPrefix},
                               {u"annotate"_s, &annotateFile}},
                              u"params."_s);
        !ok)
        return std::unexpected(ok.error());
    if (Status ok = readFlags(params,
                              {{u"rebase"_s, &rebase},
                               {u"merge"_s, &merge},
                               {u"force"_s, &request.force},
                               {u"only_tag"_s, &request.onlyTag}},
                              u"params."_s);
        !ok)
        return std::unexpected(ok.error());
    if (repository.isEmpty())
        return fail(ErrorCode::Invalid, u"a put names the repository to push"_s, u"params.repository"_s,
                    u"the name of a get of this resource, or of a task output holding a clone"_s);
    if (rebase && merge)
        return fail(ErrorCode::Invalid, u"rebase and merge cannot both be set"_s, u"params.merge"_s);
    if (!returning.isEmpty() && returning != u"merged"_s && returning != u"unmerged"_s)
        return fail(ErrorCode::Invalid, u"\"%1\" is not merged or unmerged"_s.arg(returning), u"params.returning"_s);
    if (!annotateFile.isEmpty() && tagFile.isEmpty())
        return fail(ErrorCode::Invalid, u"an annotation needs a tag"_s, u"params.annotate"_s,
                    u"set params.tag to the file holding the tag's name"_s);
    request.branch = branch.isEmpty() ? config->branch : branch;
    if (request.branch.isEmpty())
        return fail(ErrorCode::Invalid, u"a put pushes to a branch, and none is named"_s, u"source.branch"_s,
                    u"set source.branch, or params.branch for this put"_s);
    request.whenMoved = rebase  ? PushRequest::Moved::Rebase
                        : merge ? PushRequest::Moved::Merge
                                : PushRequest::Moved::Fail;
    request.returnUnmerged = returning == u"unmerged"_s;
    Result<QString> repositoryPath = dirInInputs(workDir, repository, u"params.repository"_s);
    if (!repositoryPath)
        return std::unexpected(repositoryPath.error());
    request.repository = *repositoryPath;
    if (!tagFile.isEmpty()) {
        Result<QByteArray> name = readParamFile(workDir, tagFile, u"params.tag"_s);
        if (!name)
            return std::unexpected(name.error());
        const QString trimmed = QString::fromUtf8(name->trimmed());
        if (trimmed.isEmpty())
            return fail(ErrorCode::Invalid, u"%1 is empty: there is no tag name in it"_s.arg(tagFile), u"params.tag"_s);
        request.tag = tagPrefix + trimmed;
    }
    if (!annotateFile.isEmpty()) {
        Result<QByteArray> message = readParamFile(workDir, annotateFile, u"params.annotate"_s);
        if (!message)
            return std::unexpected(message.error());
        request.tagMessage = QString::fromUtf8(*message);
        if (request.tagMessage.trimmed().isEmpty())
            return fail(ErrorCode::Invalid, u"%1 is empty: an annotated tag needs a message"_s.arg(annotateFile),
                        u"params.annotate"_s);
    }

    const auto progress = [&log](const QString &line) {
        if (log)
            log(line);
    };
    GitMirrors mirrors = config->mirrors(m_cacheRoot, m_credentials);
    Result<PushOutcome> pushed = mirrors.push(config->uri, request, cancel, progress);
    if (!pushed) {
        Error error = pushed.error();
        if (error.where == u"branch"_s)
            error.where = branch.isEmpty() ? u"source.branch"_s : u"params.branch"_s;
        return std::unexpected(error);
    }
    progress(u"pushed %1"_s.arg(pushed->pushed));
    VersionMetadata result;
    result.version.insert(u"ref"_s, pushed->commit);
    result.metadata.append({u"commit"_s, pushed->commit});
    result.metadata.append({u"branch"_s, request.branch});
    if (!request.tag.isEmpty())
        result.metadata.append({u"tag"_s, request.tag});
    return result;
}

} // namespace pando::adapters::git
