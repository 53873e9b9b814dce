#pragma once
// Package autodeploy turns a forge's push into a deploy. This file is its front door: the push
// webhooks of GitHub, GitLab, Gitea (and Forgejo and Gogs, which send the same hook), Bitbucket
// (Cloud and Data Center) and Azure DevOps, each checked the way that forge signs it and read into
// one HookEvent. What a push then deploys is the engine's business, not this file's.
//
// Pure functions over a request already read off the wire: no I/O, no logging, safe to call from
// any thread. No error text contains the secret, the expected signature or the one received.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QMap>
#include <QString>
#include <QStringList>

class QJsonObject;

namespace pando::core::autodeploy {

enum class Forge { GitHub, GitLab, Gitea, Bitbucket, AzureDevOps };
QString forgeName(Forge forge); // "github", "gitlab", "gitea", "bitbucket", "azure-devops"

inline constexpr qint64 MaxHookPayloadBytes = 2 * 1024 * 1024;

struct HookRequest {
    QMap<QByteArray, QByteArray> headers; // names lower-cased, as sent (only one value per name)
    QByteArray body;                      // the raw body, exactly as received
};

struct HookEvent {
    Forge forge = Forge::GitHub;
    QString deliveryId; // the forge's id of this delivery/event (retries of one event share it)
    enum class Kind { Ping, Push, Other } kind = Kind::Other;
    QString eventName;    // what the forge called it ("push", "Push Hook", "repo:push", "git.push", "ping", ...)
    QString ref;          // "refs/heads/main" or "refs/tags/v1.2"; empty unless Push
    QString commit;       // the new head: 40 (or 64) lowercase hex digits; empty when the ref was deleted
    bool deleted = false; // the push deleted the ref
    QStringList repoUrls; // every address of the repository the payload names (clone https, ssh, web page),
                          // non-empty for Push
    QString pusher;       // who pushed, as the forge names them (may be empty)
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
Result<HookEvent> parse(Forge forge, const HookRequest &request);

namespace detail {
// The value of one header (name lower-case), trimmed; empty when it was not sent.
QByteArray headerValue(const HookRequest &request, const char *name);
// One forge's reading of a decoded body (forgehookbodies.cpp).
Result<HookEvent> readEvent(Forge forge, const HookRequest &request, const QJsonObject &body);
} // namespace detail

} // namespace pando::core::autodeploy
