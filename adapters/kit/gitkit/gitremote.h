#pragma once
// How gitkit's files talk to a repository's remote through libgit2: the callbacks a fetch or push
// runs (progress, cancel, credentials, ssh host keys, refused updates), fetching a mirror,
// resolving a branch, tag or commit id in it, and pushing refs from it. Internal to gitkit.

#include "gitmirrors.h"
#include "gitptr.h"

#include <QElapsedTimer>
#include <QStringList>

#include <functional>
#include <optional>

namespace pando::adapters::git::detail {

using ProgressFn = std::function<void(const QString &)>;

// What the callbacks read (the caller's cancel, progress and credentials) and leave behind.
struct RemotePayload {
    RemotePayload(const CancelToken &cancelToken, const ProgressFn *progressFn, const GitCredentials &creds,
                  int port = 22)
        : cancel(&cancelToken), progress(progressFn), credentials(&creds), sshPort(port)
    {
        clock.start();
    }
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
    QString rejected;                  // the refs a push's remote would not update, with its reasons
};

// The mirror's "origin" remote.
Result<RemotePtr> originOf(git_repository *mirror);
// Points callbacks at payload, which must outlive the fetch or push.
void setRemoteCallbacks(git_remote_callbacks &callbacks, RemotePayload &payload);

// The port an ssh remote is reached on; scp-like URLs have no port field and always use 22.
int sshPortOf(const QString &url);
// A ref a caller names: no leading '-', no whitespace or control characters, at most 255 long.
Status checkRef(const QString &ref);
// The commit ref (a branch, tag, full ref or commit id; empty: HEAD) leads to in repo.
Result<git_oid> resolveRef(git_repository *repo, const QString &ref, const QString &repoText);
QString oidText(const git_oid &oid);

// Opens (creating, or recreating when damaged) the bare mirror at path whose origin is url.
Result<RepoPtr> openMirror(const QString &path, const QString &url);
// Fetches every branch and tag of the mirror's origin, pruning what the remote no longer has.
Status fetchMirror(git_repository *repo, const QString &repoText, const GitCredentials &credentials,
                   const CancelToken &cancel, const ProgressFn &progress);
// Pushes refspecs ("refs/pando/x:refs/heads/main", '+' to force) to the mirror's origin (repo is
// its URL, repoText the same for people). A ref the remote refuses, or a non-fast-forward, is a
// Conflict naming `what` ("branch main").
Status pushToOrigin(git_repository *mirror, const QString &repoText, const QString &repo, const QStringList &refspecs,
                    const GitCredentials &credentials, const CancelToken &cancel, const QString &what);

// GitMirrors::clone and GitMirrors::push, run on the fetched mirror under its lock (gitclone.cpp,
// gitpush.cpp).
Result<QString> cloneFromMirror(git_repository *mirror, const QString &repoText, const CloneRequest &request,
                                const QString &target, const CancelToken &cancel, const ProgressFn &progress);
Result<PushOutcome> pushFromRepository(git_repository *mirror, const QString &repoText, const QString &repo,
                                       const PushRequest &request, const GitCredentials &credentials,
                                       const CancelToken &cancel, const ProgressFn &progress);

} // namespace pando::adapters::git::detail
