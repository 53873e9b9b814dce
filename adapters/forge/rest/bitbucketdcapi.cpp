// Bitbucket Data Center's REST API (/rest/api/1.0, and /rest/build-status/1.0 for build
// statuses): an HTTP access token as a Bearer header; pages through isLastPage and
// nextPageStart. A repository is PROJECT/slug (a personal one ~user/slug).

#include "adapters/forge/rest/forgeclient.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

QString bitbucketDcScopeHint(Purpose purpose)
{
    switch (purpose) {
    case Purpose::ListRepositories:
    case Purpose::ReadRepository:
    case Purpose::SetStatus:
        return u"the HTTP access token needs the Repository read permission (a build status needs no more)"_s;
    case Purpose::ManageHooks:
        return u"the HTTP access token needs the Repository admin permission"_s;
    case Purpose::Comment:
        return u"the HTTP access token needs the Repository read permission (a comment needs no more)"_s;
    }
    return {};
}

// What Data Center takes in a comment's text ("a non-empty value less than 32768 characters").
constexpr qsizetype BitbucketDcCommentLimit = 32767;

QString bitbucketDcState(CommitState state)
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

QString bitbucketDcCloneLink(const QJsonObject &links, const QString &name)
{
    for (const QJsonValue link : links.value("clone"_L1).toArray()) {
        if (link["name"_L1].toString() == name)
            return link["href"_L1].toString();
    }
    return {};
}

// Data Center's repository listing does not carry the default branch: asking each repository
// for it would make a listing of N repositories N requests more, so it is left empty.
ForgeRepository bitbucketDcRepository(const QJsonObject &object)
{
    const QJsonObject links = object.value("links"_L1).toObject();
    return ForgeRepository{object.value("project"_L1).toObject().value("key"_L1).toString() + u'/' +
                               object.value("slug"_L1).toString(),
                           bitbucketDcCloneLink(links, u"http"_s),
                           bitbucketDcCloneLink(links, u"ssh"_s),
                           links.value("self"_L1).toArray().at(0)["href"_L1].toString(),
                           {},
                           !object.value("public"_L1).toBool()};
}

class BitbucketDcApi final : public ForgeApi {
public:
    BitbucketDcApi(const ForgeAccount &account, const ForgeRestOptions &options)
        : m_scope(account.scope),
          m_client(ForgeProfile{u"Bitbucket Data Center"_s,
                                u"bitbucket-api"_s,
                                {{"Authorization", "Bearer " + account.token}, {"User-Agent", "Pando"}},
                                bitbucketDcScopeHint},
                   account, options)
    {}

    Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) override
    {
        const Call call = m_client.call(Purpose::ListRepositories, m_scope.owner, cancel);
        auto items =
            m_client.list(Paging::BitbucketDc,
                          m_scope.owner.isEmpty() ? u"/rest/api/1.0/repos"_s
                                                  : u"/rest/api/1.0/projects/%1/repos"_s.arg(segment(m_scope.owner)),
                          m_client.pageQuery(u"limit"_s), call);
        return readEach<ForgeRepository>(items,
                                         [](const QJsonValue &item) { return bitbucketDcRepository(item.toObject()); });
    }

    Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        return readEach<ForgeBranch>(
            m_client.list(Paging::BitbucketDc, repoBase(target->path) + u"/branches"_s, m_client.pageQuery(u"limit"_s),
                          target->call),
            [](const QJsonValue &item) {
                return ForgeBranch{item["displayId"_L1].toString(), item["latestCommit"_L1].toString()};
            });
    }

    Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) override
    {
        auto target = m_client.target(Purpose::ReadRepository, m_scope, repo, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = repoBase(target->path);
        const Call &call = target->call;
        // Branches and tags are found by filterText, which matches any part of a name: the one
        // named exactly is the one.
        const auto named = [&](const QString &kind, const QString &refName) -> Result<std::optional<QString>> {
            auto found = m_client.request("GET", base + u'/' + kind,
                                          {{u"filterText"_s, refName}, {u"limit"_s, u"100"_s}}, std::nullopt, call);
            if (!found)
                return std::unexpected(found.error());
            for (const QJsonValue item : found->toObject().value("values"_L1).toArray()) {
                if (item["displayId"_L1].toString() == refName)
                    return std::optional<QString>(item["latestCommit"_L1].toString());
            }
            return std::optional<QString>();
        };
        RefLookups lookups;
        lookups.branch = [&](const QString &branch) {
            return named(u"branches"_s, branch);
        };
        lookups.tag = [&](const QString &tag) {
            return named(u"tags"_s, tag);
        };
        lookups.commit = [&](const QString &id) {
            return m_client.lookupText(
                base + u"/commits/"_s + segment(id), {}, call, [](const Reply &reply) { return reply.status == 404; },
                [](const QJsonValue &found) { return found["id"_L1].toString(); });
        };
        lookups.repository = [&] {
            return m_client.perform("GET", base, {}, std::nullopt, call);
        };
        return resolveRef(ref, lookups, call.subject, u"Bitbucket Data Center"_s);
    }

    Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) override
    {
        auto target = m_client.statusTarget(m_scope, repo, status.commit, cancel);
        if (!target)
            return std::unexpected(target.error());
        // Data Center requires a url: without a deploy page, the repository's own.
        const QString page =
            status.targetUrl.isEmpty()
                ? m_scope.baseUrl + u"/projects/%1/repos/%2/browse"_s.arg(target->path.at(0), target->path.at(1))
                : status.targetUrl;
        const QJsonObject body{{"state"_L1, bitbucketDcState(status.state)},
                               {"key"_L1, clipped(status.context, 255)},
                               {"name"_L1, clipped(status.context, 255)},
                               {"url"_L1, page},
                               {"description"_L1, clipped(status.description, 140)}};
        return m_client.perform("POST", u"/rest/build-status/1.0/commits/%1"_s.arg(status.commit), {}, body,
                                target->call);
    }

    Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                         const CancelToken &cancel) override
    {
        auto target = m_client.hookTarget(m_scope, repo, url, secret, cancel);
        if (!target)
            return std::unexpected(target.error());
        const Call &call = target->call;
        const QString hooks = repoBase(target->path) + u"/webhooks"_s;
        // configuration.secret makes Data Center sign each delivery (X-Hub-Signature). Pushes
        // deploy; a pull request opened or pushed to gets its preview, one merged, declined or
        // deleted loses it.
        const QJsonObject body{
            {"name"_L1, "Pando"_L1},
            {"url"_L1, url},
            {"active"_L1, true},
            {"events"_L1, QJsonArray{u"repo:refs_changed"_s, u"pr:opened"_s, u"pr:from_ref_updated"_s, u"pr:merged"_s,
                                     u"pr:declined"_s, u"pr:deleted"_s}},
            {"configuration"_L1, QJsonObject{{"secret"_L1, QString::fromUtf8(secret)}}}};
        HookOps ops;
        ops.find = [&] {
            return findHook(
                m_client.list(Paging::BitbucketDc, hooks, m_client.pageQuery(u"limit"_s), call), url,
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
        auto target = m_client.commentTarget(m_scope, repo, number, body, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = repoBase(target->path);
        // Data Center renders a comment's text as Markdown.
        return m_client.comment(base + u"/pull-requests/%1/comments"_s.arg(number), {},
                                QJsonObject{{"text"_L1, clipped(body, BitbucketDcCommentLimit)}}, number, target->call,
                                idMember,
                                [&] { return m_client.perform("GET", base, {}, std::nullopt, target->call); });
    }

    Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                  const CancelToken &cancel) override
    {
        auto target = m_client.editTarget(m_scope, repo, number, id, body, cancel);
        if (!target)
            return std::unexpected(target.error());
        const QString base = repoBase(target->path);
        const QString path = base + u"/pull-requests/%1/comments/%2"_s.arg(number).arg(id);
        const auto repository = [&] {
            return m_client.perform("GET", base, {}, std::nullopt, target->call);
        };
        // An edit names the version it replaces: read it, and read it again once when another
        // edit came between.
        for (int attempt = 0;; ++attempt) {
            auto current = m_client.onComment("GET", path, {}, std::nullopt, id, target->call, repository);
            if (!current)
                return std::unexpected(current.error());
            const QJsonObject edit{{"text"_L1, clipped(body, BitbucketDcCommentLimit)},
                                   {"version"_L1, current->toObject().value("version"_L1).toInt()}};
            auto edited = m_client.editComment("PUT", path, {}, edit, id, target->call, repository);
            if (edited || edited.error().code != ErrorCode::Conflict || attempt > 0)
                return edited;
        }
    }

private:
    static QString repoBase(const QStringList &path)
    {
        return u"/rest/api/1.0/projects/%1/repos/%2"_s.arg(segment(path.at(0)), segment(path.at(1)));
    }

    ForgeScope m_scope;
    RestClient m_client;
};

} // namespace

std::unique_ptr<ForgeApi> makeBitbucketDcApi(const ForgeAccount &account, const ForgeRestOptions &options)
{
    return std::make_unique<BitbucketDcApi>(account, options);
}

} // namespace pando::adapters::forgerest::detail
