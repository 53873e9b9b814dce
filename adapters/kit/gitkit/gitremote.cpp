#include "gitremote.h"

#include "gittree.h"
#include "giturl.h"
#include "knownhosts.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::git::detail {

namespace {

void report(const RemotePayload &payload, const QString &line)
{
    if (payload.progress && *payload.progress)
        (*payload.progress)(line);
}

int onTransferProgress(const git_indexer_progress *stats, void *data)
{
    auto *payload = static_cast<RemotePayload *>(data);
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
    return static_cast<RemotePayload *>(data)->cancel->isCancelled() ? GIT_EUSER : 0;
}

int onCredentials(git_credential **out, const char *, const char *usernameFromUrl, unsigned int allowed, void *data)
{
    auto *payload = static_cast<RemotePayload *>(data);
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
            const QByteArray passphrase = creds.sshPassphrase.toUtf8();
            return git_credential_ssh_key_memory_new(out, user.constData(), nullptr, creds.sshPrivateKey.constData(),
                                                     passphrase.isEmpty() ? nullptr : passphrase.constData());
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
    auto *payload = static_cast<RemotePayload *>(data);
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

int onPushUpdate(const char *refname, const char *status, void *data)
{
    // A ref the remote would not update, with its reason: "non-fast-forward", "already exists".
    if (status) {
        QString &rejected = static_cast<RemotePayload *>(data)->rejected;
        rejected += (rejected.isEmpty() ? QString() : u"; "_s) + QString::fromUtf8(refname ? refname : "") + u": "_s +
                    QString::fromUtf8(status);
    }
    return 0;
}

} // namespace

void setRemoteCallbacks(git_remote_callbacks &callbacks, RemotePayload &payload)
{
    callbacks.transfer_progress = onTransferProgress;
    callbacks.sideband_progress = onSideband;
    callbacks.credentials = onCredentials;
    callbacks.certificate_check = onCertificate;
    callbacks.push_update_reference = onPushUpdate;
    callbacks.payload = &payload;
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

namespace {

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

} // namespace

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

Result<RemotePtr> originOf(git_repository *mirror)
{
    git_remote *raw = nullptr;
    if (git_remote_lookup(&raw, mirror, "origin") != 0)
        return fail(ErrorCode::Internal, u"the mirror has no remote: %1"_s.arg(lastGitError()));
    return RemotePtr(raw);
}

Status fetchMirror(git_repository *repo, const QString &repoText, const GitCredentials &credentials,
                   const CancelToken &cancel, const ProgressFn &progress)
{
    Result<RemotePtr> origin = originOf(repo);
    if (!origin)
        return std::unexpected(origin.error());
    git_remote *remote = origin->get();
    RemotePayload payload(cancel, &progress, credentials, sshPortOf(QString::fromUtf8(git_remote_url(remote))));

    git_fetch_options options;
    git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
    setRemoteCallbacks(options.callbacks, payload);
    options.prune = GIT_FETCH_PRUNE;
    options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
    options.update_fetchhead = 0;

    report(payload, u"fetching %1"_s.arg(repoText));
    const int rc = git_remote_fetch(remote, nullptr, &options, "pando: fetch");
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
    if (git_remote_default_branch(&head, remote) == 0) {
        git_repository_set_head(repo, head.ptr);
        git_buf_dispose(&head);
    }
    git_error_clear();
    return {};
}

Status pushToOrigin(git_repository *git, const QString &repoText, const QString &repo, const QStringList &refspecs,
                    const GitCredentials &credentials, const CancelToken &cancel, const QString &what)
{
    Result<RemotePtr> origin = originOf(git);
    if (!origin)
        return std::unexpected(origin.error());
    RemotePayload payload(cancel, nullptr, credentials, sshPortOf(repo));
    git_push_options options;
    git_push_options_init(&options, GIT_PUSH_OPTIONS_VERSION);
    setRemoteCallbacks(options.callbacks, payload);
    QList<QByteArray> specs;
    for (const QString &spec : refspecs)
        specs << spec.toUtf8();
    std::vector<char *> pointers;
    for (QByteArray &spec : specs)
        pointers.push_back(spec.data());
    const git_strarray array{pointers.data(), pointers.size()};
    const int rc = git_remote_push(origin->get(), &array, &options);
    if (rc != 0) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"pushing to %1 was cancelled"_s.arg(repoText));
        const QString why = lastGitError();
        if (payload.hostKeyError) {
            Error error = *payload.hostKeyError;
            error.message = u"cannot push to %1: %2"_s.arg(repoText, error.message);
            return std::unexpected(error);
        }
        if (payload.authFailed || rc == GIT_EAUTH)
            return fail(ErrorCode::Unauthorized, u"cannot push to %1: %2"_s.arg(repoText, why), {},
                        u"the remote wants a key or password that may write to it"_s);
        // Moved since the fetch: the remote's tip is a commit the mirror lacks (libgit2 says so
        // before sending), or the remote refused a non-fast-forward update.
        if (rc == GIT_ENONFASTFORWARD || why.contains(u"non-fast-forward"_s) || why.contains(u"fast forward"_s))
            return fail(ErrorCode::Conflict, u"%1 of %2 moved: %3"_s.arg(what, repoText, why));
        return fail(ErrorCode::Unavailable, u"cannot push to %1: %2"_s.arg(repoText, why));
    }
    if (!payload.rejected.isEmpty())
        return fail(ErrorCode::Conflict, u"%1 refused the update of %2: %3"_s.arg(repoText, what, payload.rejected));
    return {};
}

} // namespace pando::adapters::git::detail
