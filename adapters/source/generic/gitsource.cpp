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

} // namespace

GitSource::GitSource(QString cacheRoot, const GitCredentials &credentials)
    : m_mirrors(cacheRoot, credentials), m_anonymous(std::move(cacheRoot), anonymous(credentials))
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
    GitMirrors &mirrors = access.installCredentials ? m_mirrors : m_anonymous;
    const InternalHostsRefused rule(!access.internalHosts);
    return mirrors.checkout(repo, ref, workRoot, cancel, progress);
}

Result<QString> GitSource::resolve(const QString &repo, const QString &ref, const SourceAccess &access,
                                   const CancelToken &cancel,
                                   const std::function<void(const QString &progress)> &progress)
{
    GitMirrors &mirrors = access.installCredentials ? m_mirrors : m_anonymous;
    const InternalHostsRefused rule(!access.internalHosts);
    return mirrors.resolve(repo, ref, cancel, progress);
}

QString GitSource::mirrorPath(const QString &repo) const
{
    return m_mirrors.mirrorPath(repo);
}

} // namespace pando::adapters::git
