// Identity assertions for the edge: the engine's door to core/assertion. Who the request's
// credential stands for comes from accounts, whether they may reach the app from authz (the same
// apps.read decision the API makes), their grants on it from the grant store.

#include "core/engine/engineprivate.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Status Engine::Private::openAssertions()
{
    assertion::AssertionOptions settings;
    settings.issuer = options.assertionIssuer.isEmpty() ? u"pando:"_s + options.installId : options.assertionIssuer;
    if (options.assertionKeyDays < 1)
        return fail(ErrorCode::Invalid, u"must be at least 1 day, got %1"_s.arg(options.assertionKeyDays),
                    u"assertionKeyDays"_s);
    settings.keys.rotateAfterMs = qint64(options.assertionKeyDays) * 24 * 60 * 60 * 1000;
    auto service =
        std::make_unique<assertion::AssertionService>(options.dataDir + u"/assertion-keys.json"_s, clock, settings);
    if (auto opened = service->open(); !opened)
        return opened;
    assertions = std::move(service);
    return {};
}

Result<assertion::MintedAssertion> Engine::edgeAssertion(const QString &credential, const QString &app,
                                                         const QByteArray &incomingAssertion, const Actor &source)
{
    if (!d->assertions)
        return fail(ErrorCode::Unavailable, u"the engine has not started"_s);
    const QString object = u"app/"_s + app;
    // Only the edge sets the header: one that came with the request is a forgery or a replay,
    // whoever sent it and whatever it says.
    if (!incomingAssertion.isEmpty()) {
        const Error refused = d->assertions->refuseIncoming(incomingAssertion, app);
        if (auto audited = d->audit.recordUnauthenticated(source, u"edge.assertion_refused"_s, object,
                                                          QJsonObject{{u"reason"_s, refused.message}});
            !audited)
            return std::unexpected(audited.error());
        return std::unexpected(refused);
    }
    const QString signIn = u"sign in to Pando: send Authorization: Bearer <token>, or the pando_session cookie"_s;
    if (credential.isEmpty())
        return fail(ErrorCode::Unauthorized, u"the app %1 is for people signed in to Pando"_s.arg(app),
                    u"Authorization"_s, signIn);
    if (!d->accounts)
        return fail(ErrorCode::Unavailable, u"this install has no accounts"_s, u"accounts"_s);
    auto principal = d->accounts->authenticate(credential);
    if (!principal) {
        Error error = principal.error();
        if (error.code != ErrorCode::Unavailable && error.code != ErrorCode::Internal)
            error.code = ErrorCode::Unauthorized;
        if (error.hint.isEmpty())
            error.hint = signIn;
        return std::unexpected(error);
    }
    // The initial token belongs to nobody: an app cannot be told who is asking.
    if (principal->userId.isEmpty())
        return fail(ErrorCode::Forbidden, u"the initial admin token is nobody's; an app needs a person"_s,
                    u"Authorization"_s, u"create the first administrator and sign in as them"_s);
    const Actor actor = principal->actor(source.source, source.requestId);
    auto decision = authorize(*principal, authz::permission::AppsRead,
                              authz::ObjectRef{authz::ObjectKind::App, app, {}}, actor, u"GET /api/v1/edge/auth"_s);
    if (!decision)
        return std::unexpected(decision.error());
    if (!*decision)
        return fail(ErrorCode::Forbidden, decision->reason, object,
                    u"an owner of the app, an operator or an administrator can grant you access"_s);
    if (auto found = AppRepository(d->db).find(app); !found)
        return std::unexpected(found.error());
    auto roles = authz::GrantRepository(d->db).roles(authz::ObjectKind::App, app, principal->userId);
    if (!roles)
        return std::unexpected(roles.error());
    QStringList grants = *roles;
    grants.sort();
    return d->assertions->mint(
        assertion::Subject{principal->userId, principal->username, accounts::roleName(principal->role), grants}, app);
}

Result<QJsonObject> Engine::assertionKeys()
{
    if (!d->assertions)
        return fail(ErrorCode::Unavailable, u"the engine has not started"_s);
    return d->assertions->jwks();
}

Result<QString> Engine::rotateAssertionKey(const Actor &actor)
{
    if (!d->assertions)
        return fail(ErrorCode::Unavailable, u"the engine has not started"_s);
    auto kid = d->assertions->rotate();
    if (!kid)
        return kid;
    if (auto audited = d->audit.record(actor, u"assertion.rotate"_s, u"assertion-key/"_s + *kid, u"success"_s);
        !audited)
        return std::unexpected(
            unaudited(u"the assertion signing key was replaced (kid %1)"_s.arg(*kid), audited.error()));
    return kid;
}

} // namespace pando::core
