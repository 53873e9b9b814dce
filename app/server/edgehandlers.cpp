#include "edgehandlers.h"

#include "replies.h"

namespace pando::server::edgeapi {

QString edgeCredential(const RequestData &request)
{
    const QByteArray authorization = request.authorization.trimmed();
    if (authorization.toLower().startsWith("bearer "))
        return QString::fromLatin1(authorization.mid(7).trimmed());
    // An app's own Authorization scheme (Basic, say) is not Pando's: the cookie may still be.
    for (const QByteArray &pair : request.cookie.split(';')) {
        const qsizetype equals = pair.indexOf('=');
        if (equals > 0 && pair.left(equals).trimmed() == SessionCookie)
            return QString::fromLatin1(pair.mid(equals + 1).trimmed());
    }
    return {};
}

Reply auth(Call &call)
{
    const QString app = queryParam(call.request, QStringLiteral("app"));
    if (app.isEmpty())
        return invalid(QStringLiteral("names no app"), QStringLiteral("query.app"),
                       QStringLiteral("the edge asks /api/v1/edge/auth?app=<app name>"));
    // The engine decides (accounts, then authz's apps.read on the app) and mints.
    auto minted = call.engine.edgeAssertion(edgeCredential(call.request), app, call.request.assertion, call.actor);
    if (!minted)
        return errorReply(minted.error());
    Reply reply{200, minted->claims.toJson()};
    const QLatin1StringView header = core::assertion::HeaderName;
    reply.headers.emplaceBack(QByteArray(header.data(), header.size()), minted->token);
    // Each answer is for one request: a cache in between would hand it to the next.
    reply.headers.emplaceBack("Cache-Control", "no-store");
    return reply;
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
