#pragma once
// Package autodeploy turns a forge's push into a deploy, and a pull request into a preview. This
// file is its front door: the push and pull-request webhooks of GitHub, GitLab, Gitea (and Forgejo
// and Gogs, which send the same hook), Bitbucket (Cloud and Data Center) and Azure DevOps, each
// checked the way that forge signs it and read into one HookEvent. What an event then deploys is the
// engine's business, not this file's.
//
// Pure functions over a request already read off the wire: no I/O, no logging, safe to call from
// any thread. No error text contains the secret, the expected signature or the one received.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>
#include <initializer_list>

class QJsonObject;

namespace pando::core::autodeploy {

enum class Forge { GitHub, GitLab, Gitea, Bitbucket, AzureDevOps };
QString forgeName(Forge forge); // "github", "gitlab", "gitea", "bitbucket", "azure-devops"

inline constexpr qint64 MaxHookPayloadBytes = 2 * 1024 * 1024;

struct HookRequest {
    QMap<QByteArray, QByteArray> headers; // names lower-cased, as sent (only one value per name)
    QByteArray body;                      // the raw body, exactly as received
};

// One pull (merge) request event, the same for every forge. Which forge event is which action:
//  - GitHub, Gitea/Forgejo/Gogs (event "pull_request"): opened, reopened -> Opened; synchronize
//    (Gitea: synchronized) -> Updated; closed -> Closed, merged from pull_request.merged; anything
//    else (edited, labeled, assigned, review_requested, ...) -> Other.
//  - GitLab ("Merge Request Hook"): open, reopen -> Opened; update -> Updated only when the payload
//    carries object_attributes.oldrev (new commits came), else Other; close -> Closed; merge ->
//    Closed and merged; approved, approval, unapproved, ... -> Other.
//  - Bitbucket Cloud (X-Event-Key "pullrequest:*"): created -> Opened; updated -> Updated;
//    fulfilled -> Closed and merged; rejected -> Closed; approvals, comments, ... -> Other.
//  - Bitbucket Data Center ("pr:*"): pr:opened -> Opened; pr:from_ref_updated -> Updated; pr:merged
//    -> Closed and merged; pr:declined, pr:deleted -> Closed; the other pr:* events -> Other.
//  - Azure DevOps: git.pullrequest.created -> Opened; git.pullrequest.updated -> Updated while
//    resource.status is "active" (it is also sent for votes and reviewer changes, so Updated may
//    repeat a head commit already seen), Closed when "completed" (merged) or "abandoned";
//    git.pullrequest.merged (a merge attempt, not the completion) -> Other.
struct PullRequestEvent {
    enum class Action { Opened, Updated, Closed, Other };
    Action action = Action::Other;
    QString actionName;       // what the forge called it: "opened", "synchronize", "pullrequest:fulfilled",
                              // "pr:merged", "git.pullrequest.updated:completed" (Azure: event type and status)
    int number = 0;           // the number people see: GitHub/Gitea number, GitLab iid, Bitbucket id, Azure
                              // pullRequestId (> 0)
    QString headBranch;       // the source branch, without "refs/heads/"
    QString headCommit;       // lower-case hex; 40 or 64 digits, except Bitbucket Cloud, which sends an
                              // abbreviation (7..40 hex digits); may be empty when Closed (branch deleted) or Other
    QStringList headRepoUrls; // every address of the repository the head branch lives in (clone https, ssh, web
                              // page); empty when the forge does not say (a deleted fork)
    QString baseBranch;       // the target branch, without "refs/heads/" (empty when the payload does not say)
    bool fork = false;        // the head lives in another repository than the base
    bool merged = false;      // Closed by a merge
    QString title;            // on one line (a line break or tab becomes a space), cut to 200 characters
    QString webUrl;           // the pull request's page, when the payload gives it (http or https only)
};

struct HookEvent {
    Forge forge = Forge::GitHub;
    QString deliveryId; // the forge's id of this delivery/event (retries of one event share it)
    enum class Kind { Ping, Push, PullRequest, Other } kind = Kind::Other;
    QString eventName;    // what the forge called it ("push", "Push Hook", "repo:push", "git.push", "ping",
                          // "pull_request", "Merge Request Hook", "pullrequest:created", "pr:opened", ...)
    QString ref;          // "refs/heads/main" or "refs/tags/v1.2"; empty unless Push
    QString commit;       // the new head: 40 (or 64) lowercase hex digits; empty when the ref was deleted, and
                          // unless Push
    bool deleted = false; // the push deleted the ref
    QStringList repoUrls; // every address of the repository the payload names (clone https, ssh, web page),
                          // non-empty for Push; for PullRequest the BASE (target) repository's, non-empty unless
                          // the action is Other
    QString pusher;       // who pushed, or for PullRequest who caused the event (sender, user, actor; Azure
                          // DevOps: closedBy when Closed, else createdBy), as the forge names them (may be empty)
    PullRequestEvent pullRequest; // meaningful only when kind == PullRequest
};

// Which forge sent it, from its headers (and for Azure DevOps, which sends no forge header, a JSON
// body whose "publisherId" is "tfs" and "eventType" is set). Gitea sends GitHub's headers as well
// as its own, so its own are looked at first. Invalid (where "headers") naming the headers each
// forge sends when none matches.
Result<Forge> detectForge(const HookRequest &request);

// Checks the request the forge's way, against the secret the app's hook has, comparing the whole
// MAC or secret without an early exit. Unauthorized, where "headers.<name>", with a message that
// names the header that was missing or did not match:
//  - GitHub: X-Hub-Signature-256, "sha256=" + hex HMAC-SHA256 of the raw body (the legacy SHA-1
//    X-Hub-Signature alone is refused).
//  - GitLab: X-Gitlab-Token equal to the secret.
//  - Gitea/Forgejo/Gogs: X-Gitea-Signature, X-Forgejo-Signature or X-Gogs-Signature, bare hex
//    HMAC-SHA256 of the raw body, or X-Hub-Signature-256 as GitHub sends it (the first of these
//    present is the one checked).
//  - Bitbucket (Cloud and Data Center): X-Hub-Signature, "sha256=" + hex HMAC-SHA256 of the body.
//  - Azure DevOps: HTTP basic authentication whose password is the secret (any user name).
// Hex is compared case-insensitively. An empty secret never verifies (where "secret").
Status verify(Forge forge, const HookRequest &request, const QByteArray &secret);

// Reads a verified request. The body is JSON, or a form (application/x-www-form-urlencoded) whose
// "payload" field is the JSON. Errors are Invalid with where naming the part that was wrong:
// "body" (not a JSON object), "body.<field>" ("body.ref", "body.after", "body.push.changes",
// ...: a push without its ref, a commit that is not hex, no repository address),
// "headers.<name>" (the event or delivery header is missing; Azure DevOps: "body.id"), except a
// body over MaxHookPayloadBytes, which is TooLarge at "body".
// A pull-request event always needs its number, a positive integer ("body.number",
// "body.object_attributes.iid", "body.pullrequest.id", "body.pullRequest.id",
// "body.resource.pullRequestId"). Opened, Updated and Closed need as well the head branch
// ("body.pull_request.head.ref", "body.object_attributes.source_branch",
// "body.pullrequest.source.branch.name", "body.pullRequest.fromRef.displayId",
// "body.resource.sourceRefName"), the head commit, which only Closed may lack
// ("body.pull_request.head.sha", "body.object_attributes.last_commit.id",
// "body.pullrequest.source.commit.hash", "body.pullRequest.fromRef.latestCommit",
// "body.resource.lastMergeSourceCommit.commitId"), and an address of the base repository
// ("body.pull_request.base.repo", "body.object_attributes.target",
// "body.pullrequest.destination.repository", "body.pullRequest.toRef.repository.links",
// "body.resource.repository"). An Other action is read from what is there and well-formed.
Result<HookEvent> parse(Forge forge, const HookRequest &request);

namespace detail {
// The value of one header (name lower-case), trimmed; empty when it was not sent.
QByteArray headerValue(const HookRequest &request, const char *name);
// One forge's reading of a decoded body (forgehookbodies.cpp).
Result<HookEvent> readEvent(Forge forge, const HookRequest &request, const QJsonObject &body);
// The pull request of an event whose forge, eventName and kind (PullRequest) are set: fills
// event.pullRequest, repoUrls and pusher (forgehookpulls.cpp).
Status readPullRequest(HookEvent &event, const QJsonObject &body);
// Shared by the two: text quoted for a message (cut to 80 characters), the non-empty strings at
// keys of object added to urls once each, in order, and the first non-empty string at keys.
QString quoted(const QString &text);
void addUrls(QStringList &urls, const QJsonObject &object, std::initializer_list<QLatin1StringView> keys);
QString firstString(const QJsonObject &object, std::initializer_list<QLatin1StringView> keys);
} // namespace detail

} // namespace pando::core::autodeploy
