#include "gitremote.h"
#include "gittree.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

using namespace Qt::StringLiterals;

namespace pando::adapters::git::detail {

namespace {

using IndexPtr = std::unique_ptr<git_index, GitFree<git_index, git_index_free>>;

Status deleteTags(git_repository *repo)
{
    git_strarray names{};
    if (git_tag_list(&names, repo) != 0)
        return fail(ErrorCode::Internal, u"cannot list the clone's tags: %1"_s.arg(lastGitError()));
    Status result;
    for (size_t i = 0; i < names.count && result; ++i)
        if (git_tag_delete(repo, names.strings[i]) != 0)
            result = fail(ErrorCode::Internal,
                          u"cannot delete tag %1: %2"_s.arg(QString::fromUtf8(names.strings[i]), lastGitError()));
    git_strarray_dispose(&names);
    return result;
}

Result<QString> fillClone(git_repository *mirror, git_repository *clone, const QString &repoText,
                          const CloneRequest &request, const git_oid &commitId, const QString &target,
                          const CancelToken &cancel)
{
    const QString commitText = oidText(commitId);
    const QByteArray origin = request.originUrl.toUtf8();
    if (git_remote_set_url(clone, "origin", origin.constData()) != 0)
        return fail(ErrorCode::Internal, u"cannot set the clone's origin: %1"_s.arg(lastGitError()), target);
    if (!request.branch.isEmpty()) {
        const QByteArray branch = "refs/heads/" + request.branch.toUtf8();
        git_reference *raw = nullptr;
        if (git_reference_create(&raw, clone, branch.constData(), &commitId, 1, "pando: get") != 0)
            return fail(ErrorCode::Invalid,
                        u"cannot name branch %1 in the clone: %2"_s.arg(request.branch, lastGitError()), u"branch"_s);
        git_reference_free(raw);
    }
    if (git_repository_set_head_detached(clone, &commitId) != 0)
        return fail(ErrorCode::Internal, u"cannot check out %1: %2"_s.arg(commitText, lastGitError()), target);
    if (request.cleanTags)
        if (Status ok = deleteTags(clone); !ok)
            return std::unexpected(ok.error());

    git_commit *rawCommit = nullptr;
    if (git_commit_lookup(&rawCommit, mirror, &commitId) != 0)
        return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(commitText, lastGitError()), repoText);
    CommitPtr commit(rawCommit);
    git_tree *rawTree = nullptr;
    if (git_commit_tree(&rawTree, commit.get()) != 0)
        return fail(ErrorCode::Internal, u"cannot read the tree of %1: %2"_s.arg(commitText, lastGitError()), repoText);
    TreePtr tree(rawTree);
    git_index *rawIndex = nullptr;
    if (git_repository_index(&rawIndex, clone) != 0)
        return fail(ErrorCode::Internal, u"cannot open the clone's index: %1"_s.arg(lastGitError()), target);
    IndexPtr index(rawIndex);
    git_index_clear(index.get());
    // The files come from our own tree writer, which refuses what could leave the directory; the
    // index records them as written, so git sees a clean checkout without reading them again.
    if (Status ok = writeTree(mirror, tree.get(), target, cancel, index.get()); !ok) {
        Error error = ok.error();
        if (error.code != ErrorCode::Cancelled)
            error.message = u"cannot write %1 at %2: %3"_s.arg(repoText, commitText.left(12), error.message);
        return std::unexpected(error);
    }
    if (git_index_write(index.get()) != 0)
        return fail(ErrorCode::Internal, u"cannot write the clone's index: %1"_s.arg(lastGitError()), target);
    // The clone's reflog and FETCH_HEAD name the mirror's place on this machine ("clone: from
    // /…"), which is nothing for a task to read.
    QDir(target + u"/.git/logs"_s).removeRecursively();
    QFile::remove(target + u"/.git/FETCH_HEAD"_s);
    return commitText;
}

} // namespace

Result<QString> cloneFromMirror(git_repository *mirror, const QString &repoText, const CloneRequest &request,
                                const QString &target, const CancelToken &cancel, const ProgressFn &progress)
{
    if (!request.branch.isEmpty())
        if (Status ok = checkRef(request.branch); !ok)
            return fail(ErrorCode::Invalid, ok.error().message, u"branch"_s);
    Result<git_oid> commitId = resolveRef(mirror, request.ref, repoText);
    if (!commitId)
        return std::unexpected(commitId.error());
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, u"cloning %1 was cancelled"_s.arg(repoText));

    git_clone_options options;
    git_clone_options_init(&options, GIT_CLONE_OPTIONS_VERSION);
    // Copied, not hard-linked: a task may write to the clone's files, and a link would write to
    // the mirror every other pipeline reads.
    options.local = GIT_CLONE_LOCAL_NO_LINKS;
    options.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
    const QByteArray source = QFile::encodeName(QString::fromUtf8(git_repository_path(mirror)));
    const QByteArray destination = QFile::encodeName(target);
    git_repository *raw = nullptr;
    if (git_clone(&raw, source.constData(), destination.constData(), &options) != 0)
        return fail(ErrorCode::Internal, u"cannot copy %1 into the step: %2"_s.arg(repoText, lastGitError()), target);
    RepoPtr clone(raw);
    Result<QString> filled = fillClone(mirror, clone.get(), repoText, request, *commitId, target, cancel);
    if (!filled) {
        // Nothing half-made is left: the directory is empty again, as the caller gave it.
        clone.reset();
        const QDir dir(target);
        for (const QFileInfo &entry :
             dir.entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System)) {
            if (entry.isDir() && !entry.isSymLink())
                QDir(entry.filePath()).removeRecursively();
            else
                QFile::remove(entry.filePath());
        }
        return filled;
    }
    if (progress)
        progress(u"cloned %1 at %2"_s.arg(repoText, filled->left(12)));
    return filled;
}

} // namespace pando::adapters::git::detail
