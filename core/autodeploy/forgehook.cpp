#include "core/autodeploy/forgehook.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>
#include <QRegularExpression>
#include <algorithm>
#include <cctype>

using namespace Qt::StringLiterals;

namespace pando::core::autodeploy {

QString forgeName(Forge forge)
{
    switch (forge) {
    case Forge::GitHub:
        return u"github"_s;
    case Forge::GitLab:
        return u"gitlab"_s;
    case Forge::Gitea:
        return u"gitea"_s;
    case Forge::Bitbucket:
        return u"bitbucket"_s;
    case Forge::AzureDevOps:
        return u"azure-devops"_s;
    }
    return u"github"_s;
}

namespace detail {

QByteArray headerValue(const HookRequest &request, const char *name)
{
    return request.headers.value(QByteArray(name)).trimmed();
}

} // namespace detail

namespace {

using detail::headerValue;

// The Gitea family's headers, in the order they are looked at: Forgejo and Gogs send Gitea's too.
constexpr const char *GiteaEvents[] = {"x-gitea-event", "x-forgejo-event", "x-gogs-event"};

// Azure DevOps sends no header of its own: its service hook is told apart by its body.
bool isAzureBody(const QByteArray &body)
{
    if (body.size() > MaxHookPayloadBytes)
        return false;
    const QJsonObject object = QJsonDocument::fromJson(body).object();
    return object.value("publisherId"_L1).toString() == "tfs"_L1 && !object.value("eventType"_L1).toString().isEmpty();
}

// Equal without an early exit: the time taken says nothing about where two MACs differ.
bool sameBytes(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    unsigned char difference = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        difference |= static_cast<unsigned char>(a[i] ^ b[i]);
    return difference == 0;
}

// A token or password against the secret: both are hashed first, so the comparison takes the same
// time whatever their lengths and wherever they differ.
bool sameSecret(QByteArrayView given, QByteArrayView secret)
{
    return sameBytes(QCryptographicHash::hash(given, QCryptographicHash::Sha256),
                     QCryptographicHash::hash(secret, QCryptographicHash::Sha256));
}

QString whereHeader(const char *name)
{
    return u"headers."_s + QLatin1StringView(name);
}

// A header: the key HookRequest holds it under and the name messages give it.
struct Header {
    const char *key;   // as HookRequest holds it: "x-hub-signature-256"
    const char *shown; // as the forge documents it
    QLatin1StringView name() const { return QLatin1StringView(shown); }
};

constexpr Header HubSignature256{"x-hub-signature-256", "X-Hub-Signature-256"};
constexpr Header HubSignature{"x-hub-signature", "X-Hub-Signature"};

// The header carries hex HMAC-SHA256 of the body, after prefix ("sha256=" or nothing).
Status checkHmac(const HookRequest &request, const Header &header, QByteArrayView prefix, const QByteArray &secret,
                 const QString &hint)
{
    const QByteArray given = headerValue(request, header.key);
    const QString where = whereHeader(header.key);
    if (given.isEmpty())
        return fail(ErrorCode::Unauthorized, u"the request has no %1 header"_s.arg(header.name()), where, hint);
    const QByteArrayView hex = QByteArrayView(given).sliced(given.startsWith(prefix) ? prefix.size() : 0);
    const bool wellFormed = given.startsWith(prefix) && hex.size() == 64 &&
                            std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(uchar(c)) != 0; });
    if (!wellFormed)
        return fail(ErrorCode::Unauthorized,
                    prefix.isEmpty() ? u"%1 is not 64 hex digits (an HMAC-SHA256)"_s.arg(header.name())
                                     : u"%1 is not \"%2\" and 64 hex digits (an HMAC-SHA256)"_s.arg(
                                           header.name(), QString::fromLatin1(prefix)),
                    where, hint);
    const QByteArray expected = QMessageAuthenticationCode::hash(request.body, secret, QCryptographicHash::Sha256);
    if (!sameBytes(QByteArray::fromHex(hex.toByteArray()), expected))
        return fail(ErrorCode::Unauthorized,
                    u"%1 does not match the body signed with the hook's secret"_s.arg(header.name()), where, hint);
    return {};
}

Status verifyGitHub(const HookRequest &request, const QByteArray &secret)
{
    const QString hint = u"set the webhook's secret on GitHub to the app's hook secret"_s;
    if (headerValue(request, HubSignature256.key).isEmpty() && !headerValue(request, HubSignature.key).isEmpty())
        return fail(ErrorCode::Unauthorized,
                    u"the request has only the legacy SHA-1 X-Hub-Signature header, not X-Hub-Signature-256"_s,
                    whereHeader(HubSignature256.key),
                    u"give the webhook on GitHub the app's hook secret, so that GitHub signs it with "
                    u"SHA-256 in X-Hub-Signature-256"_s);
    return checkHmac(request, HubSignature256, "sha256=", secret, hint);
}

Status verifyGitLab(const HookRequest &request, const QByteArray &secret)
{
    const char *key = "x-gitlab-token";
    const QString hint = u"set the webhook's secret token on GitLab to the app's hook secret"_s;
    const QByteArray given = headerValue(request, key);
    if (given.isEmpty())
        return fail(ErrorCode::Unauthorized, u"the request has no X-Gitlab-Token header"_s, whereHeader(key), hint);
    if (!sameSecret(given, secret))
        return fail(ErrorCode::Unauthorized, u"X-Gitlab-Token does not match the hook's secret"_s, whereHeader(key),
                    hint);
    return {};
}

Status verifyGitea(const HookRequest &request, const QByteArray &secret)
{
    const QString hint = u"set the webhook's secret on the forge to the app's hook secret"_s;
    static constexpr Header bare[] = {{"x-gitea-signature", "X-Gitea-Signature"},
                                      {"x-forgejo-signature", "X-Forgejo-Signature"},
                                      {"x-gogs-signature", "X-Gogs-Signature"}};
    for (const Header &header : bare) {
        if (!headerValue(request, header.key).isEmpty())
            return checkHmac(request, header, {}, secret, hint);
    }
    if (!headerValue(request, HubSignature256.key).isEmpty())
        return checkHmac(request, HubSignature256, "sha256=", secret, hint);
    return fail(ErrorCode::Unauthorized,
                u"the request has no X-Gitea-Signature, X-Forgejo-Signature, X-Gogs-Signature or "
                u"X-Hub-Signature-256 header"_s,
                whereHeader(bare[0].key), hint);
}

Status verifyBitbucket(const HookRequest &request, const QByteArray &secret)
{
    return checkHmac(request, HubSignature, "sha256=", secret,
                     u"set the webhook's secret on Bitbucket to the app's hook secret"_s);
}

Status verifyAzure(const HookRequest &request, const QByteArray &secret)
{
    const char *key = "authorization";
    const QString hint = u"set basic authentication on the service hook, with any user name and the app's hook secret "
                         u"as the password"_s;
    const QByteArray given = headerValue(request, key);
    if (given.isEmpty())
        return fail(ErrorCode::Unauthorized, u"the request has no Authorization header (HTTP basic authentication)"_s,
                    whereHeader(key), hint);
    const qsizetype space = given.indexOf(' ');
    const auto decoded =
        QByteArray::fromBase64Encoding(given.sliced(space + 1).trimmed(), QByteArray::AbortOnBase64DecodingErrors);
    const QByteArray credentials = decoded ? decoded.decoded : QByteArray();
    const qsizetype colon = credentials.indexOf(':');
    if (space < 0 || given.first(space).toLower() != "basic" || colon < 0)
        return fail(ErrorCode::Unauthorized, u"Authorization is not HTTP basic authentication (Basic user:password)"_s,
                    whereHeader(key), hint);
    if (!sameSecret(QByteArrayView(credentials).sliced(colon + 1), secret))
        return fail(ErrorCode::Unauthorized, u"the password in Authorization does not match the hook's secret"_s,
                    whereHeader(key), hint);
    return {};
}

// The JSON of a body sent as a form: the "payload" field, percent-decoded ('+' is a space).
Result<QByteArray> formPayload(const QByteArray &body)
{
    for (const QByteArray &field : body.split('&')) {
        if (!field.startsWith("payload="))
            continue;
        QByteArray value = field.sliced(qsizetype(8));
        value.replace('+', ' ');
        return QByteArray::fromPercentEncoding(value);
    }
    return fail(ErrorCode::Invalid, u"the form body has no \"payload\" field"_s, u"body.payload"_s,
                u"set the webhook's content type to application/json"_s);
}

bool isForm(const HookRequest &request)
{
    const QByteArray type = headerValue(request, "content-type").toLower();
    if (type.startsWith("application/x-www-form-urlencoded"))
        return true;
    // A form sent without its content type still starts with its one field.
    return type.isEmpty() && request.body.startsWith("payload=");
}

} // namespace

Result<Forge> detectForge(const HookRequest &request)
{
    for (const char *name : GiteaEvents) {
        if (!headerValue(request, name).isEmpty())
            return Forge::Gitea;
    }
    if (!headerValue(request, "x-github-event").isEmpty())
        return Forge::GitHub;
    if (!headerValue(request, "x-gitlab-event").isEmpty())
        return Forge::GitLab;
    if (!headerValue(request, "x-event-key").isEmpty())
        return Forge::Bitbucket;
    if (isAzureBody(request.body))
        return Forge::AzureDevOps;
    return fail(ErrorCode::Invalid,
                u"cannot tell which forge sent this: it has none of X-GitHub-Event (GitHub), X-Gitlab-Event "
                u"(GitLab), X-Gitea-Event, X-Forgejo-Event or X-Gogs-Event (Gitea, Forgejo, Gogs) and X-Event-Key "
                u"(Bitbucket), and its body is not an Azure DevOps service hook (a JSON object whose "
                u"publisherId is \"tfs\")"_s,
                u"headers"_s, u"point a forge's push webhook at this address; no other sender is accepted"_s);
}

Status verify(Forge forge, const HookRequest &request, const QByteArray &secret)
{
    if (secret.isEmpty())
        return fail(ErrorCode::Unauthorized, u"the hook has no secret, so no request can be verified against it"_s,
                    u"secret"_s, u"give the app's hook a secret and set the same one on the forge"_s);
    switch (forge) {
    case Forge::GitHub:
        return verifyGitHub(request, secret);
    case Forge::GitLab:
        return verifyGitLab(request, secret);
    case Forge::Gitea:
        return verifyGitea(request, secret);
    case Forge::Bitbucket:
        return verifyBitbucket(request, secret);
    case Forge::AzureDevOps:
        return verifyAzure(request, secret);
    }
    return fail(ErrorCode::Internal, u"unknown forge"_s);
}

Result<HookEvent> parse(Forge forge, const HookRequest &request)
{
    if (request.body.size() > MaxHookPayloadBytes)
        return fail(ErrorCode::TooLarge,
                    u"the payload is %1 bytes, more than the %2 a hook may send"_s.arg(request.body.size())
                        .arg(MaxHookPayloadBytes),
                    u"body"_s, u"a push of that size is not read; push fewer commits at once"_s);
    QByteArray json = request.body;
    if (isForm(request)) {
        auto payload = formPayload(request.body);
        if (!payload)
            return std::unexpected(payload.error());
        json = *payload;
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        return fail(ErrorCode::Invalid, u"is not JSON: %1 at offset %2"_s.arg(error.errorString()).arg(error.offset),
                    u"body"_s, u"set the webhook's content type to application/json"_s);
    if (!document.isObject())
        return fail(ErrorCode::Invalid, u"is not a JSON object"_s, u"body"_s);
    auto event = detail::readEvent(forge, request, document.object());
    if (!event)
        return event;
    // What is kept and shown of it: a delivery id is an id, the rest is cut to a line.
    static const QRegularExpression id(uR"(^[A-Za-z0-9._:{}\-]{1,128}\z)"_s);
    if (!id.match(event->deliveryId).hasMatch())
        return fail(ErrorCode::Invalid, u"the delivery id is not 1 to 128 letters, digits and . _ : { } -"_s,
                    u"headers"_s);
    if (event->ref.size() > 255)
        return fail(ErrorCode::Invalid, u"the ref is longer than 255 characters"_s, u"body.ref"_s);
    for (QString *field : {&event->eventName, &event->pusher}) {
        field->truncate(100);
        field->removeIf([](QChar c) { return c.category() == QChar::Other_Control; });
    }
    return event;
}

} // namespace pando::core::autodeploy
