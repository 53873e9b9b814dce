// GitHub's REST API (and GitHub Enterprise Server's, the same below BASE/api/v3): the token (a
// person's, or a GitHub App installation's) as a Bearer header, the API version GitHub documents
// pinned, pages through Link: rel="next".

#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

QString gitHubScopeHint(Purpose purpose)
{
    switch (purpose) {
    case Purpose::ListRepositories:
    case Purpose::ReadRepository:
        return u"a classic token needs the repo scope for private repositories; a fine-grained one Contents: read "
               u"on them"_s;
    case Purpose::SetStatus:
        return u"a classic token needs the repo:status scope (repo for private repositories); a fine-grained one "
               u"Commit statuses: read and write"_s;
    case Purpose::ManageHooks:
        return u"a classic token needs the admin:repo_hook scope; a fine-grained one Webhooks: read and write; its "
               u"account must administer the repository"_s;
    case Purpose::Comment:
        return u"a classic token needs the repo scope (public_repo for public repositories); a fine-grained one "
               u"Pull requests (or Issues): read and write"_s;
    }
    return {};
}

// What GitHub takes in an issue comment's body ("Body is too long (maximum is 65536 characters)").
constexpr qsizetype GitHubCommentLimit = 65536;

QString gitHubState(CommitState state)
{
    switch (state) {
    case CommitState::Pending:
        return u"pending"_s;
    case CommitState::Success:
        return u"success"_s;
    case CommitState::Failure:
        return u"failure"_s;
    case CommitState::Error:
        return u"error"_s;
    }
    return u"error"_s;
}

ForgeRepository gitHubRepository(const QJsonObject &object)
{
    return ForgeRepository{object.value("full_name"_L1).toString(),      object.value("clone_url"_L1).toString(),
                           object.value("ssh_url"_L1).toString(),        object.value("html_url"_L1).toString(),
                           object.value("default_branch"_L1).toString(), object.value("private"_L1).toBool()};
}

class GitHubApi final : public ForgeApi {
public:
    GitHubApi(const ForgeAccount &account, const ForgeRestOptions &options)
        : m_scope(account.scope), m_installation(account.installation),
          m_client(gitHubProfile(account.token, gitHubScopeHint), account, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        const Query pageSize = m_client.pageQuery(u"per_page"_s);
        Result<QJsonArray> items;
        bool onlyOwner = false;
        if (m_installation) {
            // An installation token sees the repositories the installation was given, whichever
            // account owns them; /user/repos is a user's and refuses it.
            items = m_client.list(Paging::GitHubInstallation, u"/installation/repositories"_s, pageSize, call);
            onlyOwner = !m_scope.owner.isEmpty();
        } else if (m_scope.owner.isEmpty()) {
            items = m_client.list(Paging::LinkHeader, u"/user/repos"_s, pageSize, call);
        } else {
            items = m_client.list(Paging::LinkHeader, u"/orgs/%1/repos"_s.arg(segment(m_scope.owner)),
                                  Query{{u"type"_s, u"all"_s}} + pageSize, call);
            // A user is no organisation: their repositories, private ones included, are the ones
            // the token's own account owns.
            if (!items && items.error().code == ErrorCode::NotFound) {
                items = m_client.list(Paging::LinkHeader, u"/user/repos"_s,
                                      Query{{u"affiliation"_s, u"owner"_s}} + pageSize, call);
                onlyOwner = true;
            }
        }
        if (!items)
            return std::unexpected(items.error());
        QList<ForgeRepository> repositories;
        for (const QJsonValue item : *items) {
            const QJsonObject object = item.toObject();
            const QString login = object.value("owner"_L1).toObject().value("login"_L1).toString();
            if (onlyOwner && login.compare(m_scope.owner, Qt::CaseInsensitive) != 0)
                continue;
            repositories << gitHubRepository(object);
        }
        return repositories;
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        return readEach<ForgeBranch>(
            m_client.list(Paging::LinkHeader, u"/repos/%1/branches"_s.arg(segments(target->path)),
                          m_client.pageQuery(u"per_page"_s), target->call),
            [](const QJsonValue &item) {
                return ForgeBranch{item["name"_L1].toString(), item["commit"_L1]["sha"_L1].toString()};
            });
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        if (auto checked = checkRef(ref); !checked)
            return std::unexpected(checked.error());
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        // GitHub reads a commit reference as a commit id, a branch, heads/BRANCH or tags/TAG.
        const RefName read = readRef(ref);
        const QString reference = read.kind == RefName::Kind::Branch ? u"heads/"_s + read.name
                                  : read.kind == RefName::Kind::Tag  ? u"tags/"_s + read.name
                                                                     : read.name;
        auto commit = m_client.lookupText(
            u"/repos/%1/commits/%2"_s.arg(segments(target->path), segments(reference.split(u'/'))), {}, target->call,
            [](const Reply &reply) { return reply.status == 422; },
            [](const QJsonValue &found) { return found["sha"_L1].toString(); });
        if (!commit)
            return std::unexpected(commit.error());
        const QString sha = commit->value_or(QString());
        if (sha.isEmpty())
            return std::unexpected(refNotFound(ref, target->call.subject, u"GitHub"_s));
        return sha;
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        auto target = m_client.statusTarget(m_scope, repo, status.commit, cancel);
        if (!target)
            return std::unexpected(target.error());
        QJsonObject body{{"state"_L1, gitHubState(status.state)},
                         {"description"_L1, clipped(status.description, 140)},
                         {"context"_L1, status.context}};
        if (!status.targetUrl.isEmpty())
            body.insert("target_url"_L1, status.targetUrl);
        return m_client.perform("POST", u"/repos/%1/statuses/%2"_s.arg(segments(target->path), status.commit), {}, body,
                                target->call);
    }

    Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                         const CancelToken &cancel) override
    {
        auto target = m_client.hookTarget(m_scope, repo, url, secret, cancel);
        if (!target)
            return std::unexpected(target.error());
        const Call &call = target->call;
        const QString hooks = u"/repos/%1/hooks"_s.arg(segments(target->path));
        // GitHub replaces config whole on an update: it is always sent complete.
        const QJsonObject config{{"url"_L1, url},
                                 {"content_type"_L1, "json"_L1},
                                 {"secret"_L1, QString::fromUtf8(secret)},
                                 {"insecure_ssl"_L1, "0"_L1}};
        const QJsonArray events{u"push"_s, u"pull_request"_s};
        HookOps ops;
        ops.find = [&] {
            return findHook(
                m_client.list(Paging::LinkHeader, hooks, m_client.pageQuery(u"per_page"_s), call), url,
                [](const QJsonValue &hook) { return hook["config"_L1]["url"_L1].toString(); }, idMember);
        };
        ops.create = [&] {
            return m_client.create(
                hooks, {},
                QJsonObject{{"name"_L1, "web"_L1}, {"active"_L1, true}, {"events"_L1, events}, {"config"_L1, config}},
                call, idMember);
        };
        ops.update = [&](const QString &id) {
            return m_client.perform("PATCH", hooks + u'/' + segment(id), {},
                                    QJsonObject{{"active"_L1, true}, {"events"_L1, events}, {"config"_L1, config}},
                                    call);
        };
        return registerHook(ops, url);
    }

    Result<QString> commentOnPullRequest(const RepoAddress &repo, int number, const QString &body,
                                         const CancelToken &cancel) override
    {
        // A pull request is an issue to GitHub: its conversation takes issue comments.
        return commentAsIssue(m_client, m_scope, repo, number, body, GitHubCommentLimit, cancel);
    }

    Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                  const CancelToken &cancel) override
    {
        return editIssueComment(m_client, m_scope, repo, number, id, body, GitHubCommentLimit, cancel);
    }

private:
    ForgeScope m_scope;
    bool m_installation = false;
    RestClient m_client;
};

} // namespace

ForgeProfile gitHubProfile(const QByteArray &bearer, QString (*scopeHint)(Purpose purpose))
{
    return ForgeProfile{u"GitHub"_s,
                        u"github-api"_s,
                        {{"Authorization", "Bearer " + bearer},
                         {"Accept", "application/vnd.github+json"},
                         {"X-GitHub-Api-Version", "2022-11-28"},
                         {"User-Agent", "Pando"}},
                        scopeHint};
}

std::unique_ptr<ForgeApi> makeGitHubApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    return std::make_unique<GitHubApi>(account, options);
}

} // namespace pando::adapters::forgerest::detail
