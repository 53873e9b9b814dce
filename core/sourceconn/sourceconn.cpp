#include "core/sourceconn/sourceconn.h"

#include "core/state/sql.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::core::sourceconn {

namespace {

using core::detail::text;

const QString Columns = u"name, kind, base_url, owner, auth, username, known_hosts, fingerprint, created_by, "
                        u"created_ms, updated_ms, checked_ms, check_result, app_id, installation_id, client_id"_s;
// The column after Columns in a SELECT of "Columns, sealed".
constexpr int SealedColumn = 16;

std::optional<AuthKind> parseAuthKind(const QString &name)
{
    for (const AuthKind kind : {AuthKind::Token, AuthKind::SshKey, AuthKind::GitHubApp, AuthKind::OAuth}) {
        if (name == authKindName(kind))
            return kind;
    }
    return std::nullopt;
}

Result<Connection> readRow(const QSqlQuery &q)
{
    Connection c;
    c.name = q.value(0).toString();
    auto kind = adapters::parseForgeKind(q.value(1).toString());
    if (!kind)
        return std::unexpected(
            core::detail::unknownWord(u"source_connections.kind"_s, u"connection "_s + c.name, q.value(1).toString()));
    c.scope = adapters::ForgeScope{*kind, q.value(2).toString(), q.value(3).toString()};
    const std::optional<AuthKind> auth = parseAuthKind(q.value(4).toString());
    if (!auth)
        return std::unexpected(
            core::detail::unknownWord(u"source_connections.auth"_s, u"connection "_s + c.name, q.value(4).toString()));
    c.auth = *auth;
    c.username = q.value(5).toString();
    c.knownHosts = q.value(6).toString();
    c.fingerprint = q.value(7).toString();
    c.createdBy = q.value(8).toString();
    c.createdMs = q.value(9).toLongLong();
    c.updatedMs = q.value(10).toLongLong();
    c.checkedMs = q.value(11).toLongLong();
    c.checkResult = q.value(12).toString();
    c.appId = q.value(13).toString();
    c.installationId = q.value(14).toString();
    c.clientId = q.value(15).toString();
    return c;
}

// What an OAuth connection seals: its application's client secret and the grant the forge gave.
QByteArray oauthSecret(const QByteArray &clientSecret, const adapters::ForgeOAuthGrant &grant)
{
    return QJsonDocument(QJsonObject{{u"client_secret"_s, QString::fromUtf8(clientSecret)},
                                     {u"access_token"_s, QString::fromUtf8(grant.accessToken)},
                                     {u"refresh_token"_s, QString::fromUtf8(grant.refreshToken)},
                                     {u"expires_ms"_s, grant.expiresMs}})
        .toJson(QJsonDocument::Compact);
}

struct OAuthSecret {
    QByteArray clientSecret;
    adapters::ForgeOAuthGrant grant;
    void wipe()
    {
        pipelines::SealBox::wipe(clientSecret);
        pipelines::SealBox::wipe(grant.accessToken);
        pipelines::SealBox::wipe(grant.refreshToken);
    }
};

// opened's text read, and wiped.
Result<OAuthSecret> readOAuthSecret(QByteArray &opened, const QString &name)
{
    const QJsonObject o = QJsonDocument::fromJson(opened).object();
    pipelines::SealBox::wipe(opened);
    OAuthSecret read{o.value("client_secret"_L1).toString().toUtf8(),
                     {o.value("access_token"_L1).toString().toUtf8(), o.value("refresh_token"_L1).toString().toUtf8(),
                      o.value("expires_ms"_L1).toInteger()}};
    if (read.clientSecret.isEmpty() || read.grant.accessToken.isEmpty()) {
        read.wipe();
        return fail(ErrorCode::Failed, u"the stored authorization of connection %1 is damaged"_s.arg(name),
                    u"source.connection"_s, u"remove the connection and add it again"_s);
    }
    return read;
}

// The user an OAuth access token is sent with over git's https: the one each forge documents
// for tokens (GitHub x-access-token, GitLab oauth2, Bitbucket x-token-auth); Gitea and Forgejo
// take any, and oauth2 is GitLab's.
QString oauthUser(adapters::ForgeKind kind)
{
    const QString user = adapters::defaultTokenUser(kind);
    return user.isEmpty() ? u"oauth2"_s : user;
}

// A connection's row with its credential still sealed.
struct SealedRow {
    Connection connection;
    QString sealed;
};

// Connection name's row, the statement finished: on SQLite one left open keeps its read snapshot,
// and an OAuth renewal must read what another thread's renewal stored meanwhile. missing: the
// error when there is none.
Result<SealedRow> readSealed(Database &db, const QString &name, Error missing)
{
    auto q = core::detail::run(db, u"SELECT %1, sealed FROM source_connections WHERE name = ?"_s.arg(Columns),
                               {text(name)}, u"read connection "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return std::unexpected(std::move(missing));
    auto connection = readRow(*q);
    if (!connection)
        return std::unexpected(connection.error());
    SealedRow row{*connection, q->value(SealedColumn).toString()};
    q->finish();
    return row;
}

// row's credential opened (the caller wipes it); Failed at where when it cannot be.
Result<QByteArray> openSealed(const pipelines::SealBox &seal, const SealedRow &row, const QString &where)
{
    const QString &name = row.connection.name;
    auto opened = seal.open(row.sealed, sealContext(name));
    if (!opened)
        return fail(ErrorCode::Failed,
                    u"the credential of connection %1 cannot be opened: %2"_s.arg(name, opened.error().message), where,
                    u"remove the connection and add it again"_s);
    return opened;
}

Error removedConnection(const QString &name)
{
    return Error{ErrorCode::NotFound, u"the connection %1 that reads this app's source was removed"_s.arg(name),
                 u"source.connection"_s,
                 u"add it again (pando connections add), or update the app to read its source another way"_s};
}

} // namespace

QString authKindName(AuthKind kind)
{
    switch (kind) {
    case AuthKind::Token:
        return u"token"_s;
    case AuthKind::SshKey:
        return u"ssh-key"_s;
    case AuthKind::GitHubApp:
        return u"github-app"_s;
    case AuthKind::OAuth:
        return u"oauth"_s;
    }
    return {};
}

QByteArray sealContext(const QString &name)
{
    return pipelines::SealBox::context({u"source-connection"_s, name});
}

Result<Connection> ConnectionStore::add(const ConnectionInput &input, const QString &createdBy,
                                        const adapters::ForgeOAuthGrant *grant)
{
    if (auto ok = checkConnectionInput(input); !ok)
        return std::unexpected(ok.error());
    if ((input.auth == AuthKind::OAuth) != (grant != nullptr))
        return fail(ErrorCode::Invalid,
                    grant ? u"only an OAuth connection is added with an authorization"_s
                          : u"an OAuth connection is added by authorizing it on the forge"_s,
                    u"auth"_s, u"pando connections add NAME --oauth-client ID … opens the forge's page"_s);
    QByteArray secret = input.auth == AuthKind::Token ? input.secret
                        : grant                       ? oauthSecret(input.secret, *grant)
                                                      : input.secret.trimmed() + '\n';
    auto sealed = m_seal.seal(secret, sealContext(input.name));
    if (grant)
        pipelines::SealBox::wipe(secret); // the tokens' copy; a key's is read for its fingerprint below
    if (!sealed)
        return std::unexpected(sealed.error());
    const QString what = u"add connection "_s + input.name;
    auto tx = core::detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto count = tx->run(u"SELECT COUNT(*) FROM source_connections"_s, {}, what);
    if (!count)
        return std::unexpected(count.error());
    const int n = count->next() ? count->value(0).toInt() : 0;
    count->finish();
    if (n >= MaxConnections)
        return fail(ErrorCode::Invalid, u"the install has %1 connections, the most it may have"_s.arg(n), u"name"_s,
                    u"remove one with `pando connections rm NAME`"_s);
    Connection c;
    c.name = input.name;
    c.scope = input.scope;
    c.auth = input.auth;
    c.username = input.username;
    c.knownHosts = input.auth == AuthKind::SshKey ? input.knownHosts.trimmed() + u'\n' : QString();
    c.fingerprint = input.auth == AuthKind::SshKey ? keyFingerprint(secret) : QString();
    c.createdBy = createdBy;
    c.createdMs = c.updatedMs = m_clock.nowMs();
    if (input.auth == AuthKind::GitHubApp) {
        c.appId = input.appId;
        c.installationId = input.installationId;
    }
    if (input.auth == AuthKind::OAuth)
        c.clientId = input.clientId;
    auto q = tx->run(
        u"INSERT INTO source_connections (%1, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s.arg(
            Columns),
        {text(c.name), adapters::forgeKindName(c.scope.kind), text(c.scope.baseUrl), text(c.scope.owner),
         authKindName(c.auth), text(c.username), text(c.knownHosts), text(c.fingerprint), text(c.createdBy),
         c.createdMs, c.updatedMs, 0, u""_s, text(c.appId), text(c.installationId), text(c.clientId), *sealed},
        what);
    if (!q) {
        if (q.error().code == ErrorCode::Conflict)
            return fail(ErrorCode::Conflict, u"there is already a connection named %1"_s.arg(c.name), u"name"_s,
                        u"pick another name, or remove it first with `pando connections rm %1`"_s.arg(c.name));
        return std::unexpected(q.error());
    }
    if (auto committed = tx->commit(); !committed)
        return std::unexpected(committed.error());
    return c;
}

Result<QList<Connection>> ConnectionStore::list()
{
    auto q = core::detail::run(m_db, u"SELECT %1 FROM source_connections ORDER BY name"_s.arg(Columns), {},
                               u"list the source connections"_s);
    if (!q)
        return std::unexpected(q.error());
    QList<Connection> all;
    while (q->next()) {
        auto c = readRow(*q);
        if (!c)
            return std::unexpected(c.error());
        all << *c;
    }
    return all;
}

Result<Connection> ConnectionStore::find(const QString &name)
{
    auto q = core::detail::run(m_db, u"SELECT %1 FROM source_connections WHERE name = ?"_s.arg(Columns), {text(name)},
                               u"read connection "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"there is no connection named %1"_s.arg(name), u"connection"_s,
                    u"`pando connections list` shows them"_s);
    return readRow(*q);
}

Status ConnectionStore::remove(const QString &name)
{
    // One statement: an app made meanwhile that reads through it keeps it.
    auto q = core::detail::run(m_db,
                               u"DELETE FROM source_connections WHERE name = ? AND NOT EXISTS "
                               u"(SELECT 1 FROM apps WHERE source_connection = ?)"_s,
                               {text(name), text(name)}, u"remove connection "_s + name);
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() > 0)
        return {};
    if (auto exists = find(name); !exists)
        return std::unexpected(exists.error());
    auto apps = appsUsing(name);
    if (!apps)
        return std::unexpected(apps.error());
    return fail(ErrorCode::Conflict,
                u"apps %1 read their source through connection %2"_s.arg(apps->join(u", "_s), name), u"connection"_s,
                u"remove those apps, or point them at another connection (source.connection) first"_s);
}

Result<QStringList> ConnectionStore::appsUsing(const QString &name)
{
    auto q = core::detail::run(m_db, u"SELECT name FROM apps WHERE source_connection = ? ORDER BY name"_s, {text(name)},
                               u"find the apps of connection "_s + name);
    if (!q)
        return std::unexpected(q.error());
    QStringList apps;
    while (q->next())
        apps << q->value(0).toString();
    return apps;
}

Result<adapters::SourceCredential> ConnectionStore::credential(const QString &name)
{
    auto row = readSealed(m_db, name, removedConnection(name));
    if (!row)
        return std::unexpected(row.error());
    const Connection *connection = &row->connection;
    auto opened = openSealed(m_seal, *row, u"source.connection"_s);
    if (!opened)
        return std::unexpected(opened.error());
    adapters::SourceCredential credential;
    credential.username = connection->username;
    switch (connection->auth) {
    case AuthKind::Token:
        credential.token = *opened;
        if (credential.username.isEmpty())
            credential.username = adapters::defaultTokenUser(connection->scope.kind);
        break;
    case AuthKind::SshKey:
        credential.sshPrivateKey = *opened;
        credential.sshKnownHosts = connection->knownHosts.toUtf8();
        break;
    case AuthKind::GitHubApp: {
        if (!m_tokens) {
            pipelines::SealBox::wipe(*opened);
            return fail(ErrorCode::Unavailable, u"this install cannot get GitHub App tokens"_s, u"source.connection"_s);
        }
        adapters::ForgeAppInstallation app{connection->scope, connection->appId, connection->installationId, *opened};
        auto token = m_tokens->token(name, connection->createdMs, app);
        pipelines::SealBox::wipe(app.privateKey);
        pipelines::SealBox::wipe(*opened);
        if (!token) {
            // What GitHub refused is the connection's failure, not the caller's: a 401 or 404 of
            // Pando's own API would read as the caller's token refused or the connection missing.
            Error e = token.error();
            e.message = u"connection %1: %2"_s.arg(name, e.message);
            if (e.code == ErrorCode::Unauthorized || e.code == ErrorCode::Forbidden || e.code == ErrorCode::NotFound)
                e.code = ErrorCode::Failed;
            return std::unexpected(e);
        }
        credential.username = InstallationTokenUser.toString();
        credential.token = *token;
        break;
    }
    case AuthKind::OAuth: {
        pipelines::SealBox::wipe(*opened);
        auto token = oauthAccessToken(*connection);
        if (!token)
            return std::unexpected(token.error());
        credential.username = oauthUser(connection->scope.kind);
        credential.token = *token;
        break;
    }
    }
    return credential;
}

Result<QByteArray> ConnectionStore::oauthAccessToken(const Connection &connection)
{
    const QString &name = connection.name;
    if (!m_oauth)
        return fail(ErrorCode::Unavailable, u"this install cannot renew OAuth authorizations"_s,
                    u"source.connection"_s);
    // One renewal at a time: who waited reads the tokens the renewal stored.
    const std::shared_ptr<QMutex> renewal = m_oauth->renewal(name);
    QMutexLocker lock(renewal.get());
    // Read again under the lock: a renewal that held it may have stored new tokens.
    auto row = readSealed(m_db, name, removedConnection(name));
    if (!row)
        return std::unexpected(row.error());
    if (row->connection.createdMs != connection.createdMs)
        return std::unexpected(removedConnection(name));
    auto opened = openSealed(m_seal, *row, u"source.connection"_s);
    if (!opened)
        return std::unexpected(opened.error());
    auto held = readOAuthSecret(*opened, name);
    if (!held)
        return std::unexpected(held.error());
    const qint64 expires = held->grant.expiresMs;
    if (expires == 0 || expires - InstallationTokens::RenewBeforeMs > m_clock.nowMs()) {
        QByteArray token = held->grant.accessToken;
        held->wipe();
        return token;
    }
    adapters::ForgeOAuthApp app{connection.scope, connection.clientId, held->clientSecret};
    auto renewed = m_oauth->forge().refresh(app, held->grant.refreshToken, CancelToken());
    if (!renewed) {
        held->wipe();
        Error e = renewed.error();
        e.message = u"connection %1: %2"_s.arg(name, e.message);
        if (e.code == ErrorCode::Unauthorized) {
            // The forge's refusal is the connection's failure, not the caller's (as for GitHub Apps).
            e.code = ErrorCode::Failed;
            e.hint = u"authorize it again: pando connections authorize %1 (or Authorize on the desktop's Sources "
                     u"page)"_s.arg(name);
        }
        return std::unexpected(e);
    }
    // A forge that renews without a new refresh token keeps the one it had.
    if (renewed->refreshToken.isEmpty())
        renewed->refreshToken = held->grant.refreshToken;
    QByteArray secret = oauthSecret(held->clientSecret, *renewed);
    held->wipe();
    auto sealed = m_seal.seal(secret, sealContext(name));
    pipelines::SealBox::wipe(secret);
    pipelines::SealBox::wipe(renewed->refreshToken);
    if (!sealed) {
        pipelines::SealBox::wipe(renewed->accessToken);
        return std::unexpected(sealed.error());
    }
    auto stored = core::detail::run(
        m_db, u"UPDATE source_connections SET sealed = ? WHERE name = ? AND created_ms = ?"_s,
        {*sealed, text(name), connection.createdMs}, u"store the renewed authorization of connection "_s + name);
    if (!stored) {
        pipelines::SealBox::wipe(renewed->accessToken);
        return std::unexpected(stored.error());
    }
    return renewed->accessToken;
}

Status ConnectionStore::reauthorize(const QString &name, const adapters::ForgeOAuthGrant &grant)
{
    auto app = oauthApp(name);
    if (!app)
        return std::unexpected(app.error());
    const std::shared_ptr<QMutex> renewal = m_oauth ? m_oauth->renewal(name) : std::make_shared<QMutex>();
    QMutexLocker lock(renewal.get());
    QByteArray secret = oauthSecret(app->clientSecret, grant);
    pipelines::SealBox::wipe(app->clientSecret);
    auto sealed = m_seal.seal(secret, sealContext(name));
    pipelines::SealBox::wipe(secret);
    if (!sealed)
        return std::unexpected(sealed.error());
    auto q =
        core::detail::run(m_db, u"UPDATE source_connections SET sealed = ?, updated_ms = ? WHERE name = ?"_s,
                          {*sealed, m_clock.nowMs(), text(name)}, u"store the authorization of connection "_s + name);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<adapters::ForgeOAuthApp> ConnectionStore::oauthApp(const QString &name)
{
    auto row = readSealed(m_db, name,
                          Error{ErrorCode::NotFound, u"there is no connection named %1"_s.arg(name), u"connection"_s,
                                u"`pando connections list` shows them"_s});
    if (!row)
        return std::unexpected(row.error());
    const Connection *connection = &row->connection;
    if (connection->auth != AuthKind::OAuth)
        return fail(ErrorCode::Invalid,
                    u"connection %1 holds a %2, not an OAuth application's authorization"_s.arg(
                        name, authKindName(connection->auth)),
                    u"connection"_s, u"only OAuth connections are authorized on the forge"_s);
    auto opened = openSealed(m_seal, *row, u"connection"_s);
    if (!opened)
        return std::unexpected(opened.error());
    auto held = readOAuthSecret(*opened, name);
    if (!held)
        return std::unexpected(held.error());
    adapters::ForgeOAuthApp app{connection->scope, connection->clientId, held->clientSecret};
    held->wipe();
    return app;
}

Result<adapters::RegistryCredential> ConnectionStore::registryLogin(const QString &name)
{
    auto connection = find(name);
    if (!connection)
        return std::unexpected(connection.error());
    if (connection->scope.kind != adapters::ForgeKind::Registry)
        return fail(ErrorCode::Invalid, u"connection %1 is to a forge, not an image registry"_s.arg(name),
                    u"source.connection"_s);
    auto opened = credential(name);
    if (!opened)
        return std::unexpected(opened.error());
    adapters::RegistryCredential login{adapters::registryServer(connection->scope), opened->username, opened->token};
    opened->wipe();
    return login;
}

Status ConnectionStore::recordCheck(const QString &name, const QString &result)
{
    auto q = core::detail::run(m_db, u"UPDATE source_connections SET checked_ms = ?, check_result = ? WHERE name = ?"_s,
                               {m_clock.nowMs(), text(result.left(1000)), text(name)},
                               u"record the test of connection "_s + name);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

} // namespace pando::core::sourceconn
