#pragma once
// Package forgerest is the ForgeApi (adapters/api/forge.h) of GitHub (and GitHub Enterprise),
// GitLab, Gitea and Forgejo, Bitbucket Cloud, Bitbucket Data Center and Azure DevOps, each over
// its documented REST API: one .cpp per forge, and forgeclient.h for what they share — the
// request with its deadline, the forge's kind of paging, and the reading of a refusal into an
// error that says what the token lacks.
//
// Design decisions:
//  - Requests go through httpkit (libcurl), as the Cloudflare client's do: a ForgeApi answers
//    synchronously on the caller's thread, and a QNetworkReply would need a nested event loop.
//  - Every request has a deadline (requestTimeoutMs, connecting within 5 s included), and a
//    whole call one more (callTimeoutMs), so a listing of many pages cannot hold a worker for
//    minutes; a listing longer than maxPages pages fails saying so (a partial one would read as
//    the whole). A forge's "next page" address is followed
//    only below the API root the token is meant for.
//  - Webhook registration lists the repository's hooks first and updates the one for the same
//    URL (its secret, its events) instead of adding one: GitLab, Gitea and Bitbucket accept
//    duplicates, and a second hook would deliver every push twice. A create the forge refuses as
//    a duplicate (GitHub's 422, a 409) is answered the same way. Azure DevOps' service hooks take
//    one event type each: its webhook is three subscriptions (push, pull request created, pull
//    request updated), each found and updated the same way.
//  - A pull request comment is sent once and never retried: every forge takes the same text
//    twice, so a request cut short by its deadline may have left a comment a retry would repeat.
//    A body past the forge's limit is cut rather than refused.
//  - The token is sent only in the header each forge documents and never appears in an error:
//    whatever a forge says back is scrubbed of it, and of a webhook's secret.
//
// Cancel semantics: the token is checked every 50 ms while a request waits, and between pages;
// a cancelled call fails with ErrorCode::Cancelled and changes nothing more on the forge.
//
// Threading: see ForgeApi; the objects hold only their configuration.

#include "adapters/api/forge.h"

#include <QString>
#include <memory>

namespace pando::adapters::forgerest {

struct ForgeRestOptions {
    QString apiBase;              // empty: the one the account's scope gives (see makeForgeApi)
    int requestTimeoutMs = 15000; // one request, connecting included
    int callTimeoutMs = 60000;    // one call, all of its pages
    int maxPages = 50;            // a listing with more pages than this fails …
    int pageSize = 100;           // … of this many (the forges' own maximum is 100; Gitea's is often 50)
};

// The forge API for account (adapters::makeForgeApi with every option).
std::unique_ptr<ForgeApi> makeApi(const ForgeAccount &account, const ForgeRestOptions &options);
// A GitHub App installation's token (adapters::mintInstallationToken with every option).
Result<ForgeAccessToken> mintInstallationToken(const ForgeAppInstallation &app, const ForgeRestOptions &options,
                                               const CancelToken &cancel);
// The forges' OAuth endpoints (adapters::makeForgeOAuth with every option): options.apiBase, when
// set, replaces the forge's web address (not its API's), below which the OAuth pages are.
std::shared_ptr<const ForgeOAuth> makeOAuth(const ForgeRestOptions &options);

} // namespace pando::adapters::forgerest
