#pragma once
// The generic git source adapter: fetches any git repository through libgit2 into one bare
// mirror per URL below a cache directory, resolves a branch, tag or commit id, and writes that
// commit's tree into a fresh directory. Works with file://, http(s):// and ssh:// remotes.
//
// Threading: every call blocks and may be made from any thread. Work on one repository's
// mirror is serialised by a per-mirror mutex shared by every GitSource in the process;
// different repositories proceed in parallel.

#include "adapters/api/source.h"

#include <QString>

namespace pando::adapters::git {

// Optional credentials for remotes that need them. Never logged.
struct GitCredentials {
    QString username;          // ssh user when the URL names none; https user sent with the token
    bool useSshAgent = true;   // try the ssh-agent first for ssh remotes
    QString sshPrivateKeyPath; // a key file tried after the agent; its ".pub" is used when present
    QString sshPassphrase;     // for the key file
    QString httpsToken;        // sent as the password for http(s) remotes
    // An OpenSSH known_hosts file (plain or hashed host names, "[host]:port" for other ports)
    // the ssh host key must be listed in; a host not listed, or listed with another key, is
    // refused. Empty: libgit2 checks the process user's ~/.ssh/known_hosts the same way.
    QString sshKnownHostsPath;
};

class GitSource : public SourceProvider {
public:
    // cacheRoot holds the bare mirrors (e.g. DATA/cache/git); it is created when missing.
    explicit GitSource(QString cacheRoot, GitCredentials credentials = {});
    ~GitSource() override;

    Status checkUrl(const QString &url) override;
    Result<SourceCheckout> checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                    const CancelToken &cancel,
                                    const std::function<void(const QString &progress)> &progress) override;

    // Fetches repo and returns the full commit id ref resolves to, without writing a tree.
    // An empty ref is the remote's default branch.
    Result<QString> resolve(const QString &repo, const QString &ref, const CancelToken &cancel = {},
                            const std::function<void(const QString &progress)> &progress = {});

    // Where the mirror of repo lives (whether or not it was fetched yet).
    QString mirrorPath(const QString &repo) const;

private:
    QString m_cacheRoot;
    GitCredentials m_credentials;
};

} // namespace pando::adapters::git
