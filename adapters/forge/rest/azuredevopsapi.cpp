// Azure DevOps' REST API (api-version 7.1) below https://dev.azure.com/ORG (or an Azure DevOps
// Server collection's address): a personal access token as HTTP basic authentication with an
// empty user; pages through x-ms-continuationtoken. A repository is PROJECT/REPO; its webhook is
// a service hook subscription per event (publisher tfs, events git.push, git.pullrequest.created
// and git.pullrequest.updated, consumer webHooks) whose basic authentication password is the
// secret, which is how autodeploy checks Azure's deliveries.

#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

QString azureScopeHint(Purpose purpose)
{
    switch (purpose) {
    case Purpose::ListRepositories:
    case Purpose::ReadRepository:
        return u"the personal access token needs the Code (Read) scope"_s;
    case Purpose::SetStatus:
        return u"the personal access token needs the Code (Status) scope"_s;
    case Purpose::ManageHooks:
        return u"the personal access token needs the Service Hooks (Read & write) and Code (Read) scopes, and its "
               u"account the project's Edit subscriptions permission"_s;
    case Purpose::Comment:
        return u"the personal access token needs the Code (Read & write) scope, and its account the repository's "
               u"Contribute to pull requests permission"_s;
    }
    return {};
}

// What Azure takes in a comment ("A discussion comment cannot be longer than 150000 characters").
constexpr qsizetype AzureCommentLimit = 150000;

// The events the webhook subscribes to, one subscription each: the push first, whose
// subscription registerWebhook() returns.
constexpr QLatin1StringView AzureHookEvents[]{"git.push"_L1, "git.pullrequest.created"_L1,
                                              "git.pullrequest.updated"_L1};

QString azureState(CommitState state)
{
    switch (state) {
    case CommitState::Pending:
        return u"pending"_s;
    case CommitState::Success:
        return u"succeeded"_s;
    case CommitState::Failure:
        return u"failed"_s;
    case CommitState::Error:
        return u"error"_s;
    }
    return u"error"_s;
}

QString azureBranchName(const QString &ref)
{
    return ref.startsWith(u"refs/heads/"_s) ? ref.mid(11) : ref;
}

ForgeRepository azureRepository(const QJsonObject &object)
{
    const QJsonObject project = object.value("project"_L1).toObject();
    return ForgeRepository{project.value("name"_L1).toString() + u'/' + object.value("name"_L1).toString(),
                           withoutUserInfo(object.value("remoteUrl"_L1).toString()),
                           object.value("sshUrl"_L1).toString(),
                           object.value("webUrl"_L1).toString(),
                           azureBranchName(object.value("defaultBranch"_L1).toString()),
                           project.value("visibility"_L1).toString() != u"public"_s};
}

// Azure's "api-version" on every request.
Query azureQuery(Query query = {})
{
    query.append({u"api-version"_s, u"7.1"_s});
    return query;
}

class AzureDevOpsApi final : public ForgeApi {
public:
    AzureDevOpsApi(const ForgeAccount &account, const ForgeRestOptions &options)
        : m_scope(account.scope),
          m_client(
              ForgeProfile{u"Azure DevOps"_s,
                           u"azure-devops-api"_s,
                           {{"Authorization", basicAuth(account.username, account.token)}, {"User-Agent", "Pando"}},
                           azureScopeHint},
              account, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        const QString path = m_scope.owner.isEmpty() ? u"/_apis/git/repositories"_s
                                                     : u"/%1/_apis/git/repositories"_s.arg(segment(m_scope.owner));
        return readEach<ForgeRepository>(m_client.list(Paging::Azure, path, azureQuery(), call),
                                         [](const QJsonValue &item) { return azureRepository(item.toObject()); });
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        return readEach<ForgeBranch>(
            m_client.list(Paging::Azure, repoBase(target->path) + u"/refs"_s,
                          azureQuery(Query{{u"filter"_s, u"heads/"_s}} + m_client.pageQuery(u"$top"_s)), target->call),
            [](const QJsonValue &item) {
                return ForgeBranch{azureBranchName(item["name"_L1].toString()), item["objectId"_L1].toString()};
            });
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = repoBase(target->path);
        const Call &call = target->call;
        // The refs filter matches names that start with it: the one named exactly is the one.
        const auto named = [&](const QString &prefix, const QString &refName) -> Result<std::optional<QString>> {
            auto found = m_client.request(
                "GET", base + u"/refs"_s,
                azureQuery({{u"filter"_s, prefix + refName}, {u"peelTags"_s, u"true"_s}, {u"$top"_s, u"100"_s}}),
                std::nullopt, call);
            if (!found)
                return std::unexpected(found.error());
            for (const QJsonValue item : found->toObject().value("value"_L1).toArray()) {
                if (item["name"_L1].toString() != u"refs/"_s + prefix + refName)
                    continue;
                // An annotated tag's own object is not the commit: its peeled id is.
                const QString peeled = item["peeledObjectId"_L1].toString();
                return std::optional<QString>(peeled.isEmpty() ? item["objectId"_L1].toString() : peeled);
            }
            return std::optional<QString>();
        };
        RefLookups lookups;
        lookups.branch = [&](const QString &branch) {
            return named(u"heads/"_s, branch);
        };
        lookups.tag = [&](const QString &tag) {
            return named(u"tags/"_s, tag);
        };
        lookups.commit = [&](const QString &id) {
            // A commit Azure does not have is 404 with TF401175; a repository it does not show
            // is 404 with TF401019, which repository() below reports.
            return m_client.lookupText(
                base + u"/commits/"_s + segment(id), azureQuery(), call,
                [](const Reply &reply) { return reply.status == 404; },
                [](const QJsonValue &found) { return found["commitId"_L1].toString(); });
        };
        lookups.repository = [&] {
            return m_client.perform("GET", base, azureQuery(), std::nullopt, call);
        };
        return resolveRef(ref, lookups, call.subject, u"Azure DevOps"_s);
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        auto target = m_client.statusTarget(m_scope, repo, status.commit, cancel);
        if (!target)
            return std::unexpected(target.error());
        // Azure shows a status as genre/name: "pando/APP" is genre pando, name APP.
        const qsizetype slash = status.context.indexOf(u'/');
        const QJsonObject context = slash > 0 ? QJsonObject{{"genre"_L1, status.context.left(slash)},
                                                            {"name"_L1, status.context.mid(slash + 1)}}
                                              : QJsonObject{{"genre"_L1, "pando"_L1}, {"name"_L1, status.context}};
        QJsonObject body{{"state"_L1, azureState(status.state)},
                         {"description"_L1, clipped(status.description, 140)},
                         {"context"_L1, context}};
        if (!status.targetUrl.isEmpty())
            body.insert("targetUrl"_L1, status.targetUrl);
        return m_client.perform("POST", repoBase(target->path) + u"/commits/%1/statuses"_s.arg(status.commit),
                                azureQuery(), body, target->call);
    }

    Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                         const CancelToken &cancel) override
    {
        auto target = m_client.hookTarget(m_scope, repo, url, secret, cancel);
        if (!target)
            return std::unexpected(target.error());
        const Call &call = target->call;
        // A subscription names the project and the repository by id.
        auto repository = m_client.request("GET", repoBase(target->path), azureQuery(), std::nullopt, call);
        if (!repository)
            return std::unexpected(repository.error());
        const QString repositoryId = (*repository)["id"_L1].toString();
        const QString projectId = (*repository)["project"_L1]["id"_L1].toString();
        if (repositoryId.isEmpty() || projectId.isEmpty())
            return fail(ErrorCode::Unavailable,
                        u"Azure DevOps gave %1 without its id or its project's"_s.arg(call.subject),
                        u"azure-devops-api"_s);
        const QString subscriptions = u"/_apis/hooks/subscriptions"_s;
        // A subscription's id is a GUID, always a string.
        const auto subscriptionId = [](const QJsonValue &subscription) {
            return subscription["id"_L1].toString();
        };
        // One subscription per event, each kept once for url: a push deploys, a pull request
        // created or updated (pushed to, completed, abandoned: any change) makes or ends a preview.
        std::optional<ForgeWebhook> push;
        for (const QLatin1StringView event : AzureHookEvents) {
            const QString eventType(event);
            const QJsonObject body{
                {"publisherId"_L1, "tfs"_L1},
                {"eventType"_L1, eventType},
                {"resourceVersion"_L1, "1.0"_L1},
                {"consumerId"_L1, "webHooks"_L1},
                {"consumerActionId"_L1, "httpRequest"_L1},
                {"publisherInputs"_L1, QJsonObject{{"projectId"_L1, projectId}, {"repository"_L1, repositoryId}}},
                {"consumerInputs"_L1, QJsonObject{{"url"_L1, url},
                                                  {"basicAuthUsername"_L1, "pando"_L1},
                                                  {"basicAuthPassword"_L1, QString::fromUtf8(secret)},
                                                  {"resourceDetailsToSend"_L1, "all"_L1}}}};
            HookOps ops;
            ops.find = [&] {
                // The organisation's subscriptions are every repository's: only this one's counts,
                // so another repository's URL is read as none.
                return findHook(
                    m_client.list(Paging::Azure, subscriptions,
                                  azureQuery({{u"publisherId"_s, u"tfs"_s},
                                              {u"eventType"_s, eventType},
                                              {u"consumerId"_s, u"webHooks"_s},
                                              {u"consumerActionId"_s, u"httpRequest"_s}}),
                                  call),
                    url,
                    [&](const QJsonValue &subscription) {
                        return subscription["publisherInputs"_L1]["repository"_L1].toString() == repositoryId &&
                                       subscription["eventType"_L1].toString() == eventType
                                   ? subscription["consumerInputs"_L1]["url"_L1].toString()
                                   : QString();
                    },
                    subscriptionId);
            };
            ops.create = [&] {
                return m_client.create(subscriptions, azureQuery(), body, call, subscriptionId);
            };
            ops.update = [&](const QString &id) {
                return m_client.perform("PUT", subscriptions + u'/' + segment(id), azureQuery(), body, call);
            };
            auto registered = registerHook(ops, url);
            if (!registered)
                return std::unexpected(registered.error());
            if (!push)
                push = *registered;
        }
        return *push;
    }

    Result<QString> commentOnPullRequest(const RepoAddress &repo, int number, const QString &body,
                                         const CancelToken &cancel) override
    {
        auto target = m_client.commentTarget(m_scope, repo, number, body, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = repoBase(target->path);
        // A comment on the pull request as a whole is a new thread (no file context) holding it:
        // parentCommentId 0 (no reply), commentType 1 (text), status 1 (active), as Azure's own
        // sample writes them.
        const QJsonObject thread{
            {"comments"_L1,
             QJsonArray{QJsonObject{
                 {"parentCommentId"_L1, 0}, {"content"_L1, clipped(body, AzureCommentLimit)}, {"commentType"_L1, 1}}}},
            {"status"_L1, 1}};
        return m_client.comment(
            base + u"/pullRequests/%1/threads"_s.arg(number), azureQuery(), thread, number, target->call, idMember,
            [&] { return m_client.perform("GET", base, azureQuery(), std::nullopt, target->call); });
    }

    Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                  const CancelToken &cancel) override
    {
        auto target = m_client.editTarget(m_scope, repo, number, id, body, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = repoBase(target->path);
        // id is the thread's; the text is its first comment, the one commentOnPullRequest() made.
        return m_client.editComment(
            "PATCH", base + u"/pullRequests/%1/threads/%2/comments/1"_s.arg(number).arg(id), azureQuery(),
            QJsonObject{{"content"_L1, clipped(body, AzureCommentLimit)}}, id, target->call,
            [&] { return m_client.perform("GET", base, azureQuery(), std::nullopt, target->call); });
    }

private:
    static QString repoBase(const QStringList &path)
    {
        return u"/%1/_apis/git/repositories/%2"_s.arg(segment(path.at(0)), segment(path.at(1)));
    }

    ForgeScope m_scope;
    RestClient m_client;
};

} // namespace

std::unique_ptr<ForgeApi> makeAzureDevOpsApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    return std::make_unique<AzureDevOpsApi>(account, options);
}

} // namespace pando::adapters::forgerest::detail
