// A GitHub App installation's access token (adapters::mintInstallationToken): the app signs a
// JSON Web Token with its private key and exchanges it for a token of one installation, as
// GitHub's "Authenticating as a GitHub App installation" documents.

#include "adapters/api/jose/es256.h"
#include "adapters/api/jose/rs256.h"
#include "adapters/forge/rest/forgeclient.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::adapters::forgerest {

namespace {

// GitHub allows a JWT at most ten minutes of life, and recommends dating it 60 s back against
// clocks that drift.
constexpr qint64 JwtBackdateSeconds = 60;
constexpr qint64 JwtLifetimeSeconds = 9LL * 60;

Status checkNumericId(const QString &id, const QString &what, const QString &where)
{
    static const QRegularExpression digits(u"^[1-9][0-9]{0,19}\\z"_s);
    if (!digits.match(id).hasMatch())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a GitHub App's %2: a number"_s.arg(id.left(40), what), where,
                    u"the app's settings page shows its App ID; an installation's id ends the address of its "
                    u"settings page (…/settings/installations/ID)"_s);
    return {};
}

QByteArray appJwt(const jose::RsaKey &key, const QString &appId, qint64 nowSeconds)
{
    const QByteArray header = jose::base64Url(R"({"alg":"RS256","typ":"JWT"})");
    const QJsonObject claims{
        {u"iat"_s, nowSeconds - JwtBackdateSeconds}, {u"exp"_s, nowSeconds + JwtLifetimeSeconds}, {u"iss"_s, appId}};
    const QByteArray signingInput =
        header + '.' + jose::base64Url(QJsonDocument(claims).toJson(QJsonDocument::Compact));
    const QByteArray signature = key.sign(signingInput);
    return signature.isEmpty() ? QByteArray() : signingInput + '.' + jose::base64Url(signature);
}

} // namespace

Result<ForgeAccessToken> mintInstallationToken(const ForgeAppInstallation &app, const ForgeRestOptions &options,
                                               const CancelToken &cancel)
{
    if (app.scope.kind != ForgeKind::GitHub)
        return fail(
            ErrorCode::Invalid,
            u"a GitHub App is GitHub's; a %1 host takes a token or a deploy key"_s.arg(forgeKindName(app.scope.kind)),
            u"kind"_s);
    if (auto ok = checkNumericId(app.appId, u"app id"_s, u"app_id"_s); !ok)
        return std::unexpected(ok.error());
    if (auto ok = checkNumericId(app.installationId, u"installation id"_s, u"installation_id"_s); !ok)
        return std::unexpected(ok.error());
    auto key = jose::RsaKey::fromPem(app.privateKey);
    if (!key) {
        Error e = key.error();
        e.where = u"private_key"_s;
        e.hint = u"give the .pem file GitHub generated on the app's settings page (Private keys)"_s;
        return std::unexpected(e);
    }
    const QString apiBase = options.apiBase.isEmpty() ? detail::defaultApiBase(app.scope) : options.apiBase;
    if (apiBase.isEmpty())
        return fail(ErrorCode::Invalid, u"%1 does not say where GitHub's web API is"_s.arg(app.scope.baseUrl), u"url"_s,
                    u"give the connection GitHub's https:// address"_s);
    const QByteArray jwt = appJwt(*key, app.appId, QDateTime::currentSecsSinceEpoch());
    if (jwt.isEmpty())
        return fail(ErrorCode::Internal, u"signing the app's JSON Web Token failed"_s, u"private_key"_s);

    const detail::RestClient client(detail::gitHubProfile(jwt), apiBase, jwt, options);
    const detail::Call call = client.call(detail::Purpose::ReadRepository, {}, cancel);
    const QString path = u"/app/installations/%1/access_tokens"_s.arg(app.installationId);
    auto reply = client.send("POST", client.url(path), QJsonValue(QJsonObject{}), call);
    if (!reply)
        return std::unexpected(reply.error());
    const QString said = client.scrubbed(detail::forgeMessage(reply->body));
    const QString saying = said.isEmpty() ? QString() : u" (GitHub says: %1)"_s.arg(said);
    const QString installation = u"installation %1 of GitHub App %2"_s.arg(app.installationId, app.appId);
    switch (reply->status) {
    case 201:
    case 200:
        break;
    case 401:
        return fail(ErrorCode::Unauthorized, u"GitHub refused the request signed as app %1%2"_s.arg(app.appId, saying),
                    u"private_key"_s,
                    u"check the app id and that the key is one of the app's (its settings page lists them); a "
                    u"clock more than a minute off makes GitHub refuse it too"_s);
    case 403:
        if (reply->header("x-ratelimit-remaining") == "0" || !reply->header("retry-after").isEmpty())
            return std::unexpected(client.refusal(*reply, call));
        return fail(ErrorCode::Forbidden,
                    u"GitHub refused a token of %1: it is suspended%2"_s.arg(installation, saying),
                    u"installation_id"_s,
                    u"the account's owner unsuspends it under Settings → GitHub Apps (Installed GitHub Apps)"_s);
    case 404:
        return fail(ErrorCode::NotFound,
                    u"GitHub has no %1: the app was uninstalled from the account, or the id is wrong%2"_s.arg(
                        installation, saying),
                    u"installation_id"_s,
                    u"install the app on the account again, then remove the connection and add it with the new "
                    u"installation's id"_s);
    default:
        return std::unexpected(client.refusal(*reply, call));
    }
    const QJsonObject answer = QJsonDocument::fromJson(reply->body).object();
    ForgeAccessToken minted;
    minted.token = answer.value("token"_L1).toString().toUtf8();
    const QDateTime expires = QDateTime::fromString(answer.value("expires_at"_L1).toString(), Qt::ISODate);
    if (minted.token.isEmpty() || !expires.isValid())
        return fail(ErrorCode::Unavailable,
                    u"GitHub's answer to a token request of %1 holds no token and expiry"_s.arg(installation),
                    u"github-api"_s, u"check that %1 is GitHub's API"_s.arg(apiBase));
    minted.expiresMs = expires.toMSecsSinceEpoch();
    return minted;
}

} // namespace pando::adapters::forgerest

namespace pando::adapters {

Result<ForgeAccessToken> mintInstallationToken(const ForgeAppInstallation &app, const QString &apiBaseOverride,
                                               const CancelToken &cancel)
{
    forgerest::ForgeRestOptions options;
    options.apiBase = apiBaseOverride;
    return forgerest::mintInstallationToken(app, options, cancel);
}

} // namespace pando::adapters
