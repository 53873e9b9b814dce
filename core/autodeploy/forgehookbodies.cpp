// Each forge's push payload read into a HookEvent (forgehook.cpp decodes the body and dispatches
// here; a pull request's payload goes on to forgehookpulls.cpp). The fields read are the ones each
// forge documents for its push event; everything else in a payload is ignored, so a forge adding
// fields changes nothing.
#include "core/autodeploy/forgehook.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::core::autodeploy::detail {

QString quoted(const QString &text)
{
    return u'"' + (text.size() > 80 ? text.first(80) + u"…"_s : text) + u'"';
}

void addUrls(QStringList &urls, const QJsonObject &object, std::initializer_list<QLatin1StringView> keys)
{
    for (const QLatin1StringView key : keys) {
        const QString url = object.value(key).toString().trimmed();
        if (!url.isEmpty() && !urls.contains(url))
            urls.append(url);
    }
}

QString firstString(const QJsonObject &object, std::initializer_list<QLatin1StringView> keys)
{
    for (const QLatin1StringView key : keys) {
        if (QString value = object.value(key).toString(); !value.isEmpty())
            return value;
    }
    return {};
}

namespace {

using Kind = HookEvent::Kind;

std::unexpected<Error> missing(const QString &where, const QString &what)
{
    return std::unexpected(Error{ErrorCode::Invalid, u"the payload has no %1"_s.arg(what), where, {}});
}

// An event or delivery header the forge always sends.
Result<QString> requiredHeader(const HookRequest &request, const char *name, QLatin1StringView shown)
{
    const QByteArray value = headerValue(request, name);
    if (value.isEmpty())
        return fail(ErrorCode::Invalid, u"the request has no %1 header"_s.arg(shown),
                    u"headers."_s + QLatin1StringView(name),
                    u"send hooks straight from the forge; a proxy in between must keep its headers"_s);
    return QString::fromUtf8(value);
}

// A full ref name: "refs/heads/main", "refs/tags/v1.2".
Result<QString> refAt(const QJsonValue &value, const QString &where)
{
    if (value.isUndefined() || value.isNull())
        return missing(where, u"ref that was pushed"_s);
    const QString ref = value.toString();
    if (!value.isString() || !ref.startsWith(u"refs/"_s) || ref.size() <= 5)
        return fail(ErrorCode::Invalid,
                    u"expected a full ref name like \"refs/heads/main\", got %1"_s.arg(
                        value.isString() ? quoted(ref) : u"a non-string"_s),
                    where);
    return ref;
}

// A commit id: 40 (SHA-1) or 64 (SHA-256) hex digits, returned lower-case; all zeros (the ref was
// deleted) is returned empty.
Result<QString> commitAt(const QJsonValue &value, const QString &where)
{
    if (value.isUndefined() || value.isNull())
        return missing(where, u"commit id"_s);
    const QString commit = value.toString().toLower();
    const bool hex = std::all_of(commit.begin(), commit.end(),
                                 [](QChar c) { return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f'); });
    if (!value.isString() || !hex || (commit.size() != 40 && commit.size() != 64))
        return fail(ErrorCode::Invalid,
                    u"expected a commit id of 40 or 64 hex digits, got %1"_s.arg(
                        value.isString() ? quoted(value.toString()) : u"a non-string"_s),
                    where);
    return commit.count(u'0') == commit.size() ? QString() : commit;
}

// The pushed ref and its new commit; deleted when the forge says so or the commit is all zeros
// (then without a commit).
Status readRefAndCommit(HookEvent &event, const QJsonValue &ref, const QString &refWhere, const QJsonValue &commit,
                        const QString &commitWhere, bool deleted = false)
{
    auto name = refAt(ref, refWhere);
    if (!name)
        return std::unexpected(name.error());
    auto id = commitAt(commit, commitWhere);
    if (!id)
        return std::unexpected(id.error());
    event.ref = *name;
    event.deleted = deleted || id->isEmpty();
    event.commit = event.deleted ? QString() : *id;
    return {};
}

Status requireUrls(const HookEvent &event, const QString &where)
{
    if (event.kind == Kind::Push && event.repoUrls.isEmpty())
        return missing(where, u"address of the repository (clone or web URL)"_s);
    return {};
}

// GitHub and the Gitea family send the same push: ref, after, deleted, repository, pusher.
Status readGitHubPush(const QJsonObject &body, HookEvent &event, std::initializer_list<QLatin1StringView> pusherKeys)
{
    if (auto read = readRefAndCommit(event, body.value("ref"_L1), u"body.ref"_s, body.value("after"_L1),
                                     u"body.after"_s, body.value("deleted"_L1).toBool());
        !read)
        return read;
    addUrls(event.repoUrls, body.value("repository"_L1).toObject(),
            {"clone_url"_L1, "ssh_url"_L1, "html_url"_L1, "git_url"_L1});
    event.pusher = firstString(body.value("pusher"_L1).toObject(), pusherKeys);
    return requireUrls(event, u"body.repository"_s);
}

// GitHub's event names, which the Gitea family sends as well (Gitea's pull_request_sync,
// _assign, _label, ... all arrive as "pull_request", told apart by their action).
Kind gitHubKind(const QString &name)
{
    if (name == "push"_L1)
        return Kind::Push;
    if (name == "ping"_L1)
        return Kind::Ping;
    return name == "pull_request"_L1 ? Kind::PullRequest : Kind::Other;
}

Result<HookEvent> readGitHub(const HookRequest &request, const QJsonObject &body)
{
    HookEvent event{.forge = Forge::GitHub};
    auto name = requiredHeader(request, "x-github-event", "X-GitHub-Event"_L1);
    if (!name)
        return std::unexpected(name.error());
    auto delivery = requiredHeader(request, "x-github-delivery", "X-GitHub-Delivery"_L1);
    if (!delivery)
        return std::unexpected(delivery.error());
    event.eventName = *name;
    event.deliveryId = *delivery;
    event.kind = gitHubKind(*name);
    if (event.kind == Kind::Push) {
        if (auto read = readGitHubPush(body, event, {"name"_L1}); !read)
            return std::unexpected(read.error());
    }
    if (event.kind == Kind::PullRequest) {
        if (auto read = readPullRequest(event, body); !read)
            return std::unexpected(read.error());
    }
    return event;
}

Result<HookEvent> readGitea(const HookRequest &request, const QJsonObject &body)
{
    // The family whose event header came is the one whose delivery header is read.
    struct Family {
        const char *event;
        const char *delivery;
        QLatin1StringView shownEvent;
        QLatin1StringView shownDelivery;
    };
    static constexpr Family families[] = {
        {"x-gitea-event", "x-gitea-delivery", "X-Gitea-Event"_L1, "X-Gitea-Delivery"_L1},
        {"x-forgejo-event", "x-forgejo-delivery", "X-Forgejo-Event"_L1, "X-Forgejo-Delivery"_L1},
        {"x-gogs-event", "x-gogs-delivery", "X-Gogs-Event"_L1, "X-Gogs-Delivery"_L1},
    };
    const Family *family = &families[0];
    for (const Family &candidate : families) {
        if (!headerValue(request, candidate.event).isEmpty()) {
            family = &candidate;
            break;
        }
    }
    HookEvent event{.forge = Forge::Gitea};
    auto name = requiredHeader(request, family->event, family->shownEvent);
    if (!name)
        return std::unexpected(name.error());
    auto delivery = requiredHeader(request, family->delivery, family->shownDelivery);
    if (!delivery)
        return std::unexpected(delivery.error());
    event.eventName = *name;
    event.deliveryId = *delivery;
    event.kind = gitHubKind(*name);
    if (event.kind == Kind::Push) {
        if (auto read = readGitHubPush(body, event, {"login"_L1, "username"_L1}); !read)
            return std::unexpected(read.error());
    }
    if (event.kind == Kind::PullRequest) {
        if (auto read = readPullRequest(event, body); !read)
            return std::unexpected(read.error());
    }
    return event;
}

Result<HookEvent> readGitLab(const HookRequest &request, const QJsonObject &body)
{
    HookEvent event{.forge = Forge::GitLab};
    auto name = requiredHeader(request, "x-gitlab-event", "X-Gitlab-Event"_L1);
    if (!name)
        return std::unexpected(name.error());
    // X-Gitlab-Event-UUID is one event's id, kept by its retries; Idempotency-Key (GitLab 17.4 and
    // later) is the same promise. X-Gitlab-Webhook-UUID names the hook, not the delivery.
    QString delivery = QString::fromUtf8(headerValue(request, "x-gitlab-event-uuid"));
    if (delivery.isEmpty())
        delivery = QString::fromUtf8(headerValue(request, "idempotency-key"));
    if (delivery.isEmpty())
        return fail(ErrorCode::Invalid, u"the request has no X-Gitlab-Event-UUID (or Idempotency-Key) header"_s,
                    u"headers.x-gitlab-event-uuid"_s,
                    u"send hooks straight from the forge; a proxy in between must keep its headers"_s);
    event.eventName = *name;
    event.deliveryId = delivery;
    event.kind = *name == "Push Hook"_L1 || *name == "Tag Push Hook"_L1 ? Kind::Push : Kind::Other;
    if (*name == "Merge Request Hook"_L1) {
        event.kind = Kind::PullRequest;
        if (auto read = readPullRequest(event, body); !read)
            return std::unexpected(read.error());
    }
    if (event.kind != Kind::Push)
        return event;
    if (auto read =
            readRefAndCommit(event, body.value("ref"_L1), u"body.ref"_s, body.value("after"_L1), u"body.after"_s);
        !read)
        return std::unexpected(read.error());
    addUrls(event.repoUrls, body.value("project"_L1).toObject(), {"git_http_url"_L1, "git_ssh_url"_L1, "web_url"_L1});
    addUrls(event.repoUrls, body.value("repository"_L1).toObject(),
            {"git_http_url"_L1, "git_ssh_url"_L1, "homepage"_L1});
    event.pusher = body.value("user_username"_L1).toString();
    if (auto urls = requireUrls(event, u"body.project"_s); !urls)
        return std::unexpected(urls.error());
    return event;
}

// Bitbucket Cloud: push.changes[], each {new, old} ({type, name, target{hash}}; new is null when
// the ref was deleted). The first change is the one read.
Status readBitbucketCloudPush(const QJsonObject &body, HookEvent &event)
{
    const QJsonArray changes = body.value("push"_L1).toObject().value("changes"_L1).toArray();
    if (changes.isEmpty())
        return missing(u"body.push.changes"_s, u"change (push.changes is missing or empty)"_s);
    const QJsonObject change = changes.first().toObject();
    const bool deleted = !change.value("new"_L1).isObject();
    const QString side = deleted ? u"old"_s : u"new"_s;
    const QString where = u"body.push.changes[0]."_s + side;
    if (!change.value(side).isObject())
        return missing(u"body.push.changes[0].new"_s, u"new or old side of the change"_s);
    const QJsonObject ref = change.value(side).toObject();
    const QString type = ref.value("type"_L1).toString();
    const QString name = ref.value("name"_L1).toString();
    if (type != "branch"_L1 && type != "tag"_L1)
        return fail(ErrorCode::Invalid, u"expected \"branch\" or \"tag\", got %1"_s.arg(quoted(type)),
                    where + u".type"_s);
    if (name.isEmpty())
        return missing(where + u".name"_s, u"name of the ref that was pushed"_s);
    event.ref = (type == "branch"_L1 ? u"refs/heads/"_s : u"refs/tags/"_s) + name;
    event.deleted = deleted;
    if (!deleted) {
        auto commit = commitAt(ref.value("target"_L1).toObject().value("hash"_L1), where + u".target.hash"_s);
        if (!commit)
            return std::unexpected(commit.error());
        event.commit = *commit;
        event.deleted = commit->isEmpty();
    }
    const QJsonObject repository = body.value("repository"_L1).toObject();
    if (const QString fullName = repository.value("full_name"_L1).toString(); !fullName.isEmpty()) {
        event.repoUrls << u"https://bitbucket.org/%1.git"_s.arg(fullName)
                       << u"git@bitbucket.org:%1.git"_s.arg(fullName);
    }
    addUrls(event.repoUrls, repository.value("links"_L1).toObject().value("html"_L1).toObject(), {"href"_L1});
    const QJsonObject actor = body.value("actor"_L1).toObject();
    event.pusher = firstString(actor, {"nickname"_L1, "display_name"_L1});
    return requireUrls(event, u"body.repository"_s);
}

// Bitbucket Data Center: changes[], each {ref{id}, refId, fromHash, toHash, type ADD|UPDATE|DELETE}.
Status readBitbucketDataCenterPush(const QJsonObject &body, HookEvent &event)
{
    const QJsonArray changes = body.value("changes"_L1).toArray();
    if (changes.isEmpty())
        return missing(u"body.changes"_s, u"change (changes is missing or empty)"_s);
    const QJsonObject change = changes.first().toObject();
    QJsonValue refId = change.value("ref"_L1).toObject().value("id"_L1);
    if (refId.isUndefined())
        refId = change.value("refId"_L1);
    if (auto read = readRefAndCommit(event, refId, u"body.changes[0].ref.id"_s, change.value("toHash"_L1),
                                     u"body.changes[0].toHash"_s, change.value("type"_L1).toString() == "DELETE"_L1);
        !read)
        return read;
    const QJsonObject links = body.value("repository"_L1).toObject().value("links"_L1).toObject();
    for (const QLatin1StringView kind : {"clone"_L1, "self"_L1}) {
        for (const QJsonValue link : links.value(kind).toArray())
            addUrls(event.repoUrls, link.toObject(), {"href"_L1});
    }
    event.pusher = firstString(body.value("actor"_L1).toObject(), {"name"_L1, "displayName"_L1});
    return requireUrls(event, u"body.repository.links"_s);
}

Result<HookEvent> readBitbucket(const HookRequest &request, const QJsonObject &body)
{
    HookEvent event{.forge = Forge::Bitbucket};
    auto name = requiredHeader(request, "x-event-key", "X-Event-Key"_L1);
    if (!name)
        return std::unexpected(name.error());
    event.eventName = *name;
    // Cloud names its deliveries X-Request-UUID (and its hook X-Hook-UUID); Data Center X-Request-Id.
    const bool dataCenter = *name == "repo:refs_changed"_L1 || name->startsWith(u"diagnostics:"_s) ||
                            name->startsWith(u"pr:"_s) ||
                            (*name != "repo:push"_L1 && headerValue(request, "x-hook-uuid").isEmpty() &&
                             headerValue(request, "x-request-uuid").isEmpty());
    auto delivery = dataCenter ? requiredHeader(request, "x-request-id", "X-Request-Id"_L1)
                               : requiredHeader(request, "x-request-uuid", "X-Request-UUID"_L1);
    if (!delivery)
        return std::unexpected(delivery.error());
    event.deliveryId = *delivery;
    if (*name == "diagnostics:ping"_L1)
        event.kind = Kind::Ping;
    else if (*name == "repo:push"_L1 || *name == "repo:refs_changed"_L1)
        event.kind = Kind::Push;
    else if (name->startsWith(u"pullrequest:"_s) || name->startsWith(u"pr:"_s))
        event.kind = Kind::PullRequest;
    if (event.kind == Kind::Push) {
        auto read = dataCenter ? readBitbucketDataCenterPush(body, event) : readBitbucketCloudPush(body, event);
        if (!read)
            return std::unexpected(read.error());
    }
    if (event.kind == Kind::PullRequest) {
        if (auto read = readPullRequest(event, body); !read)
            return std::unexpected(read.error());
    }
    return event;
}

// An Azure DevOps service hook: {id, eventType, publisherId, resource{refUpdates[], repository,
// pushedBy}}. The first ref update is the one read. git.pullrequest.* events carry a pull request
// as their resource instead.
Result<HookEvent> readAzure(const QJsonObject &body)
{
    HookEvent event{.forge = Forge::AzureDevOps};
    event.deliveryId = body.value("id"_L1).toString();
    if (event.deliveryId.isEmpty())
        return missing(u"body.id"_s, u"id (the service hook's event id)"_s);
    event.eventName = body.value("eventType"_L1).toString();
    if (event.eventName.isEmpty())
        return missing(u"body.eventType"_s, u"eventType"_s);
    event.kind = event.eventName == "git.push"_L1 ? Kind::Push : Kind::Other;
    if (event.eventName.startsWith(u"git.pullrequest."_s)) {
        event.kind = Kind::PullRequest;
        if (auto read = readPullRequest(event, body); !read)
            return std::unexpected(read.error());
    }
    if (event.kind != Kind::Push)
        return event;
    const QJsonObject resource = body.value("resource"_L1).toObject();
    const QJsonArray updates = resource.value("refUpdates"_L1).toArray();
    if (updates.isEmpty())
        return missing(u"body.resource.refUpdates"_s, u"ref update (resource.refUpdates is missing or empty)"_s);
    const QJsonObject update = updates.first().toObject();
    if (auto read = readRefAndCommit(event, update.value("name"_L1), u"body.resource.refUpdates[0].name"_s,
                                     update.value("newObjectId"_L1), u"body.resource.refUpdates[0].newObjectId"_s);
        !read)
        return std::unexpected(read.error());
    addUrls(event.repoUrls, resource.value("repository"_L1).toObject(), {"remoteUrl"_L1, "sshUrl"_L1, "webUrl"_L1});
    event.pusher = firstString(resource.value("pushedBy"_L1).toObject(), {"uniqueName"_L1, "displayName"_L1});
    if (auto urls = requireUrls(event, u"body.resource.repository"_s); !urls)
        return std::unexpected(urls.error());
    return event;
}

} // namespace

Result<HookEvent> readEvent(Forge forge, const HookRequest &request, const QJsonObject &body)
{
    switch (forge) {
    case Forge::GitHub:
        return readGitHub(request, body);
    case Forge::GitLab:
        return readGitLab(request, body);
    case Forge::Gitea:
        return readGitea(request, body);
    case Forge::Bitbucket:
        return readBitbucket(request, body);
    case Forge::AzureDevOps:
        return readAzure(body);
    }
    return fail(ErrorCode::Internal, u"unknown forge"_s);
}

} // namespace pando::core::autodeploy::detail
