#include "adapters/resource/git/gitresourcetype.h"

#include "adapters/api/resourceio.h"
#include "adapters/resource/git/gitsource.h"

#include "adapters/kit/gitkit/gitptr.h"
#include "adapters/kit/gitkit/gittree.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <git2.h>
#include <memory>

namespace pando::adapters::git {

using namespace Qt::StringLiterals;
using detail::GitSourceConfig;
using detail::lastGitError;
using detail::parseSource;

namespace {

// A history walk stops here: a check never reports more new commits than this at once.
constexpr int MaxNewVersions = 10000;

Result<QStringList> stringList(const QJsonObject &source, const QString &key)
{
    const QJsonValue value = source.value(key);
    if (value.isUndefined() || value.isNull())
        return QStringList{};
    if (value.isString())
        return QStringList{value.toString()};
    if (!value.isArray())
        return fail(ErrorCode::Invalid, u"must be a list of globs"_s, u"source."_s + key);
    QStringList out;
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        if (!array.at(i).isString() || array.at(i).toString().isEmpty())
            return fail(ErrorCode::Invalid, u"must be a non-empty string"_s, u"source.%1[%2]"_s.arg(key).arg(i));
        out << array.at(i).toString();
    }
    return out;
}

QString oidText(const git_oid &oid)
{
    char buffer[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(buffer, sizeof buffer, &oid);
    return QString::fromLatin1(buffer);
}

Result<RepoPtr> openMirror(const QString &path)
{
    git_repository *raw = nullptr;
    if (git_repository_open_bare(&raw, QFile::encodeName(path).constData()) != 0)
        return fail(ErrorCode::Internal, u"cannot open the mirror: %1"_s.arg(lastGitError()), path);
    return RepoPtr(raw);
}

Result<git_oid> parseOid(const QString &text)
{
    git_oid oid;
    const QByteArray hex = text.toLatin1();
    if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&oid, hex.constData(), size_t(hex.size())) != 0)
        return fail(ErrorCode::Invalid, u"\"%1\" is not a full commit id"_s.arg(text), u"version.ref"_s);
    return oid;
}

QRegularExpression globRegex(const QString &pattern)
{
    QString re = u"^"_s;
    const qsizetype n = pattern.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = pattern.at(i);
        const bool segmentStart = i == 0 || pattern.at(i - 1) == u'/';
        if (c == u'*' && i + 1 < n && pattern.at(i + 1) == u'*' && segmentStart) {
            if (i + 2 < n && pattern.at(i + 2) == u'/') {
                re += u"(?:.*/)?"_s; // "**/": zero or more whole segments
                i += 2;
            } else {
                re += u".*"_s;
                i += 1;
            }
        } else if (c == u'*') {
            re += u"[^/]*"_s;
        } else if (c == u'?') {
            re += u"[^/]"_s;
        } else if (c == u'[') {
            const qsizetype close = pattern.indexOf(u']', i + 2);
            if (close < 0) {
                re += u"\\["_s;
                continue;
            }
            QString cls = pattern.mid(i + 1, close - i - 1);
            if (cls.startsWith(u'!'))
                cls[0] = u'^';
            cls.replace(u'\\', u"\\\\"_s);
            re += u'[' + cls + u']';
            i = close;
        } else {
            re += QRegularExpression::escape(QString(c));
        }
    }
    // A pattern naming a directory covers what is inside it.
    re += u"(?:/.*)?$"_s;
    return QRegularExpression(re);
}

bool anyMatch(const QStringList &patterns, const QString &path)
{
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const QString &pattern) { return matchPathGlob(pattern, path); });
}

bool messagePasses(const QString &message, const GitSourceConfig &config)
{
    if (config.ciSkip && (message.contains(u"[ci skip]"_s) || message.contains(u"[skip ci]"_s)))
        return false;
    const auto holds = [&message](const QString &text) {
        return message.contains(text);
    };
    if (std::any_of(config.excludeMessages.begin(), config.excludeMessages.end(), holds))
        return false;
    return config.includeMessages.isEmpty() ||
           std::any_of(config.includeMessages.begin(), config.includeMessages.end(), holds);
}

// Whether the commit's message and the paths it changed are ones the filters let through.
Result<bool> commitPasses(git_repository *repo, git_commit *commit, const GitSourceConfig &config)
{
    if (!messagePasses(QString::fromUtf8(git_commit_message(commit)), config))
        return false;
    if (config.paths.isEmpty() && config.ignorePaths.isEmpty())
        return true;
    git_tree *rawTree = nullptr;
    if (git_commit_tree(&rawTree, commit) != 0)
        return fail(ErrorCode::Internal, u"cannot read a commit's tree: %1"_s.arg(lastGitError()));
    TreePtr tree(rawTree);
    TreePtr parentTree;
    if (git_commit_parentcount(commit) > 0) {
        git_commit *rawParent = nullptr;
        if (git_commit_parent(&rawParent, commit, 0) != 0)
            return fail(ErrorCode::Internal, u"cannot read a commit's parent: %1"_s.arg(lastGitError()));
        CommitPtr parent(rawParent);
        git_tree *rawParentTree = nullptr;
        if (git_commit_tree(&rawParentTree, parent.get()) != 0)
            return fail(ErrorCode::Internal, u"cannot read a commit's tree: %1"_s.arg(lastGitError()));
        parentTree.reset(rawParentTree);
    }
    git_diff *rawDiff = nullptr;
    if (git_diff_tree_to_tree(&rawDiff, repo, parentTree.get(), tree.get(), nullptr) != 0)
        return fail(ErrorCode::Internal, u"cannot diff a commit: %1"_s.arg(lastGitError()));
    DiffPtr diff(rawDiff);
    const size_t deltas = git_diff_num_deltas(diff.get());
    for (size_t i = 0; i < deltas; ++i) {
        const git_diff_delta *delta = git_diff_get_delta(diff.get(), i);
        for (const char *raw : {delta->old_file.path, delta->new_file.path}) {
            if (!raw)
                continue;
            const QString path = QString::fromUtf8(raw);
            if ((config.paths.isEmpty() || anyMatch(config.paths, path)) && !anyMatch(config.ignorePaths, path))
                return true;
        }
    }
    return false;
}

Result<QList<Version>> checkBranch(git_repository *repo, const git_oid &head, const Version &from,
                                   const GitSourceConfig &config, const CancelToken &cancel)
{
    git_revwalk *rawWalk = nullptr;
    if (git_revwalk_new(&rawWalk, repo) != 0)
        return fail(ErrorCode::Internal, u"cannot walk the history: %1"_s.arg(lastGitError()));
    WalkPtr walk(rawWalk);
    git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
    git_revwalk_simplify_first_parent(walk.get());
    git_revwalk_push(walk.get(), &head);

    // Only a `from` that is still in the branch's history bounds the walk.
    bool bounded = false;
    if (from.contains(u"ref"_s)) {
        if (Result<git_oid> fromOid = parseOid(from.value(u"ref"_s))) {
            if (git_oid_equal(&*fromOid, &head))
                return QList<Version>{};
            if (git_graph_descendant_of(repo, &head, &*fromOid) == 1) {
                git_revwalk_hide(walk.get(), &*fromOid);
                bounded = true;
            }
        }
    }
    git_error_clear();

    QList<Version> newestFirst;
    git_oid oid;
    while (git_revwalk_next(&oid, walk.get()) == 0) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"checking %1 was cancelled"_s.arg(config.uri));
        git_commit *rawCommit = nullptr;
        if (git_commit_lookup(&rawCommit, repo, &oid) != 0)
            return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(oidText(oid), lastGitError()));
        CommitPtr commit(rawCommit);
        Result<bool> passes = commitPasses(repo, commit.get(), config);
        if (!passes)
            return std::unexpected(passes.error());
        if (!*passes)
            continue;
        newestFirst.append(Version{{u"ref"_s, oidText(oid)}});
        if (!bounded || newestFirst.size() >= MaxNewVersions)
            break;
    }
    std::reverse(newestFirst.begin(), newestFirst.end());
    return newestFirst;
}

Result<QList<Version>> checkTags(git_repository *repo, const Version &from, const GitSourceConfig &config)
{
    git_strarray names{};
    const QByteArray pattern = config.tagFilter.toUtf8();
    if (git_tag_list_match(&names, pattern.constData(), repo) != 0)
        return fail(ErrorCode::Internal, u"cannot list tags: %1"_s.arg(lastGitError()));
    QList<QPair<QString, QString>> tags; // name → commit
    for (size_t i = 0; i < names.count; ++i) {
        const QString name = QString::fromUtf8(names.strings[i]);
        const QByteArray refName = "refs/tags/" + QByteArray(names.strings[i]);
        git_object *rawObject = nullptr;
        if (git_revparse_single(&rawObject, repo, refName.constData()) != 0)
            continue;
        ObjectPtr object(rawObject);
        git_object *rawCommit = nullptr;
        if (git_object_peel(&rawCommit, object.get(), GIT_OBJECT_COMMIT) != 0)
            continue; // a tag of a tree or blob is no version
        ObjectPtr commit(rawCommit);
        tags.append({name, oidText(*git_object_id(commit.get()))});
    }
    git_strarray_dispose(&names);
    git_error_clear();
    std::sort(tags.begin(), tags.end(), [](const auto &a, const auto &b) { return tagNameLess(a.first, b.first); });

    QList<Version> all;
    for (const auto &[name, commit] : std::as_const(tags))
        all.append(Version{{u"ref"_s, commit}, {u"tag"_s, name}});
    if (all.isEmpty())
        return all;
    if (!from.isEmpty()) {
        for (qsizetype i = all.size() - 1; i >= 0; --i) {
            const Version &v = all.at(i);
            const bool same = from.contains(u"tag"_s) ? v.value(u"tag"_s) == from.value(u"tag"_s)
                                                      : v.value(u"ref"_s) == from.value(u"ref"_s);
            if (same)
                return all.mid(i + 1);
        }
    }
    return QList<Version>{all.last()};
}

} // namespace

namespace detail {

Result<GitSourceConfig> parseSource(const QJsonObject &source)
{
    GitSourceConfig config;
    const QJsonValue uri = source.value(u"uri"_s);
    if (!uri.isString() || uri.toString().isEmpty())
        return fail(ErrorCode::Invalid, u"the git resource needs a uri"_s, u"source.uri"_s);
    config.uri = uri.toString();
    for (const auto &[key, target] : {std::pair{u"branch"_s, &config.branch}, {u"tag_filter"_s, &config.tagFilter}}) {
        const QJsonValue value = source.value(key);
        if (!value.isUndefined() && !value.isNull() && !value.isString())
            return fail(ErrorCode::Invalid, u"must be a string"_s, u"source."_s + key);
        *target = value.toString();
    }
    Result<QStringList> paths = stringList(source, u"paths"_s);
    if (!paths)
        return std::unexpected(paths.error());
    config.paths = *paths;
    Result<QStringList> ignore = stringList(source, u"ignore_paths"_s);
    if (!ignore)
        return std::unexpected(ignore.error());
    config.ignorePaths = *ignore;
    bool disableCiSkip = false;
    if (Status ok = readFlags(source, {{u"disable_ci_skip"_s, &disableCiSkip}}, u"source."_s); !ok)
        return std::unexpected(ok.error());
    config.ciSkip = !disableCiSkip;
    const QJsonValue filter = source.value(u"commit_filter"_s);
    if (!filter.isUndefined() && !filter.isNull()) {
        if (!filter.isObject())
            return fail(ErrorCode::Invalid, u"must be a map with exclude and include"_s, u"source.commit_filter"_s);
        for (const auto &[key, target] :
             {std::pair{u"exclude"_s, &config.excludeMessages}, std::pair{u"include"_s, &config.includeMessages}}) {
            Result<QStringList> texts = stringList(filter.toObject(), key);
            if (!texts) {
                Error error = texts.error();
                error.where = u"source.commit_filter."_s + key;
                return std::unexpected(error);
            }
            *target = *texts;
        }
    }
    // What Concourse's git resource does that Pando's does not: refused, not silently skipped.
    static const QList<std::pair<QString, QString>> refused{
        {u"git_crypt_key"_s, u"git-crypt is not applied: the files would stay encrypted"_s},
        {u"commit_verification_keys"_s, u"commit signatures are not verified"_s},
        {u"commit_verification_key_ids"_s, u"commit signatures are not verified"_s},
        {u"https_tunnel"_s, u"ssh is not tunnelled through an HTTPS proxy"_s},
        {u"skip_ssl_verification"_s, u"TLS certificates of git remotes are always checked"_s},
    };
    for (const auto &[key, why] : refused) {
        const QJsonValue value = source.value(key);
        if (value.isUndefined() || value.isNull() || value == QJsonValue(false) || value == QJsonValue(u"false"_s) ||
            value == QJsonValue(QJsonArray()))
            continue;
        return fail(ErrorCode::Invalid, why, u"source."_s + key,
                    key == u"skip_ssl_verification"_s
                        ? u"trust the server's CA on the machine running Pando, or use an ssh:// uri"_s
                        : u"remove it, or use a resource type that does this"_s);
    }
    // Who the remote is told we are; never logged.
    QString key;
    if (Status ok = readTexts(source,
                              {{u"username"_s, &config.credentials.username},
                               {u"password"_s, &config.credentials.httpsToken},
                               {u"private_key"_s, &key},
                               {u"private_key_passphrase"_s, &config.credentials.sshPassphrase}},
                              u"source."_s);
        !ok)
        return std::unexpected(ok.error());
    config.credentials.sshPrivateKey = key.toUtf8();
    return config;
}

GitMirrors GitSourceConfig::mirrors(const QString &cacheRoot, GitCredentials defaults) const
{
    if (!credentials.username.isEmpty() || !credentials.httpsToken.isEmpty() || !credentials.sshPrivateKey.isEmpty()) {
        defaults.username = credentials.username;
        defaults.httpsToken = credentials.httpsToken;
        if (!credentials.sshPrivateKey.isEmpty()) {
            defaults.sshPrivateKey = credentials.sshPrivateKey;
            defaults.sshPassphrase = credentials.sshPassphrase;
            defaults.useSshAgent = false;
        }
    }
    return GitMirrors(cacheRoot, std::move(defaults));
}

} // namespace detail

bool matchPathGlob(const QString &pattern, const QString &path)
{
    return globRegex(pattern).match(path).hasMatch();
}

bool tagNameLess(const QString &a, const QString &b)
{
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a.at(i).isDigit() && b.at(j).isDigit()) {
            qsizetype ei = i, ej = j;
            while (ei < a.size() && a.at(ei).isDigit())
                ++ei;
            while (ej < b.size() && b.at(ej).isDigit())
                ++ej;
            // Compare digit runs as numbers without overflow: strip zeros, then length, then text.
            QStringView da = QStringView(a).sliced(i, ei - i), db = QStringView(b).sliced(j, ej - j);
            while (da.size() > 1 && da.front() == u'0')
                da = da.sliced(1);
            while (db.size() > 1 && db.front() == u'0')
                db = db.sliced(1);
            if (da.size() != db.size())
                return da.size() < db.size();
            if (const int c = da.compare(db); c != 0)
                return c < 0;
            i = ei;
            j = ej;
            continue;
        }
        if (a.at(i) != b.at(j))
            return a.at(i) < b.at(j);
        ++i;
        ++j;
    }
    return (a.size() - i) < (b.size() - j);
}

GitResourceType::GitResourceType(QString cacheRoot, GitCredentials credentials)
    : m_cacheRoot(std::move(cacheRoot)), m_credentials(std::move(credentials))
{}

GitResourceType::~GitResourceType() = default;

Result<QList<Version>> GitResourceType::check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                              const LogSink &log)
{
    Result<GitSourceConfig> config = parseSource(source);
    if (!config)
        return std::unexpected(config.error());
    const auto progress = [&log](const QString &line) {
        if (log)
            log(line);
    };
    // Fetches the mirror and resolves the branch (empty: the remote's default).
    GitMirrors mirrors = config->mirrors(m_cacheRoot, m_credentials);
    Result<QString> head = mirrors.resolve(config->uri, config->branch, cancel, progress);
    if (!head) {
        Error error = head.error();
        if (error.where == u"ref"_s)
            error.where = u"source.branch"_s;
        return std::unexpected(error);
    }
    Result<RepoPtr> repo = openMirror(mirrors.mirrorPath(config->uri));
    if (!repo)
        return std::unexpected(repo.error());
    if (!config->tagFilter.isEmpty())
        return checkTags(repo->get(), from, *config);
    Result<git_oid> headOid = parseOid(*head);
    if (!headOid)
        return std::unexpected(headOid.error());
    return checkBranch(repo->get(), *headOid, from, *config, cancel);
}

} // namespace pando::adapters::git
