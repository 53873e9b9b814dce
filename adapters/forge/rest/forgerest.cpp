#include "adapters/forge/rest/forgerest.h"

#include "adapters/forge/rest/forgeclient.h"

#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest {

namespace {

// The ForgeApi of an account no API can be asked for: every call says why.
class UnusableForgeApi final : public ForgeApi {
public:
    explicit UnusableForgeApi(Error error) : m_error(std::move(error)) {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &) override { return std::unexpected(m_error); }
    Result<QList<ForgeBranch>> branches(const RepoAddress &, const CancelToken &) override
    {
        return std::unexpected(m_error);
    }
    Result<QString> resolve(const RepoAddress &, const QString &, const CancelToken &) override
    {
        return std::unexpected(m_error);
    }
    Status setCommitStatus(const RepoAddress &, const CommitStatus &, const CancelToken &) override
    {
        return std::unexpected(m_error);
    }
    Result<ForgeWebhook> registerWebhook(const RepoAddress &, const QString &, const QByteArray &,
                                         const CancelToken &) override
    {
        return std::unexpected(m_error);
    }
    Result<QString> commentOnPullRequest(const RepoAddress &, int, const QString &, const CancelToken &) override
    {
        return std::unexpected(m_error);
    }
    Status editPullRequestComment(const RepoAddress &, int, const QString &, const QString &,
                                  const CancelToken &) override
    {
        return std::unexpected(m_error);
    }

private:
    Error m_error;
};

std::unique_ptr<ForgeApi> unusable(ErrorCode code, const QString &message, const QString &where, const QString &hint)
{
    return std::make_unique<UnusableForgeApi>(Error{code, message, where, hint});
}

bool isHostOf(const QString &host, QStringView domain)
{
    return host == domain || host == u"www."_s + domain;
}

} // namespace

namespace detail {

QString defaultApiBase(const ForgeScope &scope)
{
    QString base = scope.baseUrl;
    while (base.endsWith(u'/'))
        base.chop(1);
    const QUrl url(base);
    const QString host = url.host().toLower();
    const bool web = url.scheme().toLower() != u"ssh"_s;
    switch (scope.kind) {
    case ForgeKind::GitHub:
        if (isHostOf(host, u"github.com"))
            return u"https://api.github.com"_s;
        return web ? base + u"/api/v3"_s : QString();
    case ForgeKind::GitLab:
        return web ? base + u"/api/v4"_s : QString();
    case ForgeKind::Gitea:
        return web ? base + u"/api/v1"_s : QString();
    case ForgeKind::Bitbucket:
        if (isHostOf(host, u"bitbucket.org"))
            return u"https://api.bitbucket.org/2.0"_s;
        return web ? base : QString();
    case ForgeKind::AzureDevOps:
        // ORG.visualstudio.com is dev.azure.com/ORG under its older name; ssh.dev.azure.com/v3/ORG
        // is its ssh address.
        if (host.endsWith(u".visualstudio.com"_s) && host != u"vs-ssh.visualstudio.com"_s)
            return u"https://dev.azure.com/"_s + host.section(u'.', 0, 0);
        if (host == u"ssh.dev.azure.com"_s || host == u"vs-ssh.visualstudio.com"_s) {
            const QStringList path = url.path().split(u'/', Qt::SkipEmptyParts);
            const qsizetype org = !path.isEmpty() && path.first() == u"v3"_s ? 1 : 0;
            return path.size() > org ? u"https://dev.azure.com/"_s + path.at(org) : QString();
        }
        if (host == u"dev.azure.com"_s)
            return u"https://dev.azure.com"_s + url.path();
        return web ? base : QString();
    case ForgeKind::Generic:
    case ForgeKind::Registry:
        break;
    }
    return {};
}

bool isBitbucketCloud(const ForgeScope &scope)
{
    return scope.kind == ForgeKind::Bitbucket && isHostOf(QUrl(scope.baseUrl).host().toLower(), u"bitbucket.org");
}

} // namespace detail

std::unique_ptr<ForgeApi> makeApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    const ForgeScope &scope = account.scope;
    if (scope.kind == ForgeKind::Generic)
        return unusable(ErrorCode::Invalid,
                        u"a generic git host has no API Pando knows: it cannot list repositories or branches, set "
                        u"commit statuses, register webhooks or comment on pull requests there"_s,
                        u"kind"_s,
                        u"give the connection its forge's kind (github, gitlab, gitea, bitbucket, azure-devops) to "
                        u"use its API, or register the webhook on the host by hand"_s);
    if (scope.kind == ForgeKind::Registry)
        return unusable(ErrorCode::Invalid, u"an image registry is not a forge: it has no repositories or webhooks"_s,
                        u"kind"_s, u"use a forge's connection"_s);
    if (auto checked = checkForgeScope(scope); !checked)
        return std::make_unique<UnusableForgeApi>(checked.error());
    if (account.token.isEmpty())
        return unusable(ErrorCode::Invalid, u"the connection has no token, and the forge's API needs one"_s, u"token"_s,
                        u"give the connection an access token of the forge"_s);
    // The token goes into a header: a line break in it would end the header there.
    if (account.token.contains('\n') || account.token.contains('\r') || account.token.contains('\0'))
        return unusable(ErrorCode::Invalid, u"the token holds a line break or a NUL byte"_s, u"token"_s,
                        u"paste the token alone, without the end of its line"_s);
    ForgeRestOptions resolved = options;
    if (resolved.apiBase.isEmpty())
        resolved.apiBase = detail::defaultApiBase(scope);
    if (resolved.apiBase.isEmpty())
        return unusable(ErrorCode::Invalid,
                        u"%1 is an ssh:// address, which does not say where %2's web API is"_s.arg(
                            scope.baseUrl, forgeKindName(scope.kind)),
                        u"url"_s, u"use a connection with the forge's https:// address for its API"_s);
    const QUrl api(resolved.apiBase);
    if (!api.isValid() || api.host().isEmpty() || (api.scheme() != u"https"_s && api.scheme() != u"http"_s))
        return unusable(ErrorCode::Invalid,
                        u"\"%1\" is not an http(s) address for the forge's API"_s.arg(resolved.apiBase), u"api"_s, {});

    switch (scope.kind) {
    case ForgeKind::GitHub:
        return detail::makeGitHubApi(account, resolved);
    case ForgeKind::GitLab:
        return detail::makeGitLabApi(account, resolved);
    case ForgeKind::Gitea:
        return detail::makeGiteaApi(account, resolved);
    case ForgeKind::Bitbucket:
        if (detail::isBitbucketCloud(scope))
            return detail::makeBitbucketCloudApi(account, resolved);
        return detail::makeBitbucketDcApi(account, resolved);
    case ForgeKind::AzureDevOps:
        return detail::makeAzureDevOpsApi(account, resolved);
    case ForgeKind::Generic:
    case ForgeKind::Registry:
        break;
    }
    return unusable(ErrorCode::Internal, u"no forge API for kind %1"_s.arg(int(scope.kind)), u"kind"_s, {});
}

} // namespace pando::adapters::forgerest

namespace pando::adapters {

std::unique_ptr<ForgeApi> makeForgeApi(const ForgeAccount &account, const QString &apiBaseOverride)
{
    forgerest::ForgeRestOptions options;
    options.apiBase = apiBaseOverride;
    return forgerest::makeApi(account, options);
}

} // namespace pando::adapters
