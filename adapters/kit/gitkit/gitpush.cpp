#include "gitremote.h"
#include "gittree.h"

#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

using namespace Qt::StringLiterals;

namespace pando::adapters::git::detail {

namespace {

// A branch that keeps moving while a rebased or merged commit is pushed is tried this often.
constexpr int MaxAttempts = 5;
// Entries of a task's .git walked for links before the put gives up.
constexpr qsizetype MaxGitEntries = 2'000'000;
// Where a put names what it pushes in the mirror; dropped before and after every put.
constexpr char PutRefs[] = "refs/pando/put/";

using AnnotatedPtr = std::unique_ptr<git_annotated_commit, GitFree<git_annotated_commit, git_annotated_commit_free>>;
using IndexPtr = std::unique_ptr<git_index, GitFree<git_index, git_index_free>>;
using RebasePtr = std::unique_ptr<git_rebase, GitFree<git_rebase, git_rebase_free>>;
using SignaturePtr = std::unique_ptr<git_signature, GitFree<git_signature, git_signature_free>>;

const QString RepositoryField = u"params.repository"_s;

QString shortId(const git_oid &oid)
{
    return oidText(oid).left(7);
}

// A task's repository is read only where its .git is a directory of its own: a gitdir file, a
// link or an alternates file could make the put read another repository on this machine (a
// mirror another pipeline fetched with its own credentials) and push it.
Result<QString> taskGitDir(const QString &repository)
{
    const QString gitDir = repository + u"/.git"_s;
    const QFileInfo info(gitDir);
    if (info.isSymLink() || !info.isDir())
        return fail(ErrorCode::Invalid, u"the directory has no .git directory (a .git file or link is not followed)"_s,
                    RepositoryField, u"name the directory a git get or clone made"_s);
    qsizetype entries = 0;
    QDirIterator it(gitDir, QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        if (++entries > MaxGitEntries)
            return fail(ErrorCode::TooLarge, u"its .git holds more than %1 entries"_s.arg(MaxGitEntries),
                        RepositoryField, u"run git gc in the task before the put"_s);
        if (it.fileInfo().isSymLink())
            return fail(ErrorCode::Invalid,
                        u".git/%1 is a symbolic link; a repository is pushed only from what it holds itself"_s.arg(
                            QDir(gitDir).relativeFilePath(it.filePath())),
                        RepositoryField);
    }
    for (const QString &name : {u"objects/info/alternates"_s, u"objects/info/http-alternates"_s, u"commondir"_s}) {
        if (QFileInfo(gitDir + u'/' + name).exists())
            return fail(ErrorCode::Invalid, u".git/%1 points at objects kept elsewhere"_s.arg(name), RepositoryField,
                        u"make the repository hold its own objects (git repack -a -d) and remove the file"_s);
    }
    return gitDir;
}

// The names of the refs matching glob ("refs/pando/put/*").
QList<QByteArray> refNames(git_repository *repo, const QByteArray &glob)
{
    QList<QByteArray> names;
    git_reference_foreach_glob(
        repo, glob.constData(),
        [](const char *name, void *data) {
            static_cast<QList<QByteArray> *>(data)->append(name);
            return 0;
        },
        &names);
    git_error_clear();
    return names;
}

// Drops the refs a put made in the mirror, on every way out.
class PutRefsGuard {
public:
    explicit PutRefsGuard(git_repository *mirror) : m_mirror(mirror) { drop(); }
    ~PutRefsGuard() { drop(); }
    PutRefsGuard(const PutRefsGuard &) = delete;
    PutRefsGuard &operator=(const PutRefsGuard &) = delete;

private:
    void drop()
    {
        const QList<QByteArray> names = refNames(m_mirror, QByteArray(PutRefs) + '*');
        for (const QByteArray &name : names)
            git_reference_remove(m_mirror, name.constData());
        git_error_clear();
    }
    git_repository *m_mirror;
};

Status setRef(git_repository *repo, const QByteArray &name, const git_oid &target, const char *why)
{
    git_reference *raw = nullptr;
    if (git_reference_create(&raw, repo, name.constData(), &target, 1, why) != 0)
        return fail(ErrorCode::Internal,
                    u"cannot name %1 in the mirror: %2"_s.arg(QString::fromUtf8(name), lastGitError()));
    git_reference_free(raw);
    return {};
}

std::optional<git_oid> refTarget(git_repository *repo, const QByteArray &name, bool peel)
{
    git_reference *raw = nullptr;
    if (git_reference_lookup(&raw, repo, name.constData()) != 0) {
        git_error_clear();
        return std::nullopt;
    }
    ReferencePtr ref(raw);
    if (!peel)
        return git_reference_target(ref.get()) ? std::optional(*git_reference_target(ref.get())) : std::nullopt;
    git_object *object = nullptr;
    if (git_reference_peel(&object, ref.get(), GIT_OBJECT_COMMIT) != 0) {
        git_error_clear();
        return std::nullopt;
    }
    ObjectPtr held(object);
    return *git_object_id(held.get());
}

// Copies the objects of the task repository's HEAD and tags into the mirror, below PutRefs.
Result<git_oid> takeObjects(git_repository *mirror, const QString &gitDir, const CancelToken &cancel,
                            const ProgressFn &progress)
{
    git_remote *raw = nullptr;
    const QByteArray url = QFile::encodeName(gitDir);
    if (git_remote_create_anonymous(&raw, mirror, url.constData()) != 0)
        return fail(ErrorCode::Internal, u"cannot read the repository: %1"_s.arg(lastGitError()), RepositoryField);
    RemotePtr remote(raw);
    const GitCredentials none;
    RemotePayload payload(cancel, &progress, none);
    git_fetch_options options;
    git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
    setRemoteCallbacks(options.callbacks, payload);
    options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
    options.update_fetchhead = 0;
    const QByteArray head = "+HEAD:" + QByteArray(PutRefs) + "head";
    const QByteArray tags = "+refs/tags/*:" + QByteArray(PutRefs) + "tags/*";
    const char *specs[] = {head.constData(), tags.constData()};
    const git_strarray refspecs{const_cast<char **>(specs), 2};
    if (git_remote_fetch(remote.get(), &refspecs, &options, nullptr) != 0) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"the put was cancelled"_s);
        return fail(ErrorCode::Invalid, u"cannot read the repository: %1"_s.arg(lastGitError()), RepositoryField);
    }
    const std::optional<git_oid> taken = refTarget(mirror, QByteArray(PutRefs) + "head", true);
    if (!taken)
        return fail(ErrorCode::Invalid, u"the repository has no commit at HEAD"_s, RepositoryField,
                    u"commit in the task before the put"_s);
    return *taken;
}

QStringList conflictedPaths(git_index *index)
{
    QStringList paths;
    git_index_conflict_iterator *raw = nullptr;
    if (git_index_conflict_iterator_new(&raw, index) != 0)
        return paths;
    const git_index_entry *ancestor = nullptr, *ours = nullptr, *theirs = nullptr;
    while (paths.size() < 10 && git_index_conflict_next(&ancestor, &ours, &theirs, raw) == 0) {
        const git_index_entry *any = ours ? ours : theirs ? theirs : ancestor;
        if (any)
            paths << QString::fromUtf8(any->path);
    }
    git_index_conflict_iterator_free(raw);
    return paths;
}

// A signature of the person in `from` (a commit's committer), dated now.
Result<SignaturePtr> nowAs(const git_signature *from)
{
    git_signature *raw = nullptr;
    if (git_signature_now(&raw, from->name, from->email) != 0)
        return fail(ErrorCode::Internal, u"cannot sign the commit: %1"_s.arg(lastGitError()));
    return SignaturePtr(raw);
}

Result<CommitPtr> lookupCommit(git_repository *repo, const git_oid &id)
{
    git_commit *raw = nullptr;
    if (git_commit_lookup(&raw, repo, &id) != 0)
        return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(oidText(id), lastGitError()));
    return CommitPtr(raw);
}

Result<AnnotatedPtr> annotated(git_repository *repo, const git_oid &id)
{
    git_annotated_commit *raw = nullptr;
    if (git_annotated_commit_lookup(&raw, repo, &id) != 0)
        return fail(ErrorCode::Internal, u"cannot read commit %1: %2"_s.arg(oidText(id), lastGitError()));
    return AnnotatedPtr(raw);
}

Error conflictError(const QString &doing, const QStringList &paths)
{
    return Error{ErrorCode::Conflict, u"%1 stopped at a conflict in %2"_s.arg(doing, paths.join(u", "_s)),
                 RepositoryField, u"resolve it in the task (fetch, rebase or merge, commit) and put again"_s};
}

// The task's commits replayed on top of the branch's tip, each keeping its author and committer.
Result<git_oid> rebaseOnto(git_repository *mirror, const git_oid &local, const git_oid &tip, const QString &what)
{
    Result<AnnotatedPtr> branch = annotated(mirror, local);
    if (!branch)
        return std::unexpected(branch.error());
    Result<AnnotatedPtr> upstream = annotated(mirror, tip);
    if (!upstream)
        return std::unexpected(upstream.error());
    git_rebase_options options;
    git_rebase_options_init(&options, GIT_REBASE_OPTIONS_VERSION);
    options.inmemory = 1;
    git_rebase *raw = nullptr;
    if (git_rebase_init(&raw, mirror, branch->get(), upstream->get(), nullptr, &options) != 0)
        return fail(ErrorCode::Internal, u"cannot rebase onto %1: %2"_s.arg(what, lastGitError()));
    RebasePtr rebase(raw);
    const QString doing = u"rebasing %1 onto %2 (%3)"_s.arg(shortId(local), what, shortId(tip));
    git_oid last = tip;
    git_rebase_operation *operation = nullptr;
    int rc = 0;
    while ((rc = git_rebase_next(&operation, rebase.get())) == 0) {
        git_index *rawIndex = nullptr;
        if (git_rebase_inmemory_index(&rawIndex, rebase.get()) != 0)
            return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
        IndexPtr index(rawIndex);
        if (git_index_has_conflicts(index.get())) {
            git_rebase_abort(rebase.get());
            return std::unexpected(conflictError(doing, conflictedPaths(index.get())));
        }
        Result<CommitPtr> original = lookupCommit(mirror, operation->id);
        if (!original)
            return std::unexpected(original.error());
        Result<SignaturePtr> committer = nowAs(git_commit_committer(original->get()));
        if (!committer)
            return std::unexpected(committer.error());
        git_oid made;
        const int committed = git_rebase_commit(&made, rebase.get(), nullptr, committer->get(), nullptr, nullptr);
        if (committed == GIT_EAPPLIED) {
            git_error_clear(); // already on the branch: nothing to replay
            continue;
        }
        if (committed != 0)
            return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
        last = made;
    }
    if (rc != GIT_ITEROVER)
        return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
    git_error_clear();
    git_rebase_finish(rebase.get(), nullptr);
    return last;
}

// A merge commit of the task's HEAD and the branch's tip, as `git pull` makes it.
Result<git_oid> mergeWith(git_repository *mirror, const git_oid &local, const git_oid &tip, const QString &branch,
                          const QString &repoText)
{
    Result<CommitPtr> ours = lookupCommit(mirror, local);
    if (!ours)
        return std::unexpected(ours.error());
    Result<CommitPtr> theirs = lookupCommit(mirror, tip);
    if (!theirs)
        return std::unexpected(theirs.error());
    const QString doing = u"merging branch %1 (%2) into %3"_s.arg(branch, shortId(tip), shortId(local));
    git_merge_options options;
    git_merge_options_init(&options, GIT_MERGE_OPTIONS_VERSION);
    git_index *rawIndex = nullptr;
    if (git_merge_commits(&rawIndex, mirror, ours->get(), theirs->get(), &options) != 0)
        return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
    IndexPtr index(rawIndex);
    if (git_index_has_conflicts(index.get()))
        return std::unexpected(conflictError(doing, conflictedPaths(index.get())));
    git_oid treeId;
    if (git_index_write_tree_to(&treeId, index.get(), mirror) != 0)
        return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
    git_tree *rawTree = nullptr;
    if (git_tree_lookup(&rawTree, mirror, &treeId) != 0)
        return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
    TreePtr tree(rawTree);
    Result<SignaturePtr> signature = nowAs(git_commit_committer(ours->get()));
    if (!signature)
        return std::unexpected(signature.error());
    const QByteArray message = u"Merge branch '%1' of %2\n"_s.arg(branch, repoText).toUtf8();
    const git_commit *parents[] = {ours->get(), theirs->get()};
    git_oid made;
    if (git_commit_create(&made, mirror, nullptr, signature->get(), signature->get(), "UTF-8", message.constData(),
                          tree.get(), 2, parents) != 0)
        return fail(ErrorCode::Internal, u"%1 failed: %2"_s.arg(doing, lastGitError()));
    return made;
}

// What goes to the branch: HEAD when it builds on the tip, else as the request says.
Result<git_oid> commitToPush(git_repository *mirror, const PushRequest &request, const git_oid &local,
                             const QString &repoText, const ProgressFn &progress)
{
    const std::optional<git_oid> tip = refTarget(mirror, "refs/heads/" + request.branch.toUtf8(), false);
    if (request.force || !tip || git_oid_equal(&*tip, &local) || git_graph_descendant_of(mirror, &local, &*tip) == 1)
        return local;
    const QString what = u"branch %1 of %2"_s.arg(request.branch, repoText);
    switch (request.whenMoved) {
    case PushRequest::Moved::Fail:
        return fail(ErrorCode::Conflict,
                    u"HEAD (%1) does not build on %2 (%3), which has commits it lacks"_s.arg(shortId(local), what,
                                                                                             shortId(*tip)),
                    RepositoryField,
                    u"set params.rebase or params.merge to build on top of it, or params.force to "
                    u"replace it"_s);
    case PushRequest::Moved::Rebase: {
        Result<git_oid> rebased = rebaseOnto(mirror, local, *tip, what);
        if (rebased && progress)
            progress(u"rebased %1 onto %2 (%3): %4"_s.arg(shortId(local), what, shortId(*tip), shortId(*rebased)));
        return rebased;
    }
    case PushRequest::Moved::Merge: {
        Result<git_oid> merged = mergeWith(mirror, local, *tip, request.branch, repoText);
        if (merged && progress)
            progress(u"merged %1 (%2) into %3: %4"_s.arg(what, shortId(*tip), shortId(local), shortId(*merged)));
        return merged;
    }
    }
    return local;
}

// The refspecs of the tags to push: the one asked for, at `at`, and the repository's own tags the
// remote lacks. A tag the remote holds at another commit is a Conflict.
Result<QStringList> tagRefspecs(git_repository *mirror, const PushRequest &request, const git_oid &at,
                                const QString &repoText)
{
    QStringList specs;
    if (!request.tag.isEmpty()) {
        const QByteArray ref = "refs/tags/" + request.tag.toUtf8();
        int valid = 0;
        if (Status ok = checkRef(request.tag);
            !ok || git_reference_name_is_valid(&valid, ref.constData()) != 0 || !valid)
            return fail(ErrorCode::Invalid, u"\"%1\" is not a tag name"_s.arg(request.tag), u"params.tag"_s);
        const std::optional<git_oid> existing = refTarget(mirror, ref, true);
        if (existing && !git_oid_equal(&*existing, &at))
            return fail(
                ErrorCode::Conflict,
                u"tag %1 of %2 is at %3, not at %4"_s.arg(request.tag, repoText, shortId(*existing), shortId(at)),
                u"params.tag"_s, u"choose another tag name; a published tag is not moved"_s);
        if (!existing) {
            git_oid target = at;
            if (!request.tagMessage.isEmpty()) {
                Result<CommitPtr> commit = lookupCommit(mirror, at);
                if (!commit)
                    return std::unexpected(commit.error());
                git_signature *rawTagger = nullptr;
                if (git_signature_now(&rawTagger, "Pando", "pando@localhost") != 0)
                    return fail(ErrorCode::Internal, u"cannot sign the tag: %1"_s.arg(lastGitError()));
                const SignaturePtr tagger(rawTagger);
                const QByteArray name = request.tag.toUtf8();
                const QByteArray message = request.tagMessage.toUtf8();
                if (git_tag_annotation_create(&target, mirror, name.constData(),
                                              reinterpret_cast<const git_object *>(commit->get()), tagger.get(),
                                              message.constData()) != 0)
                    return fail(ErrorCode::Internal, u"cannot make tag %1: %2"_s.arg(request.tag, lastGitError()));
            }
            const QByteArray source = QByteArray(PutRefs) + "tag";
            if (Status ok = setRef(mirror, source, target, "pando: put tag"); !ok)
                return std::unexpected(ok.error());
            specs << QString::fromUtf8(source + ':' + ref);
        }
    }
    const QList<QByteArray> own = refNames(mirror, QByteArray(PutRefs) + "tags/*");
    const qsizetype prefix = qsizetype(qstrlen(PutRefs)) + 5;
    for (const QByteArray &source : own) {
        const QByteArray name = source.mid(prefix);
        if (QString::fromUtf8(name) == request.tag)
            continue;
        const std::optional<git_oid> ours = refTarget(mirror, source, false);
        const std::optional<git_oid> theirs = refTarget(mirror, "refs/tags/" + name, false);
        if (!ours || (theirs && git_oid_equal(&*ours, &*theirs)))
            continue;
        if (theirs)
            return fail(
                ErrorCode::Conflict,
                u"the repository's tag %1 differs from the one %2 holds"_s.arg(QString::fromUtf8(name), repoText),
                RepositoryField, u"delete or rename the tag in the task, or get with clean_tags: true"_s);
        specs << QString::fromUtf8(source + ":refs/tags/" + name);
    }
    return specs;
}

} // namespace

Result<PushOutcome> pushFromRepository(git_repository *mirror, const QString &repoText, const QString &repo,
                                       const PushRequest &request, const GitCredentials &credentials,
                                       const CancelToken &cancel, const ProgressFn &progress)
{
    if (Status ok = checkRef(request.branch); !ok || request.branch.isEmpty())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a branch name"_s.arg(request.branch), u"branch"_s);
    Result<QString> gitDir = taskGitDir(request.repository);
    if (!gitDir)
        return std::unexpected(gitDir.error());
    const PutRefsGuard guard(mirror);
    Result<git_oid> local = takeObjects(mirror, *gitDir, cancel, progress);
    if (!local)
        return std::unexpected(local.error());

    PushOutcome outcome;
    git_oid pushed = *local;
    const QString branchText = u"branch "_s + request.branch;
    if (!request.onlyTag) {
        const QByteArray source = QByteArray(PutRefs) + "branch";
        for (int attempt = 1;; ++attempt) {
            Result<git_oid> target = commitToPush(mirror, request, *local, repoText, progress);
            if (!target)
                return std::unexpected(target.error());
            if (Status ok = setRef(mirror, source, *target, "pando: put"); !ok)
                return std::unexpected(ok.error());
            if (progress)
                progress(u"pushing %1 to %2 of %3"_s.arg(shortId(*target), branchText, repoText));
            const QString spec =
                (request.force ? u"+"_s : QString()) + QString::fromUtf8(source) + u":refs/heads/"_s + request.branch;
            Status sent = pushToOrigin(mirror, repoText, repo, {spec}, credentials, cancel, branchText);
            if (sent) {
                pushed = *target;
                break;
            }
            // The branch moved between the fetch and the push: build on it again, as asked.
            if (sent.error().code != ErrorCode::Conflict || request.whenMoved == PushRequest::Moved::Fail ||
                attempt == MaxAttempts) {
                Error error = sent.error();
                if (error.code == ErrorCode::Conflict && error.hint.isEmpty())
                    error.hint = request.whenMoved == PushRequest::Moved::Fail
                                     ? u"set params.rebase or params.merge to build on top of it"_s
                                     : u"the branch kept moving; run the put again"_s;
                return std::unexpected(error);
            }
            if (progress)
                progress(u"%1 moved meanwhile; fetching it again (attempt %2 of %3)"_s.arg(branchText)
                             .arg(attempt + 1)
                             .arg(MaxAttempts));
            if (Status fetched = fetchMirror(mirror, repoText, credentials, cancel, progress); !fetched)
                return std::unexpected(fetched.error());
        }
        // The mirror follows what was pushed, as the next fetch would make it.
        if (Status ok = setRef(mirror, "refs/heads/" + request.branch.toUtf8(), pushed, "pando: pushed"); !ok)
            return std::unexpected(ok.error());
        outcome.pushed = branchText;
    }
    const bool merged = request.whenMoved == PushRequest::Moved::Merge && !git_oid_equal(&pushed, &*local);
    outcome.commit = oidText(merged && request.returnUnmerged ? *local : pushed);

    Result<QStringList> tags = tagRefspecs(mirror, request, pushed, repoText);
    if (!tags)
        return std::unexpected(tags.error());
    if (!tags->isEmpty()) {
        QStringList names;
        for (const QString &spec : std::as_const(*tags))
            names << spec.section(u":refs/tags/"_s, 1);
        const QString what = (names.size() == 1 ? u"tag "_s : u"tags "_s) + names.join(u", "_s);
        if (progress)
            progress(u"pushing %1 to %2"_s.arg(what, repoText));
        if (Status sent = pushToOrigin(mirror, repoText, repo, *tags, credentials, cancel, what); !sent)
            return std::unexpected(sent.error());
        // The mirror follows; where it cannot, its next fetch does.
        for (const QString &spec : std::as_const(*tags)) {
            const std::optional<git_oid> target = refTarget(mirror, spec.section(u':', 0, 0).toUtf8(), false);
            if (!target || !setRef(mirror, spec.section(u':', 1).toUtf8(), *target, "pando: pushed"))
                git_error_clear();
        }
        outcome.pushed += (outcome.pushed.isEmpty() ? QString() : u" and "_s) + what;
    }
    if (outcome.pushed.isEmpty())
        outcome.pushed = u"nothing: every tag is already there"_s;
    return outcome;
}

} // namespace pando::adapters::git::detail
