// Bitbucket Cloud's REST API (2.0): an app password with its account's user name as HTTP basic
// authentication, or an access token (a repository's, workspace's or an OAuth consumer's) as a
// Bearer header when the connection names no user or x-token-auth, the user git takes one with;
// pages through the "next" address in the body.

#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

QString bitbucketCloudScopeHint(Purpose purpose)
{
    switch (purpose) {
    case Purpose::ListRepositories:
    case Purpose::ReadRepository:
        return u"an app password needs Repositories: Read (an access token the repository scope)"_s;
    case Purpose::SetStatus:
        return u"an app password needs Repositories: Read and Write (an access token repository:write)"_s;
    case Purpose::ManageHooks:
        return u"an app password needs Webhooks: Read and write (an access token the webhook scope), and its "
               u"account admin access to the repository"_s;
    case Purpose::Comment:
        return u"an app password needs Pull requests: Read (an access token the pullrequest scope), and its "
               u"account read access to the repository"_s;
    }
    return {};
}

// Bitbucket Cloud does not document a limit on a comment; Data Center's (under 32768 characters)
// keeps one to a size Bitbucket takes.
constexpr qsizetype BitbucketCloudCommentLimit = 32767;

// Bitbucket has no separate error state; a deploy that could not run failed the commit.
QString bitbucketCloudState(CommitState state)
{
    switch (state) {
    case CommitState::Pending:
        return u"INPROGRESS"_s;
    case CommitState::Success:
        return u"SUCCESSFUL"_s;
    case CommitState::Failure:
    case CommitState::Error:
        return u"FAILED"_s;
    }
    return u"FAILED"_s;
}

QString bitbucketCloudCloneLink(const QJsonObject &links, const QString &name)
{
    for (const QJsonValue link : links.value("clone"_L1).toArray()) {
        if (link["name"_L1].toString() == name)
            return name == u"ssh"_s ? link["href"_L1].toString() : withoutUserInfo(link["href"_L1].toString());
    }
    return {};
}

ForgeRepository bitbucketCloudRepository(const QJsonObject &object)
{
    const QJsonObject links = object.value("links"_L1).toObject();
    return ForgeRepository{object.value("full_name"_L1).toString(),
                           bitbucketCloudCloneLink(links, u"https"_s),
                           bitbucketCloudCloneLink(links, u"ssh"_s),
                           links.value("html"_L1).toObject().value("href"_L1).toString(),
                           object.value("mainbranch"_L1).toObject().value("name"_L1).toString(),
                           object.value("is_private"_L1).toBool()};
}

bool bitbucketCloudAbsent(const Reply &reply)
{
    return reply.status == 404;
}

class BitbucketCloudApi final : public ForgeApi {
public:
    BitbucketCloudApi(const ForgeAccount &account, const ForgeRestOptions &options)
        : m_scope(account.scope),
          m_client(ForgeProfile{u"Bitbucket Cloud"_s,
                                u"bitbucket-api"_s,
                                {{"Authorization", account.username.isEmpty() ||
                                                           account.username == defaultTokenUser(ForgeKind::Bitbucket)
                                                       ? "Bearer " + account.token
                                                       : basicAuth(account.username, account.token)},
                                 {"User-Agent", "Pando"}},
                                bitbucketCloudScopeHint},
                   account, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        const Query query{{u"pagelen"_s, QString::number(std::min(m_client.options().pageSize, 100))}};
        auto items =
            m_scope.owner.isEmpty()
                ? m_client.list(Paging::BitbucketCloud, u"/repositories"_s, query + Query{{u"role"_s, u"member"_s}},
                                call)
                : m_client.list(Paging::BitbucketCloud, u"/repositories/%1"_s.arg(segment(m_scope.owner)), query, call);
        return readEach<ForgeRepository>(
            items, [](const QJsonValue &item) { return bitbucketCloudRepository(item.toObject()); });
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        return readEach<ForgeBranch>(
            m_client.list(Paging::BitbucketCloud, u"/repositories/%1/refs/branches"_s.arg(segments(target->path)),
                          {{u"pagelen"_s, QString::number(std::min(m_client.options().pageSize, 100))}}, target->call),
            [](const QJsonValue &item) {
                return ForgeBranch{item["name"_L1].toString(), item["target"_L1]["hash"_L1].toString()};
            });
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = u"/repositories/%1"_s.arg(segments(target->path));
        const Call &call = target->call;
        const auto named = [&](const QString &kind, const QString &refName) {
            return m_client.lookupText(
                base + u"/refs/%1/"_s.arg(kind) + segment(refName), {}, call, bitbucketCloudAbsent,
                [](const QJsonValue &found) { return found["target"_L1]["hash"_L1].toString(); });
        };
        RefLookups lookups;
        lookups.branch = [&](const QString &branch) {
            return named(u"branches"_s, branch);
        };
        lookups.tag = [&](const QString &tag) {
            return named(u"tags"_s, tag);
        };
        lookups.commit = [&](const QString &id) {
            return m_client.lookupText(base + u"/commit/"_s + segment(id), {}, call, bitbucketCloudAbsent,
                                       [](const QJsonValue &found) { return found["hash"_L1].toString(); });
        };
        lookups.repository = [&] {
            return m_client.perform("GET", base, {}, std::nullopt, call);
        };
        return resolveRef(ref, lookups, call.subject, u"Bitbucket Cloud"_s);
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        auto target = m_client.statusTarget(m_scope, repo, status.commit, cancel);
        if (!target)
            return std::unexpected(target.error());
        // Bitbucket requires a url: without a deploy page, the repository's own.
        const QString page = status.targetUrl.isEmpty()
                                 ? m_scope.baseUrl.section(u'/', 0, 2) + u'/' + target->call.subject
                                 : status.targetUrl;
        // A status with the same key replaces the earlier one, as a context does on GitHub.
        const QJsonObject body{{"key"_L1, status.context},
                               {"name"_L1, status.context},
                               {"state"_L1, bitbucketCloudState(status.state)},
                               {"description"_L1, clipped(status.description, 140)},
                               {"url"_L1, page}};
        return m_client.perform(
            "POST", u"/repositories/%1/commit/%2/statuses/build"_s.arg(segments(target->path), status.commit), {}, body,
            target->call);
    }

    Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                         const CancelToken &cancel) override
    {
        auto target = m_client.hookTarget(m_scope, repo, url, secret, cancel);
        if (!target)
            return std::unexpected(target.error());
        const Call &call = target->call;
        const QString hooks = u"/repositories/%1/hooks"_s.arg(segments(target->path));
        // With a secret Bitbucket signs each delivery (X-Hub-Signature), which autodeploy checks.
        // Pushes deploy; a pull request made or pushed to gets its preview, one merged (fulfilled)
        // or declined (rejected) loses it.
        const QJsonObject body{
            {"description"_L1, "Pando"_L1},
            {"url"_L1, url},
            {"active"_L1, true},
            {"secret"_L1, QString::fromUtf8(secret)},
            {"events"_L1, QJsonArray{u"repo:push"_s, u"pullrequest:created"_s, u"pullrequest:updated"_s,
                                     u"pullrequest:fulfilled"_s, u"pullrequest:rejected"_s}}};
        HookOps ops;
        // Bitbucket Cloud names a hook by its uuid.
        const auto uuidOf = [](const QJsonValue &hook) {
            return hook["uuid"_L1].toString();
        };
        ops.find = [&] {
            return findHook(
                m_client.list(Paging::BitbucketCloud, hooks, {}, call), url,
                [](const QJsonValue &hook) { return hook["url"_L1].toString(); }, uuidOf);
        };
        ops.create = [&] {
            return m_client.create(hooks, {}, body, call, uuidOf);
        };
        ops.update = [&](const QString &id) {
            return m_client.perform("PUT", hooks + u'/' + segment(id), {}, body, call);
        };
        return registerHook(ops, url);
    }

    Result<QString> commentOnPullRequest(const RepoAddress &repo, int number, const QString &body,
                                         const CancelToken &cancel) override
    {
        auto target = m_client.commentTarget(m_scope, repo, number, body, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = u"/repositories/%1"_s.arg(segments(target->path));
        // content.raw is read as Markdown, Bitbucket Cloud's markup.
        return m_client.comment(
            base + u"/pullrequests/%1/comments"_s.arg(number), {},
            QJsonObject{{"content"_L1, QJsonObject{{"raw"_L1, clipped(body, BitbucketCloudCommentLimit)}}}}, number,
            target->call, idMember, [&] { return m_client.perform("GET", base, {}, std::nullopt, target->call); });
    }

    Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                  const CancelToken &cancel) override
    {
        auto target = m_client.editTarget(m_scope, repo, number, id, body, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = u"/repositories/%1"_s.arg(segments(target->path));
        return m_client.editComment(
            "PUT", base + u"/pullrequests/%1/comments/%2"_s.arg(number).arg(id), {},
            QJsonObject{{"content"_L1, QJsonObject{{"raw"_L1, clipped(body, BitbucketCloudCommentLimit)}}}}, id,
            target->call, [&] { return m_client.perform("GET", base, {}, std::nullopt, target->call); });
    }

private:
    ForgeScope m_scope;
    RestClient m_client;
};

} // namespace

std::unique_ptr<ForgeApi> makeBitbucketCloudApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    return std::make_unique<BitbucketCloudApi>(account, options);
}

} // namespace pando::adapters::forgerest::detail
