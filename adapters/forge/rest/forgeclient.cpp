#include "adapters/forge/rest/forgeclient.h"

#include "adapters/kit/httpkit/httptransport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest::detail {

namespace {

void setQueryItem(Query &query, const QString &key, const QString &value)
{
    for (auto &[k, v] : query) {
        if (k == key) {
            v = value;
            return;
        }
    }
    query.append({key, value});
}

// The URL of rel="next" in a Link header: <https://…?page=2>; rel="next", <…>; rel="last".
QByteArray linkNext(const QByteArray &link)
{
    static const QRegularExpression next(uR"(<([^>]*)>\s*;\s*rel="?next"?)"_s);
    const QRegularExpressionMatch match = next.match(QString::fromUtf8(link));
    return match.hasMatch() ? match.captured(1).toUtf8() : QByteArray();
}

// "GET /repos/acme/api/branches" for messages: the request without the API root and the query.
QString describe(const QByteArray &method, const QByteArray &url, const QString &apiBase)
{
    QString path = QString::fromUtf8(url);
    if (path.startsWith(apiBase))
        path = path.mid(apiBase.size());
    path = path.section(u'?', 0, 0);
    return QString::fromLatin1(method) + u' ' + (path.isEmpty() ? u"/"_s : path);
}

QString actionText(Purpose purpose, const QString &subject)
{
    switch (purpose) {
    case Purpose::ListRepositories:
        return subject.isEmpty() ? u"list the account's repositories"_s : u"list the repositories of %1"_s.arg(subject);
    case Purpose::ReadRepository:
        return u"read %1"_s.arg(subject);
    case Purpose::SetStatus:
        return u"set commit statuses on %1"_s.arg(subject);
    case Purpose::ManageHooks:
        return u"manage the webhooks of %1"_s.arg(subject);
    case Purpose::Comment:
        return u"comment on the pull requests of %1"_s.arg(subject);
    }
    return subject;
}

} // namespace

QByteArray Reply::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

RestClient::RestClient(ForgeProfile profile, QString apiBase, QByteArray token, ForgeRestOptions options)
    : m_profile(std::move(profile)), m_apiBase(std::move(apiBase)), m_token(std::move(token)),
      m_options(std::move(options))
{
    while (m_apiBase.endsWith(u'/'))
        m_apiBase.chop(1);
    m_options.maxPages = std::max(1, m_options.maxPages);
    m_options.pageSize = std::clamp(m_options.pageSize, 1, 1000);
    m_options.requestTimeoutMs = std::max(1, m_options.requestTimeoutMs);
}

RestClient::RestClient(ForgeProfile profile, const ForgeAccount &account, const ForgeRestOptions &options)
    : RestClient(std::move(profile), options.apiBase, account.token, options)
{}

Call RestClient::call(Purpose purpose, const QString &subject, const CancelToken &cancel) const
{
    Call call;
    call.purpose = purpose;
    call.subject = subject;
    call.cancel = &cancel;
    call.deadline = m_options.callTimeoutMs > 0 ? QDeadlineTimer(m_options.callTimeoutMs) : QDeadlineTimer::Forever;
    return call;
}

Result<Target> RestClient::target(Purpose purpose, const ForgeScope &scope, const RepoAddress &repo,
                                  const CancelToken &cancel, int maxSegments) const
{
    auto path = repoPath(scope, repo, 2, maxSegments);
    if (!path)
        return std::unexpected(path.error());
    const QString subject = path->join(u'/');
    return Target{*path, call(purpose, subject, cancel)};
}

Result<Target> RestClient::statusTarget(const ForgeScope &scope, const RepoAddress &repo, const QString &commit,
                                        const CancelToken &cancel, int maxSegments) const
{
    if (auto checked = checkCommitId(commit); !checked)
        return std::unexpected(checked.error());
    return target(Purpose::SetStatus, scope, repo, cancel, maxSegments);
}

Result<Target> RestClient::hookTarget(const ForgeScope &scope, const RepoAddress &repo, const QString &url,
                                      const QByteArray &secret, const CancelToken &cancel, int maxSegments) const
{
    if (auto checked = checkHookUrl(url); !checked)
        return std::unexpected(checked.error());
    if (auto checked = checkSecret(secret); !checked)
        return std::unexpected(checked.error());
    auto made = target(Purpose::ManageHooks, scope, repo, cancel, maxSegments);
    if (made)
        made->call.secret = secret;
    return made;
}

Result<Target> RestClient::commentTarget(const ForgeScope &scope, const RepoAddress &repo, int number,
                                         const QString &body, const CancelToken &cancel, int maxSegments) const
{
    if (auto checked = checkPullRequestNumber(number); !checked)
        return std::unexpected(checked.error());
    if (auto checked = checkCommentBody(body); !checked)
        return std::unexpected(checked.error());
    return target(Purpose::Comment, scope, repo, cancel, maxSegments);
}

Result<Target> RestClient::editTarget(const ForgeScope &scope, const RepoAddress &repo, int number, const QString &id,
                                      const QString &body, const CancelToken &cancel, int maxSegments) const
{
    static const QRegularExpression digits(u"^[0-9]{1,20}$"_s);
    if (!digits.match(id).hasMatch())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a forge's comment id (digits)"_s.arg(clipped(id, 40)),
                    u"comment"_s);
    return commentTarget(scope, repo, number, body, cancel, maxSegments);
}

Query RestClient::pageQuery(const QString &key) const
{
    return {{key, QString::number(m_options.pageSize)}};
}

QByteArray RestClient::url(const QString &path, const Query &query) const
{
    QByteArray url = m_apiBase.toUtf8() + path.toUtf8();
    if (!query.isEmpty())
        url += '?' + httpkit::encodeQuery(query);
    return url;
}

QString RestClient::scrubbed(QString text, const QByteArray &secret) const
{
    for (const QByteArray &hidden : {m_token, secret}) {
        if (hidden.size() >= 4)
            text.replace(QString::fromUtf8(hidden), u"[hidden]"_s);
    }
    return text;
}

Result<Reply> RestClient::send(const QByteArray &method, const QByteArray &url, const std::optional<QJsonValue> &body,
                               const Call &call) const
{
    const QString what = u"%1's API (%2)"_s.arg(m_profile.name, describe(method, url, m_apiBase));
    if (call.cancel && call.cancel->isCancelled())
        return fail(ErrorCode::Cancelled, u"%1 was cancelled"_s.arg(what), m_profile.where);
    // The call's deadline bounds every request of it: a listing of many slow pages ends there.
    const qint64 left = call.deadline.remainingTime();
    if (left == 0)
        return fail(ErrorCode::Timeout,
                    u"%1 was not asked: the call ran out of its %2 ms"_s.arg(what).arg(m_options.callTimeoutMs),
                    m_profile.where, u"the forge answers slowly or the listing is very long; try again later"_s);
    const int timeoutMs = left > 0 && left < m_options.requestTimeoutMs ? int(left) : m_options.requestTimeoutMs;

    httpkit::Request request;
    request.method = method;
    request.headers = m_profile.headers;
    const bool hasAccept = std::any_of(request.headers.begin(), request.headers.end(),
                                       [](const auto &header) { return header.first.compare("Accept") == 0; });
    if (!hasAccept)
        request.headers.append({QByteArray("Accept"), QByteArray("application/json")});
    if (body)
        request.body = (body->isArray() ? QJsonDocument(body->toArray()) : QJsonDocument(body->toObject()))
                           .toJson(QJsonDocument::Compact);
    request.timeoutMs = timeoutMs;
    request.keepHeaders = true;
    httpkit::Endpoint endpoint;
    endpoint.baseUrl = url;
    const httpkit::Exchange exchange = httpkit::perform(endpoint, request, call.cancel);
    if (exchange.cancelled)
        return fail(ErrorCode::Cancelled, u"%1 was cancelled"_s.arg(what), m_profile.where);
    if (exchange.transportFailed) {
        if (exchange.timedOut)
            return fail(ErrorCode::Timeout, u"%1 did not answer within %2 ms"_s.arg(what).arg(timeoutMs),
                        m_profile.where, u"check that %1 is up and reachable from this machine"_s.arg(m_apiBase));
        return fail(ErrorCode::Unavailable, u"%1 did not answer: %2"_s.arg(what, scrubbed(exchange.error, call.secret)),
                    m_profile.where, u"check the network and %1"_s.arg(m_apiBase));
    }
    return Reply{exchange.status, exchange.body, exchange.headers};
}

Result<QJsonValue> RestClient::request(const QByteArray &method, const QString &path, const Query &query,
                                       const std::optional<QJsonValue> &body, const Call &call) const
{
    auto reply = send(method, url(path, query), body, call);
    if (!reply)
        return std::unexpected(reply.error());
    if (reply->status < 200 || reply->status >= 300 || reply->status == 203)
        return std::unexpected(refusal(*reply, call));
    if (reply->body.trimmed().isEmpty())
        return QJsonValue();
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(reply->body, &error);
    if (error.error != QJsonParseError::NoError)
        return fail(ErrorCode::Unavailable,
                    u"%1's API answered %2 %3 with something that is not JSON (%4)"_s.arg(
                        m_profile.name, QString::fromLatin1(method), path.section(u'?', 0, 0), error.errorString()),
                    m_profile.where, u"check that %1 is the forge's API"_s.arg(m_apiBase));
    return document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object());
}

Result<QJsonArray> RestClient::list(Paging paging, const QString &path, const Query &query, const Call &call) const
{
    QJsonArray items;
    Query pageQuery = query;
    QByteArray next = url(path, pageQuery);
    for (int page = 0; page < m_options.maxPages && !next.isEmpty(); ++page) {
        auto reply = send("GET", next, std::nullopt, call);
        if (!reply)
            return std::unexpected(reply.error());
        if (reply->status < 200 || reply->status >= 300 || reply->status == 203)
            return std::unexpected(refusal(*reply, call));
        const QJsonDocument document = QJsonDocument::fromJson(reply->body);
        const QJsonObject object = document.object();
        const QJsonValue pageItems = paging == Paging::LinkHeader || paging == Paging::GitLabHeader
                                         ? (document.isArray() ? QJsonValue(document.array()) : QJsonValue())
                                     : paging == Paging::GitHubInstallation ? object.value("repositories"_L1)
                                     : paging == Paging::Azure              ? object.value("value"_L1)
                                                                            : object.value("values"_L1);
        if (!pageItems.isArray())
            return fail(ErrorCode::Unavailable,
                        u"%1's API answered %2 with something that is not a page of a listing"_s.arg(
                            m_profile.name, describe("GET", next, m_apiBase)),
                        m_profile.where, u"check that %1 is the forge's API"_s.arg(m_apiBase));
        for (const QJsonValue item : pageItems.toArray())
            items.append(item);

        const QByteArray current = next;
        next.clear();
        switch (paging) {
        case Paging::LinkHeader:
        case Paging::GitHubInstallation:
            next = linkNext(reply->header("link"));
            break;
        case Paging::BitbucketCloud:
            next = object.value("next"_L1).toString().toUtf8();
            break;
        case Paging::GitLabHeader: {
            const QByteArray nextPage = reply->header("x-next-page").trimmed();
            if (!nextPage.isEmpty()) {
                setQueryItem(pageQuery, u"page"_s, QString::fromLatin1(nextPage));
                next = url(path, pageQuery);
            }
            break;
        }
        case Paging::BitbucketDc:
            if (object.value("isLastPage"_L1) == QJsonValue(false) && object.value("nextPageStart"_L1).isDouble()) {
                setQueryItem(pageQuery, u"start"_s, QString::number(object.value("nextPageStart"_L1).toInteger()));
                next = url(path, pageQuery);
            }
            break;
        case Paging::Azure: {
            QString token = QString::fromUtf8(reply->header("x-ms-continuationtoken"));
            if (token.isEmpty())
                token = object.value("continuationToken"_L1).toString();
            if (!token.isEmpty()) {
                setQueryItem(pageQuery, u"continuationToken"_s, token);
                next = url(path, pageQuery);
            }
            break;
        }
        }
        // A next address elsewhere would get the token: follow only what is below the API root.
        const QByteArray root = m_apiBase.toUtf8();
        if (!next.isEmpty() && !(next.startsWith(root) && (next.size() == root.size() || next.at(root.size()) == '/' ||
                                                           next.at(root.size()) == '?')))
            return fail(ErrorCode::Unavailable,
                        u"%1's API gave the next page of %2 at another address (%3); it is not sent the token"_s.arg(
                            m_profile.name, describe("GET", current, m_apiBase), QString::fromUtf8(next).left(200)),
                        m_profile.where, u"check that %1 is the address the forge's API calls itself"_s.arg(m_apiBase));
        if (next == current)
            next.clear(); // a forge that names the same page again has no more
    }
    // Pages left unread: a listing cut short would read as the whole of it (a hook not found is
    // made twice, a repository not listed seems not to exist), so it is said instead.
    if (!next.isEmpty())
        return fail(ErrorCode::Failed,
                    u"%1 has more than %2 pages of %3 here; Pando reads no further"_s.arg(m_profile.name)
                        .arg(m_options.maxPages)
                        .arg(m_options.pageSize),
                    m_profile.where,
                    u"narrow the connection to one owner (its organisation, group, workspace or project: pando "
                    u"connections add --owner)"_s);
    return items;
}

Result<std::optional<QJsonValue>> RestClient::lookup(const QString &path, const Query &query, const Call &call,
                                                     const std::function<bool(const Reply &)> &absent) const
{
    auto reply = send("GET", url(path, query), std::nullopt, call);
    if (!reply)
        return std::unexpected(reply.error());
    if (absent(*reply))
        return std::optional<QJsonValue>();
    if (reply->status < 200 || reply->status >= 300 || reply->status == 203)
        return std::unexpected(refusal(*reply, call));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(reply->body, &error);
    if (error.error != QJsonParseError::NoError)
        return fail(ErrorCode::Unavailable,
                    u"%1's API answered GET %2 with something that is not JSON (%3)"_s.arg(m_profile.name, path,
                                                                                           error.errorString()),
                    m_profile.where, u"check that %1 is the forge's API"_s.arg(m_apiBase));
    return std::optional<QJsonValue>(document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object()));
}

Result<std::optional<QString>> RestClient::lookupText(const QString &path, const Query &query, const Call &call,
                                                      const std::function<bool(const Reply &)> &absent,
                                                      const std::function<QString(const QJsonValue &)> &read) const
{
    auto found = lookup(path, query, call, absent);
    if (!found)
        return std::unexpected(found.error());
    const std::optional<QJsonValue> document = *found;
    if (!document)
        return std::optional<QString>();
    return std::optional<QString>(read(*document));
}

Status RestClient::perform(const QByteArray &method, const QString &path, const Query &query,
                           const std::optional<QJsonValue> &body, const Call &call) const
{
    auto answer = request(method, path, query, body, call);
    if (!answer)
        return std::unexpected(answer.error());
    return {};
}

Result<RestClient::Created> RestClient::create(const QString &path, const Query &query, const QJsonValue &body,
                                               const Call &call,
                                               const std::function<QString(const QJsonValue &)> &idOf) const
{
    auto reply = send("POST", url(path, query), body, call);
    if (!reply)
        return std::unexpected(reply.error());
    if (reply->status == 409 || reply->status == 422)
        return Created{{}, refusal(*reply, call)};
    if (reply->status < 200 || reply->status >= 300 || reply->status == 203)
        return std::unexpected(refusal(*reply, call));
    const QJsonDocument document = QJsonDocument::fromJson(reply->body);
    const QString id = idOf(document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object()));
    if (id.isEmpty())
        return fail(ErrorCode::Unavailable,
                    u"%1's API made the webhook of %2 but gave no id for it"_s.arg(m_profile.name, call.subject),
                    m_profile.where, u"look for the hook in the repository's settings on the forge"_s);
    return Created{id, std::nullopt};
}

Result<QString> RestClient::comment(const QString &path, const Query &query, const QJsonValue &body, int number,
                                    const Call &call, const std::function<QString(const QJsonValue &)> &idOf,
                                    const std::function<Status()> &repository) const
{
    auto reply = send("POST", url(path, query), body, call);
    if (!reply)
        return std::unexpected(reply.error());
    if (reply->status == 404) {
        if (auto there = repository(); !there)
            return std::unexpected(there.error());
        const QString said = scrubbed(forgeMessage(reply->body), call.secret);
        return fail(ErrorCode::NotFound,
                    u"%1 has no pull request %2 on %3, or it is not visible to this token%4"_s.arg(
                        call.subject, QString::number(number), m_profile.name,
                        said.isEmpty() ? QString() : u" (the forge says: %1)"_s.arg(said)),
                    u"number"_s, u"check the pull request's number; a deleted pull request takes no comments"_s);
    }
    if (reply->status < 200 || reply->status >= 300 || reply->status == 203)
        return std::unexpected(refusal(*reply, call));
    const QJsonDocument document = QJsonDocument::fromJson(reply->body);
    const QString id = idOf(document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object()));
    if (id.isEmpty())
        return fail(ErrorCode::Unavailable,
                    u"%1's API took the comment on pull request %2 of %3 but gave no id for it"_s.arg(
                        m_profile.name, QString::number(number), call.subject),
                    m_profile.where, u"look for the comment on the pull request"_s);
    return id;
}

Result<QJsonValue> RestClient::onComment(const QByteArray &method, const QString &path, const Query &query,
                                         const std::optional<QJsonValue> &body, const QString &id, const Call &call,
                                         const std::function<Status()> &repository) const
{
    auto reply = send(method, url(path, query), body, call);
    if (!reply)
        return std::unexpected(reply.error());
    if (reply->status == 404) {
        if (auto there = repository(); !there)
            return std::unexpected(there.error());
        return fail(ErrorCode::NotFound,
                    u"comment %1 is no longer on its pull request of %2 on %3"_s.arg(id, call.subject, m_profile.name),
                    u"comment"_s, u"it was deleted on the forge; a new comment takes its place"_s);
    }
    if (reply->status == 409)
        return fail(ErrorCode::Conflict,
                    u"comment %1 on %2 was edited on %3 meanwhile"_s.arg(id, call.subject, m_profile.name),
                    u"comment"_s, u"edit it again from its current version"_s);
    if (reply->status < 200 || reply->status >= 300 || reply->status == 203)
        return std::unexpected(refusal(*reply, call));
    const QJsonDocument document = QJsonDocument::fromJson(reply->body);
    return document.isArray() ? QJsonValue(document.array()) : QJsonValue(document.object());
}

Status RestClient::editComment(const QByteArray &method, const QString &path, const Query &query,
                               const QJsonValue &body, const QString &id, const Call &call,
                               const std::function<Status()> &repository) const
{
    auto edited = onComment(method, path, query, body, id, call, repository);
    if (!edited)
        return std::unexpected(edited.error());
    return {};
}

Error RestClient::refusal(const Reply &reply, const Call &call) const
{
    const QString said = scrubbed(forgeMessage(reply.body), call.secret);
    const QString saying = said.isEmpty() ? QString() : u" (the forge says: %1)"_s.arg(said);
    const QString hint = m_profile.scopeHint ? m_profile.scopeHint(call.purpose) : QString();
    const int status = reply.status;
    // Azure DevOps answers a token it does not take with 203 and its sign-in page.
    if (status == 401 || status == 203)
        return Error{ErrorCode::Unauthorized,
                     u"%1 refused the token (expired or revoked?) when asked to %2%3"_s.arg(
                         m_profile.name, actionText(call.purpose, call.subject), saying),
                     u"token"_s,
                     u"make a new token on %1 and give it to the connection; %2"_s.arg(m_profile.name, hint)};
    if (status == 429 ||
        (status == 403 && (reply.header("x-ratelimit-remaining") == "0" || !reply.header("retry-after").isEmpty()))) {
        const QByteArray retry = reply.header("retry-after");
        return Error{ErrorCode::Unavailable,
                     u"%1's rate limit for this token is used up%2"_s.arg(m_profile.name, saying), m_profile.where,
                     retry.isEmpty() ? u"try again later"_s
                                     : u"try again in %1 seconds"_s.arg(QString::fromLatin1(retry.left(12)))};
    }
    if (status == 403)
        return Error{ErrorCode::Forbidden,
                     u"the token lacks the scope to %1 on %2%3"_s.arg(actionText(call.purpose, call.subject),
                                                                      m_profile.name, saying),
                     u"token"_s, hint};
    if (status == 404)
        return Error{ErrorCode::NotFound,
                     call.subject.isEmpty()
                         ? u"%1 answered 404 to %2%3"_s.arg(m_profile.name, actionText(call.purpose, {}), saying)
                         : u"%1 was not found on %2, or is not visible to this token%3"_s.arg(call.subject,
                                                                                              m_profile.name, saying),
                     u"repo"_s,
                     u"check the address, and that the token's account can open the repository on the forge"_s};
    if (status >= 300 && status < 400)
        return Error{ErrorCode::NotFound,
                     u"%1 has moved: %2 answers %3, pointing at %4"_s
                         .arg(call.subject.isEmpty() ? u"the listing"_s : call.subject, m_profile.name)
                         .arg(status)
                         .arg(scrubbed(QString::fromUtf8(reply.header("location")).left(200), call.secret)),
                     u"repo"_s, u"use the repository's new address"_s};
    const ErrorCode code = status == 400 || status == 422 ? ErrorCode::Invalid
                           : status == 409                ? ErrorCode::Conflict
                           : status >= 500                ? ErrorCode::Unavailable
                                                          : ErrorCode::Failed;
    return Error{code,
                 u"%1 answered %2 when asked to %3: %4"_s.arg(m_profile.name)
                     .arg(status)
                     .arg(actionText(call.purpose, call.subject), said.isEmpty() ? u"no reason given"_s : said),
                 m_profile.where,
                 {}};
}

} // namespace pando::adapters::forgerest::detail
