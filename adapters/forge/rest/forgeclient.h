#pragma once
// What the forges' clients share (see forgerest.h): a request with its deadline and the forge's
// headers, the walk over a listing's pages in each forge's way of paging, the reading of an
// answer that is not a success into an error that says what was refused and what the token
// needs, and the reading of a repository address into the forge's own path of the repository.
//
// Threading: RestClient is immutable after construction; any thread may use it, concurrently.

#include "adapters/api/forge.h"
#include "adapters/forge/rest/forgerest.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonValue>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>
#include <optional>

namespace pando::adapters::forgerest::detail {

using Query = QList<QPair<QString, QString>>;
using Headers = QList<QPair<QByteArray, QByteArray>>;

// What a request is for: a refusal's error names the scope the token needs for it.
enum class Purpose { ListRepositories, ReadRepository, SetStatus, ManageHooks, Comment };

// How a forge says there is another page.
enum class Paging {
    LinkHeader,         // GitHub, Gitea: a JSON array, and Link: <url>; rel="next"
    GitHubInstallation, // {"total_count": N, "repositories": [...]}, and Link: <url>; rel="next"
    GitLabHeader,       // a JSON array, and X-Next-Page: N (empty on the last page)
    BitbucketCloud,     // {"values": [...], "next": url}
    BitbucketDc,        // {"values": [...], "isLastPage": false, "nextPageStart": N}
    Azure,              // {"value": [...]}, and x-ms-continuationtoken (or "continuationToken" in the body)
};

// One forge as its client talks to it.
struct ForgeProfile {
    QString name;    // "GitHub", for messages
    QString where;   // "github-api": Error::where of what is about neither the token nor the repository
    Headers headers; // the token's header and the forge's own
    // What a token needs on this forge for purpose, as a hint: "give the token the repo:status scope".
    QString (*scopeHint)(Purpose purpose) = nullptr;
};

// One ForgeApi call: what it is for and about, its cancel token and its deadline.
struct Call {
    Purpose purpose = Purpose::ReadRepository;
    QString subject; // "acme/api", for messages; empty for the account's listing
    const CancelToken *cancel = nullptr;
    QDeadlineTimer deadline;
    QByteArray secret; // a webhook's secret, scrubbed from errors like the token
};

struct Reply {
    int status = 0;
    QByteArray body;
    Headers headers;
    QByteArray header(QByteArrayView name) const;
};

// The repository a call is about: its path on the forge (see repoPath()) and the Call, whose
// subject is that path joined with '/'.
struct Target {
    QStringList path;
    Call call;
};

class RestClient {
public:
    RestClient(ForgeProfile profile, QString apiBase, QByteArray token, ForgeRestOptions options);
    // The client of account's forge: the token is the account's, apiBase options.apiBase.
    RestClient(ForgeProfile profile, const ForgeAccount &account, const ForgeRestOptions &options);

    const QString &apiBase() const { return m_apiBase; }
    const ForgeRestOptions &options() const { return m_options; }
    const QString &forgeName() const { return m_profile.name; }

    Call call(Purpose purpose, const QString &subject, const CancelToken &cancel) const;
    // The repository repo names on scope's forge (2 to maxSegments segments, see repoPath()) and
    // a call for purpose about it.
    Result<Target> target(Purpose purpose, const ForgeScope &scope, const RepoAddress &repo, const CancelToken &cancel,
                          int maxSegments = 2) const;
    // target() for setCommitStatus(), once commit is known to be a full commit id.
    Result<Target> statusTarget(const ForgeScope &scope, const RepoAddress &repo, const QString &commit,
                                const CancelToken &cancel, int maxSegments = 2) const;
    // target() for registerWebhook(), once url and secret are known to be usable; the call
    // scrubs the secret from its errors.
    Result<Target> hookTarget(const ForgeScope &scope, const RepoAddress &repo, const QString &url,
                              const QByteArray &secret, const CancelToken &cancel, int maxSegments = 2) const;
    // target() for commentOnPullRequest(), once number is known to be a pull request's and body
    // to say something.
    Result<Target> commentTarget(const ForgeScope &scope, const RepoAddress &repo, int number, const QString &body,
                                 const CancelToken &cancel, int maxSegments = 2) const;
    // target() for editPullRequestComment(): commentTarget()'s checks, and id a forge's comment id
    // (digits: it goes into the path).
    Result<Target> editTarget(const ForgeScope &scope, const RepoAddress &repo, int number, const QString &id,
                              const QString &body, const CancelToken &cancel, int maxSegments = 2) const;
    // A query of one item: the page size under the forge's name for it ("per_page", "limit", …).
    Query pageQuery(const QString &key) const;
    // apiBase + path (already percent-encoded: see segment()) + the encoded query.
    QByteArray url(const QString &path, const Query &query = {}) const;

    // One request to an absolute URL below apiBase; any HTTP answer is a Reply, no answer (or
    // the deadline, or cancel) an error.
    Result<Reply> send(const QByteArray &method, const QByteArray &url, const std::optional<QJsonValue> &body,
                       const Call &call) const;
    // A request that must succeed (2xx): its body as JSON (null when empty), or refusal().
    Result<QJsonValue> request(const QByteArray &method, const QString &path, const Query &query,
                               const std::optional<QJsonValue> &body, const Call &call) const;
    // Every item of a listing, page after page; Failed, saying so, when there are more than
    // options().maxPages pages.
    Result<QJsonArray> list(Paging paging, const QString &path, const Query &query, const Call &call) const;
    // A GET whose answer absent() recognises means "there is none" (nullopt): a ref that is not
    // there, where other failures are refusal()s.
    Result<std::optional<QJsonValue>> lookup(const QString &path, const Query &query, const Call &call,
                                             const std::function<bool(const Reply &)> &absent) const;
    // lookup() of a document of which only the text read() reads from it is wanted: a ref's
    // commit id; nullopt when absent() says there is none.
    Result<std::optional<QString>> lookupText(const QString &path, const Query &query, const Call &call,
                                              const std::function<bool(const Reply &)> &absent,
                                              const std::function<QString(const QJsonValue &)> &read) const;
    // request() whose answer says nothing more than that it succeeded: a status set, a hook
    // updated, a repository the token can see.
    Status perform(const QByteArray &method, const QString &path, const Query &query,
                   const std::optional<QJsonValue> &body, const Call &call) const;

    // What a request that creates a webhook gave: the new hook's id, or the forge's refusal of it
    // as a duplicate (409, 422), to be given when no hook for the URL turns up after all.
    struct Created {
        QString id;
        std::optional<Error> duplicate;
    };
    Result<Created> create(const QString &path, const Query &query, const QJsonValue &body, const Call &call,
                           const std::function<QString(const QJsonValue &)> &idOf) const;

    // A comment on pull request number POSTed to path: the forge's id of it, read by idOf. The
    // forges answer 404 both for a pull request that is not there and for a repository the token
    // cannot see: repository() tells them apart, and a missing pull request is NotFound at "number".
    Result<QString> comment(const QString &path, const Query &query, const QJsonValue &body, int number,
                            const Call &call, const std::function<QString(const QJsonValue &)> &idOf,
                            const std::function<Status()> &repository) const;

    // A request about comment id (its edit, or Data Center's read of its version) at path: its
    // answer, or refusal(). A 404 is told apart as comment() tells it; a missing comment is
    // NotFound at "comment", and a 409 (an edit based on an older version) Conflict.
    Result<QJsonValue> onComment(const QByteArray &method, const QString &path, const Query &query,
                                 const std::optional<QJsonValue> &body, const QString &id, const Call &call,
                                 const std::function<Status()> &repository) const;
    // onComment() for an edit, whose answer says nothing more than that it was made.
    Status editComment(const QByteArray &method, const QString &path, const Query &query, const QJsonValue &body,
                       const QString &id, const Call &call, const std::function<Status()> &repository) const;

    // The error for an answer that is not a success: 401 (and Azure's 203 sign-in page) the
    // token refused, 403 the scope it lacks (or a rate limit), 404 the subject not found or not
    // visible, 3xx moved, others what the forge said. Never holds the token or call's secret.
    Error refusal(const Reply &reply, const Call &call) const;
    // text without the token or secret in it.
    QString scrubbed(QString text, const QByteArray &secret = {}) const;

private:
    ForgeProfile m_profile;
    QString m_apiBase;
    QByteArray m_token;
    ForgeRestOptions m_options;
};

// How one forge finds, makes and updates a repository's webhook for registerHook().
struct HookOps {
    std::function<Result<std::optional<QString>>()> find; // the id of the hook for the URL, if there is one
    std::function<Result<RestClient::Created>()> create;
    std::function<Status(const QString &id)> update; // its secret and events, as create would set them
};
// Registers the hook for url once (see forgerest.h): updates the one there is, else creates one,
// and when the forge refuses that as a duplicate, updates the one it then lists.
Result<ForgeWebhook> registerHook(const HookOps &ops, const QString &url);
// commentOnPullRequest() where a pull request is an issue of the repository at /repos/OWNER/NAME,
// its conversation the issue's comments (GitHub, and Gitea, whose API mirrors GitHub's there):
// body, cut to limit characters, POSTed to the issue's comments.
Result<QString> commentAsIssue(const RestClient &client, const ForgeScope &scope, const RepoAddress &repo, int number,
                               const QString &body, qsizetype limit, const CancelToken &cancel);
// editPullRequestComment() for commentAsIssue()'s forges: body, cut to limit characters, PATCHed
// to the repository's issue comment id.
Status editIssueComment(const RestClient &client, const ForgeScope &scope, const RepoAddress &repo, int number,
                        const QString &id, const QString &body, qsizetype limit, const CancelToken &cancel);
// The id (read by idOf) of the hook in hooks whose URL (read by urlOf) is url; nullopt when
// there is none, and hooks' error when the listing failed.
Result<std::optional<QString>> findHook(const Result<QJsonArray> &hooks, const QString &url,
                                        const std::function<QString(const QJsonValue &)> &urlOf,
                                        const std::function<QString(const QJsonValue &)> &idOf);
// What read() makes of each item of a listing, or the listing's error.
template<typename T>
Result<QList<T>> readEach(const Result<QJsonArray> &items, const std::function<T(const QJsonValue &)> &read)
{
    if (!items)
        return std::unexpected(items.error());
    QList<T> results;
    for (const QJsonValue item : *items)
        results << read(item);
    return results;
}

// A JSON id as text: 42 for a number, the string itself for a string.
QString idText(const QJsonValue &value);
// idText() of object's "id": how GitHub, GitLab, Gitea and Bitbucket Data Center name a hook.
QString idMember(const QJsonValue &object);
// Invalid (where "secret") for an empty secret or one too long for every forge (Azure's password).
Status checkSecret(const QByteArray &secret);

// The API root scope's address gives (see adapters::makeForgeApi); empty for a generic host, and
// for an ssh:// address, which does not say where the web API is (but for github.com,
// bitbucket.org and Azure, whose API addresses are known).
QString defaultApiBase(const ForgeScope &scope);
// Cloud lives at bitbucket.org; any other Bitbucket address is a Data Center (or Server) install.
bool isBitbucketCloud(const ForgeScope &scope);

// What GitHub's REST API is sent with bearer as its Bearer token (a token, an installation's, or
// a GitHub App's JSON Web Token): the API version GitHub documents pinned, and a User-Agent,
// without which GitHub refuses the request (githubapi.cpp).
ForgeProfile gitHubProfile(const QByteArray &bearer, QString (*scopeHint)(Purpose purpose) = nullptr);

// One maker per forge (githubapi.cpp, …); options.apiBase is already the API root.
std::unique_ptr<ForgeApi> makeGitHubApi(const ForgeAccount &account, const ForgeRestOptions &options);
std::unique_ptr<ForgeApi> makeGitLabApi(const ForgeAccount &account, const ForgeRestOptions &options);
std::unique_ptr<ForgeApi> makeGiteaApi(const ForgeAccount &account, const ForgeRestOptions &options);
std::unique_ptr<ForgeApi> makeBitbucketCloudApi(const ForgeAccount &account, const ForgeRestOptions &options);
std::unique_ptr<ForgeApi> makeBitbucketDcApi(const ForgeAccount &account, const ForgeRestOptions &options);
std::unique_ptr<ForgeApi> makeAzureDevOpsApi(const ForgeAccount &account, const ForgeRestOptions &options);

// What a forge said in an error body: GitHub's and Gitea's "message", GitLab's "message" (a
// string or an object of field errors) or "error", Bitbucket Cloud's {"error": {"message"}},
// Data Center's and GitHub's "errors": [{"message"}], Azure's "message"; else the start of the
// text. At most 300 characters; empty when the body says nothing.
QString forgeMessage(const QByteArray &body);

// One path segment, percent-encoded (a GitLab project id "acme/api" becomes "acme%2Fapi").
QString segment(const QString &text);
// Segments joined with '/', each encoded: a branch "feature/x" keeps its slash this way.
QString segments(const QStringList &parts);

// The repository's path on the forge below the scope's base path: ["acme", "api"] for
// https://github.com/acme/api, ["proj", "api"] for dev.azure.com/org/proj/_git/api. Invalid
// (where "repo") when the address is on another host or does not have between minSegments and
// maxSegments segments there (maxSegments < 0: no limit). Bitbucket Data Center's "scm" is dropped.
Result<QStringList> repoPath(const ForgeScope &scope, const RepoAddress &address, int minSegments, int maxSegments);

// What a ref names, read the way git reads refs/heads/… and refs/tags/….
struct RefName {
    enum class Kind { Any, Branch, Tag } kind = Kind::Any;
    QString name;
};
RefName readRef(const QString &ref);
// 7 to 64 hex digits: what may be a commit id.
bool looksLikeCommitId(const QString &ref);
// How one forge looks a ref up for resolveRef(): each gives the commit id, nullopt when there is
// no such branch, tag or commit, or an error; repository() is asked when none was found, to tell
// a missing ref from a repository the token cannot see.
struct RefLookups {
    std::function<Result<std::optional<QString>>(const QString &name)> branch;
    std::function<Result<std::optional<QString>>(const QString &name)> tag;
    std::function<Result<std::optional<QString>>(const QString &id)> commit;
    std::function<Status()> repository;
};
// ref's commit, asked in the order git reads a name: refs/heads/… only as a branch, refs/tags/…
// only as a tag; a full commit id as a commit first; any other name as a branch, then a tag, then
// (when it may be one) a commit.
Result<QString> resolveRef(const QString &ref, const RefLookups &lookups, const QString &repo, const QString &forge);

// Invalid (where "ref") for an empty ref or one with control characters.
Status checkRef(const QString &ref);
// The NotFound error of a ref that is not in repo.
Error refNotFound(const QString &ref, const QString &repo, const QString &forge);
// Invalid (where "commit") unless commit is 40 or 64 hex digits.
Status checkCommitId(const QString &commit);
// Invalid (where "url") unless url is an http(s) URL with a host.
Status checkHookUrl(const QString &url);
// Invalid (where "number") unless number can be a pull request's (> 0).
Status checkPullRequestNumber(int number);
// Invalid (where "body") for a comment with nothing but white space in it.
Status checkCommentBody(const QString &body);

// An https clone address without the "user@" Bitbucket and Azure put in it for the account that
// asked: a clone address is the repository's, whoever clones it.
QString withoutUserInfo(const QString &url);
// text cut to at most max characters, never inside a surrogate pair.
QString clipped(const QString &text, qsizetype max);
// "Basic " + base64(user:password).
QByteArray basicAuth(const QString &user, const QByteArray &password);

} // namespace pando::adapters::forgerest::detail
