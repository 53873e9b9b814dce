// The forges' OAuth endpoints (adapters::ForgeOAuth): the authorization page's address and the
// token endpoint's two grants, authorization_code and refresh_token, as each forge documents them.
//
// Design decisions:
//  - The token requests are form posts (application/x-www-form-urlencoded), which every forge
//    takes; GitHub answers JSON only when asked with Accept: application/json, and answers a
//    refused code with 200 and an "error" member, which is read like the others' 400 or 401.
//  - Bitbucket Cloud takes the client's id and secret as HTTP Basic authentication, the others in
//    the form.
//  - The scopes asked for are those Pando's forge API uses (adapters/api/forge.h): GitHub "repo"
//    and "admin:repo_hook", GitLab "api"; Gitea grants what the application was registered with
//    and Bitbucket what its consumer was given.
//  - Nothing the forge answers is repeated in an error without the code, the tokens and the
//    secret scrubbed from it.

#include "adapters/forge/rest/forgeclient.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest {

namespace {

struct Endpoints {
    QString authorize;
    QString token;
    QString scopes;               // space-separated; empty: none asked
    bool basicClientAuth = false; // the client's id and secret as HTTP Basic (Bitbucket Cloud)
    QString forge;                // for messages
};

Result<Endpoints> endpoints(const ForgeScope &scope, const QString &webBaseOverride)
{
    QString base = webBaseOverride.isEmpty() ? scope.baseUrl : webBaseOverride;
    while (base.endsWith(u'/'))
        base.chop(1);
    const QUrl url(base);
    if (!url.isValid() || url.host().isEmpty() || (url.scheme() != u"https"_s && url.scheme() != u"http"_s))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not the forge's https:// address, where its OAuth pages are"_s.arg(scope.baseUrl),
                    u"url"_s, u"give the connection the forge's web address, e.g. https://gitlab.com"_s);
    switch (scope.kind) {
    case ForgeKind::GitHub:
        return Endpoints{base + u"/login/oauth/authorize"_s, base + u"/login/oauth/access_token"_s,
                         u"repo admin:repo_hook"_s, false, u"GitHub"_s};
    case ForgeKind::GitLab:
        return Endpoints{base + u"/oauth/authorize"_s, base + u"/oauth/token"_s, u"api"_s, false, u"GitLab"_s};
    case ForgeKind::Gitea:
        return Endpoints{
            base + u"/login/oauth/authorize"_s, base + u"/login/oauth/access_token"_s, {}, false, u"Gitea"_s};
    case ForgeKind::Bitbucket:
        if (!detail::isBitbucketCloud(scope))
            break;
        return Endpoints{
            base + u"/site/oauth2/authorize"_s, base + u"/site/oauth2/access_token"_s, {}, true, u"Bitbucket"_s};
    case ForgeKind::AzureDevOps:
    case ForgeKind::Generic:
    case ForgeKind::Registry:
        break;
    }
    return fail(ErrorCode::Invalid,
                u"Pando takes OAuth applications of GitHub, GitLab, Gitea, Forgejo and Bitbucket Cloud, not of a "
                u"%1 host"_s.arg(detail::isBitbucketCloud(scope) || scope.kind != ForgeKind::Bitbucket
                                     ? forgeKindName(scope.kind)
                                     : u"Bitbucket Data Center"_s),
                u"kind"_s, u"give the connection an access token or a deploy key"_s);
}

class RestOAuth final : public ForgeOAuth {
public:
    explicit RestOAuth(ForgeRestOptions options) : m_options(std::move(options)) {}

    Result<QString> authorizeUrl(const ForgeOAuthApp &app, const QString &redirectUri, const QString &state,
                                 const QString &codeChallenge) const override
    {
        auto at = endpoints(app.scope, m_options.apiBase);
        if (!at)
            return std::unexpected(at.error());
        QUrlQuery query;
        query.addQueryItem(u"client_id"_s, QString::fromUtf8(QUrl::toPercentEncoding(app.clientId)));
        query.addQueryItem(u"redirect_uri"_s, QString::fromUtf8(QUrl::toPercentEncoding(redirectUri)));
        query.addQueryItem(u"response_type"_s, u"code"_s);
        query.addQueryItem(u"state"_s, QString::fromUtf8(QUrl::toPercentEncoding(state)));
        query.addQueryItem(u"code_challenge"_s, QString::fromUtf8(QUrl::toPercentEncoding(codeChallenge)));
        query.addQueryItem(u"code_challenge_method"_s, u"S256"_s);
        if (!at->scopes.isEmpty())
            query.addQueryItem(u"scope"_s, QString::fromUtf8(QUrl::toPercentEncoding(at->scopes)));
        return at->authorize + u'?' + query.query(QUrl::FullyEncoded);
    }

    Result<ForgeOAuthGrant> exchange(const ForgeOAuthApp &app, const QString &code, const QString &redirectUri,
                                     const QByteArray &codeVerifier, const CancelToken &cancel) const override
    {
        if (code.isEmpty() || code.size() > 2048)
            return fail(ErrorCode::Invalid, u"the forge sent no usable authorization code"_s, u"code"_s,
                        u"authorize again"_s);
        return grant(app,
                     {{u"grant_type"_s, u"authorization_code"_s},
                      {u"code"_s, code},
                      {u"redirect_uri"_s, redirectUri},
                      {u"code_verifier"_s, QString::fromLatin1(codeVerifier)}},
                     {code.toUtf8(), codeVerifier}, u"code"_s, cancel);
    }

    Result<ForgeOAuthGrant> refresh(const ForgeOAuthApp &app, const QByteArray &refreshToken,
                                    const CancelToken &cancel) const override
    {
        if (refreshToken.isEmpty())
            return fail(ErrorCode::Unauthorized, u"the forge gave no refresh token to renew the access with"_s,
                        u"refresh_token"_s, u"authorize the connection again"_s);
        return grant(app,
                     {{u"grant_type"_s, u"refresh_token"_s}, {u"refresh_token"_s, QString::fromUtf8(refreshToken)}},
                     {refreshToken}, u"refresh_token"_s, cancel);
    }

private:
    // One token request: form, the answer read into a grant or an error about what (where
    // "code" or "refresh_token") the forge refused. hidden: what never appears in an error.
    Result<ForgeOAuthGrant> grant(const ForgeOAuthApp &app, QList<QPair<QString, QString>> form,
                                  QList<QByteArray> hidden, const QString &what, const CancelToken &cancel) const
    {
        auto at = endpoints(app.scope, m_options.apiBase);
        if (!at)
            return std::unexpected(at.error());
        if (app.clientId.isEmpty() || app.clientSecret.isEmpty())
            return fail(ErrorCode::Invalid, u"an OAuth application needs its client id and secret"_s,
                        app.clientId.isEmpty() ? u"client_id"_s : u"client_secret"_s);
        hidden << app.clientSecret;
        httpkit::Request request;
        request.method = "POST";
        request.headers = {{"Accept", "application/json"}, {"User-Agent", "Pando"}};
        if (at->basicClientAuth) {
            request.headers.append({"Authorization", detail::basicAuth(app.clientId, app.clientSecret)});
        } else {
            form.append({u"client_id"_s, app.clientId});
            form.append({u"client_secret"_s, QString::fromUtf8(app.clientSecret)});
        }
        request.body = httpkit::encodeQuery(form);
        request.contentType = "application/x-www-form-urlencoded";
        request.timeoutMs = m_options.requestTimeoutMs;
        httpkit::Endpoint endpoint;
        endpoint.baseUrl = at->token.toUtf8();
        const httpkit::Exchange exchange = httpkit::perform(endpoint, request, &cancel);
        for (QPair<QString, QString> &field : form)
            field.second.fill(u'\0');
        const auto scrub = [&hidden](QString text) {
            for (const QByteArray &secret : std::as_const(hidden)) {
                if (secret.size() >= 4)
                    text.replace(QString::fromUtf8(secret), u"[hidden]"_s);
            }
            return text;
        };
        const QString where = u"%1's token endpoint (%2)"_s.arg(at->forge, at->token);
        if (exchange.cancelled)
            return fail(ErrorCode::Cancelled, u"the request to %1 was cancelled"_s.arg(where), what);
        if (exchange.transportFailed) {
            if (exchange.timedOut)
                return fail(ErrorCode::Timeout,
                            u"%1 did not answer within %2 ms"_s.arg(where).arg(m_options.requestTimeoutMs), what,
                            u"check that the forge is up and reachable from this machine, then try again"_s);
            return fail(ErrorCode::Unavailable, u"%1 did not answer: %2"_s.arg(where, scrub(exchange.error)), what,
                        u"check the network and the connection's address"_s);
        }
        const QJsonObject answer = QJsonDocument::fromJson(exchange.body).object();
        const QString error = answer.value("error"_L1).toString();
        if (exchange.status / 100 == 2 && error.isEmpty() && answer.value("access_token"_L1).isString())
            return readGrant(answer);
        const QString said =
            scrub(detail::clipped(answer.value("error_description"_L1)
                                      .toString(error.isEmpty() ? detail::forgeMessage(exchange.body) : error),
                                  300));
        const QString saying = said.isEmpty() ? QString() : u" (%1 says: %2)"_s.arg(at->forge, said);
        if (error == u"invalid_client"_s || error == u"incorrect_client_credentials"_s || exchange.status == 401)
            return fail(ErrorCode::Unauthorized,
                        u"%1 refused the OAuth application's client id or secret%2"_s.arg(at->forge, saying),
                        u"client_secret"_s,
                        u"copy the client id and secret from the application's settings on the forge again"_s);
        if (error == u"redirect_uri_mismatch"_s)
            return fail(ErrorCode::Invalid,
                        u"%1 refused the address it was to send the browser back to%2"_s.arg(at->forge, saying),
                        u"redirect_uri"_s,
                        u"register http://127.0.0.1/callback (or with the port given to --callback-port) as the "
                        u"application's callback URL"_s);
        if (error == u"invalid_grant"_s || error == u"bad_verification_code"_s || error == u"bad_refresh_token"_s ||
            exchange.status == 400) {
            if (what == u"refresh_token"_s)
                return fail(
                    ErrorCode::Unauthorized,
                    u"%1 no longer renews the authorization: it was revoked or has expired%2"_s.arg(at->forge, saying),
                    what, u"authorize the connection again"_s);
            return fail(ErrorCode::Invalid,
                        u"%1 refused the authorization code: it expired, was used already, or was issued for "
                        u"another address%2"_s.arg(at->forge, saying),
                        what, u"authorize again"_s);
        }
        return fail(ErrorCode::Unavailable,
                    u"%1 answered %2 without a token%3"_s.arg(where).arg(exchange.status).arg(saying), what,
                    u"check that the connection's address is the forge's, then try again"_s);
    }

    static Result<ForgeOAuthGrant> readGrant(const QJsonObject &answer)
    {
        ForgeOAuthGrant granted;
        granted.accessToken = answer.value("access_token"_L1).toString().toUtf8();
        granted.refreshToken = answer.value("refresh_token"_L1).toString().toUtf8();
        const qint64 expiresIn = answer.value("expires_in"_L1).toInteger();
        if (expiresIn > 0)
            granted.expiresMs = QDateTime::currentMSecsSinceEpoch() + expiresIn * 1000;
        return granted;
    }

    ForgeRestOptions m_options;
};

} // namespace

std::shared_ptr<const ForgeOAuth> makeOAuth(const ForgeRestOptions &options)
{
    return std::make_shared<RestOAuth>(options);
}

} // namespace pando::adapters::forgerest

namespace pando::adapters {

std::shared_ptr<const ForgeOAuth> makeForgeOAuth(const QString &webBaseOverride)
{
    forgerest::ForgeRestOptions options;
    options.apiBase = webBaseOverride;
    return forgerest::makeOAuth(options);
}

} // namespace pando::adapters
