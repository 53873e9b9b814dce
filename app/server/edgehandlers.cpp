#include "edgehandlers.h"

#include "httperror.h"
#include "replies.h"

#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace pando::server::edgeapi {

namespace {

// Where the edge serves the sign-in and sign-out pages on an app's host (adapters/routing/caddy).
constexpr auto SignInPath = "/.pando/sign-in"_L1;
constexpr auto SignOutPath = "/.pando/sign-out"_L1;

// Where a browser goes after signing in: a path on the same host, never another site.
QString safeNext(const QString &next)
{
    if (!next.startsWith(u'/') || next.startsWith(u"//"_s) || next.startsWith(u"/\\"_s) || next.contains(u'\r') ||
        next.contains(u'\n') || next.size() > 2048)
        return u"/"_s;
    return next;
}

// A page's path with where to go after, every reserved character of it encoded.
QString withNext(QLatin1StringView path, const QString &next)
{
    return path + u"?next="_s + QString::fromLatin1(QUrl::toPercentEncoding(next));
}

QString signInUrl(const QString &next)
{
    return withNext(SignInPath, next);
}

// A page load (not a script's fetch), which a redirect to the sign-in page helps.
bool isPageLoad(const RequestData &request)
{
    const QByteArray method = request.forwarded.method.isEmpty() ? request.method.toLatin1() : request.forwarded.method;
    return (method == "GET" || method == "HEAD") && request.accept.contains("text/html");
}

// Headers every page of the edge's carries: never cached, framed or sent elsewhere.
void pageHeaders(Reply &reply)
{
    reply.headers.emplaceBack("Cache-Control", "no-store");
    reply.headers.emplaceBack("X-Frame-Options", "DENY");
    reply.headers.emplaceBack("Referrer-Policy", "no-referrer");
    reply.headers.emplaceBack("Content-Security-Policy",
                              "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                              "frame-ancestors 'none'; base-uri 'none'");
}

Reply page(int status, const QString &title, const QString &body)
{
    Reply reply{status, {}};
    reply.contentType = "text/html; charset=utf-8";
    reply.content = uR"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>%1</title>
<style>
body{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}
label{display:block;margin-top:1rem}input{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1.25rem;padding:.5rem 1rem;font-size:1rem}.error{color:#b00020}
@media (prefers-color-scheme:dark){body{background:#1d1d1f;color:#f5f5f7}.error{color:#ff6b6b}}
</style></head><body>
%2
</body></html>
)"_s.arg(title.toHtmlEscaped(), body)
                        .toUtf8();
    pageHeaders(reply);
    return reply;
}

Reply signInForm(int status, const QString &app, const QString &next, const QString &error)
{
    QString body =
        u"<h1>Sign in to Pando</h1>\n<p>%1 is for people signed in to Pando.</p>\n"_s.arg(app.toHtmlEscaped());
    if (!error.isEmpty())
        body += u"<p class=\"error\" role=\"alert\">%1</p>\n"_s.arg(error.toHtmlEscaped());
    body += uR"(<form method="post" action="%1">
<input type="hidden" name="next" value="%2">
<label for="username">User name</label><input id="username" name="username" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>)"_s.arg(signInUrl(next).toHtmlEscaped(), next.toHtmlEscaped());
    return page(status, u"Sign in — %1"_s.arg(app), body);
}

// The 400 for a request that names no app (?app=), which the edge always does.
std::optional<Reply> namesNoApp(const QString &app, QLatin1StringView page)
{
    if (!app.isEmpty())
        return std::nullopt;
    return invalid(u"names no app"_s, u"query.app"_s, u"the edge asks /api/v1/edge/%1?app=<app name>"_s.arg(page));
}

// A form another site posts would sign the browser in or out at its will: only the app's own
// pages may send one (browsers send Origin with every POST).
std::optional<Reply> refuseOtherSites(const RequestData &request)
{
    if (request.origin.isEmpty())
        return std::nullopt;
    const QString from = QUrl(QString::fromLatin1(request.origin)).host();
    const QString host = QUrl(u"//"_s + QString::fromLatin1(request.forwarded.host)).host();
    if (!from.isEmpty() && from.compare(host, Qt::CaseInsensitive) == 0)
        return std::nullopt;
    return page(403, u"Refused"_s, u"<h1>Refused</h1>\n<p>The form was sent from another site.</p>\n"_s);
}

// The session cookie for the app's host alone (no Domain), sent back only with its own requests
// (Lax: links from elsewhere still arrive signed in), never readable by its scripts (HttpOnly).
QByteArray sessionCookie(const RequestData &request, const QByteArray &value, const QByteArray &extra = {})
{
    QByteArray cookie =
        QByteArray(SessionCookie.data(), SessionCookie.size()) + '=' + value + "; Path=/; HttpOnly; SameSite=Lax";
    if (request.forwarded.proto == "https")
        cookie += "; Secure";
    return cookie + extra;
}

// A 303 to location that sets cookie, never cached.
Reply withCookie(const QByteArray &text, const QString &location, const QByteArray &cookie)
{
    Reply reply{303, {}};
    reply.contentType = "text/plain; charset=utf-8";
    reply.content = text;
    reply.headers.emplaceBack("Location", location.toUtf8());
    reply.headers.emplaceBack("Set-Cookie", cookie);
    reply.headers.emplaceBack("Cache-Control", "no-store");
    return reply;
}

// The pando_session cookie's value, whatever Authorization the request also carries.
QString cookieSession(const RequestData &request)
{
    for (const QByteArray &pair : request.cookie.split(';')) {
        const qsizetype equals = pair.indexOf('=');
        if (equals > 0 && pair.left(equals).trimmed() == SessionCookie)
            return QString::fromLatin1(pair.mid(equals + 1).trimmed());
    }
    return {};
}

// The address that signed in, for the login throttle: the edge (on loopback) names its client.
QString clientOf(const RequestData &request)
{
    const bool fromLoopback =
        request.peer == u"127.0.0.1"_s || request.peer == u"::1"_s || request.peer == u"::ffff:127.0.0.1"_s;
    if (!fromLoopback || request.forwarded.client.isEmpty())
        return request.peer;
    return QString::fromLatin1(request.forwarded.client.split(',').constLast().trimmed());
}

// A form field, percent-decoded (signIn() turns the body's '+' into the spaces they stand for).
QString formField(const QUrlQuery &form, const QString &name)
{
    return form.queryItemValue(name, QUrl::FullyDecoded);
}

} // namespace

QString edgeCredential(const RequestData &request)
{
    const QByteArray authorization = request.authorization.trimmed();
    if (authorization.toLower().startsWith("bearer "))
        return QString::fromLatin1(authorization.mid(7).trimmed());
    // An app's own Authorization scheme (Basic, say) is not Pando's: the cookie may still be.
    return cookieSession(request);
}

Reply auth(Call &call)
{
    const QString app = queryParam(call.request, QStringLiteral("app"));
    if (app.isEmpty())
        return invalid(QStringLiteral("names no app"), QStringLiteral("query.app"),
                       QStringLiteral("the edge asks /api/v1/edge/auth?app=<app name>"));
    // The engine decides (accounts, then authz's apps.read on the app) and mints.
    auto minted = call.engine.edgeAssertion(edgeCredential(call.request), app, call.request.assertion, call.actor);
    if (!minted && minted.error().code == ErrorCode::Unauthorized && isPageLoad(call.request)) {
        // A person in a browser: to the sign-in page on the app's host, and back here after.
        Reply reply{302, errorBody(minted.error())};
        reply.headers.emplaceBack("Location",
                                  signInUrl(safeNext(QString::fromUtf8(call.request.forwarded.uri))).toUtf8());
        reply.headers.emplaceBack("Cache-Control", "no-store");
        return reply;
    }
    if (!minted && minted.error().code == ErrorCode::Forbidden && isPageLoad(call.request))
        return page(
            403, u"Not yours to open"_s,
            u"<h1>Not yours to open</h1>\n<p>%1</p>\n<p>%2</p>\n<p><a href=\"%3\">Sign in as someone "
            "else</a></p>\n"_s.arg(
                minted.error().message.toHtmlEscaped(), minted.error().hint.toHtmlEscaped(),
                withNext(SignOutPath, safeNext(QString::fromUtf8(call.request.forwarded.uri))).toHtmlEscaped()));
    if (!minted)
        return errorReply(minted.error());
    Reply reply{200, minted->claims.toJson()};
    const QLatin1StringView header = core::assertion::HeaderName;
    reply.headers.emplaceBack(QByteArray(header.data(), header.size()), minted->token);
    // Each answer is for one request: a cache in between would hand it to the next.
    reply.headers.emplaceBack("Cache-Control", "no-store");
    return reply;
}

Reply signInPage(Call &call)
{
    const QString app = queryParam(call.request, u"app"_s);
    if (auto refused = namesNoApp(app, "sign-in"_L1))
        return *refused;
    return signInForm(200, app, safeNext(queryParam(call.request, u"next"_s)), {});
}

Reply signIn(Call &call)
{
    const RequestData &request = call.request;
    const QString app = queryParam(request, u"app"_s);
    if (auto refused = namesNoApp(app, "sign-in"_L1))
        return *refused;
    if (auto refused = refuseOtherSites(request))
        return *refused;
    const QByteArray type = request.contentType.split(';').constFirst().trimmed().toLower();
    if (type != "application/x-www-form-urlencoded")
        return invalid(u"expected the sign-in form (application/x-www-form-urlencoded)"_s, u"Content-Type"_s);
    QByteArray body = request.body;
    body.replace('+', ' ');
    const QUrlQuery form(QString::fromLatin1(body));
    const QString next = safeNext(formField(form, u"next"_s));
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto session = (*accounts)->login(formField(form, u"username"_s), formField(form, u"password"_s), clientOf(request),
                                      call.actor.requestId);
    if (!session) {
        const Error &error = session.error();
        return signInForm(httpStatus(error.code), app, next,
                          error.hint.isEmpty() ? error.message : error.message + u" — "_s + error.hint);
    }
    return withCookie("Signed in\n", next, sessionCookie(request, session->secret.toLatin1()));
}

Reply signOutPage(Call &call)
{
    const QString app = queryParam(call.request, u"app"_s);
    if (auto refused = namesNoApp(app, "sign-out"_L1))
        return *refused;
    // A button, not a link that signs out: a page elsewhere cannot sign people out with an <img>.
    const QString next = safeNext(queryParam(call.request, u"next"_s));
    return page(200, u"Sign out — %1"_s.arg(app), uR"(<h1>Sign out of Pando</h1>
<p>You are signed in to Pando on this site to use %1.</p>
<form method="post" action="%2">
<input type="hidden" name="next" value="%3">
<button type="submit">Sign out</button>
</form>)"_s.arg(app.toHtmlEscaped(), withNext(SignOutPath, next).toHtmlEscaped(), next.toHtmlEscaped()));
}

Reply signOut(Call &call)
{
    const RequestData &request = call.request;
    const QString app = queryParam(request, u"app"_s);
    if (auto refused = namesNoApp(app, "sign-out"_L1))
        return *refused;
    if (auto refused = refuseOtherSites(request))
        return *refused;
    QByteArray body = request.body;
    body.replace('+', ' ');
    const QString next = safeNext(formField(QUrlQuery(QString::fromLatin1(body)), u"next"_s));
    // The session ends everywhere it is used (the desktop's and the CLI's are their own), not only
    // its cookie here; one already ended or unknown leaves nothing to do but the cookie.
    if (const QString secret = cookieSession(request); !secret.isEmpty()) {
        auto accounts = accountService(call);
        if (!accounts)
            return errorReply(accounts.error());
        if (auto ended = (*accounts)->logout(secret, call.actor); !ended && ended.error().code != ErrorCode::NotFound)
            return errorReply(ended.error());
    }
    return withCookie("Signed out\n", signInUrl(next), sessionCookie(request, {}, "; Max-Age=0"));
}

Reply jwks(Call &call)
{
    auto keys = call.engine.assertionKeys();
    if (!keys)
        return errorReply(keys.error());
    Reply reply{200, *keys};
    // A new key is published the moment it starts signing; verifiers fetch again on a kid they
    // do not know (PyJWT's PyJWKClient does), so a short cache only saves requests.
    reply.headers.emplaceBack("Cache-Control", "public, max-age=300");
    return reply;
}

Reply rotateKey(Call &call)
{
    auto kid = call.engine.rotateAssertionKey(call.actor);
    if (!kid)
        return errorReply(kid.error());
    return Reply{200, QJsonObject{{QStringLiteral("kid"), *kid}}};
}

} // namespace pando::server::edgeapi
