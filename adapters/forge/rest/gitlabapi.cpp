// GitLab's REST API (v4): the token in PRIVATE-TOKEN (personal, group and project access tokens),
// or as a Bearer header when the connection's user is "oauth2", the user GitLab's OAuth tokens
// go with over git; a project by its URL-encoded path; pages through X-Next-Page.

#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

QString gitLabScopeHint(Purpose purpose)
{
    switch (purpose) {
    case Purpose::ListRepositories:
    case Purpose::ReadRepository:
        return u"the token needs the read_api scope (or api)"_s;
    case Purpose::SetStatus:
        return u"the token needs the api scope, and its account at least the Developer role in the project"_s;
    case Purpose::ManageHooks:
        return u"the token needs the api scope, and its account the Maintainer role in the project"_s;
    case Purpose::Comment:
        return u"the token needs the api scope, and its account access to the project's merge requests"_s;
    }
    return {};
}

// What GitLab takes in a note's body ("Limited to 1,000,000 characters").
constexpr qsizetype GitLabNoteLimit = 1000000;

// GitLab has no "error" state; a deploy that could not run failed as far as the commit goes.
QString gitLabState(CommitState state)
{
    switch (state) {
    case CommitState::Pending:
        return u"pending"_s;
    case CommitState::Success:
        return u"success"_s;
    case CommitState::Failure:
    case CommitState::Error:
        return u"failed"_s;
    }
    return u"failed"_s;
}

// A project is a group's, and may be in subgroups at any depth: its path has two segments or
// more (repoPath()'s maxSegments for no limit).
constexpr int GitLabProjectDepth = -1;

ForgeRepository gitLabRepository(const QJsonObject &object)
{
    return ForgeRepository{
        object.value("path_with_namespace"_L1).toString(), object.value("http_url_to_repo"_L1).toString(),
        object.value("ssh_url_to_repo"_L1).toString(),     object.value("web_url"_L1).toString(),
        object.value("default_branch"_L1).toString(),      object.value("visibility"_L1).toString() != u"public"_s};
}

class GitLabApi final : public ForgeApi {
public:
    GitLabApi(const ForgeAccount &account, const ForgeRestOptions &options)
        : m_scope(account.scope),
          m_client(ForgeProfile{u"GitLab"_s,
                                u"gitlab-api"_s,
                                {account.username == u"oauth2"_s
                                     ? QPair<QByteArray, QByteArray>("Authorization", "Bearer " + account.token)
                                     : QPair<QByteArray, QByteArray>("PRIVATE-TOKEN", account.token),
                                 {"User-Agent", "Pando"}},
                                gitLabScopeHint},
                   account, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        const Query query = m_client.pageQuery(u"per_page"_s);
        Result<QJsonArray> items;
        if (m_scope.owner.isEmpty()) {
            items =
                m_client.list(Paging::GitLabHeader, u"/projects"_s, query + Query{{u"membership"_s, u"true"_s}}, call);
        } else {
            items = m_client.list(Paging::GitLabHeader, u"/groups/%1/projects"_s.arg(segment(m_scope.owner)),
                                  query + Query{{u"include_subgroups"_s, u"true"_s}}, call);
            // A user's namespace is no group.
            if (!items && items.error().code == ErrorCode::NotFound)
                items = m_client.list(Paging::GitLabHeader, u"/users/%1/projects"_s.arg(segment(m_scope.owner)), query,
                                      call);
        }
        return readEach<ForgeRepository>(items,
                                         [](const QJsonValue &item) { return gitLabRepository(item.toObject()); });
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto project = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel, GitLabProjectDepth);
        if (!project)
            return std::unexpected(project.error());
        return readEach<ForgeBranch>(
            m_client.list(Paging::GitLabHeader, u"/projects/%1/repository/branches"_s.arg(projectId(*project)),
                          m_client.pageQuery(u"per_page"_s), project->call),
            [](const QJsonValue &item) {
                return ForgeBranch{item["name"_L1].toString(), item["commit"_L1]["id"_L1].toString()};
            });
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        if (auto checked = checkRef(ref); !checked)
            return std::unexpected(checked.error());
        auto project = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel, GitLabProjectDepth);
        if (!project)
            return std::unexpected(project.error());
        // GitLab reads the commit as git reads a revision (an id, a branch or tag, refs/heads/…,
        // refs/tags/…); a project it does not show is "404 Project Not Found", a ref it does not
        // have "404 Commit Not Found".
        auto commit = m_client.lookupText(
            u"/projects/%1/repository/commits/%2"_s.arg(projectId(*project), segment(ref)), {}, project->call,
            [](const Reply &reply) {
                return reply.status == 404 && forgeMessage(reply.body).contains(u"Commit"_s, Qt::CaseInsensitive);
            },
            [](const QJsonValue &found) { return found["id"_L1].toString(); });
        if (!commit)
            return std::unexpected(commit.error());
        const QString id = commit->value_or(QString());
        if (id.isEmpty())
            return std::unexpected(refNotFound(ref, project->call.subject, u"GitLab"_s));
        return id;
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        auto project = m_client.statusTarget(m_scope, repo, status.commit, cancel, GitLabProjectDepth);
        if (!project)
            return std::unexpected(project.error());
        const Call &call = project->call;
        const QString state = gitLabState(status.state);
        QJsonObject body{
            {"state"_L1, state}, {"name"_L1, status.context}, {"description"_L1, clipped(status.description, 140)}};
        if (!status.targetUrl.isEmpty())
            body.insert("target_url"_L1, status.targetUrl);
        auto reply = m_client.send(
            "POST", m_client.url(u"/projects/%1/statuses/%2"_s.arg(projectId(*project), status.commit)), body, call);
        if (!reply)
            return std::unexpected(reply.error());
        // GitLab refuses a status the commit already has ("Cannot transition status via :enqueue
        // from :pending"): the commit shows what was asked for, so that is done.
        const QString said = forgeMessage(reply->body);
        if (reply->status == 400 && said.contains(u"Cannot transition status"_s) && said.contains(u"from :"_s + state))
            return {};
        if (reply->status < 200 || reply->status >= 300)
            return std::unexpected(m_client.refusal(*reply, call));
        return {};
    }

    Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                         const CancelToken &cancel) override
    {
        auto project = m_client.hookTarget(m_scope, repo, url, secret, cancel, GitLabProjectDepth);
        if (!project)
            return std::unexpected(project.error());
        const Call &call = project->call;
        const QString hooks = u"/projects/%1/hooks"_s.arg(projectId(*project));
        // GitLab sends the secret back as X-Gitlab-Token, which autodeploy compares.
        const QJsonObject body{{"url"_L1, url},
                               {"token"_L1, QString::fromUtf8(secret)},
                               {"push_events"_L1, true},
                               {"merge_requests_events"_L1, true},
                               {"tag_push_events"_L1, false},
                               {"enable_ssl_verification"_L1, true}};
        HookOps ops;
        ops.find = [&] {
            return findHook(
                m_client.list(Paging::GitLabHeader, hooks, m_client.pageQuery(u"per_page"_s), call), url,
                [](const QJsonValue &hook) { return hook["url"_L1].toString(); }, idMember);
        };
        ops.create = [&] {
            return m_client.create(hooks, {}, body, call, idMember);
        };
        ops.update = [&](const QString &id) {
            return m_client.perform("PUT", hooks + u'/' + segment(id), {}, body, call);
        };
        return registerHook(ops, url);
    }

    Result<QString> commentOnPullRequest(const RepoAddress &repo, int number, const QString &body,
                                         const CancelToken &cancel) override
    {
        auto project = m_client.commentTarget(m_scope, repo, number, body, cancel, GitLabProjectDepth);
        if (!project)
            return std::unexpected(project.error());
        // number is the merge request's iid, the one its page shows ("!7"), not its global id. One
        // arg() call: the project's id holds "%2F", which a second arg() would read as a marker.
        return m_client.comment(
            u"/projects/%1/merge_requests/%2/notes"_s.arg(projectId(*project), QString::number(number)), {},
            QJsonObject{{"body"_L1, clipped(body, GitLabNoteLimit)}}, number, project->call, idMember, [&] {
                return m_client.perform("GET", u"/projects/%1"_s.arg(projectId(*project)), {}, std::nullopt,
                                        project->call);
            });
    }

    Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                  const CancelToken &cancel) override
    {
        auto project = m_client.editTarget(m_scope, repo, number, id, body, cancel, GitLabProjectDepth);
        if (!project)
            return std::unexpected(project.error());
        const QString base = u"/projects/"_s + projectId(*project);
        return m_client.editComment("PUT", base + u"/merge_requests/%1/notes/%2"_s.arg(QString::number(number), id), {},
                                    QJsonObject{{"body"_L1, clipped(body, GitLabNoteLimit)}}, id, project->call,
                                    [&] { return m_client.perform("GET", base, {}, std::nullopt, project->call); });
    }

private:
    // The project's id as GitLab reads it in a path: its full path as one segment ("acme%2Fapi").
    static QString projectId(const Target &project) { return segment(project.call.subject); }

    ForgeScope m_scope;
    RestClient m_client;
};

} // namespace

std::unique_ptr<ForgeApi> makeGitLabApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    return std::make_unique<GitLabApi>(account, options);
}

} // namespace pando::adapters::forgerest::detail
