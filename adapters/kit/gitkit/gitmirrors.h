#pragma once
// Package gitkit is what the git adapters share: one bare mirror per repository URL below a
// cache directory, fetched through libgit2 with the credentials given (never logged); a branch,
// tag or commit id resolved in it; one commit's tree written into a fresh directory; and the
// rules for repository URLs and SSH host keys. The git source adapter (deploys) and the git
// resource type (pipelines) both read repositories through it, so they share one mirror per
// repository. Works with file://, http(s):// and ssh:// remotes.
//
// Threading: every call blocks and may be made from any thread. Work on one repository's
// mirror is serialised by a per-mirror mutex shared by every GitMirrors in the process;
// different repositories proceed in parallel.

#include "adapters/api/source.h"

#include <QByteArray>
#include <QString>
#include <optional>

struct git_repository;

namespace pando::adapters::git {

// Optional credentials for remotes that need them. Never logged.
struct GitCredentials {
    QString username;          // ssh user when the URL names none; https user sent with the token
    bool useSshAgent = true;   // try the ssh-agent first for ssh remotes
    QString sshPrivateKeyPath; // a key file tried after the agent; its ".pub" is used when present
    QString sshPassphrase;     // for the key (file or in memory)
    QString httpsToken;        // sent as the password for http(s) remotes
    // An OpenSSH known_hosts file (plain or hashed host names, "[host]:port" for other ports)
    // the ssh host key must be listed in; a host not listed, or listed with another key, is
    // refused. Empty: libgit2 checks the process user's ~/.ssh/known_hosts the same way.
    QString sshKnownHostsPath;
    // A source connection's key and pinned host keys, held in memory (never written to disk):
    // used instead of sshPrivateKeyPath and sshKnownHostsPath when set.
    QByteArray sshPrivateKey;
    QByteArray sshKnownHosts;
};

// One file set on a branch by a new commit (the semver resource's git driver).
struct FileCommit {
    QString branch;
    QString path; // inside the repository: "version", "ci/VERSION"
    QByteArray content;
    QString message;
    QString authorName = QStringLiteral("Pando");
    QString authorEmail = QStringLiteral("pando@localhost");
};

// What a branch holds at one path.
struct FileAtRef {
    QString commit;
    std::optional<QByteArray> content; // none: no such file on the branch
};

// A repository a get leaves behind (the git resource's `in`).
struct CloneRequest {
    QString ref;            // the branch, tag or commit id checked out, HEAD detached at it
    QString branch;         // when set, a local branch of this name at the same commit
    QString originUrl;      // the clone's "origin": the repository's address, never with a password
    bool cleanTags = false; // the clone holds no tags
};

// What a put pushes from a repository a task left (the git resource's `out`).
struct PushRequest {
    QString repository; // a directory with a .git directory (no gitdir file, links or alternates)
    QString branch;     // HEAD goes to refs/heads/<branch>
    enum class Moved { Fail, Rebase, Merge };
    Moved whenMoved = Moved::Fail; // when the branch has commits HEAD lacks
    bool returnUnmerged = false;   // Merge: the outcome names HEAD, not the merge commit
    bool force = false;            // replace the branch whatever it holds
    QString tag;                   // when set, a tag of this name at the pushed commit
    QString tagMessage;            // when set, the tag is annotated with it
    bool onlyTag = false;          // push tags only, not the branch
};

struct PushOutcome {
    QString commit; // the commit the branch (or, with onlyTag, the tag) now names
    QString pushed; // what went: "branch main", "branch main and tag v1.2"
};

class GitMirrors {
public:
    // cacheRoot holds the bare mirrors (e.g. DATA/cache/git); it is created when missing.
    explicit GitMirrors(QString cacheRoot, GitCredentials credentials = {});

    // Whether url is a repository address Pando reads (see giturl.h).
    static Status checkUrl(const QString &url);

    // Fetches repo and returns the full commit id ref resolves to, without writing a tree.
    // An empty ref is the remote's default branch.
    Result<QString> resolve(const QString &repo, const QString &ref, const CancelToken &cancel = {},
                            const std::function<void(const QString &progress)> &progress = {});

    // Fetches repo and writes the tree of the commit ref resolves to into a fresh directory
    // below workRoot.
    Result<SourceCheckout> checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                    const CancelToken &cancel,
                                    const std::function<void(const QString &progress)> &progress);

    // Fetches repo and reads path at ref (a branch, tag or commit).
    Result<FileAtRef> readFile(const QString &repo, const QString &ref, const QString &path,
                               const CancelToken &cancel = {});

    // Fetches repo, commits the file on top of the branch's tip (which must be expectedTip when
    // that is set), and pushes the branch, fast-forward only. Returns the new commit's id; a
    // Conflict when the branch moved (on the remote, or since expectedTip): read and try again.
    Result<QString> commitFile(const QString &repo, const FileCommit &change, const QString &expectedTip = {},
                               const CancelToken &cancel = {});

    // Fetches repo and makes target (existing, empty) a repository of its own: the mirror's objects
    // copied, never linked (what a task does to the copy never reaches the mirror); the commit's
    // tree written with the checks checkout() makes; HEAD detached at it and an index matching it.
    // Returns the commit id.
    Result<QString> clone(const QString &repo, const CloneRequest &request, const QString &target,
                          const CancelToken &cancel = {},
                          const std::function<void(const QString &progress)> &progress = {});

    // Fetches repo, copies the objects of request.repository's HEAD (and its tags) into the mirror
    // and pushes them: the branch fast-forward only unless forced (a moved branch is rebased onto,
    // merged, or a Conflict, as asked, and tried again when it moves meanwhile), then the tag and
    // any tags the remote lacks. A tag the remote holds at another commit is a Conflict.
    Result<PushOutcome> push(const QString &repo, const PushRequest &request, const CancelToken &cancel = {},
                             const std::function<void(const QString &progress)> &progress = {});

    // Where the mirror of repo lives (whether or not it was fetched yet).
    QString mirrorPath(const QString &repo) const;

private:
    Status makeCacheRoot() const;
    // Checks repo, fetches its mirror and runs work on it, holding the mirror's lock throughout.
    template<class T>
    Result<T> onFetchedMirror(const QString &repo, const CancelToken &cancel,
                              const std::function<void(const QString &)> &progress,
                              const std::function<Result<T>(git_repository *git, const QString &repoText)> &work);

    QString m_cacheRoot;
    GitCredentials m_credentials;
};

} // namespace pando::adapters::git
