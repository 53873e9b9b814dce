#include "accounthandlers.h"

#include "replies.h"

#include "core/accounts/accountservice.h"

#include <QJsonArray>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::server::accountapi {

namespace {

Result<QString> stringField(const QJsonObject &body, const QString &name, bool required = true)
{
    const QJsonValue value = body.value(name);
    if (value.isUndefined()) {
        if (required)
            return fail(ErrorCode::Invalid, u"is missing"_s, name);
        return QString();
    }
    if (!value.isString())
        return fail(ErrorCode::Invalid, u"must be a string"_s, name);
    return value.toString();
}

// "30d", "12h", "90m" → milliseconds.
Result<qint64> parseDuration(const QString &text)
{
    static const QRegularExpression pattern(u"^([1-9][0-9]{0,5})([dhm])$"_s);
    const QRegularExpressionMatch m = pattern.match(text);
    if (!m.hasMatch())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a duration"_s.arg(text.left(40)), u"expiresIn"_s,
                    u"write a number and d, h or m, like 30d"_s);
    const qint64 n = m.captured(1).toLongLong();
    const QChar unit = m.captured(2).at(0);
    const qint64 minute = 60LL * 1000;
    const qint64 hour = 60 * minute;
    return n * (unit == u'd' ? 24 * hour : unit == u'h' ? hour : minute);
}

QString bearer(const RequestData &request)
{
    const QByteArray value = request.authorization.trimmed();
    if (!value.toLower().startsWith("bearer "))
        return {};
    return QString::fromLatin1(value.mid(7).trimmed());
}

} // namespace

Reply bootstrap(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto body = jsonObjectBody(call.request, {u"token"_s, u"username"_s, u"password"_s},
                               u"{\"token\":\"pando_…\",\"username\":\"alice\",\"password\":\"…\"}"_s);
    if (!body)
        return errorReply(body.error());
    auto token = stringField(*body, u"token"_s);
    auto username = stringField(*body, u"username"_s);
    auto password = stringField(*body, u"password"_s);
    for (const auto *field : {&token, &username, &password}) {
        if (!*field)
            return errorReply(field->error());
    }
    // The account service also removes the spent token's file.
    auto user = (*accounts)->createFirstAdmin(*token, *username, *password, call.actor);
    if (!user)
        return errorReply(user.error());
    return Reply{201, user->toJson()};
}

Reply login(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto body =
        jsonObjectBody(call.request, {u"username"_s, u"password"_s}, u"{\"username\":\"alice\",\"password\":\"…\"}"_s);
    if (!body)
        return errorReply(body.error());
    auto username = stringField(*body, u"username"_s);
    if (!username)
        return errorReply(username.error());
    auto password = stringField(*body, u"password"_s);
    if (!password)
        return errorReply(password.error());
    auto session = (*accounts)->login(*username, *password, call.request.peer, call.actor.requestId);
    if (!session)
        return errorReply(session.error());
    return Reply{201, QJsonObject{{u"token"_s, session->secret},
                                  {u"id"_s, session->session.id},
                                  {u"expiresMs"_s, session->session.expiresMs},
                                  {u"user"_s, session->user.toJson()}}};
}

Reply logout(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    // The account service tells the engine's bus, which closes the session's WebSockets.
    if (auto ended = (*accounts)->logout(call.principal, bearer(call.request), call.actor); !ended)
        return errorReply(ended.error());
    return Reply{204, {}};
}

Reply listUsers(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto users = (*accounts)->users();
    if (!users)
        return errorReply(users.error());
    QJsonArray list;
    for (const core::accounts::User &user : std::as_const(*users))
        list.append(user.toJson());
    return Reply{200, QJsonObject{{u"users"_s, list}}};
}

Reply createUser(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto body = jsonObjectBody(call.request, {u"username"_s, u"password"_s, u"role"_s, u"displayName"_s},
                               u"{\"username\":\"bob\",\"password\":\"…\",\"role\":\"member\"}"_s);
    if (!body)
        return errorReply(body.error());
    core::accounts::NewUser user;
    auto username = stringField(*body, u"username"_s);
    auto password = stringField(*body, u"password"_s);
    auto role = stringField(*body, u"role"_s, false);
    auto display = stringField(*body, u"displayName"_s, false);
    for (const auto *field : {&username, &password, &role, &display}) {
        if (!*field)
            return errorReply(field->error());
    }
    user.username = *username;
    user.password = *password;
    user.displayName = display->isEmpty() ? *username : *display;
    if (!role->isEmpty()) {
        auto parsed = core::accounts::roleFromName(*role);
        if (!parsed)
            return invalid(u"\"%1\" is not a role"_s.arg(role->left(40)), u"role"_s,
                           u"one of admin, operator, member, viewer"_s);
        user.role = *parsed;
    }
    auto created = (*accounts)->createUser(user, call.actor);
    if (!created)
        return errorReply(created.error());
    return Reply{201, created->toJson()};
}

Reply disableUser(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto user = (*accounts)->setDisabled(call.args.value(0), true, call.actor);
    if (!user)
        return errorReply(user.error());
    return Reply{200, user->toJson()};
}

Reply listTokens(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto tokens = (*accounts)->tokensVisibleTo(call.principal);
    if (!tokens)
        return errorReply(tokens.error());
    QJsonArray list;
    for (const core::accounts::ApiToken &token : std::as_const(*tokens))
        list.append(token.toJson());
    return Reply{200, QJsonObject{{u"tokens"_s, list}}};
}

Reply createToken(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    auto body = jsonObjectBody(call.request, {u"name"_s, u"scopes"_s, u"expiresIn"_s},
                               u"{\"name\":\"ci\",\"scopes\":[\"apps:read\"],\"expiresIn\":\"30d\"}"_s);
    if (!body)
        return errorReply(body.error());
    auto name = stringField(*body, u"name"_s);
    if (!name)
        return errorReply(name.error());
    QStringList scopes;
    const QJsonValue scopesValue = body->value(u"scopes"_s);
    if (!scopesValue.isUndefined()) {
        if (!scopesValue.isArray())
            return invalid(u"must be an array of strings"_s, u"scopes"_s);
        const QJsonArray array = scopesValue.toArray();
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (!array.at(i).isString())
                return invalid(u"must be a string"_s, u"scopes[%1]"_s.arg(i));
            scopes.append(array.at(i).toString());
        }
    }
    if (scopes.isEmpty())
        return invalid(u"a token needs at least one scope"_s, u"scopes"_s,
                       u"one or more of %1"_s.arg(core::accounts::knownScopes().join(u", "_s)));
    auto expiresIn = stringField(*body, u"expiresIn"_s, false);
    if (!expiresIn)
        return errorReply(expiresIn.error());
    qint64 lifetimeMs = 0;
    if (!expiresIn->isEmpty()) {
        auto duration = parseDuration(*expiresIn);
        if (!duration)
            return errorReply(duration.error());
        lifetimeMs = *duration;
    }
    // Whose it is, and how much it may do, is the account service's call (issueToken): a body
    // naming another user is not read at all.
    auto issued = (*accounts)->issueToken(call.principal, *name, scopes, lifetimeMs, call.actor);
    if (!issued)
        return errorReply(issued.error());
    QJsonObject json = issued->token.toJson();
    json.insert(u"secret"_s, issued->secret);
    return Reply{201, json};
}

Reply revokeToken(Call &call)
{
    auto accounts = accountService(call);
    if (!accounts)
        return errorReply(accounts.error());
    const QString id = call.args.value(0);
    if (auto revoked = (*accounts)->revokeToken(id, call.actor); !revoked)
        return errorReply(revoked.error());
    return Reply{204, {}};
}

} // namespace pando::server::accountapi
