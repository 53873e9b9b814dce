// Each forge's pull (merge) request event read into HookEvent::pullRequest. forgehookbodies.cpp
// reads the headers and tells the event's kind; here each forge's payload is first read into a
// PullDraft, values still raw and each with the path that names it, and then one set of rules,
// the same for every forge, says which of them an action needs and what a good one looks like.
// The fields read are the ones each forge documents for its pull-request event; everything else
// in a payload is ignored.
#include "core/autodeploy/forgehook.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <algorithm>
#include <cmath>
#include <limits>

using namespace Qt::StringLiterals;

namespace pando::core::autodeploy::detail {

namespace {

using Action = PullRequestEvent::Action;

// A value of the payload and the path that names it in an error.
struct PullField {
    QJsonValue value;
    QString where;
};

// One forge's payload, read but not yet judged.
struct PullDraft {
    Action action = Action::Other;
    QString actionName;
    PullField number;
    PullField headBranch;
    PullField headCommit;
    bool abbreviatedCommit = false; // Bitbucket Cloud sends an abbreviated hash, not the whole id
    PullField baseBranch;
    QStringList headRepoUrls;
    QStringList baseRepoUrls;
    QString baseRepoWhere;
    bool fork = false;
    bool merged = false; // as the payload says; kept only when the action is Closed
    QString title;
    QString webUrl;
    QString sender;
};

std::unexpected<Error> pullMissing(const QString &where, const QString &what)
{
    return std::unexpected(Error{ErrorCode::Invalid, u"the payload has no %1"_s.arg(what), where, {}});
}

bool absentValue(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull();
}

QString shownValue(const QJsonValue &value)
{
    if (value.isString())
        return quoted(value.toString());
    if (value.isDouble())
        return QString::number(value.toDouble(), 'g', 17);
    return value.isBool() ? u"a boolean"_s : u"neither a number nor a string"_s;
}

// The number people see: a whole number from 1 up, sent as a JSON number (never as a string).
Result<int> pullNumber(const PullField &field)
{
    if (absentValue(field.value))
        return pullMissing(field.where, u"number of the pull request"_s);
    const double number = field.value.toDouble();
    if (!field.value.isDouble() || std::trunc(number) != number || number < 1 ||
        number > std::numeric_limits<int>::max())
        return fail(
            ErrorCode::Invalid,
            u"expected the pull request's number, a whole number from 1 up, got %1"_s.arg(shownValue(field.value)),
            field.where);
    return static_cast<int>(number);
}

// A branch name without "refs/heads/". Absent is an error only when required; a present one must
// be a string a ref can hold.
Result<QString> pullBranch(const PullField &field, bool required)
{
    if (absentValue(field.value) || (field.value.isString() && field.value.toString().isEmpty())) {
        if (required)
            return pullMissing(field.where, u"branch name"_s);
        return QString();
    }
    QString name = field.value.toString();
    if (name.startsWith(u"refs/heads/"_s))
        name.remove(0, 11);
    const bool control =
        std::any_of(name.begin(), name.end(), [](QChar c) { return c.category() == QChar::Other_Control; });
    if (!field.value.isString() || name.isEmpty() || name.size() > 255 || control)
        return fail(ErrorCode::Invalid,
                    u"expected a branch name of 1 to 255 characters without control characters, got %1"_s.arg(
                        shownValue(field.value)),
                    field.where);
    return name;
}

// A head commit, lower-case: 40 or 64 hex digits, or (abbreviated) 7 to 40. Absent, empty or all
// zeros is returned empty: whether that will do is the action's business.
Result<QString> pullCommit(const PullField &field, bool abbreviated)
{
    if (absentValue(field.value) || (field.value.isString() && field.value.toString().isEmpty()))
        return QString();
    const QString commit = field.value.toString().toLower();
    const bool hex = std::all_of(commit.begin(), commit.end(),
                                 [](QChar c) { return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f'); });
    const bool length =
        abbreviated ? commit.size() >= 7 && commit.size() <= 40 : commit.size() == 40 || commit.size() == 64;
    if (!field.value.isString() || !hex || !length)
        return fail(ErrorCode::Invalid,
                    (abbreviated ? u"expected a commit id of 7 to 40 hex digits, got %1"_s
                                 : u"expected a commit id of 40 or 64 hex digits, got %1"_s)
                        .arg(shownValue(field.value)),
                    field.where);
    return commit.count(u'0') == commit.size() ? QString() : commit;
}

// Text kept and shown: on one line (a line break or tab becomes a space), cut to max characters.
QString pullText(QString text, qsizetype max)
{
    for (QChar &c : text) {
        if (c.category() == QChar::Other_Control)
            c = u' ';
    }
    text = text.simplified();
    text.truncate(max);
    return text;
}

// A page to link to: http or https only, so that nothing else ends up behind a link.
QString pageUrl(const QString &url)
{
    const QString trimmed = url.trimmed();
    const bool web = trimmed.startsWith(u"https://"_s) || trimmed.startsWith(u"http://"_s);
    return web && trimmed.size() <= 2048 && !trimmed.contains(u' ') ? trimmed : QString();
}

// Two repositories told apart by a name, or when either lacks it by an id; false when neither
// can be compared.
bool otherRepository(const QString &name, const QString &baseName, const QJsonValue &id, const QJsonValue &baseId)
{
    if (!name.isEmpty() && !baseName.isEmpty())
        return name.compare(baseName, Qt::CaseInsensitive) != 0;
    if (!absentValue(id) && !absentValue(baseId))
        return id != baseId;
    return false;
}

// GitHub and the Gitea family: {action, number, pull_request{head, base{ref, sha, repo}, merged,
// title, html_url}, repository, sender}.
PullDraft gitHubPull(const QJsonObject &body)
{
    PullDraft draft;
    draft.actionName = body.value("action"_L1).toString();
    if (draft.actionName == "opened"_L1 || draft.actionName == "reopened"_L1)
        draft.action = Action::Opened;
    else if (draft.actionName == "synchronize"_L1 || draft.actionName == "synchronized"_L1)
        draft.action = Action::Updated; // GitHub says synchronize, Gitea and Gogs synchronized
    else if (draft.actionName == "closed"_L1)
        draft.action = Action::Closed;
    draft.number = {body.value("number"_L1), u"body.number"_s};
    const QJsonObject pull = body.value("pull_request"_L1).toObject();
    const QJsonObject head = pull.value("head"_L1).toObject();
    const QJsonObject base = pull.value("base"_L1).toObject();
    draft.headBranch = {head.value("ref"_L1), u"body.pull_request.head.ref"_s};
    draft.headCommit = {head.value("sha"_L1), u"body.pull_request.head.sha"_s};
    draft.baseBranch = {base.value("ref"_L1), u"body.pull_request.base.ref"_s};
    const QJsonValue headRepo = head.value("repo"_L1);
    QJsonObject baseRepo = base.value("repo"_L1).toObject();
    addUrls(draft.headRepoUrls, headRepo.toObject(), {"clone_url"_L1, "ssh_url"_L1, "html_url"_L1});
    addUrls(draft.baseRepoUrls, baseRepo, {"clone_url"_L1, "ssh_url"_L1, "html_url"_L1});
    // The event's repository is the base as well (the hook is the base repository's).
    addUrls(draft.baseRepoUrls, body.value("repository"_L1).toObject(), {"clone_url"_L1, "ssh_url"_L1, "html_url"_L1});
    draft.baseRepoWhere = u"body.pull_request.base.repo"_s;
    if (baseRepo.isEmpty())
        baseRepo = body.value("repository"_L1).toObject();
    if (headRepo.isNull()) {
        draft.fork = true; // GitHub sends null once the fork the head lived in is deleted
    } else if (headRepo.isObject()) {
        const QJsonObject repo = headRepo.toObject();
        // GitHub's repositories have an id, Gitea's branch infos a repo_id as well.
        const bool ids = repo.contains("id"_L1) && baseRepo.contains("id"_L1);
        draft.fork = otherRepository(repo.value("full_name"_L1).toString(), baseRepo.value("full_name"_L1).toString(),
                                     ids ? repo.value("id"_L1) : head.value("repo_id"_L1),
                                     ids ? baseRepo.value("id"_L1) : base.value("repo_id"_L1));
    }
    draft.merged = pull.value("merged"_L1).toBool();
    draft.title = pull.value("title"_L1).toString();
    draft.webUrl = pull.value("html_url"_L1).toString();
    draft.sender = firstString(body.value("sender"_L1).toObject(), {"login"_L1, "username"_L1});
    return draft;
}

// GitLab: {object_kind "merge_request", user, project, object_attributes{action, iid, oldrev,
// source_branch, target_branch, source_project_id, target_project_id, source, target,
// last_commit{id}, title, url}}.
PullDraft gitLabPull(const QJsonObject &body)
{
    PullDraft draft;
    const QJsonObject attributes = body.value("object_attributes"_L1).toObject();
    draft.actionName = attributes.value("action"_L1).toString();
    if (draft.actionName == "open"_L1 || draft.actionName == "reopen"_L1) {
        draft.action = Action::Opened;
    } else if (draft.actionName == "update"_L1) {
        // "update" is also a new title, label or assignee; oldrev comes only with new commits.
        const bool commits = !attributes.value("oldrev"_L1).toString().isEmpty();
        draft.action = commits ? Action::Updated : Action::Other;
    } else if (draft.actionName == "close"_L1 || draft.actionName == "merge"_L1) {
        draft.action = Action::Closed;
        draft.merged = draft.actionName == "merge"_L1;
    }
    draft.number = {attributes.value("iid"_L1), u"body.object_attributes.iid"_s};
    draft.headBranch = {attributes.value("source_branch"_L1), u"body.object_attributes.source_branch"_s};
    draft.headCommit = {attributes.value("last_commit"_L1).toObject().value("id"_L1),
                        u"body.object_attributes.last_commit.id"_s};
    draft.baseBranch = {attributes.value("target_branch"_L1), u"body.object_attributes.target_branch"_s};
    const QJsonObject source = attributes.value("source"_L1).toObject();
    const QJsonObject target = attributes.value("target"_L1).toObject();
    addUrls(draft.headRepoUrls, source, {"git_http_url"_L1, "git_ssh_url"_L1, "web_url"_L1});
    addUrls(draft.baseRepoUrls, target, {"git_http_url"_L1, "git_ssh_url"_L1, "web_url"_L1});
    // The hook's project is the target one.
    addUrls(draft.baseRepoUrls, body.value("project"_L1).toObject(),
            {"git_http_url"_L1, "git_ssh_url"_L1, "web_url"_L1});
    draft.baseRepoWhere = u"body.object_attributes.target"_s;
    const QJsonValue sourceId = attributes.value("source_project_id"_L1);
    const QJsonValue targetId = attributes.value("target_project_id"_L1);
    draft.fork = !absentValue(sourceId) && !absentValue(targetId)
                     ? sourceId != targetId
                     : otherRepository(source.value("path_with_namespace"_L1).toString(),
                                       target.value("path_with_namespace"_L1).toString(), {}, {});
    draft.title = attributes.value("title"_L1).toString();
    draft.webUrl = attributes.value("url"_L1).toString();
    draft.sender = firstString(body.value("user"_L1).toObject(), {"username"_L1, "name"_L1});
    return draft;
}

// A Bitbucket Cloud repository's addresses: the clone ones its full name makes (the payload has
// none), then its page.
void bitbucketCloudRepoUrls(QStringList &urls, const QJsonObject &repository)
{
    if (const QString fullName = repository.value("full_name"_L1).toString(); !fullName.isEmpty()) {
        for (const QString &url :
             {u"https://bitbucket.org/%1.git"_s.arg(fullName), u"git@bitbucket.org:%1.git"_s.arg(fullName)}) {
            if (!urls.contains(url))
                urls.append(url);
        }
    }
    addUrls(urls, repository.value("links"_L1).toObject().value("html"_L1).toObject(), {"href"_L1});
}

// Bitbucket Cloud: X-Event-Key pullrequest:*, {actor, repository, pullrequest{id, title,
// source/destination{branch{name}, commit{hash}, repository}, links{html{href}}}}.
PullDraft bitbucketCloudPull(const QString &eventName, const QJsonObject &body)
{
    PullDraft draft;
    draft.actionName = eventName;
    if (eventName == "pullrequest:created"_L1) {
        draft.action = Action::Opened;
    } else if (eventName == "pullrequest:updated"_L1) {
        draft.action = Action::Updated;
    } else if (eventName == "pullrequest:fulfilled"_L1 || eventName == "pullrequest:rejected"_L1) {
        draft.action = Action::Closed;
        draft.merged = eventName == "pullrequest:fulfilled"_L1;
    }
    const QJsonObject pull = body.value("pullrequest"_L1).toObject();
    const QJsonObject source = pull.value("source"_L1).toObject();
    const QJsonObject destination = pull.value("destination"_L1).toObject();
    draft.number = {pull.value("id"_L1), u"body.pullrequest.id"_s};
    draft.headBranch = {source.value("branch"_L1).toObject().value("name"_L1),
                        u"body.pullrequest.source.branch.name"_s};
    draft.headCommit = {source.value("commit"_L1).toObject().value("hash"_L1),
                        u"body.pullrequest.source.commit.hash"_s};
    draft.abbreviatedCommit = true;
    draft.baseBranch = {destination.value("branch"_L1).toObject().value("name"_L1),
                        u"body.pullrequest.destination.branch.name"_s};
    const QJsonObject sourceRepo = source.value("repository"_L1).toObject();
    const QJsonObject destinationRepo = destination.value("repository"_L1).toObject();
    bitbucketCloudRepoUrls(draft.headRepoUrls, sourceRepo);
    bitbucketCloudRepoUrls(draft.baseRepoUrls, destinationRepo);
    bitbucketCloudRepoUrls(draft.baseRepoUrls, body.value("repository"_L1).toObject());
    draft.baseRepoWhere = u"body.pullrequest.destination.repository"_s;
    draft.fork =
        otherRepository(sourceRepo.value("full_name"_L1).toString(), destinationRepo.value("full_name"_L1).toString(),
                        sourceRepo.value("uuid"_L1), destinationRepo.value("uuid"_L1));
    draft.title = pull.value("title"_L1).toString();
    draft.webUrl = pull.value("links"_L1).toObject().value("html"_L1).toObject().value("href"_L1).toString();
    draft.sender = firstString(body.value("actor"_L1).toObject(), {"nickname"_L1, "display_name"_L1});
    return draft;
}

// A Bitbucket Data Center repository's clone addresses and page.
void dataCenterRepoUrls(QStringList &urls, const QJsonObject &repository)
{
    const QJsonObject links = repository.value("links"_L1).toObject();
    for (const QLatin1StringView kind : {"clone"_L1, "self"_L1}) {
        for (const QJsonValue link : links.value(kind).toArray())
            addUrls(urls, link.toObject(), {"href"_L1});
    }
}

// Project key and slug: what names a Data Center repository.
QString dataCenterRepoName(const QJsonObject &repository)
{
    const QString key = repository.value("project"_L1).toObject().value("key"_L1).toString();
    const QString slug = repository.value("slug"_L1).toString();
    if (key.isEmpty() || slug.isEmpty())
        return {};
    return key + u'/' + slug;
}

// Bitbucket Data Center: X-Event-Key pr:*, {actor, pullRequest{id, title, fromRef/toRef{id,
// displayId, latestCommit, repository{slug, project{key}, links{clone[], self[]}}}, links{self[]}}}.
PullDraft dataCenterPull(const QString &eventName, const QJsonObject &body)
{
    PullDraft draft;
    draft.actionName = eventName;
    if (eventName == "pr:opened"_L1) {
        draft.action = Action::Opened;
    } else if (eventName == "pr:from_ref_updated"_L1) {
        draft.action = Action::Updated;
    } else if (eventName == "pr:merged"_L1 || eventName == "pr:declined"_L1 || eventName == "pr:deleted"_L1) {
        draft.action = Action::Closed;
        draft.merged = eventName == "pr:merged"_L1;
    }
    const QJsonObject pull = body.value("pullRequest"_L1).toObject();
    const QJsonObject from = pull.value("fromRef"_L1).toObject();
    const QJsonObject to = pull.value("toRef"_L1).toObject();
    draft.number = {pull.value("id"_L1), u"body.pullRequest.id"_s};
    // displayId is the branch's name; id ("refs/heads/...") stands in when it is missing.
    const auto branch = [](const QJsonObject &ref, const QString &where) -> PullField {
        if (ref.contains("displayId"_L1) || !ref.contains("id"_L1))
            return {ref.value("displayId"_L1), where + u".displayId"_s};
        return {ref.value("id"_L1), where + u".id"_s};
    };
    draft.headBranch = branch(from, u"body.pullRequest.fromRef"_s);
    draft.headCommit = {from.value("latestCommit"_L1), u"body.pullRequest.fromRef.latestCommit"_s};
    draft.baseBranch = branch(to, u"body.pullRequest.toRef"_s);
    const QJsonObject fromRepo = from.value("repository"_L1).toObject();
    const QJsonObject toRepo = to.value("repository"_L1).toObject();
    dataCenterRepoUrls(draft.headRepoUrls, fromRepo);
    dataCenterRepoUrls(draft.baseRepoUrls, toRepo);
    draft.baseRepoWhere = u"body.pullRequest.toRef.repository.links"_s;
    draft.fork = otherRepository(dataCenterRepoName(fromRepo), dataCenterRepoName(toRepo), fromRepo.value("id"_L1),
                                 toRepo.value("id"_L1));
    draft.title = pull.value("title"_L1).toString();
    // at() and not first(): an empty or missing array gives an undefined value, not a crash.
    const QJsonArray self = pull.value("links"_L1).toObject().value("self"_L1).toArray();
    draft.webUrl = self.at(0).toObject().value("href"_L1).toString();
    draft.sender = firstString(body.value("actor"_L1).toObject(), {"name"_L1, "displayName"_L1});
    return draft;
}

// Azure DevOps: {eventType git.pullrequest.*, resource{pullRequestId, status, title,
// sourceRefName, targetRefName, lastMergeSourceCommit{commitId}, repository, forkSource,
// createdBy, closedBy, _links{web{href}}}}.
PullDraft azurePull(const QString &eventType, const QJsonObject &body)
{
    PullDraft draft;
    const QJsonObject resource = body.value("resource"_L1).toObject();
    const QString status = resource.value("status"_L1).toString();
    draft.actionName = eventType;
    if (!status.isEmpty())
        draft.actionName += u':' + status;
    if (eventType == "git.pullrequest.created"_L1) {
        draft.action = Action::Opened;
    } else if (eventType == "git.pullrequest.updated"_L1) {
        if (status == "active"_L1) {
            draft.action = Action::Updated;
        } else if (status == "completed"_L1 || status == "abandoned"_L1) {
            draft.action = Action::Closed;
            draft.merged = status == "completed"_L1;
        }
    }
    // git.pullrequest.merged reports a merge attempt, which may have failed: Other.
    draft.number = {resource.value("pullRequestId"_L1), u"body.resource.pullRequestId"_s};
    draft.headBranch = {resource.value("sourceRefName"_L1), u"body.resource.sourceRefName"_s};
    draft.headCommit = {resource.value("lastMergeSourceCommit"_L1).toObject().value("commitId"_L1),
                        u"body.resource.lastMergeSourceCommit.commitId"_s};
    draft.baseBranch = {resource.value("targetRefName"_L1), u"body.resource.targetRefName"_s};
    addUrls(draft.baseRepoUrls, resource.value("repository"_L1).toObject(), {"remoteUrl"_L1, "sshUrl"_L1, "webUrl"_L1});
    draft.baseRepoWhere = u"body.resource.repository"_s;
    const QJsonValue forkSource = resource.value("forkSource"_L1);
    draft.fork = forkSource.isObject();
    if (draft.fork)
        addUrls(draft.headRepoUrls, forkSource.toObject().value("repository"_L1).toObject(),
                {"remoteUrl"_L1, "sshUrl"_L1, "webUrl"_L1});
    else
        draft.headRepoUrls = draft.baseRepoUrls;
    draft.title = resource.value("title"_L1).toString();
    draft.webUrl = resource.value("_links"_L1).toObject().value("web"_L1).toObject().value("href"_L1).toString();
    // Who closed it caused a Closed event; any other, as far as the payload says, its author.
    const QString closedBy = draft.action == Action::Closed ? firstString(resource.value("closedBy"_L1).toObject(),
                                                                          {"uniqueName"_L1, "displayName"_L1})
                                                            : QString();
    draft.sender = !closedBy.isEmpty()
                       ? closedBy
                       : firstString(resource.value("createdBy"_L1).toObject(), {"uniqueName"_L1, "displayName"_L1});
    return draft;
}

// The rules every forge's draft is held to. Other needs only its number, and keeps what else is
// there and well-formed; Opened, Updated and Closed need a head branch, a head commit (Closed may
// lack it: the branch may be gone) and an address of the base repository.
Status finishPull(const PullDraft &draft, HookEvent &event)
{
    auto number = pullNumber(draft.number);
    if (!number)
        return std::unexpected(number.error());
    PullRequestEvent &pull = event.pullRequest;
    pull.action = draft.action;
    pull.actionName = pullText(draft.actionName, 100);
    pull.number = *number;
    pull.headRepoUrls = draft.headRepoUrls;
    pull.fork = draft.fork;
    pull.merged = draft.action == Action::Closed && draft.merged;
    pull.title = pullText(draft.title, 200);
    pull.webUrl = pageUrl(draft.webUrl);
    event.repoUrls = draft.baseRepoUrls;
    event.pusher = draft.sender;

    auto headBranch = pullBranch(draft.headBranch, draft.action != Action::Other);
    auto headCommit = pullCommit(draft.headCommit, draft.abbreviatedCommit);
    auto baseBranch = pullBranch(draft.baseBranch, false);
    if (draft.action == Action::Other) {
        pull.headBranch = headBranch.value_or(QString());
        pull.headCommit = headCommit.value_or(QString());
        pull.baseBranch = baseBranch.value_or(QString());
        return {};
    }
    if (!headBranch)
        return std::unexpected(headBranch.error());
    if (!headCommit)
        return std::unexpected(headCommit.error());
    if (headCommit->isEmpty() && draft.action != Action::Closed)
        return pullMissing(draft.headCommit.where, u"head commit of the pull request"_s);
    if (!baseBranch)
        return std::unexpected(baseBranch.error());
    if (event.repoUrls.isEmpty())
        return pullMissing(draft.baseRepoWhere, u"address of the base repository (clone or web URL)"_s);
    pull.headBranch = *headBranch;
    pull.headCommit = *headCommit;
    pull.baseBranch = *baseBranch;
    return {};
}

} // namespace

Status readPullRequest(HookEvent &event, const QJsonObject &body)
{
    switch (event.forge) {
    case Forge::GitHub:
    case Forge::Gitea:
        return finishPull(gitHubPull(body), event);
    case Forge::GitLab:
        return finishPull(gitLabPull(body), event);
    case Forge::Bitbucket:
        return finishPull(event.eventName.startsWith(u"pr:"_s) ? dataCenterPull(event.eventName, body)
                                                               : bitbucketCloudPull(event.eventName, body),
                          event);
    case Forge::AzureDevOps:
        return finishPull(azurePull(event.eventName, body), event);
    }
    return fail(ErrorCode::Internal, u"unknown forge"_s);
}

} // namespace pando::core::autodeploy::detail
