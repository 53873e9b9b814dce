#include "gitmirrors.h"

#include "gitremote.h"
#include "gitstream.h"

#include "gitptr.h"
#include "gittree.h"
#include "giturl.h"
#include "knownhosts.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QUrl>

#include <git2.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sys/stat.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::git {

using detail::displayUrl;
using detail::lastGitError;
using detail::oidText;
using detail::ProgressFn;
using detail::resolveRef;

namespace {

// libgit2 keeps global state (TLS, the SSL context). It is set up once and never torn down:
// a shutdown while another GitMirrors is mid-fetch would pull that state away from under it.
void initLibgit2()
{
    static std::once_flag once;
    std::call_once(once, [] {
        git_libgit2_init();
        // Every fetch gets deadlines; pandod may shorten them (--git-timeout).
        installNetworkDeadlines();
    });
}

// One mutex per mirror directory, shared by every GitMirrors in the process, so two of them
// pointed at the same cache cannot fetch into one mirror at once. Entries are few (one per
// repository) and are kept for the life of the process.
std::shared_ptr<std::mutex> mirrorMutex(const QString &path)
{
    static std::mutex mapMutex;
    static auto *locks = new std::map<QString, std::shared_ptr<std::mutex>>;
    const std::lock_guard guard(mapMutex);
    auto &slot = (*locks)[path];
    if (!slot)
        slot = std::make_shared<std::mutex>();
    return slot;
}

} // namespace

GitMirrors::GitMirrors(QString cacheRoot, GitCredentials credentials)
    : m_cacheRoot(std::move(cacheRoot)), m_credentials(std::move(credentials))
{
    initLibgit2();
}

Status GitMirrors::checkUrl(const QString &url)
{
    return detail::checkRepositoryUrl(url);
}

QString GitMirrors::mirrorPath(const QString &repo) const
{
    const QByteArray digest = QCryptographicHash::hash(repo.toUtf8(), QCryptographicHash::Sha256).toHex();
    return QDir(m_cacheRoot).absoluteFilePath(QString::fromLatin1(digest.left(24)) + u".git"_s);
}

// The mirrors hold what private repositories hold: the cache is its owner's alone (0700), made so
// also when an older install left it open.
Status GitMirrors::makeCacheRoot() const
{
    if (!QDir().mkpath(m_cacheRoot) ||
        !QFile::setPermissions(m_cacheRoot, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
        return fail(ErrorCode::Internal, u"cannot create the git cache directory"_s, m_cacheRoot);
    return {};
}

template<class T>
Result<T> GitMirrors::onFetchedMirror(const QString &repo, const CancelToken &cancel, const ProgressFn &progress,
                                      const std::function<Result<T>(git_repository *, const QString &)> &work)
{
    if (Status ok = checkUrl(repo); !ok)
        return std::unexpected(ok.error());
    const QString repoText = displayUrl(repo);
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, u"fetching %1 was cancelled"_s.arg(repoText));
    if (Status made = makeCacheRoot(); !made)
        return std::unexpected(made.error());
    const QString path = mirrorPath(repo);
    const std::shared_ptr<std::mutex> mutex = mirrorMutex(path);
    // Held through the work as well: a concurrent fetch repacking or pruning the mirror must not
    // pull objects away while they are read.
    const std::lock_guard guard(*mutex);
    Result<RepoPtr> mirror = detail::openMirror(path, repo);
    if (!mirror)
        return std::unexpected(mirror.error());
    if (Status ok = detail::fetchMirror(mirror->get(), repoText, m_credentials, cancel, progress); !ok)
        return std::unexpected(ok.error());
    return work(mirror->get(), repoText);
}

Result<QString> GitMirrors::resolve(const QString &repo, const QString &ref, const CancelToken &cancel,
                                    const ProgressFn &progress)
{
    return onFetchedMirror<QString>(repo, cancel, progress,
                                    [&ref](git_repository *git, const QString &repoText) -> Result<QString> {
                                        Result<git_oid> oid = resolveRef(git, ref, repoText);
                                        if (!oid)
                                            return std::unexpected(oid.error());
                                        return oidText(*oid);
                                    });
}

Result<SourceCheckout> GitMirrors::checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                            const CancelToken &cancel, const ProgressFn &progress)
{
    if (!QDir().mkpath(workRoot))
        return fail(ErrorCode::Internal, u"cannot create the work directory"_s, workRoot);
    return onFetchedMirror<SourceCheckout>(
        repo, cancel, progress, [&](git_repository *git, const QString &repoText) -> Result<SourceCheckout> {
            Result<git_oid> oid = resolveRef(git, ref, repoText);
            if (!oid)
                return std::unexpected(oid.error());
            const QString commitId = oidText(*oid);
            git_commit *rawCommit = nullptr;
            if (git_commit_lookup(&rawCommit, git, &*oid) != 0)
                return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(commitId, lastGitError()),
                            repoText);
            CommitPtr commit(rawCommit);
            git_tree *rawTree = nullptr;
            if (git_commit_tree(&rawTree, commit.get()) != 0)
                return fail(ErrorCode::Internal, u"cannot read the tree of %1: %2"_s.arg(commitId, lastGitError()),
                            repoText);
            TreePtr tree(rawTree);

            // A fresh directory per checkout: concurrent deploys of one commit never share a tree.
            QString directory;
            for (int attempt = 0; attempt < 16 && directory.isEmpty(); ++attempt) {
                const QString name = commitId + u'-' + QString::number(QRandomGenerator::global()->generate(), 16);
                const QString candidate = QDir(workRoot).absoluteFilePath(name);
                if (::mkdir(QFile::encodeName(candidate).constData(), 0755) == 0)
                    directory = candidate;
            }
            if (directory.isEmpty())
                return fail(ErrorCode::Internal, u"cannot create a checkout directory"_s, workRoot);

            if (Status ok = detail::writeTree(git, tree.get(), directory, cancel); !ok) {
                QDir(directory).removeRecursively();
                Error error = ok.error();
                if (error.code != ErrorCode::Cancelled)
                    error.message = u"cannot write %1 at %2: %3"_s.arg(repoText, commitId.left(12), error.message);
                return std::unexpected(error);
            }
            if (progress)
                progress(u"checked out %1 (%2)"_s.arg(commitId.left(12), ref.isEmpty() ? u"default branch"_s : ref));
            return SourceCheckout{commitId, directory};
        });
}

Result<QString> GitMirrors::clone(const QString &repo, const CloneRequest &request, const QString &target,
                                  const CancelToken &cancel, const ProgressFn &progress)
{
    return onFetchedMirror<QString>(repo, cancel, progress, [&](git_repository *git, const QString &repoText) {
        return detail::cloneFromMirror(git, repoText, request, target, cancel, progress);
    });
}

Result<PushOutcome> GitMirrors::push(const QString &repo, const PushRequest &request, const CancelToken &cancel,
                                     const ProgressFn &progress)
{
    return onFetchedMirror<PushOutcome>(repo, cancel, progress, [&](git_repository *git, const QString &repoText) {
        return detail::pushFromRepository(git, repoText, repo, request, m_credentials, cancel, progress);
    });
}

namespace {

// The blob at path in commit, none when there is no such file.
Result<std::optional<QByteArray>> blobAt(git_repository *git, const git_oid &commitId, const QString &path)
{
    git_commit *rawCommit = nullptr;
    if (git_commit_lookup(&rawCommit, git, &commitId) != 0)
        return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(oidText(commitId), lastGitError()));
    CommitPtr commit(rawCommit);
    git_tree *rawTree = nullptr;
    if (git_commit_tree(&rawTree, commit.get()) != 0)
        return fail(ErrorCode::Internal, u"cannot read the tree of %1: %2"_s.arg(oidText(commitId), lastGitError()));
    TreePtr tree(rawTree);
    git_tree_entry *rawEntry = nullptr;
    const QByteArray utf8 = path.toUtf8();
    if (git_tree_entry_bypath(&rawEntry, tree.get(), utf8.constData()) != 0) {
        git_error_clear();
        return std::optional<QByteArray>();
    }
    std::unique_ptr<git_tree_entry, GitFree<git_tree_entry, git_tree_entry_free>> entry(rawEntry);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB)
        return fail(ErrorCode::Invalid, u"%1 is not a file"_s.arg(path), u"file"_s);
    git_blob *rawBlob = nullptr;
    if (git_blob_lookup(&rawBlob, git, git_tree_entry_id(entry.get())) != 0)
        return fail(ErrorCode::Internal, u"cannot read %1: %2"_s.arg(path, lastGitError()));
    std::unique_ptr<git_blob, GitFree<git_blob, git_blob_free>> blob(rawBlob);
    return std::optional<QByteArray>(QByteArray(static_cast<const char *>(git_blob_rawcontent(blob.get())),
                                                qsizetype(git_blob_rawsize(blob.get()))));
}

} // namespace

Result<FileAtRef> GitMirrors::readFile(const QString &repo, const QString &ref, const QString &path,
                                       const CancelToken &cancel)
{
    return onFetchedMirror<FileAtRef>(repo, cancel, {},
                                      [&](git_repository *git, const QString &repoText) -> Result<FileAtRef> {
                                          Result<git_oid> oid = resolveRef(git, ref, repoText);
                                          if (!oid)
                                              return std::unexpected(oid.error());
                                          auto content = blobAt(git, *oid, path);
                                          if (!content)
                                              return std::unexpected(content.error());
                                          return FileAtRef{oidText(*oid), *content};
                                      });
}

namespace {

// Commits change on top of the branch's tip in the fetched mirror git and pushes it (see
// GitMirrors::commitFile).
Result<QString> commitAndPush(git_repository *git, const QString &repoText, const QString &repo,
                              const FileCommit &change, const QString &expectedTip, const GitCredentials &credentials,
                              const CancelToken &cancel)
{
    Result<git_oid> tip = resolveRef(git, u"refs/heads/"_s + change.branch, repoText);
    if (!tip)
        return std::unexpected(tip.error());
    if (!expectedTip.isEmpty() && oidText(*tip) != expectedTip)
        return fail(ErrorCode::Conflict, u"branch %1 of %2 moved"_s.arg(change.branch, repoText));

    git_commit *rawParent = nullptr;
    if (git_commit_lookup(&rawParent, git, &*tip) != 0)
        return fail(ErrorCode::Internal, u"cannot read the branch's tip: %1"_s.arg(lastGitError()), repoText);
    CommitPtr parent(rawParent);
    git_tree *rawBase = nullptr;
    if (git_commit_tree(&rawBase, parent.get()) != 0)
        return fail(ErrorCode::Internal, u"cannot read the branch's tree: %1"_s.arg(lastGitError()), repoText);
    TreePtr base(rawBase);
    git_oid blob;
    if (git_blob_create_from_buffer(&blob, git, change.content.constData(), size_t(change.content.size())) != 0)
        return fail(ErrorCode::Internal, u"cannot write the file: %1"_s.arg(lastGitError()), repoText);
    const QByteArray path = change.path.toUtf8();
    git_tree_update update{};
    update.action = GIT_TREE_UPDATE_UPSERT;
    update.id = blob;
    update.filemode = GIT_FILEMODE_BLOB;
    update.path = path.constData();
    git_oid treeId;
    if (git_tree_create_updated(&treeId, git, base.get(), 1, &update) != 0)
        return fail(ErrorCode::Invalid, u"cannot put %1 in the tree: %2"_s.arg(change.path, lastGitError()), u"file"_s);
    git_tree *rawTree = nullptr;
    if (git_tree_lookup(&rawTree, git, &treeId) != 0)
        return fail(ErrorCode::Internal, u"cannot read the new tree: %1"_s.arg(lastGitError()), repoText);
    TreePtr tree(rawTree);
    git_signature *rawSignature = nullptr;
    if (git_signature_now(&rawSignature, change.authorName.toUtf8().constData(),
                          change.authorEmail.toUtf8().constData()) != 0)
        return fail(
            ErrorCode::Invalid,
            u"\"%1 <%2>\" is not a git identity: %3"_s.arg(change.authorName, change.authorEmail, lastGitError()),
            u"git_user"_s);
    std::unique_ptr<git_signature, GitFree<git_signature, git_signature_free>> signature(rawSignature);
    const git_commit *parents[] = {parent.get()};
    git_oid commitId;
    const QByteArray message = change.message.toUtf8();
    if (git_commit_create(&commitId, git, nullptr, signature.get(), signature.get(), "UTF-8", message.constData(),
                          tree.get(), 1, parents) != 0)
        return fail(ErrorCode::Internal, u"cannot make the commit: %1"_s.arg(lastGitError()), repoText);

    // Pushed from a ref of its own, fast-forward only: a branch that moved on the remote refuses it.
    const QByteArray pushRef = "refs/pando/push/" + change.branch.toUtf8();
    git_reference *rawPushRef = nullptr;
    if (git_reference_create(&rawPushRef, git, pushRef.constData(), &commitId, 1, "pando: push") != 0)
        return fail(ErrorCode::Internal, u"cannot name the commit: %1"_s.arg(lastGitError()), repoText);
    ReferencePtr pushReference(rawPushRef);
    const Status pushed =
        detail::pushToOrigin(git, repoText, repo, {QString::fromUtf8(pushRef) + u":refs/heads/"_s + change.branch},
                             credentials, cancel, u"branch "_s + change.branch);
    git_reference_delete(pushReference.get());
    if (!pushed)
        return std::unexpected(pushed.error());
    // The mirror follows what was pushed, as the next fetch would make it.
    git_reference *rawBranch = nullptr;
    if (git_reference_create(&rawBranch, git, QByteArray("refs/heads/" + change.branch.toUtf8()).constData(), &commitId,
                             1, "pando: pushed") == 0)
        git_reference_free(rawBranch);
    return oidText(commitId);
}

} // namespace

Result<QString> GitMirrors::commitFile(const QString &repo, const FileCommit &change, const QString &expectedTip,
                                       const CancelToken &cancel)
{
    if (Status ok = detail::checkRef(change.branch); !ok || change.branch.isEmpty())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a branch name"_s.arg(change.branch), u"branch"_s);
    return onFetchedMirror<QString>(repo, cancel, {}, [&](git_repository *git, const QString &repoText) {
        return commitAndPush(git, repoText, repo, change, expectedTip, m_credentials, cancel);
    });
}

} // namespace pando::adapters::git
