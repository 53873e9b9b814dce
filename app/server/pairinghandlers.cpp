#include "pairinghandlers.h"

#include "replies.h"
#include "serverstate.h"

#include "core/accounts/accountservice.h"
#include "core/accounts/pairingbook.h"

#include <QJsonArray>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace pando::server::pairingapi {

QString pairingLink(const QString &host, int port, const QString &fingerprint, const QString &token)
{
    QUrl url;
    url.setScheme(u"pando"_s);
    url.setHost(host);
    url.setPort(port);
    url.setPath(u"/pair"_s);
    QUrlQuery query;
    query.addQueryItem(u"fp"_s, fingerprint);
    query.addQueryItem(u"token"_s, token);
    url.setQuery(query);
    return url.toString(QUrl::FullyEncoded);
}

Reply createPairing(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto body = jsonObjectBody(call.request, {}, u"no body"_s);
    if (!body)
        return errorReply(body.error());
    auto issued = (*accounts)->pairings().create(call.args.value(0), call.actor);
    if (!issued)
        return errorReply(issued.error());
    QJsonObject answer = issued->toJson();
    // Over TLS the server knows the rest of the link: the address this request reached it at.
    const QString fingerprint = call.server ? call.server->tlsFingerprint() : QString();
    if (!fingerprint.isEmpty() && !call.request.url.host().isEmpty() && call.request.url.port() > 0)
        answer.insert(u"link"_s,
                      pairingLink(call.request.url.host(), call.request.url.port(), fingerprint, issued->secret));
    return Reply{201, answer};
}

Reply redeemPairing(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto body = jsonObjectBody(call.request, {u"token"_s, u"name"_s},
                               u"{\"token\":\"pandopair_…\",\"name\":\"alice's laptop\"}"_s);
    if (!body)
        return errorReply(body.error());
    const QJsonValue token = body->value(u"token"_s);
    if (!token.isString() || token.toString().isEmpty())
        return invalid(u"the pairing code is missing"_s, u"token"_s, u"send the token= part of the pairing link"_s);
    const QJsonValue name = body->value(u"name"_s);
    if (!name.isUndefined() && !name.isString())
        return invalid(u"must be a string"_s, u"name"_s);
    auto redeemed =
        (*accounts)->pairings().redeem(token.toString(), name.toString(), call.request.peer, call.actor.requestId);
    if (!redeemed)
        return errorReply(redeemed.error());
    return Reply{201, QJsonObject{{u"token"_s, redeemed->token.secret},
                                  {u"tokenId"_s, redeemed->token.token.id},
                                  {u"name"_s, redeemed->token.token.name},
                                  {u"expiresMs"_s, redeemed->token.token.expiresMs},
                                  {u"user"_s, redeemed->username}}};
}

Reply listConnections(Call &call)
{
    QJsonArray list;
    if (call.server) {
        for (const detail::ConnectionInfo &connection : call.server->connections())
            list.append(connection.toJson());
    }
    return Reply{200, QJsonObject{{u"connections"_s, list}}};
}

} // namespace pando::server::pairingapi
