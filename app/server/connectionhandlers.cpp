#include "connectionhandlers.h"

#include "replies.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::server::connectionapi {

namespace {

using core::sourceconn::Connection;

QJsonObject connectionJson(const Connection &c)
{
    QJsonObject o{{u"name"_s, c.name},
                  {u"kind"_s, adapters::forgeKindName(c.scope.kind)},
                  {u"url"_s, c.scope.baseUrl},
                  {u"owner"_s, c.scope.owner},
                  {u"auth"_s, core::sourceconn::authKindName(c.auth)},
                  {u"username"_s, c.username},
                  {u"created_by"_s, c.createdBy},
                  {u"created_ms"_s, c.createdMs},
                  {u"updated_ms"_s, c.updatedMs},
                  {u"checked_ms"_s, c.checkedMs},
                  {u"check_result"_s, c.checkResult}};
    if (!c.overHttps()) {
        o.insert(u"known_hosts"_s, c.knownHosts);
        o.insert(u"fingerprint"_s, c.fingerprint);
    }
    if (c.auth == core::sourceconn::AuthKind::GitHubApp) {
        o.insert(u"app_id"_s, c.appId);
        o.insert(u"installation_id"_s, c.installationId);
    }
    if (c.auth == core::sourceconn::AuthKind::OAuth)
        o.insert(u"client_id"_s, c.clientId);
    return o;
}

// An optional string field: empty when absent; Invalid when it is not a string.
Result<QString> stringField(const QJsonObject &body, const QString &field)
{
    const QJsonValue value = body.value(field);
    if (value.isUndefined() || value.isNull())
        return QString();
    if (!value.isString())
        return fail(ErrorCode::Invalid, u"must be a string"_s, field);
    return value.toString();
}

Reply authorizationReply(const Result<core::Engine::OAuthAuthorization> &begun)
{
    if (!begun)
        return errorReply(begun.error());
    return Reply{201, QJsonObject{{u"authorize_url"_s, begun->authorizeUrl},
                                  {u"state"_s, begun->state},
                                  {u"expires_ms"_s, begun->expiresMs}}};
}

} // namespace

Reply listConnections(Call &call)
{
    auto list = call.engine.connections(call.actor);
    if (!list)
        return errorReply(list.error());
    QJsonArray array;
    for (const Connection &c : std::as_const(*list))
        array.append(connectionJson(c));
    return Reply{200, QJsonObject{{u"connections"_s, array}}};
}

Reply showConnection(Call &call)
{
    const QString name = call.args.value(0);
    auto connection = call.engine.connection(name, call.actor);
    if (!connection)
        return errorReply(connection.error());
    auto apps = call.engine.connectionApps(name);
    if (!apps)
        return errorReply(apps.error());
    QJsonObject o = connectionJson(*connection);
    o.insert(u"apps"_s, QJsonArray::fromStringList(*apps));
    return Reply{200, o};
}

Reply addConnection(Call &call)
{
    const QString example =
        u"{\"name\": \"github\", \"kind\": \"github\", \"url\": \"https://github.com\", \"token\": \"...\"}"_s;
    const QStringList known{u"name"_s,       u"kind"_s,    u"url"_s,         u"owner"_s,  u"username"_s,
                            u"token"_s,      u"ssh_key"_s, u"known_hosts"_s, u"app_id"_s, u"installation_id"_s,
                            u"private_key"_s};
    auto body = jsonObjectBody(call.request, known, example);
    if (!body)
        return errorReply(body.error());
    QMap<QString, QString> fields;
    for (const QString &field : known) {
        auto value = stringField(*body, field);
        if (!value)
            return errorReply(value.error());
        fields.insert(field, *value);
    }
    for (const QString &required : {u"name"_s, u"url"_s}) {
        if (fields.value(required).isEmpty())
            return invalid(u"missing required field"_s, required, u"send "_s + example);
    }
    auto kind = adapters::parseForgeKind(fields.value(u"kind"_s, u"generic"_s).isEmpty() ? u"generic"_s
                                                                                         : fields.value(u"kind"_s));
    if (!kind)
        return errorReply(kind.error());
    // The credential is the one secret field given: it says which kind of connection this is.
    using core::sourceconn::AuthKind;
    QList<std::pair<QString, AuthKind>> given;
    for (const auto &[field, auth] : {std::pair{u"token"_s, AuthKind::Token}, std::pair{u"ssh_key"_s, AuthKind::SshKey},
                                      std::pair{u"private_key"_s, AuthKind::GitHubApp}}) {
        if (!fields.value(field).isEmpty())
            given.append({field, auth});
    }
    if (given.size() != 1)
        return invalid(given.isEmpty() ? u"give a token, an ssh_key or a GitHub App's private_key"_s
                                       : u"give one credential: a token, an ssh_key or a private_key"_s,
                       given.isEmpty() ? u"token"_s : given.at(1).first,
                       u"a token reads https:// addresses; an ssh_key (with known_hosts) ssh ones; a GitHub App's "
                       u"private_key (with app_id and installation_id) mints tokens for https"_s);
    core::sourceconn::ConnectionInput input;
    input.name = fields.value(u"name"_s);
    input.scope = adapters::ForgeScope{*kind, fields.value(u"url"_s), fields.value(u"owner"_s)};
    input.auth = given.first().second;
    input.username = fields.value(u"username"_s);
    input.secret = fields.value(given.first().first).toUtf8();
    input.knownHosts = fields.value(u"known_hosts"_s);
    input.appId = fields.value(u"app_id"_s);
    input.installationId = fields.value(u"installation_id"_s);
    auto added = call.engine.addConnection(input, call.actor);
    core::pipelines::SealBox::wipe(input.secret);
    if (!added)
        return errorReply(added.error());
    return Reply{201, connectionJson(*added)};
}

Reply removeConnection(Call &call)
{
    if (auto removed = call.engine.removeConnection(call.args.value(0), call.actor); !removed)
        return errorReply(removed.error());
    return Reply{204, {}};
}

Reply testConnection(Call &call)
{
    const QString example =
        u"{\"repo\": \"https://github.com/acme/api.git\"}, or for a registry {\"image\": \"ghcr.io/acme/api:1\"}"_s;
    auto body = jsonObjectBody(call.request, {u"repo"_s, u"ref"_s, u"image"_s}, example);
    if (!body)
        return errorReply(body.error());
    auto repo = stringField(*body, u"repo"_s);
    auto ref = stringField(*body, u"ref"_s);
    auto image = stringField(*body, u"image"_s);
    if (!repo || !ref || !image)
        return errorReply(!repo ? repo.error() : !ref ? ref.error() : image.error());
    const QString name = call.args.value(0);
    if (body->contains(u"image"_s)) {
        if (body->contains(u"repo"_s) || body->contains(u"ref"_s))
            return invalid(u"a test reads a repository (repo, ref) or an image (image), not both"_s, u"image"_s,
                           u"send "_s + example);
        auto read = call.engine.testRegistryConnection(name, *image, call.actor);
        if (!read)
            return errorReply(read.error());
        QJsonObject answer{{u"connection"_s, name}, {u"image"_s, *image}};
        answer.insert(image->isEmpty() ? u"login"_s : u"digest"_s, *read);
        return Reply{200, answer};
    }
    if (repo->isEmpty())
        return invalid(u"missing required field: the repository to read through the connection"_s, u"repo"_s,
                       u"send "_s + example);
    auto commit = call.engine.testConnection(name, *repo, *ref, call.actor);
    if (!commit)
        return errorReply(commit.error());
    return Reply{200, QJsonObject{{u"connection"_s, name}, {u"repo"_s, *repo}, {u"commit"_s, *commit}}};
}

Reply connectionRepositories(Call &call)
{
    auto repositories = call.engine.connectionRepositories(call.args.value(0), call.actor);
    if (!repositories)
        return errorReply(repositories.error());
    QJsonArray array;
    for (const adapters::ForgeRepository &r : std::as_const(*repositories))
        array.append(QJsonObject{{u"full_name"_s, r.fullName},
                                 {u"clone_url"_s, r.cloneUrl},
                                 {u"ssh_url"_s, r.sshUrl},
                                 {u"web_url"_s, r.webUrl},
                                 {u"default_branch"_s, r.defaultBranch},
                                 {u"private"_s, r.isPrivate}});
    return Reply{200, QJsonObject{{u"repositories"_s, array}}};
}

Reply connectionBranches(Call &call)
{
    const QString name = call.args.value(0);
    const QString repo = queryParam(call.request, u"repo"_s).trimmed();
    if (repo.isEmpty())
        return invalid(u"missing required parameter: the repository whose branches to list"_s, u"query.repo"_s,
                       u"ask /api/v1/source-connections/%1/branches?repo=https://github.com/acme/api.git"_s.arg(name));
    auto branches = call.engine.connectionBranches(name, repo, call.actor);
    if (!branches) {
        Error e = branches.error();
        if (e.where == u"repo"_s)
            e.where = u"query.repo"_s;
        return errorReply(e);
    }
    QJsonArray array;
    for (const adapters::ForgeBranch &b : std::as_const(*branches))
        array.append(QJsonObject{{u"name"_s, b.name}, {u"commit"_s, b.commit}});
    return Reply{200, QJsonObject{{u"branches"_s, array}}};
}

} // namespace pando::server::connectionapi

namespace pando::server::connectionapi {

Reply beginAuthorization(Call &call)
{
    const QString example = u"{\"name\": \"github\", \"kind\": \"github\", \"url\": \"https://github.com\", "
                            u"\"client_id\": \"...\", \"client_secret\": \"...\", \"redirect_uri\": "
                            u"\"http://127.0.0.1:PORT/callback\"}"_s;
    const QStringList known{u"name"_s,      u"kind"_s,          u"url"_s,         u"owner"_s,
                            u"client_id"_s, u"client_secret"_s, u"redirect_uri"_s};
    auto body = jsonObjectBody(call.request, known, example);
    if (!body)
        return errorReply(body.error());
    QMap<QString, QString> fields;
    for (const QString &field : known) {
        auto value = stringField(*body, field);
        if (!value)
            return errorReply(value.error());
        fields.insert(field, *value);
    }
    for (const QString &required : {u"name"_s, u"kind"_s, u"url"_s, u"client_id"_s, u"redirect_uri"_s}) {
        if (fields.value(required).isEmpty())
            return invalid(u"missing required field"_s, required, u"send "_s + example);
    }
    auto kind = adapters::parseForgeKind(fields.value(u"kind"_s));
    if (!kind)
        return errorReply(kind.error());
    core::sourceconn::ConnectionInput input;
    input.name = fields.value(u"name"_s);
    input.scope = adapters::ForgeScope{*kind, fields.value(u"url"_s), fields.value(u"owner"_s)};
    input.auth = core::sourceconn::AuthKind::OAuth;
    input.clientId = fields.value(u"client_id"_s);
    input.secret = fields.value(u"client_secret"_s).toUtf8();
    auto begun = call.engine.beginConnectionAuthorization(input, fields.value(u"redirect_uri"_s), call.actor);
    core::pipelines::SealBox::wipe(input.secret);
    return authorizationReply(begun);
}

Reply reauthorizeConnection(Call &call)
{
    const QString example = u"{\"redirect_uri\": \"http://127.0.0.1:PORT/callback\"}"_s;
    auto body = jsonObjectBody(call.request, {u"redirect_uri"_s}, example);
    if (!body)
        return errorReply(body.error());
    auto redirect = stringField(*body, u"redirect_uri"_s);
    if (!redirect)
        return errorReply(redirect.error());
    if (redirect->isEmpty())
        return invalid(u"missing required field"_s, u"redirect_uri"_s, u"send "_s + example);
    return authorizationReply(call.engine.reauthorizeConnection(call.args.value(0), *redirect, call.actor));
}

Reply completeAuthorization(Call &call)
{
    const QString example = u"{\"state\": \"...\", \"code\": \"...\"}"_s;
    auto body = jsonObjectBody(call.request, {u"state"_s, u"code"_s}, example);
    if (!body)
        return errorReply(body.error());
    auto state = stringField(*body, u"state"_s);
    auto code = stringField(*body, u"code"_s);
    if (!state || !code)
        return errorReply(!state ? state.error() : code.error());
    for (const auto &[value, field] : {std::pair{*state, u"state"_s}, std::pair{*code, u"code"_s}}) {
        if (value.isEmpty())
            return invalid(u"missing required field: what the forge sent back to the redirect address"_s, field,
                           u"send "_s + example);
    }
    auto connection = call.engine.completeConnectionAuthorization(*state, *code, call.actor);
    if (!connection)
        return errorReply(connection.error());
    return Reply{201, connectionJson(*connection)};
}

} // namespace pando::server::connectionapi
