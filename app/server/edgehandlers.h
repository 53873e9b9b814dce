#pragma once
// Identity assertions over the API (core/assertion, docs/edge.md "Identity assertions"): the
// forward-auth route the edge asks before each request to an app that wants assertions, and
// the JWKS document apps verify them with.

#include "routes.h"

namespace pando::server::edgeapi {

// The cookie that carries a Pando session on an app's domain. Read only by the forward-auth
// route: no other route takes a credential from a cookie, so no page can ride on it.
inline constexpr QByteArrayView SessionCookie("pando_session");

// The request's credential as the edge passes it on: a bearer token, else the session cookie.
QString edgeCredential(const RequestData &request);

// GET /api/v1/edge/auth?app=NAME: 200 with X-Pando-Assertion, 401, 403 (core decides). A
// browser's page load that is not signed in is sent to the sign-in page on the app's host instead.
Reply auth(Call &call);
// GET /api/v1/edge/sign-in?app=NAME&next=PATH: the sign-in form, served on the app's own host
// (the edge passes /.pando/sign-in there). POST: signs in (a form: username, password, next) and
// sets the pando_session cookie for that host only, then sends the browser back to next.
Reply signInPage(Call &call);
Reply signIn(Call &call);
// GET /api/v1/edge/sign-out?app=NAME&next=PATH: a page with a button that posts to itself (the
// edge passes /.pando/sign-out there). POST: ends the session of the cookie, clears the cookie
// and sends the browser to the sign-in page (with next). A form from another site is refused.
Reply signOutPage(Call &call);
Reply signOut(Call &call);
// GET /.well-known/jwks.json: the public keys, cacheable for a few minutes.
Reply jwks(Call &call);
// POST /api/v1/edge/keys/rotate: a new signing key now (administrators; audited).
Reply rotateKey(Call &call);

} // namespace pando::server::edgeapi
