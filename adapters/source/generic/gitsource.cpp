#include "gitsource.h"

#include "adapters/kit/gitkit/gitstream.h"

namespace pando::adapters::git {

namespace {

// The install's credentials minus everything that is its identity: no agent, no key, no token.
// The known_hosts file stays: checking host keys protects whoever fetches.
GitCredentials anonymous(const GitCredentials &install)
{
    GitCredentials none;
    none.useSshAgent = false;
    none.sshKnownHostsPath = install.sshKnownHostsPath;
    return none;
}

// A connection's credential, and only it: no agent, no key or token of the install's.
GitCredentials connectionCredentials(const SourceCredential &credential)
{
    GitCredentials only;
    only.useSshAgent = false;
    only.username = credential.username;
    only.httpsToken = QString::fromUtf8(credential.token);
    only.sshPrivateKey = credential.sshPrivateKey;
    only.sshKnownHosts = credential.sshKnownHosts;
    return only;
}

} // namespace

GitSource::GitSource(QString cacheRoot, const GitCredentials &credentials)
    : m_cacheRoot(std::move(cacheRoot)), m_mirrors(m_cacheRoot, credentials),
      m_anonymous(m_cacheRoot, anonymous(credentials))
{}

GitSource::~GitSource() = default;

Status GitSource::checkUrl(const QString &url)
{
    return GitMirrors::checkUrl(url);
}

Result<SourceCheckout> GitSource::checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                           const SourceAccess &access, const CancelToken &cancel,
                                           const std::function<void(const QString &progress)> &progress)
{
    const InternalHostsRefused rule(!access.internalHosts);
    if (access.credential)
        return GitMirrors(m_cacheRoot, connectionCredentials(*access.credential))
            .checkout(repo, ref, workRoot, cancel, progress);
    GitMirrors &mirrors = access.installCredentials ? m_mirrors : m_anonymous;
    return mirrors.checkout(repo, ref, workRoot, cancel, progress);
}

Result<QString> GitSource::resolve(const QString &repo, const QString &ref, const SourceAccess &access,
                                   const CancelToken &cancel,
                                   const std::function<void(const QString &progress)> &progress)
{
    const InternalHostsRefused rule(!access.internalHosts);
    if (access.credential)
        return GitMirrors(m_cacheRoot, connectionCredentials(*access.credential)).resolve(repo, ref, cancel, progress);
    GitMirrors &mirrors = access.installCredentials ? m_mirrors : m_anonymous;
    return mirrors.resolve(repo, ref, cancel, progress);
}

QString GitSource::mirrorPath(const QString &repo) const
{
    return m_mirrors.mirrorPath(repo);
}

} // namespace pando::adapters::git
