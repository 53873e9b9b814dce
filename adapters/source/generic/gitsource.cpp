#include "gitsource.h"

namespace pando::adapters::git {

GitSource::GitSource(QString cacheRoot, GitCredentials credentials)
    : m_mirrors(std::move(cacheRoot), std::move(credentials))
{}

GitSource::~GitSource() = default;

Status GitSource::checkUrl(const QString &url)
{
    return GitMirrors::checkUrl(url);
}

Result<SourceCheckout> GitSource::checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                           const CancelToken &cancel,
                                           const std::function<void(const QString &progress)> &progress)
{
    return m_mirrors.checkout(repo, ref, workRoot, cancel, progress);
}

Result<QString> GitSource::resolve(const QString &repo, const QString &ref, const CancelToken &cancel,
                                   const std::function<void(const QString &progress)> &progress)
{
    return m_mirrors.resolve(repo, ref, cancel, progress);
}

QString GitSource::mirrorPath(const QString &repo) const
{
    return m_mirrors.mirrorPath(repo);
}

} // namespace pando::adapters::git
