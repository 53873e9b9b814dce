// Gitea's REST API (v1), which Forgejo serves unchanged: the token as "Authorization: token …",
// pages through Link: rel="next" (Gitea caps a page at its MAX_RESPONSE_ITEMS, 50 by default).

#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

QString giteaScopeHint(Purpose purpose)
{
    switch (purpose) {
    case Purpose::ListRepositories:
    case Purpose::ReadRepository:
        return u"the token needs the read:repository scope (read:organization to list an organisation's)"_s;
    case Purpose::SetStatus:
        return u"the token needs the write:repository scope and its account write access to the repository"_s;
    case Purpose::ManageHooks:
        return u"the token needs the write:repository scope and its account admin access to the repository"_s;
    case Purpose::Comment:
        return u"the token needs the write:issue scope and its account read access to the repository"_s;
    }
    return {};
}

// Gitea documents no limit on a comment's body; GitHub's keeps one to a size every forge takes.
constexpr qsizetype GiteaCommentLimit = 65536;

QString giteaState(CommitState state)
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

ForgeRepository giteaRepository(const QJsonObject &object)
{
    return ForgeRepository{object.value("full_name"_L1).toString(),      object.value("clone_url"_L1).toString(),
                           object.value("ssh_url"_L1).toString(),        object.value("html_url"_L1).toString(),
                           object.value("default_branch"_L1).toString(), object.value("private"_L1).toBool()};
}

bool giteaAbsent(const Reply &reply)
{
    return reply.status == 404;
}

class GiteaApi final : public ForgeApi {
public:
    GiteaApi(const ForgeAccount &account, const ForgeRestOptions &options)
        : m_scope(account.scope),
          m_client(ForgeProfile{u"Gitea"_s,
                                u"gitea-api"_s,
                                {{"Authorization", "token " + account.token}, {"User-Agent", "Pando"}},
                                giteaScopeHint},
                   account, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        const Query query = m_client.pageQuery(u"limit"_s);
        Result<QJsonArray> items;
        if (m_scope.owner.isEmpty()) {
            items = m_client.list(Paging::LinkHeader, u"/user/repos"_s, query, call);
        } else {
            items = m_client.list(Paging::LinkHeader, u"/orgs/%1/repos"_s.arg(segment(m_scope.owner)), query, call);
            if (!items && items.error().code == ErrorCode::NotFound)
                items =
                    m_client.list(Paging::LinkHeader, u"/users/%1/repos"_s.arg(segment(m_scope.owner)), query, call);
        }
        return readEach<ForgeRepository>(items,
                                         [](const QJsonValue &item) { return giteaRepository(item.toObject()); });
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        return readEach<ForgeBranch>(
            m_client.list(Paging::LinkHeader, u"/repos/%1/branches"_s.arg(segments(target->path)),
                          m_client.pageQuery(u"limit"_s), target->call),
            [](const QJsonValue &item) {
                return ForgeBranch{item["name"_L1].toString(), item["commit"_L1]["id"_L1].toString()};
            });
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = u"/repos/%1"_s.arg(segments(target->path));
        const Call &call = target->call;
        RefLookups lookups;
        lookups.branch = [&](const QString &branch) {
            return m_client.lookupText(base + u"/branches/"_s + segments(branch.split(u'/')), {}, call, giteaAbsent,
                                       [](const QJsonValue &found) { return found["commit"_L1]["id"_L1].toString(); });
        };
        lookups.tag = [&](const QString &tag) {
            return m_client.lookupText(base + u"/tags/"_s + segments(tag.split(u'/')), {}, call, giteaAbsent,
                                       [](const QJsonValue &found) { return found["commit"_L1]["sha"_L1].toString(); });
        };
        lookups.commit = [&](const QString &id) {
            // An id Gitea cannot read as one is 422.
            return m_client.lookupText(
                base + u"/git/commits/"_s + segment(id), {}, call,
                [](const Reply &reply) { return reply.status == 404 || reply.status == 422; },
                [](const QJsonValue &found) { return found["sha"_L1].toString(); });
        };
        lookups.repository = [&] {
            return m_client.perform("GET", base, {}, std::nullopt, call);
        };
        return resolveRef(ref, lookups, call.subject, u"Gitea"_s);
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        auto target = m_client.statusTarget(m_scope, repo, status.commit, cancel);
        if (!target)
            return std::unexpected(target.error());
        QJsonObject body{{"state"_L1, giteaState(status.state)},
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
        const QJsonObject config{
            {"url"_L1, url}, {"content_type"_L1, "json"_L1}, {"secret"_L1, QString::fromUtf8(secret)}};
        const QJsonArray events{u"push"_s, u"pull_request"_s};
        HookOps ops;
        ops.find = [&] {
            return findHook(
                m_client.list(Paging::LinkHeader, hooks, m_client.pageQuery(u"limit"_s), call), url,
                [](const QJsonValue &hook) { return hook["config"_L1]["url"_L1].toString(); }, idMember);
        };
        ops.create = [&] {
            return m_client.create(
                hooks, {},
                QJsonObject{{"type"_L1, "gitea"_L1}, {"active"_L1, true}, {"events"_L1, events}, {"config"_L1, config}},
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
        // Gitea numbers pull requests among issues, and a pull request's conversation takes issue comments.
        return commentAsIssue(m_client, m_scope, repo, number, body, GiteaCommentLimit, cancel);
    }

    Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                  const CancelToken &cancel) override
    {
        return editIssueComment(m_client, m_scope, repo, number, id, body, GiteaCommentLimit, cancel);
    }

private:
    ForgeScope m_scope;
    RestClient m_client;
};

} // namespace

std::unique_ptr<ForgeApi> makeGiteaApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    return std::make_unique<GiteaApi>(account, options);
}

} // namespace pando::adapters::forgerest::detail
