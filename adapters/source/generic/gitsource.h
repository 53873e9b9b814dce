#pragma once
// The generic git source adapter: any git repository, read through gitkit's mirror cache
// (one bare mirror per URL below a cache directory, shared with the pipelines' git resource
// type): resolves a branch, tag or commit id and writes that commit's tree into a fresh
// directory. Works with file://, http(s):// and ssh:// remotes.
//
// Threading: as adapters::SourceProvider and GitMirrors: every call blocks and may be made from
// any thread.

#include "adapters/api/source.h"
#include "adapters/kit/gitkit/gitmirrors.h"

#include <QString>

namespace pando::adapters::git {

class GitSource : public SourceProvider {
public:
    // cacheRoot holds the bare mirrors (e.g. DATA/cache/git); it is created when missing.
    explicit GitSource(QString cacheRoot, const GitCredentials &credentials = {});
    ~GitSource() override;

    Status checkUrl(const QString &url) override;
    Result<SourceCheckout> checkout(const QString &repo, const QString &ref, const QString &workRoot,
                                    const SourceAccess &access, const CancelToken &cancel,
                                    const std::function<void(const QString &progress)> &progress) override;

    // Fetches repo and returns the full commit id ref resolves to, without writing a tree.
    // An empty ref is the remote's default branch.
    Result<QString> resolve(const QString &repo, const QString &ref, const SourceAccess &access,
                            const CancelToken &cancel = {},
                            const std::function<void(const QString &progress)> &progress = {}) override;

    // Where the mirror of repo lives (whether or not it was fetched yet).
    QString mirrorPath(const QString &repo) const;

private:
    QString m_cacheRoot;
    GitMirrors m_mirrors;
    GitMirrors m_anonymous; // the same cache, offering no credential of the install's
};

} // namespace pando::adapters::git
