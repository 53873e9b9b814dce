#include "gitmirrors.h"

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

using ProgressFn = std::function<void(const QString &)>;

struct FetchPayload {
    const CancelToken *cancel = nullptr;
    const ProgressFn *progress = nullptr;
    const GitCredentials *credentials = nullptr;
    QElapsedTimer clock;
    qint64 lastReportMs = -1;
    bool reportedAll = false;
    int credentialAttempts = 0;
    bool triedAgent = false;
    bool triedKey = false;
    bool triedToken = false;
    bool authFailed = false;
    int sshPort = 22;                  // for the known_hosts lookup: the callback is told the host only
    std::optional<Error> hostKeyError; // why the ssh host key was refused
};

void report(const FetchPayload &payload, const QString &line)
{
    if (payload.progress && *payload.progress)
        (*payload.progress)(line);
}

int onTransferProgress(const git_indexer_progress *stats, void *data)
{
    auto *payload = static_cast<FetchPayload *>(data);
    if (payload->cancel->isCancelled())
        return GIT_EUSER;
    const qint64 now = payload->clock.elapsed();
    const bool done = stats->total_objects > 0 && stats->received_objects == stats->total_objects;
    // A line every half second is plenty for a person; the callback fires per object.
    if ((done && !payload->reportedAll) || payload->lastReportMs < 0 || now - payload->lastReportMs >= 500) {
        payload->lastReportMs = now;
        payload->reportedAll = payload->reportedAll || done;
        QString line = u"received %1/%2 objects (%3 KiB)"_s.arg(stats->received_objects)
                           .arg(stats->total_objects)
                           .arg(stats->received_bytes / 1024);
        if (stats->total_deltas > 0)
            line += u", resolved %1/%2 deltas"_s.arg(stats->indexed_deltas).arg(stats->total_deltas);
        report(*payload, line);
    }
    return 0;
}

int onSideband(const char *, int, void *data)
{
    // The remote's own chatter is not forwarded (it is untrusted text); it is a cancel point.
    return static_cast<FetchPayload *>(data)->cancel->isCancelled() ? GIT_EUSER : 0;
}

int onCredentials(git_credential **out, const char *, const char *usernameFromUrl, unsigned int allowed, void *data)
{
    auto *payload = static_cast<FetchPayload *>(data);
    const GitCredentials &creds = *payload->credentials;
    // libgit2 asks again after each refusal; a bounded number of tries ends the loop.
    if (++payload->credentialAttempts > 4) {
        payload->authFailed = true;
        git_error_set_str(GIT_ERROR_NET, "the remote refused every credential offered");
        return GIT_EAUTH;
    }
    QByteArray user = usernameFromUrl && *usernameFromUrl ? QByteArray(usernameFromUrl) : creds.username.toUtf8();
    if (allowed & GIT_CREDENTIAL_USERNAME)
        return git_credential_username_new(out, user.isEmpty() ? "git" : user.constData());
    if (allowed & GIT_CREDENTIAL_SSH_KEY) {
        if (user.isEmpty())
            user = "git";
        if (creds.useSshAgent && !payload->triedAgent) {
            payload->triedAgent = true;
            if (git_credential_ssh_key_from_agent(out, user.constData()) == 0)
                return 0;
        }
        if (!creds.sshPrivateKey.isEmpty() && !payload->triedKey) {
            payload->triedKey = true;
            return git_credential_ssh_key_memory_new(out, user.constData(), nullptr, creds.sshPrivateKey.constData(),
                                                     nullptr);
        }
        if (!creds.sshPrivateKeyPath.isEmpty() && !payload->triedKey) {
            payload->triedKey = true;
            const QByteArray key = QFile::encodeName(creds.sshPrivateKeyPath);
            const QString pub = creds.sshPrivateKeyPath + u".pub"_s;
            const QByteArray pubKey = QFileInfo::exists(pub) ? QFile::encodeName(pub) : QByteArray();
            const QByteArray passphrase = creds.sshPassphrase.toUtf8();
            return git_credential_ssh_key_new(out, user.constData(), pubKey.isEmpty() ? nullptr : pubKey.constData(),
                                              key.constData(), passphrase.isEmpty() ? nullptr : passphrase.constData());
        }
    }
    if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && !creds.httpsToken.isEmpty() && !payload->triedToken) {
        payload->triedToken = true;
        const QByteArray token = creds.httpsToken.toUtf8();
        return git_credential_userpass_plaintext_new(out, user.isEmpty() ? "x-access-token" : user.constData(),
                                                     token.constData());
    }
    payload->authFailed = true;
    git_error_set_str(GIT_ERROR_NET, "the remote asks for credentials and none (or no more) are configured");
    return GIT_EAUTH;
}

int onCertificate(git_cert *cert, int valid, const char *host, void *data)
{
    auto *payload = static_cast<FetchPayload *>(data);
    if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2)
        return GIT_PASSTHROUGH; // TLS: libgit2's own verification against the system CAs
    const auto *hostKey = reinterpret_cast<const git_cert_hostkey *>(cert);
    const QString hostName = QString::fromUtf8(host ? host : "");
    const QString &knownHosts = payload->credentials->sshKnownHostsPath;
    const QByteArray &pinned = payload->credentials->sshKnownHosts;
    if (!pinned.isEmpty()) {
        const bool readable = (hostKey->type & GIT_CERT_SSH_RAW) && hostKey->hostkey;
        const QByteArray raw =
            readable ? QByteArray(hostKey->hostkey, static_cast<qsizetype>(hostKey->hostkey_len)) : QByteArray();
        Status known = readable ? detail::checkKnownHostIn(pinned, hostName, payload->sshPort, raw,
                                                           u"the connection's pinned host keys"_s)
                                : fail(ErrorCode::Unauthorized,
                                       u"the ssh host key of %1 could not be read to check it"_s.arg(hostName));
        if (known)
            return 0;
        payload->hostKeyError = known.error();
    } else if (knownHosts.isEmpty()) {
        // libgit2 has already looked the key up in the user's ~/.ssh/known_hosts.
        if (valid)
            return 0;
        payload->hostKeyError = Error{ErrorCode::Unauthorized,
                                      u"the ssh host key of %1 is not listed in ~/.ssh/known_hosts of the user "
                                      u"running Pando, or does not match the key listed there"_s.arg(hostName),
                                      {},
                                      u"add the host with ssh-keyscan after checking its fingerprint, or configure "
                                      u"a known_hosts file"_s};
    } else if (!(hostKey->type & GIT_CERT_SSH_RAW) || !hostKey->hostkey) {
        payload->hostKeyError =
            Error{ErrorCode::Unauthorized, u"the ssh host key of %1 could not be read to check it"_s.arg(hostName)};
    } else {
        const QByteArray raw(hostKey->hostkey, static_cast<qsizetype>(hostKey->hostkey_len));
        Status known = detail::checkKnownHost(knownHosts, hostName, payload->sshPort, raw);
        if (known)
            return 0;
        payload->hostKeyError = known.error();
    }
    git_error_set_str(GIT_ERROR_SSH, "the ssh host key was refused");
    return GIT_ECERTIFICATE;
}

// The port an ssh remote is reached on; scp-like URLs have no port field and always use 22.
int sshPortOf(const QString &url)
{
    if (!url.contains(u"://"_s))
        return 22;
    return QUrl(url).port(22);
}

Status checkRef(const QString &ref)
{
    if (ref.size() > 255)
        return fail(ErrorCode::Invalid, u"the ref is longer than 255 characters"_s, u"ref"_s);
    if (ref.startsWith(u'-'))
        return fail(ErrorCode::Invalid, u"the ref \"%1\" starts with '-'"_s.arg(ref), u"ref"_s);
    for (const QChar c : ref) {
        if (c.isSpace() || c.unicode() < 0x20 || c.unicode() == 0x7f)
            return fail(ErrorCode::Invalid, u"the ref contains whitespace or a control character"_s, u"ref"_s);
    }
    return {};
}

// A few branch and tag names, for the hint of a NotFound.
QString knownRefsHint(git_repository *repo)
{
    git_strarray names{};
    if (git_reference_list(&names, repo) != 0)
        return {};
    QStringList branches, tags;
    for (size_t i = 0; i < names.count; ++i) {
        const QString name = QString::fromUtf8(names.strings[i]);
        if (name.startsWith(u"refs/heads/"_s) && branches.size() < 5)
            branches << name.mid(11);
        else if (name.startsWith(u"refs/tags/"_s) && tags.size() < 5)
            tags << name.mid(10);
    }
    git_strarray_dispose(&names);
    QString hint;
    if (!branches.isEmpty())
        hint = u"branches include: "_s + branches.join(u", "_s);
    if (!tags.isEmpty())
        hint += (hint.isEmpty() ? QString() : u"; "_s) + u"tags include: "_s + tags.join(u", "_s);
    return hint.isEmpty() ? u"the repository has no branches or tags"_s : hint;
}

Result<git_oid> peelToCommit(git_object *object)
{
    git_object *raw = nullptr;
    if (git_object_peel(&raw, object, GIT_OBJECT_COMMIT) != 0)
        return fail(ErrorCode::Invalid, u"the ref does not lead to a commit: %1"_s.arg(lastGitError()), u"ref"_s);
    ObjectPtr commit(raw);
    return *git_object_id(commit.get());
}

Result<git_oid> resolveRef(git_repository *repo, const QString &ref, const QString &repoText)
{
    if (Status ok = checkRef(ref); !ok)
        return std::unexpected(ok.error());
    QStringList candidates;
    if (ref.isEmpty())
        candidates << u"HEAD"_s;
    else if (ref.startsWith(u"refs/"_s))
        candidates << ref;
    else
        candidates << u"refs/heads/"_s + ref << u"refs/tags/"_s + ref;
    for (const QString &name : std::as_const(candidates)) {
        const QByteArray utf8 = name.toUtf8();
        git_reference *rawRef = nullptr;
        if (git_reference_lookup(&rawRef, repo, utf8.constData()) != 0)
            continue;
        ReferencePtr reference(rawRef);
        git_object *rawObject = nullptr;
        // Annotated tags peel to the commit they point at.
        if (git_reference_peel(&rawObject, reference.get(), GIT_OBJECT_COMMIT) != 0)
            return fail(ErrorCode::Invalid, u"\"%1\" does not lead to a commit: %2"_s.arg(name, lastGitError()),
                        u"ref"_s);
        ObjectPtr object(rawObject);
        return *git_object_id(object.get());
    }
    static const QRegularExpression hexRe(u"^[0-9a-fA-F]{7,40}$"_s);
    if (hexRe.match(ref).hasMatch()) {
        const QByteArray hex = ref.toLatin1();
        git_oid prefix;
        if (git_oid_fromstrn(&prefix, hex.constData(), static_cast<size_t>(hex.size())) == 0) {
            git_object *rawObject = nullptr;
            const int rc =
                git_object_lookup_prefix(&rawObject, repo, &prefix, static_cast<size_t>(hex.size()), GIT_OBJECT_ANY);
            if (rc == GIT_EAMBIGUOUS)
                return fail(ErrorCode::Invalid,
                            u"the abbreviated id \"%1\" matches more than one object in %2"_s.arg(ref, repoText),
                            u"ref"_s, u"give more digits of the commit id"_s);
            if (rc == 0) {
                ObjectPtr object(rawObject);
                return peelToCommit(object.get());
            }
        }
    }
    if (ref.isEmpty())
        return fail(ErrorCode::NotFound, u"%1 has no default branch"_s.arg(repoText), u"ref"_s, knownRefsHint(repo));
    return fail(ErrorCode::NotFound, u"ref \"%1\" not found in %2"_s.arg(ref, repoText), u"ref"_s, knownRefsHint(repo));
}

QString oidText(const git_oid &oid)
{
    char buffer[GIT_OID_HEXSZ + 1] = {};
    git_oid_tostr(buffer, sizeof buffer, &oid);
    return QString::fromLatin1(buffer);
}

Result<RepoPtr> openMirror(const QString &path, const QString &url)
{
    const QByteArray nativePath = QFile::encodeName(path);
    git_repository *raw = nullptr;
    if (git_repository_open_bare(&raw, nativePath.constData()) != 0) {
        if (QFileInfo::exists(path) && !QDir(path).removeRecursively())
            return fail(ErrorCode::Internal, u"the mirror is damaged and cannot be removed"_s, path);
        if (git_repository_init(&raw, nativePath.constData(), 1) != 0)
            return fail(ErrorCode::Internal, u"cannot create the mirror: %1"_s.arg(lastGitError()), path);
    }
    RepoPtr repo(raw);
    const QByteArray urlUtf8 = url.toUtf8();
    git_remote *rawRemote = nullptr;
    if (git_remote_lookup(&rawRemote, repo.get(), "origin") == 0) {
        RemotePtr remote(rawRemote);
        if (QString::fromUtf8(git_remote_url(remote.get())) != url &&
            git_remote_set_url(repo.get(), "origin", urlUtf8.constData()) != 0)
            return fail(ErrorCode::Internal, u"cannot set the mirror's remote: %1"_s.arg(lastGitError()), path);
    } else {
        if (git_remote_create_with_fetchspec(&rawRemote, repo.get(), "origin", urlUtf8.constData(),
                                             "+refs/heads/*:refs/heads/*") != 0)
            return fail(ErrorCode::Internal, u"cannot add the mirror's remote: %1"_s.arg(lastGitError()), path);
        git_remote_free(rawRemote);
        if (git_remote_add_fetch(repo.get(), "origin", "+refs/tags/*:refs/tags/*") != 0)
            return fail(ErrorCode::Internal, u"cannot add the mirror's tag refspec: %1"_s.arg(lastGitError()), path);
    }
    return repo;
}

Status fetchMirror(git_repository *repo, const QString &repoText, const GitCredentials &credentials,
                   const CancelToken &cancel, const ProgressFn &progress)
{
    git_remote *rawRemote = nullptr;
    if (git_remote_lookup(&rawRemote, repo, "origin") != 0)
        return fail(ErrorCode::Internal, u"the mirror has no remote: %1"_s.arg(lastGitError()));
    RemotePtr remote(rawRemote);

    FetchPayload payload;
    payload.cancel = &cancel;
    payload.progress = &progress;
    payload.credentials = &credentials;
    payload.sshPort = sshPortOf(QString::fromUtf8(git_remote_url(remote.get())));
    payload.clock.start();

    git_fetch_options options;
    git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
    options.callbacks.transfer_progress = onTransferProgress;
    options.callbacks.sideband_progress = onSideband;
    options.callbacks.credentials = onCredentials;
    options.callbacks.certificate_check = onCertificate;
    options.callbacks.payload = &payload;
    options.prune = GIT_FETCH_PRUNE;
    options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
    options.update_fetchhead = 0;

    report(payload, u"fetching %1"_s.arg(repoText));
    const int rc = git_remote_fetch(remote.get(), nullptr, &options, "pando: fetch");
    if (rc != 0) {
        if (cancel.isCancelled() || rc == GIT_EUSER)
            return fail(ErrorCode::Cancelled, u"fetching %1 was cancelled"_s.arg(repoText));
        if (payload.hostKeyError) {
            Error error = *payload.hostKeyError;
            error.message = u"cannot fetch %1: %2"_s.arg(repoText, error.message);
            return std::unexpected(error);
        }
        if (payload.authFailed || rc == GIT_EAUTH)
            return fail(ErrorCode::Unauthorized, u"cannot fetch %1: %2"_s.arg(repoText, lastGitError()), {},
                        u"the remote wants a token or key that may read it: none was offered, or the one offered was "
                        u"refused"_s);
        return fail(ErrorCode::Unavailable, u"cannot fetch %1: %2"_s.arg(repoText, lastGitError()));
    }
    // Point the mirror's HEAD at the remote's default branch so an empty ref means "default".
    git_buf head = GIT_BUF_INIT;
    if (git_remote_default_branch(&head, remote.get()) == 0) {
        git_repository_set_head(repo, head.ptr);
        git_buf_dispose(&head);
    }
    git_error_clear();
    return {};
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
    Result<RepoPtr> mirror = openMirror(path, repo);
    if (!mirror)
        return std::unexpected(mirror.error());
    if (Status ok = fetchMirror(mirror->get(), repoText, m_credentials, cancel, progress); !ok)
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

struct PushPayload {
    FetchPayload fetch;
    QString rejected; // what the remote said when it refused the update
};

int onPushUpdate(const char *, const char *status, void *data)
{
    if (status)
        static_cast<PushPayload *>(data)->rejected = QString::fromUtf8(status);
    return 0;
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
    git_remote *rawRemote = nullptr;
    if (git_remote_lookup(&rawRemote, git, "origin") != 0)
        return fail(ErrorCode::Internal, u"the mirror has no remote: %1"_s.arg(lastGitError()));
    RemotePtr remote(rawRemote);
    PushPayload payload;
    payload.fetch.cancel = &cancel;
    payload.fetch.credentials = &credentials;
    payload.fetch.sshPort = sshPortOf(repo);
    payload.fetch.clock.start();
    git_push_options options;
    git_push_options_init(&options, GIT_PUSH_OPTIONS_VERSION);
    options.callbacks.credentials = [](git_credential **out, const char *url, const char *user, unsigned int allowed,
                                       void *data) {
        return onCredentials(out, url, user, allowed, &static_cast<PushPayload *>(data)->fetch);
    };
    options.callbacks.certificate_check = [](git_cert *cert, int valid, const char *host, void *data) {
        return onCertificate(cert, valid, host, &static_cast<PushPayload *>(data)->fetch);
    };
    options.callbacks.push_update_reference = onPushUpdate;
    options.callbacks.payload = &payload;
    const QByteArray refspec = pushRef + ":refs/heads/" + change.branch.toUtf8();
    const char *specs[] = {refspec.constData()};
    const git_strarray refspecs{const_cast<char **>(specs), 1};
    const int rc = git_remote_push(remote.get(), &refspecs, &options);
    git_reference_delete(pushReference.get());
    if (rc != 0) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"pushing to %1 was cancelled"_s.arg(repoText));
        const QString why = lastGitError();
        if (payload.fetch.hostKeyError) {
            Error error = *payload.fetch.hostKeyError;
            error.message = u"cannot push to %1: %2"_s.arg(repoText, error.message);
            return std::unexpected(error);
        }
        if (payload.fetch.authFailed || rc == GIT_EAUTH)
            return fail(ErrorCode::Unauthorized, u"cannot push to %1: %2"_s.arg(repoText, why), {},
                        u"the remote wants a key or password that may write to it"_s);
        if (why.contains(u"non-fast-forward"_s) || why.contains(u"fast forward"_s))
            return fail(ErrorCode::Conflict, u"branch %1 of %2 moved: %3"_s.arg(change.branch, repoText, why));
        return fail(ErrorCode::Unavailable, u"cannot push to %1: %2"_s.arg(repoText, why));
    }
    if (!payload.rejected.isEmpty())
        return fail(ErrorCode::Conflict,
                    u"%1 refused the update of branch %2: %3"_s.arg(repoText, change.branch, payload.rejected));
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
    if (Status ok = checkRef(change.branch); !ok || change.branch.isEmpty())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a branch name"_s.arg(change.branch), u"branch"_s);
    return onFetchedMirror<QString>(repo, cancel, {}, [&](git_repository *git, const QString &repoText) {
        return commitAndPush(git, repoText, repo, change, expectedTip, m_credentials, cancel);
    });
}

} // namespace pando::adapters::git
