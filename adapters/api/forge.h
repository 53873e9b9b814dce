#pragma once
// The forge API interface: what Pando asks of a forge's REST API beyond git itself — the
// repositories a connection's token can see, a repository's branches, what a ref points at, a
// commit status on the commit a deploy built, the webhook that starts the next deploy (on a push)
// or a pull request's preview, and the comment that tells a pull request where its preview is.
// One implementation per forge lives in adapters/forge/rest; makeForgeApi() picks it by the
// account's kind.
//
// Threading: calls block (each request has a deadline) and may be made from any thread,
// concurrently: an implementation keeps no state between calls.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/api/repoaddress.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <memory>

namespace pando::adapters {

struct ForgeRepository {
    QString fullName; // as the forge names it below its base: "acme/api", "group/sub/api", Azure "project/api"
    QString cloneUrl; // https
    QString sshUrl;
    QString webUrl;
    QString defaultBranch; // empty when the forge's listing does not say (Bitbucket Data Center)
    bool isPrivate = false;
};

struct ForgeBranch {
    QString name;   // "main", without refs/heads/
    QString commit; // the full hex id its head points at
};

enum class CommitState { Pending, Success, Failure, Error };

struct CommitStatus {
    QString commit; // the full hex id
    CommitState state = CommitState::Pending;
    QString context;     // "pando/APP": one status per context, a later one replaces it
    QString description; // at most 140 characters are sent (GitHub's limit, the smallest)
    QString targetUrl;   // where people see the deploy; may be empty
};

struct ForgeWebhook {
    QString id; // the forge's id of the hook (a number, Bitbucket Cloud's {uuid}, Azure's push subscription's id)
    QString url;
};

// A connection as the forge API needs it. The token is never logged and never in an error text.
struct ForgeAccount {
    ForgeScope scope;
    QString username; // Bitbucket Cloud: the account an app password belongs to (empty: the token is a Bearer token)
    QByteArray token;
    // GitHub: the token is a GitHub App installation's (mintInstallationToken()). It sees the
    // repositories the installation was given, which GitHub lists at /installation/repositories.
    bool installation = false;
};

// A GitHub App installation as a source connection holds it: the app's id, the id of its
// installation on an account, and the app's private key (PEM, RSA). Never logged.
struct ForgeAppInstallation {
    ForgeScope scope; // a GitHub scope: github.com or a GitHub Enterprise Server
    QString appId;
    QString installationId;
    QByteArray privateKey;
};

// An installation access token and when it expires (ms since the epoch).
struct ForgeAccessToken {
    QByteArray token;
    qint64 expiresMs = 0;
};

// An OAuth application registered on a forge (GitHub, GitLab, Gitea and Forgejo, Bitbucket
// Cloud), as a source connection holds it: its client id and secret. Never logged.
struct ForgeOAuthApp {
    ForgeScope scope;
    QString clientId;
    QByteArray clientSecret;
};

// What a forge's token endpoint granted: the access token, the refresh token that renews it
// (empty when the forge gives none), and when the access token expires (ms since the epoch; 0: it
// does not say, as GitHub's classic OAuth apps' tokens, which last until revoked).
struct ForgeOAuthGrant {
    QByteArray accessToken;
    QByteArray refreshToken;
    qint64 expiresMs = 0;
};

// The authorization-code flow (RFC 6749, with PKCE as RFC 7636 and loopback redirects as RFC 8252
// describe them) on each forge's documented endpoints: GitHub's /login/oauth/authorize and
// /login/oauth/access_token, GitLab's /oauth/authorize and /oauth/token, Gitea's and Forgejo's
// /login/oauth/authorize and /login/oauth/access_token, Bitbucket Cloud's
// /site/oauth2/authorize and /site/oauth2/access_token, each below the forge's web address.
// Threading: calls block (each request has a deadline) and may be made from any thread.
class ForgeOAuth {
public:
    virtual ~ForgeOAuth() = default;
    // The page where the user lets app read their repositories, which sends the browser back to
    // redirectUri with ?code=…&state=state; the PKCE challenge is S256. Invalid (where "kind" or
    // "url") for a forge that takes no OAuth apps, or an address that does not say where it is.
    virtual Result<QString> authorizeUrl(const ForgeOAuthApp &app, const QString &redirectUri, const QString &state,
                                         const QString &codeChallenge) const = 0;
    // The grant for the code the forge sent to redirectUri, proven with the PKCE verifier. Invalid
    // at "code" for a code the forge refuses (expired, used, or for another redirect address),
    // Unauthorized at "client_secret" for a client id or secret it refuses.
    virtual Result<ForgeOAuthGrant> exchange(const ForgeOAuthApp &app, const QString &code, const QString &redirectUri,
                                             const QByteArray &codeVerifier, const CancelToken &cancel) const = 0;
    // A new grant for refreshToken. Unauthorized at "refresh_token" when the forge refuses it
    // (revoked, expired, or used already): the user has to authorize again.
    virtual Result<ForgeOAuthGrant> refresh(const ForgeOAuthApp &app, const QByteArray &refreshToken,
                                            const CancelToken &cancel) const = 0;
};

// The forges' OAuth endpoints, defined by pando_adapters_forge_rest; webBaseOverride replaces the
// web address the app's scope gives (tests point it at a stand-in).
std::shared_ptr<const ForgeOAuth> makeForgeOAuth(const QString &webBaseOverride = {});

class ForgeApi {
public:
    virtual ~ForgeApi() = default;

    // Every repository the token can see; only the scope's owner's when the scope names one.
    // A listing longer than a bounded number of pages fails saying so, rather than answer part
    // of it (adapters/forge/rest/forgerest.h).
    virtual Result<QList<ForgeRepository>> repositories(const CancelToken &cancel) = 0;
    virtual Result<QList<ForgeBranch>> branches(const RepoAddress &repo, const CancelToken &cancel) = 0;
    // The full commit id ref (a branch, a tag, refs/heads/…, refs/tags/… or a commit id) points
    // at; NotFound when there is no such ref.
    virtual Result<QString> resolve(const RepoAddress &repo, const QString &ref, const CancelToken &cancel) = 0;
    virtual Status setCommitStatus(const RepoAddress &repo, const CommitStatus &status, const CancelToken &cancel) = 0;
    // Registers a webhook to url signed with secret, the way autodeploy's forgehook.h checks it,
    // for pushes and pull requests, so one hook serves deploy on push and previews: GitHub and
    // Gitea the events push and pull_request; GitLab push_events and merge_requests_events;
    // Bitbucket Cloud repo:push, pullrequest:created, :updated, :fulfilled and :rejected; Bitbucket
    // Data Center repo:refs_changed, pr:opened, pr:from_ref_updated, pr:merged, pr:declined and
    // pr:deleted; Azure DevOps one service hook subscription per event: git.push,
    // git.pullrequest.created and git.pullrequest.updated. Idempotent: a hook the repository
    // already has for url is kept, its secret and events updated, and returned (Azure: the push
    // subscription); a second hook is never made.
    virtual Result<ForgeWebhook> registerWebhook(const RepoAddress &repo, const QString &url, const QByteArray &secret,
                                                 const CancelToken &cancel) = 0;
    // Comments on pull request `number` of repo with body (Markdown): GitHub and Gitea an issue
    // comment, GitLab a merge request note, Bitbucket Cloud and Data Center a pull request comment,
    // Azure DevOps a new thread with one comment. Returns the forge's id of the comment.
    // Azure's is the new thread's id (its comment is the thread's first). A number <= 0 is Invalid
    // (where "number"), an empty body Invalid (where "body"), both without a request; a body past
    // the forge's limit is cut there (GitHub 65536 characters). NotFound at "number" when the
    // repository is there but the pull request is not.
    virtual Result<QString> commentOnPullRequest(const RepoAddress &repo, int number, const QString &body,
                                                 const CancelToken &cancel) = 0;
    // Replaces the text of comment id (as commentOnPullRequest() returned it) on pull request
    // number of repo with body, checked and cut as there: GitHub and Gitea PATCH the issue comment,
    // GitLab PUTs the note, Bitbucket Cloud PUTs the comment, Data Center PUTs it with the version a
    // GET of it gives (once more when another edit came between), Azure DevOps PATCHes the
    // thread's first comment. NotFound at "comment" when the repository is there but the comment
    // is not (deleted on the forge): post a new one.
    virtual Status editPullRequestComment(const RepoAddress &repo, int number, const QString &id, const QString &body,
                                          const CancelToken &cancel) = 0;
};

// The forge API for account, defined by the pando_adapters_forge_rest library (link it to call
// this). apiBaseOverride replaces the API root the scope's address gives (tests point it at a
// stand-in): https://api.github.com or BASE/api/v3, BASE/api/v4 (GitLab), BASE/api/v1 (Gitea),
// https://api.bitbucket.org/2.0, Bitbucket Data Center's BASE (which /rest/api/1.0 and
// /rest/build-status/1.0 are below), Azure DevOps' https://dev.azure.com/ORG. For a generic git
// host, and for an account whose scope or token is unusable, every call fails saying why.
std::unique_ptr<ForgeApi> makeForgeApi(const ForgeAccount &account, const QString &apiBaseOverride = {});

// An access token of app's installation, as GitHub documents it for GitHub Apps: a JSON Web Token
// (RS256, signed with the app's key, issued by its id, dated 60 s back for clock drift and valid
// for 9 minutes) POSTed to /app/installations/ID/access_tokens, which answers a token valid for
// an hour. Defined by pando_adapters_forge_rest, with the deadlines of its calls; apiBaseOverride
// as for makeForgeApi(). Errors say what GitHub refused and what to do: Unauthorized for the
// signed request (a wrong app id or key, or a clock off by more than a minute), NotFound at
// "installation_id" for an installation GitHub does not know (the app was uninstalled),
// Forbidden for a suspended one; Invalid, naming the field, for an id or key unusable as given.
Result<ForgeAccessToken> mintInstallationToken(const ForgeAppInstallation &app, const QString &apiBaseOverride = {},
                                               const CancelToken &cancel = CancelToken());

} // namespace pando::adapters
