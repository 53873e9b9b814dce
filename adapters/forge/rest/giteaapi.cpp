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
    }
    return {};
}

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
                   options.apiBase, account.token, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        const Query query{{u"limit"_s, QString::number(m_client.options().pageSize)}};
        Result<QJsonArray> items;
        if (m_scope.owner.isEmpty()) {
            items = m_client.list(Paging::LinkHeader, u"/user/repos"_s, query, call);
        } else {
            items = m_client.list(Paging::LinkHeader, u"/orgs/%1/repos"_s.arg(segment(m_scope.owner)), query, call);
            if (!items && items.error().code == ErrorCode::NotFound)
                items =
                    m_client.list(Paging::LinkHeader, u"/users/%1/repos"_s.arg(segment(m_scope.owner)), query, call);
        }
        if (!items)
            return std::unexpected(items.error());
        QList<ForgeRepository> repositories;
        for (const QJsonValue item : *items)
            repositories << giteaRepository(item.toObject());
        return repositories;
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto path = repoPath(m_scope, repo, 2, 2);
        if (!path)
            return std::unexpected(path.error());
        const Call call = m_client.call(Purpose::ReadRepository, path->join(u'/'), cancel);
        auto items = m_client.list(Paging::LinkHeader, u"/repos/%1/branches"_s.arg(segments(*path)),
                                   {{u"limit"_s, QString::number(m_client.options().pageSize)}}, call);
        if (!items)
            return std::unexpected(items.error());
        QList<ForgeBranch> branches;
        for (const QJsonValue item : *items) {
            const QJsonObject object = item.toObject();
            branches << ForgeBranch{object.value("name"_L1).toString(),
                                    object.value("commit"_L1).toObject().value("id"_L1).toString()};
        }
        return branches;
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        auto path = repoPath(m_scope, repo, 2, 2);
        if (!path)
            return std::unexpected(path.error());
        const QString name = path->join(u'/');
        const QString base = u"/repos/%1"_s.arg(segments(*path));
        const Call call = m_client.call(Purpose::ReadRepository, name, cancel);
        RefLookups lookups;
        lookups.branch = [&](const QString &branch) -> Result<std::optional<QString>> {
            auto found = m_client.lookup(base + u"/branches/"_s + segments(branch.split(u'/')), {}, call, giteaAbsent);
            if (!found)
                return std::unexpected(found.error());
            if (!*found)
                return std::optional<QString>();
            return std::optional<QString>((**found)["commit"_L1]["id"_L1].toString());
        };
        lookups.tag = [&](const QString &tag) -> Result<std::optional<QString>> {
            auto found = m_client.lookup(base + u"/tags/"_s + segments(tag.split(u'/')), {}, call, giteaAbsent);
            if (!found)
                return std::unexpected(found.error());
            if (!*found)
                return std::optional<QString>();
            return std::optional<QString>((**found)["commit"_L1]["sha"_L1].toString());
        };
        lookups.commit = [&](const QString &id) -> Result<std::optional<QString>> {
            // An id Gitea cannot read as one is 422.
            auto found = m_client.lookup(base + u"/git/commits/"_s + segment(id), {}, call,
                                         [](const Reply &reply) { return reply.status == 404 || reply.status == 422; });
            if (!found)
                return std::unexpected(found.error());
            if (!*found)
                return std::optional<QString>();
            return std::optional<QString>((**found)["sha"_L1].toString());
        };
        lookups.repository = [&]() -> Status {
            auto there = m_client.request("GET", base, {}, std::nullopt, call);
            if (!there)
                return std::unexpected(there.error());
            return {};
        };
        return resolveRef(ref, lookups, name, u"Gitea"_s);
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        if (auto checked = checkCommitId(status.commit); !checked)
            return checked;
        auto path = repoPath(m_scope, repo, 2, 2);
        if (!path)
            return std::unexpected(path.error());
        const Call call = m_client.call(Purpose::SetStatus, path->join(u'/'), cancel);
        QJsonObject body{{"state"_L1, giteaState(status.state)},
                         {"description"_L1, clipped(status.description, 140)},
                         {"context"_L1, status.context}};
        if (!status.targetUrl.isEmpty())
            body.insert("target_url"_L1, status.targetUrl);
        auto posted =
            m_client.request("POST", u"/repos/%1/statuses/%2"_s.arg(segments(*path), status.commit), {}, body, call);
        if (!posted)
            return std::unexpected(posted.error());
        return {};
    }

    Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                         const CancelToken &cancel) override
    {
        if (auto checked = checkHookUrl(url); !checked)
            return std::unexpected(checked.error());
        if (auto checked = checkSecret(secret); !checked)
            return std::unexpected(checked.error());
        auto path = repoPath(m_scope, repo, 2, 2);
        if (!path)
            return std::unexpected(path.error());
        Call call = m_client.call(Purpose::ManageHooks, path->join(u'/'), cancel);
        call.secret = secret;
        const QString hooks = u"/repos/%1/hooks"_s.arg(segments(*path));
        const QJsonObject config{
            {"url"_L1, url}, {"content_type"_L1, "json"_L1}, {"secret"_L1, QString::fromUtf8(secret)}};
        const QJsonArray events{u"push"_s, u"pull_request"_s};
        HookOps ops;
        ops.find = [&]() -> Result<std::optional<QString>> {
            auto items = m_client.list(Paging::LinkHeader, hooks,
                                       {{u"limit"_s, QString::number(m_client.options().pageSize)}}, call);
            if (!items)
                return std::unexpected(items.error());
            for (const QJsonValue item : *items) {
                if (item["config"_L1]["url"_L1].toString() == url)
                    return std::optional<QString>(idText(item["id"_L1]));
            }
            return std::optional<QString>();
        };
        ops.create = [&] {
            return m_client.create(
                hooks, {},
                QJsonObject{{"type"_L1, "gitea"_L1}, {"active"_L1, true}, {"events"_L1, events}, {"config"_L1, config}},
                call, [](const QJsonValue &made) { return idText(made["id"_L1]); });
        };
        ops.update = [&](const QString &id) -> Status {
            auto patched =
                m_client.request("PATCH", hooks + u'/' + segment(id), {},
                                 QJsonObject{{"active"_L1, true}, {"events"_L1, events}, {"config"_L1, config}}, call);
            if (!patched)
                return std::unexpected(patched.error());
            return {};
        };
        return registerHook(ops, url);
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
