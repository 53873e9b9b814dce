// Source connections: the engine's side of core/sourceconn. Who may see, use and change them,
// which one reads an app's source, testing one against a repository, and what its forge's API
// shows (the repositories its token sees, their branches).

#include "core/deploy/connectionaccess.h"
#include "core/engine/engineprivate.h"
#include "core/spec/specrules.h"

#include <QElapsedTimer>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

// Invalid at where: connection (named with its address and owner) does not cover what.
std::unexpected<Error> notCovered(const sourceconn::Connection &connection, const QString &what, const QString &where,
                                  const QString &hint)
{
    return fail(ErrorCode::Invalid,
                u"connection %1 (%2%3) does not cover %4"_s.arg(
                    connection.name, connection.scope.baseUrl,
                    connection.scope.owner.isEmpty() ? QString() : u", owner "_s + connection.scope.owner, what),
                where, hint);
}

Error administratorsOnly()
{
    return Error{ErrorCode::Forbidden, u"only administrators add, test and remove source connections"_s,
                 u"connections"_s};
}

QJsonObject auditDetail(const sourceconn::Connection &c)
{
    return QJsonObject{{u"kind"_s, adapters::forgeKindName(c.scope.kind)},
                       {u"url"_s, c.scope.baseUrl},
                       {u"owner"_s, c.scope.owner},
                       {u"auth"_s, sourceconn::authKindName(c.auth)}};
}

} // namespace

Result<sourceconn::ConnectionStore> Engine::Private::administeredConnections(const Actor &actor)
{
    if (!policy::hasInstallAuthority(actor))
        return std::unexpected(administratorsOnly());
    return connectionStore();
}

Result<sourceconn::ConnectionStore> Engine::Private::connectionStore()
{
    const std::optional<pipelines::SealBox> &opened = seal; // one name the checker can follow
    if (!opened)
        return fail(ErrorCode::Unavailable, u"the secret store is not open"_s);
    return sourceconn::ConnectionStore(db, *opened, clock, installationTokens.get(), oauthGrants.get());
}

Result<bool> Engine::Private::mayUseConnection(const Actor &actor, const QString &name)
{
    return authz::mayUseConnection(db, actor.userId, policy::hasInstallAuthority(actor), name);
}

Error Engine::Private::forgeRefusal(const QString &connection, Error e)
{
    noteRefusal(services, connection, e);
    if (e.code == ErrorCode::Unauthorized || e.code == ErrorCode::Forbidden)
        e.code = ErrorCode::Failed;
    e.message = u"connection %1: %2"_s.arg(connection, e.message);
    return e;
}

Result<std::unique_ptr<adapters::ForgeApi>> Engine::Private::forgeApi(const QString &name)
{
    if (!options.forgeApis)
        return fail(ErrorCode::Unavailable, u"this install has no forge APIs"_s, u"connection/"_s + name);
    auto store = connectionStore();
    if (!store)
        return std::unexpected(store.error());
    auto connection = store->find(name);
    if (!connection)
        return std::unexpected(connection.error());
    if (!connection->overHttps())
        return fail(ErrorCode::Invalid,
                    u"connection %1 holds a deploy key, and a forge's API takes a token"_s.arg(name),
                    u"connection/"_s + name, u"add a token connection for the same forge"_s);
    if (connection->scope.kind == adapters::ForgeKind::Registry)
        return fail(ErrorCode::Invalid,
                    u"connection %1 is to an image registry, which has no repositories or webhooks"_s.arg(name),
                    u"connection/"_s + name, u"use a forge's connection"_s);
    if (!adapters::hasForgeApi(connection->scope.kind))
        return fail(
            ErrorCode::Invalid, u"connection %1 is to a generic git host, which has no API Pando knows"_s.arg(name),
            u"connection/"_s + name, u"add it again with --kind github, gitlab, gitea, bitbucket or azure-devops"_s);
    auto credential = store->credential(name);
    if (!credential)
        return std::unexpected(credential.error());
    auto api = options.forgeApis(adapters::ForgeAccount{connection->scope, credential->username, credential->token,
                                                        connection->auth == sourceconn::AuthKind::GitHubApp});
    credential->wipe();
    return api;
}

Result<QString> Engine::Private::chooseConnection(const AppSpec &spec, const Actor &actor)
{
    // A repository is read through a forge's connection, an image pulled through a registry's.
    const bool image = spec.source.isImage();
    const QString &source = image ? spec.source.image : spec.source.repo;
    auto store = connectionStore();
    if (!store)
        return std::unexpected(store.error());
    if (!spec.source.connection.isEmpty()) {
        const QString &name = spec.source.connection;
        auto connection = store->find(name);
        auto usable = connection ? mayUseConnection(actor, name) : Result<bool>(false);
        if (!usable)
            return std::unexpected(usable.error());
        // A connection one may not use reads as one that is not there: its name tells nothing.
        if (!connection || !*usable)
            return fail(ErrorCode::NotFound, u"there is no connection named %1 that you may use"_s.arg(name),
                        u"source.connection"_s,
                        u"`pando connections list` shows yours; an administrator grants one with `pando grants add "
                        u"connection/NAME USER user`"_s);
        const bool registry = connection->scope.kind == adapters::ForgeKind::Registry;
        if (registry != image)
            return fail(ErrorCode::Invalid,
                        registry ? u"connection %1 is to an image registry, and source.repo is a repository"_s.arg(name)
                                 : u"connection %1 is to a forge, and source.image is an image"_s.arg(name),
                        u"source.connection"_s,
                        registry ? u"name a forge's connection, or deploy an image with source.image"_s
                                 : u"name a registry connection (pando connections add NAME --kind registry)"_s);
        auto address =
            image ? adapters::parseImageAddress(source) : adapters::parseRepoAddress(source, connection->scope.kind);
        if (!address)
            return std::unexpected(address.error());
        if (adapters::coverage(connection->scope, connection->overHttps(), *address) < 0) {
            const QString needs = image                     ? u"the images of its registry"_s
                                  : connection->overHttps() ? u"an https:// address below its address"_s
                                                            : u"an ssh address below its address"_s;
            return notCovered(*connection, source, u"source.connection"_s,
                              u"its %1 reads %2; name another connection or leave source.connection out"_s.arg(
                                  sourceconn::authKindName(connection->auth), needs));
        }
        return name;
    }
    auto all = store->list();
    if (!all)
        return std::unexpected(all.error());
    auto usable = usableConnections(db, *all, actor.userId, policy::hasInstallAuthority(actor));
    if (!usable)
        return std::unexpected(usable.error());
    auto chosen = image ? sourceconn::chooseForImage(*usable, source) : sourceconn::choose(*usable, source);
    if (!chosen)
        return std::unexpected(chosen.error());
    const std::optional<sourceconn::Connection> &closest = *chosen;
    return closest ? closest->name : QString();
}

Result<QList<sourceconn::Connection>> Engine::connections(const Actor &actor)
{
    auto store = d->connectionStore();
    if (!store)
        return std::unexpected(store.error());
    auto all = store->list();
    if (!all)
        return std::unexpected(all.error());
    return usableConnections(d->db, *all, actor.userId, policy::hasInstallAuthority(actor));
}

Result<sourceconn::Connection> Engine::connection(const QString &name, const Actor &actor)
{
    auto store = d->connectionStore();
    if (!store)
        return std::unexpected(store.error());
    auto may = d->mayUseConnection(actor, name);
    if (!may)
        return std::unexpected(may.error());
    if (!*may)
        return fail(ErrorCode::NotFound, u"there is no connection named %1 that you may use"_s.arg(name),
                    u"connection"_s);
    return store->find(name);
}

Result<QStringList> Engine::connectionApps(const QString &name)
{
    auto store = d->connectionStore();
    if (!store)
        return std::unexpected(store.error());
    return store->appsUsing(name);
}

Result<sourceconn::Connection> Engine::addConnection(const sourceconn::ConnectionInput &input, const Actor &actor)
{
    auto store = d->administeredConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    auto added = store->add(input, actor.name);
    if (!added)
        return added;
    if (auto audited = d->audit.record(actor, u"connection.add"_s, u"connection/"_s + added->name, u"success"_s,
                                       auditDetail(*added));
        !audited) {
        discardResult(store->remove(added->name), "the audit's error is the one to report");
        return std::unexpected(audited.error());
    }
    return added;
}

namespace {

Error noOAuth()
{
    return Error{ErrorCode::Unavailable, u"this install cannot authorize OAuth applications"_s, u"auth"_s,
                 u"add the connection with a token, a deploy key or a GitHub App"_s};
}

// Who began an authorization, to finish it: the account, or the token's name.
QString authorizer(const Actor &actor)
{
    return actor.userId.isEmpty() ? actor.name : u"user:"_s + actor.userId;
}

// Holds pending and asks the forge for the page that authorizes it; nothing waits when there is none.
Result<Engine::OAuthAuthorization> beginAuthorization(sourceconn::OAuthGrants &grants,
                                                      sourceconn::OAuthGrants::Pending pending)
{
    const adapters::ForgeOAuthApp app{pending.input.scope, pending.input.clientId, {}};
    const QString redirectUri = pending.redirectUri;
    const QString actor = pending.actor;
    const sourceconn::OAuthGrants::Begun begun = grants.begin(std::move(pending));
    auto url = grants.forge().authorizeUrl(app, redirectUri, begun.state, begun.codeChallenge);
    if (!url) {
        if (auto taken = grants.take(begun.state, actor))
            taken->wipe();
        return std::unexpected(url.error());
    }
    return Engine::OAuthAuthorization{*url, begun.state, begun.expiresMs};
}

} // namespace

Result<sourceconn::ConnectionStore> Engine::Private::oauthConnections(const Actor &actor)
{
    auto store = administeredConnections(actor);
    if (store && !oauthGrants)
        return std::unexpected(noOAuth());
    return store;
}

Result<Engine::OAuthAuthorization> Engine::beginConnectionAuthorization(const sourceconn::ConnectionInput &input,
                                                                        const QString &redirectUri, const Actor &actor)
{
    auto store = d->oauthConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    if (input.auth != sourceconn::AuthKind::OAuth)
        return fail(ErrorCode::Invalid, u"only an OAuth connection is authorized on the forge"_s, u"auth"_s);
    if (auto ok = sourceconn::checkConnectionInput(input); !ok)
        return std::unexpected(ok.error());
    if (auto ok = sourceconn::checkRedirectUri(redirectUri); !ok)
        return std::unexpected(ok.error());
    // A name taken is said now, not after the user went through the forge's page.
    if (auto there = store->find(input.name); there)
        return fail(ErrorCode::Conflict, u"there is already a connection named %1"_s.arg(input.name), u"name"_s,
                    u"pick another name; to authorize it again use `pando connections authorize %1`"_s.arg(input.name));
    return beginAuthorization(*d->oauthGrants, {input, false, redirectUri, {}, authorizer(actor), 0});
}

Result<Engine::OAuthAuthorization> Engine::reauthorizeConnection(const QString &name, const QString &redirectUri,
                                                                 const Actor &actor)
{
    auto store = d->oauthConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    if (auto ok = sourceconn::checkRedirectUri(redirectUri); !ok)
        return std::unexpected(ok.error());
    // NotFound for none, Invalid for a connection that is not an OAuth one.
    auto app = store->oauthApp(name);
    if (!app)
        return std::unexpected(app.error());
    pipelines::SealBox::wipe(app->clientSecret);
    sourceconn::ConnectionInput input;
    input.name = name;
    input.scope = app->scope;
    input.auth = sourceconn::AuthKind::OAuth;
    input.clientId = app->clientId;
    return beginAuthorization(*d->oauthGrants, {input, true, redirectUri, {}, authorizer(actor), 0});
}

Result<sourceconn::Connection> Engine::completeConnectionAuthorization(const QString &state, const QString &code,
                                                                       const Actor &actor)
{
    auto store = d->oauthConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    auto pending = d->oauthGrants->take(state, authorizer(actor));
    if (!pending)
        return std::unexpected(pending.error());
    const QString &name = pending->input.name;
    adapters::ForgeOAuthApp app{pending->input.scope, pending->input.clientId, pending->input.secret};
    if (pending->reauthorize) {
        auto stored = store->oauthApp(name);
        if (!stored) {
            pending->wipe();
            return std::unexpected(stored.error());
        }
        app = *stored;
    }
    auto grant = d->oauthGrants->forge().exchange(app, code, pending->redirectUri, pending->verifier, CancelToken());
    pipelines::SealBox::wipe(app.clientSecret);
    if (!grant) {
        pending->wipe();
        Error e = grant.error();
        // The forge refusing the application is not the caller's sign-in failing.
        if (e.code == ErrorCode::Unauthorized)
            e.code = ErrorCode::Failed;
        e.message = u"connection %1: %2"_s.arg(name, e.message);
        discardResult(d->audit.record(actor, pending->reauthorize ? u"connection.authorize"_s : u"connection.add"_s,
                                      u"connection/"_s + name, u"failure"_s,
                                      QJsonObject{{u"auth"_s, u"oauth"_s}, {u"error"_s, e.message}}),
                      "the forge's refusal is the error to report");
        return std::unexpected(e);
    }
    const auto wipeGrant = [&grant] {
        pipelines::SealBox::wipe(grant->accessToken);
        pipelines::SealBox::wipe(grant->refreshToken);
    };
    if (pending->reauthorize) {
        pending->wipe();
        auto stored = store->reauthorize(name, *grant);
        wipeGrant();
        if (!stored)
            return std::unexpected(stored.error());
        auto connection = store->find(name);
        if (!connection)
            return connection;
        if (auto audited = d->audit.record(actor, u"connection.authorize"_s, u"connection/"_s + name, u"success"_s,
                                           auditDetail(*connection));
            !audited)
            return std::unexpected(unaudited(u"connection %1 was authorized again"_s.arg(name), audited.error()));
        return connection;
    }
    auto added = store->add(pending->input, actor.name, &*grant);
    pending->wipe();
    wipeGrant();
    if (!added)
        return added;
    if (auto audited = d->audit.record(actor, u"connection.add"_s, u"connection/"_s + added->name, u"success"_s,
                                       auditDetail(*added));
        !audited) {
        discardResult(store->remove(added->name), "the audit's error is the one to report");
        return std::unexpected(audited.error());
    }
    return added;
}

Status Engine::removeConnection(const QString &name, const Actor &actor)
{
    auto store = d->administeredConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    auto connection = store->find(name);
    if (!connection)
        return std::unexpected(connection.error());
    if (auto removed = store->remove(name); !removed)
        return removed;
    if (d->installationTokens)
        d->installationTokens->forget(name);
    if (auto cleared = d->grants.clear(authz::ObjectKind::Connection, name); !cleared)
        return cleared;
    if (auto audited = d->audit.record(actor, u"connection.remove"_s, u"connection/"_s + name, u"success"_s,
                                       auditDetail(*connection));
        !audited)
        return std::unexpected(unaudited(u"connection %1 was removed"_s.arg(name), audited.error()));
    return {};
}

namespace {

// A connection test's outcome, recorded on the connection ("ok: " + okText, or "failed: …") and
// in the audit trail with detail; the audit's status.
Status recordTest(sourceconn::ConnectionStore &store, AuditLog &audit, const QString &name, const Actor &actor,
                  QJsonObject detail, const QString &okText, const Error *failure)
{
    const QString outcome = failure ? u"failed: "_s + failure->message : u"ok: "_s + okText;
    discardResult(store.recordCheck(name, outcome), "the test's own outcome is what to report");
    detail.insert(u"result"_s, failure ? u"failed"_s : u"ok"_s);
    if (failure)
        detail.insert(u"error"_s, failure->message);
    return audit.record(actor, u"connection.test"_s, u"connection/"_s + name, failure ? u"failure"_s : u"success"_s,
                        detail);
}

} // namespace

Result<QString> Engine::testConnection(const QString &name, const QString &repo, const QString &ref, const Actor &actor)
{
    auto store = d->administeredConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    auto connection = store->find(name);
    if (!connection)
        return std::unexpected(connection.error());
    if (connection->scope.kind == adapters::ForgeKind::Registry)
        return fail(ErrorCode::Invalid,
                    u"connection %1 is to an image registry, which holds no repositories"_s.arg(name), u"repo"_s,
                    u"test it with an image: pando connections test %1 IMAGE"_s.arg(name));
    if (auto url = d->source->checkUrl(repo); !url) {
        Error e = url.error();
        e.where = u"repo"_s;
        return std::unexpected(e);
    }
    auto address = adapters::parseRepoAddress(repo, connection->scope.kind);
    if (!address) {
        Error e = address.error();
        e.where = u"repo"_s;
        return std::unexpected(e);
    }
    if (adapters::coverage(connection->scope, connection->overHttps(), *address) < 0)
        return fail(ErrorCode::Invalid,
                    u"connection %1 (%2) does not cover %3"_s.arg(name, connection->scope.baseUrl, repo), u"repo"_s,
                    connection->overHttps()
                        ? u"a token or GitHub App connection reads https:// addresses below its address"_s
                        : u"an ssh-key connection reads ssh addresses on its host"_s);
    QElapsedTimer clock;
    clock.start();
    // A GitHub App's credential is a token minted now: a refusal of that is the test's outcome too.
    auto credential = store->credential(name);
    const auto read = [&]() -> Result<QString> {
        if (!credential)
            return std::unexpected(credential.error());
        adapters::SourceAccess access;
        access.credential = std::move(*credential);
        auto resolved = d->source->resolve(repo, ref, access);
        access.credential->wipe();
        return resolved;
    };
    Result<QString> commit = read();
    if (!commit)
        noteRefusal(d->services, name, commit.error());
    auto audited =
        recordTest(*store, d->audit, name, actor, {{u"repo"_s, repo}},
                   commit ? u"read %1 at %2 in %3 ms"_s.arg(repo, commit->left(12)).arg(clock.elapsed()) : QString(),
                   commit ? nullptr : &commit.error());
    if (!credential)
        return std::unexpected(credential.error());
    if (!commit) {
        Error e = commit.error();
        if (e.code == ErrorCode::NotFound) {
            e.where = u"ref"_s;
            return std::unexpected(e);
        }
        if (e.code == ErrorCode::Unauthorized && connection->auth == sourceconn::AuthKind::OAuth)
            e.hint = u"the forge refused the access it granted: when the application was revoked, authorize it "
                     u"again (pando connections authorize %1); check that the user who authorized it may read this "
                     u"repository"_s.arg(name);
        else if (e.hint.isEmpty() || e.code == ErrorCode::Unauthorized)
            e.hint = u"check that its token or key may read this repository, and that it has not expired or been "
                     u"revoked"_s;
        if (e.code != ErrorCode::Cancelled)
            e.code = ErrorCode::Failed;
        e.message = u"connection %1: %2"_s.arg(name, e.message);
        return std::unexpected(e);
    }
    if (!audited)
        return std::unexpected(unaudited(u"the connection was tested"_s, audited.error()));
    return commit;
}

Result<QString> Engine::testRegistryConnection(const QString &name, const QString &image, const Actor &actor)
{
    auto store = d->administeredConnections(actor);
    if (!store)
        return std::unexpected(store.error());
    auto connection = store->find(name);
    if (!connection)
        return std::unexpected(connection.error());
    if (connection->scope.kind != adapters::ForgeKind::Registry)
        return fail(ErrorCode::Invalid, u"connection %1 is to a forge, not an image registry"_s.arg(name), u"image"_s,
                    u"test it with a repository: pando connections test %1 REPO"_s.arg(name));
    if (!image.isEmpty()) {
        if (auto ok = detail::checkImageReference(image, u"image"_s); !ok)
            return std::unexpected(ok.error());
        auto address = adapters::parseImageAddress(image);
        if (!address || adapters::coverage(connection->scope, true, *address) < 0)
            return notCovered(*connection, image, u"image"_s,
                              u"a registry connection reads the images of its registry (and owner)"_s);
    }
    QElapsedTimer clock;
    clock.start();
    auto credential = store->registryLogin(name);
    Result<QString> read = credential ? d->runtime->checkRegistry(image, *credential, CancelToken())
                                      : Result<QString>(std::unexpected(credential.error()));
    if (credential)
        credential->wipe();
    const QString what = image.isEmpty() ? u"the login"_s : image;
    auto audited = recordTest(*store, d->audit, name, actor, {{u"image"_s, image}},
                              read ? u"%1 %2 in %3 ms"_s.arg(what, *read).arg(clock.elapsed()) : QString(),
                              read ? nullptr : &read.error());
    if (!read) {
        Error e = read.error();
        if (e.code == ErrorCode::Unauthorized)
            e.hint = u"check the user name and the password or token (its scope must let it read packages), and "
                     u"that it has not expired or been revoked"_s;
        if (e.code == ErrorCode::NotFound)
            e.where = u"image"_s;
        else if (e.code != ErrorCode::Cancelled && e.code != ErrorCode::Unavailable)
            e.code = ErrorCode::Failed;
        e.message = u"connection %1: %2"_s.arg(name, e.message);
        return std::unexpected(e);
    }
    if (!audited)
        return std::unexpected(unaudited(u"the connection was tested"_s, audited.error()));
    return read;
}

Result<QList<adapters::ForgeRepository>> Engine::connectionRepositories(const QString &name, const Actor &actor)
{
    // Who may not use it learns nothing of it, exactly as from connection().
    if (auto connection = this->connection(name, actor); !connection)
        return std::unexpected(connection.error());
    auto api = d->forgeApi(name);
    if (!api)
        return std::unexpected(api.error());
    auto repositories = (*api)->repositories(CancelToken());
    if (!repositories)
        return std::unexpected(d->forgeRefusal(name, repositories.error()));
    return repositories;
}

Result<QList<adapters::ForgeBranch>> Engine::connectionBranches(const QString &name, const QString &repo,
                                                                const Actor &actor)
{
    auto connection = this->connection(name, actor);
    if (!connection)
        return std::unexpected(connection.error());
    // A deploy key or a generic host has no API whatever the repository: that is said first.
    auto api = d->forgeApi(name);
    if (!api)
        return std::unexpected(api.error());
    auto address = adapters::parseRepoAddress(repo, connection->scope.kind);
    if (!address) {
        Error e = address.error();
        e.where = u"repo"_s;
        return std::unexpected(e);
    }
    if (adapters::coverage(connection->scope, connection->overHttps(), *address) < 0)
        return notCovered(*connection, repo, u"repo"_s,
                          u"`pando connections repos %1` lists the repositories it can see"_s.arg(name));
    auto branches = (*api)->branches(*address, CancelToken());
    if (!branches)
        return std::unexpected(d->forgeRefusal(name, branches.error()));
    return branches;
}

} // namespace pando::core
