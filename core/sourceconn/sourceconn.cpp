#include "core/sourceconn/sourceconn.h"

#include "adapters/api/jose/rs256.h"
#include "core/state/sql.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QUrl>
#include <QtEndian>

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

// The fields of an OpenSSH private key ("openssh-key-v1"): the cipher its private half is
// encrypted with and the public key blob. nullopt when the text is not such a key.
struct OpenSshKey {
    QByteArray cipher;
    QByteArray publicKey;
};

std::optional<OpenSshKey> readOpenSshKey(QByteArrayView pem)
{
    static constexpr QByteArrayView Begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
    static constexpr QByteArrayView End = "-----END OPENSSH PRIVATE KEY-----";
    const qsizetype from = pem.indexOf(Begin);
    const qsizetype to = pem.indexOf(End);
    if (from < 0 || to < from)
        return std::nullopt;
    const QByteArray body = QByteArray::fromBase64(
        pem.sliced(from + Begin.size(), to - from - Begin.size()).toByteArray().simplified().replace(' ', ""));
    static constexpr QByteArrayView Magic("openssh-key-v1\0", 15);
    if (!body.startsWith(Magic))
        return std::nullopt;
    qsizetype at = Magic.size();
    const auto field = [&]() -> std::optional<QByteArray> {
        if (at + 4 > body.size())
            return std::nullopt;
        const auto length = qFromBigEndian<quint32>(body.constData() + at);
        at += 4;
        if (length > quint32(body.size() - at))
            return std::nullopt;
        QByteArray value = body.mid(at, length);
        at += length;
        return value;
    };
    auto cipher = field();
    auto kdf = field();
    auto kdfOptions = field();
    if (!cipher || !kdf || !kdfOptions || at + 4 > body.size())
        return std::nullopt;
    at += 4; // the number of keys: one in every key ssh-keygen writes
    auto publicKey = field();
    if (!publicKey)
        return std::nullopt;
    return OpenSshKey{*cipher, *publicKey};
}

Status checkKey(QByteArrayView key)
{
    const QString where = u"ssh_key"_s;
    const QString hint =
        u"give the private key file ssh-keygen wrote (e.g. ssh-keygen -t ed25519 -N '' -f deploy-key)"_s;
    if (key.startsWith("-----BEGIN OPENSSH PRIVATE KEY-----")) {
        auto read = readOpenSshKey(key);
        if (!read)
            return fail(ErrorCode::Invalid, u"the OpenSSH private key is damaged or cut short"_s, where, hint);
        if (read->cipher != "none")
            return fail(ErrorCode::Invalid,
                        u"the private key is protected by a passphrase; a deploy key is used unattended, so it "
                        u"must have none"_s,
                        where, u"remove it from a copy with ssh-keygen -p -N '' -f COPY, or make a new key"_s);
        return {};
    }
    if (key.startsWith("-----BEGIN ENCRYPTED PRIVATE KEY-----") || key.contains("Proc-Type: 4,ENCRYPTED"))
        return fail(ErrorCode::Invalid,
                    u"the private key is protected by a passphrase; a deploy key is used unattended, so it must "
                    u"have none"_s,
                    where, u"remove it from a copy with ssh-keygen -p -N '' -f COPY, or make a new key"_s);
    for (const QByteArrayView begin :
         {QByteArrayView("-----BEGIN RSA PRIVATE KEY-----"), QByteArrayView("-----BEGIN EC PRIVATE KEY-----"),
          QByteArrayView("-----BEGIN PRIVATE KEY-----")}) {
        if (key.startsWith(begin))
            return {};
    }
    if (key.startsWith("ssh-") || key.startsWith("ecdsa-"))
        return fail(ErrorCode::Invalid, u"this is a public key; the connection needs the private one"_s, where,
                    u"give the file without .pub; add the .pub to the forge as the deploy key"_s);
    return fail(ErrorCode::Invalid, u"is not an SSH private key (OpenSSH or PEM)"_s, where, hint);
}

// One host key per line, as ssh-keyscan prints them: "host[,host…] type base64", comments and
// blank lines allowed.
Status checkKnownHosts(const QString &knownHosts)
{
    const QString where = u"known_hosts"_s;
    const QString hint = u"get them with ssh-keyscan -p PORT HOST, and check the fingerprints (ssh-keygen -lf) "
                         u"against what the forge publishes"_s;
    if (knownHosts.trimmed().isEmpty())
        return fail(ErrorCode::Invalid,
                    u"a deploy key connection needs the server's host keys, so nobody in between can pose as it"_s,
                    where, hint);
    if (knownHosts.size() > qsizetype(64) * 1024)
        return fail(ErrorCode::TooLarge, u"the host keys are more than 64 KiB"_s, where);
    int keys = 0;
    int number = 0;
    for (const QString &raw : knownHosts.split(u'\n')) {
        ++number;
        const QString line = raw.trimmed();
        if (line.isEmpty() || line.startsWith(u'#'))
            continue;
        QStringList fields = line.simplified().split(u' ');
        if (fields.first().startsWith(u'@'))
            fields.removeFirst();
        const bool typed =
            fields.size() >= 3 && (fields.at(1).startsWith(u"ssh-"_s) || fields.at(1).startsWith(u"ecdsa-"_s) ||
                                   fields.at(1).startsWith(u"sk-"_s));
        if (!typed || QByteArray::fromBase64(fields.at(2).toLatin1()).isEmpty())
            return fail(ErrorCode::Invalid,
                        u"line %1 is not \"HOST KEY-TYPE BASE64-KEY\" as in a known_hosts file"_s.arg(number), where,
                        hint);
        ++keys;
    }
    if (keys == 0)
        return fail(ErrorCode::Invalid, u"lists no host key"_s, where, hint);
    return {};
}

Status checkToken(QByteArrayView token)
{
    const QString where = u"token"_s;
    if (token.isEmpty())
        return fail(ErrorCode::Invalid, u"a token connection needs a token"_s, where);
    if (token.size() > MaxTokenBytes)
        return fail(ErrorCode::TooLarge, u"the token is more than %1 bytes"_s.arg(MaxTokenBytes), where);
    for (const char c : token) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            return fail(ErrorCode::Invalid,
                        u"the token contains whitespace or a control character; copy it without the line break"_s,
                        where);
    }
    return {};
}

// A GitHub App's ids are numbers GitHub shows: the App ID on the app's settings page, an
// installation's at the end of its settings page's address.
Status checkAppNumber(const QString &value, const QString &field)
{
    const bool number = !value.isEmpty() && value.size() <= 20 && !value.startsWith(u'0') &&
                        std::all_of(value.begin(), value.end(), [](QChar c) { return c >= u'0' && c <= u'9'; });
    if (number)
        return {};
    return fail(ErrorCode::Invalid,
                value.isEmpty() ? u"a GitHub App connection needs it"_s
                                : u"\"%1\" is not a number as GitHub shows it"_s.arg(value.left(40)),
                field,
                u"the app's settings page shows its App ID; an installation's id ends the address of its settings "
                u"page (…/settings/installations/ID)"_s);
}

Status checkGitHubApp(const ConnectionInput &input)
{
    if (input.scope.kind != adapters::ForgeKind::GitHub)
        return fail(ErrorCode::Invalid,
                    u"a GitHub App is GitHub's; a %1 host takes a token or a deploy key"_s.arg(
                        adapters::forgeKindName(input.scope.kind)),
                    u"kind"_s);
    if (!input.username.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"a GitHub App's tokens are sent as %1; give no user name"_s.arg(InstallationTokenUser),
                    u"username"_s);
    if (!input.knownHosts.isEmpty())
        return fail(ErrorCode::Invalid, u"host keys are for ssh-key connections; a GitHub App reads over https"_s,
                    u"known_hosts"_s);
    for (const auto &[value, field] :
         {std::pair{input.appId, u"app_id"_s}, std::pair{input.installationId, u"installation_id"_s}}) {
        if (auto ok = checkAppNumber(value, field); !ok)
            return ok;
    }
    if (input.secret.size() > MaxKeyBytes)
        return fail(ErrorCode::TooLarge, u"the key is more than %1 bytes"_s.arg(MaxKeyBytes), u"private_key"_s);
    if (auto key = adapters::jose::RsaKey::fromPem(input.secret); !key)
        return fail(ErrorCode::Invalid, key.error().message, u"private_key"_s,
                    u"give the .pem file GitHub generated under the app's settings (Private keys)"_s);
    return {};
}

// A registry connection is docker login's: the registry's address alone, a user and a password
// or token.
Status checkRegistry(const ConnectionInput &input)
{
    const QUrl url(input.scope.baseUrl);
    if (url.scheme().toLower() == u"ssh"_s || !url.path(QUrl::FullyDecoded).remove(u'/').isEmpty())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a registry's address: give its https:// address alone"_s.arg(input.scope.baseUrl),
                    u"url"_s,
                    u"e.g. https://ghcr.io, https://registry.gitlab.com or https://docker.io; narrow it to a namespace "
                    u"with owner"_s);
    if (input.auth != AuthKind::Token)
        return fail(ErrorCode::Invalid,
                    u"a registry takes a user name and a password or token, as docker login does; not a %1"_s.arg(
                        authKindName(input.auth)),
                    u"auth"_s);
    return {};
}

Status checkOAuth(const ConnectionInput &input)
{
    const bool bitbucketCloud =
        input.scope.kind == adapters::ForgeKind::Bitbucket && QUrl(input.scope.baseUrl).host() == u"bitbucket.org"_s;
    const bool hasApps = input.scope.kind == adapters::ForgeKind::GitHub ||
                         input.scope.kind == adapters::ForgeKind::GitLab ||
                         input.scope.kind == adapters::ForgeKind::Gitea || bitbucketCloud;
    if (!hasApps)
        return fail(ErrorCode::Invalid,
                    u"OAuth applications are GitHub's, GitLab's, Gitea's, Forgejo's and Bitbucket Cloud's; a %1 host "
                    u"takes a token or a deploy key"_s.arg(input.scope.kind == adapters::ForgeKind::Bitbucket
                                                               ? u"Bitbucket Data Center"_s
                                                               : adapters::forgeKindName(input.scope.kind)),
                    u"kind"_s);
    if (QUrl(input.scope.baseUrl).scheme() == u"ssh"_s)
        return fail(ErrorCode::Invalid, u"an OAuth application's tokens read over https; the address is ssh://"_s,
                    u"url"_s, u"give the forge's https:// address"_s);
    if (!input.username.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"an OAuth connection's tokens are sent as the forge takes them; give no user name"_s,
                    u"username"_s);
    if (!input.knownHosts.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"host keys are for ssh-key connections; an OAuth application reads over https"_s,
                    u"known_hosts"_s);
    const bool plain =
        std::all_of(input.clientId.begin(), input.clientId.end(), [](QChar c) { return c > u' ' && c < QChar(0x7f); });
    if (input.clientId.isEmpty() || input.clientId.size() > 255 || !plain)
        return fail(ErrorCode::Invalid,
                    input.clientId.isEmpty() ? u"an OAuth connection needs its application's client id"_s
                                             : u"is not a client id: 1-255 printable characters, no spaces"_s,
                    u"client_id"_s, u"the application's settings page on the forge shows it"_s);
    const QString hint = u"the application's settings page on the forge shows it (or makes a new one)"_s;
    if (input.secret.isEmpty())
        return fail(ErrorCode::Invalid, u"an OAuth connection needs its application's client secret"_s,
                    u"client_secret"_s, hint);
    if (auto ok = checkToken(input.secret); !ok)
        return fail(ok.error().code, QString(ok.error().message).replace(u"the token"_s, u"the client secret"_s),
                    u"client_secret"_s, hint);
    return {};
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

Status checkConnectionName(const QString &name)
{
    static const QRegularExpression pattern(uR"(^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\z)"_s);
    if (!pattern.match(name).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a connection name: 1-63 lower-case letters, digits and '-', not starting or "
                    u"ending with '-'"_s.arg(name.left(64)),
                    u"name"_s);
    return {};
}

Status checkConnectionInput(const ConnectionInput &input)
{
    if (auto ok = checkConnectionName(input.name); !ok)
        return ok;
    if (auto ok = adapters::checkForgeScope(input.scope); !ok)
        return ok;
    if (input.username.size() > 255 || input.username.contains(u':') ||
        std::any_of(input.username.begin(), input.username.end(), [](QChar c) { return c.isSpace() || c < u' '; }))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a user name: no spaces, colons or control characters, at most 255"_s.arg(
                        input.username.left(64)),
                    u"username"_s);
    if (input.scope.kind == adapters::ForgeKind::Registry) {
        if (auto ok = checkRegistry(input); !ok)
            return ok;
    }
    if (input.auth == AuthKind::GitHubApp)
        return checkGitHubApp(input);
    if (!input.clientId.isEmpty() && input.auth != AuthKind::OAuth)
        return fail(ErrorCode::Invalid, u"a client id is for OAuth connections"_s, u"client_id"_s);
    if (input.auth == AuthKind::OAuth) {
        if (!input.appId.isEmpty() || !input.installationId.isEmpty())
            return fail(ErrorCode::Invalid, u"an app id and an installation id are for GitHub App connections"_s,
                        input.appId.isEmpty() ? u"installation_id"_s : u"app_id"_s);
        return checkOAuth(input);
    }
    if (!input.appId.isEmpty() || !input.installationId.isEmpty())
        return fail(ErrorCode::Invalid, u"an app id and an installation id are for GitHub App connections"_s,
                    input.appId.isEmpty() ? u"installation_id"_s : u"app_id"_s);
    if (input.auth == AuthKind::Token) {
        if (auto ok = checkToken(input.secret); !ok)
            return ok;
        if (input.username.isEmpty() && adapters::defaultTokenUser(input.scope.kind).isEmpty())
            return fail(ErrorCode::Invalid,
                        u"a token for a %1 host is sent with the account's user name; none was given"_s.arg(
                            adapters::forgeKindName(input.scope.kind)),
                        u"username"_s, u"give the user the token belongs to"_s);
        if (!input.knownHosts.isEmpty())
            return fail(ErrorCode::Invalid, u"host keys are for ssh-key connections; a token is sent over https"_s,
                        u"known_hosts"_s);
        return {};
    }
    if (input.secret.size() > MaxKeyBytes)
        return fail(ErrorCode::TooLarge, u"the key is more than %1 bytes"_s.arg(MaxKeyBytes), u"ssh_key"_s);
    if (auto ok = checkKey(input.secret.trimmed()); !ok)
        return ok;
    return checkKnownHosts(input.knownHosts);
}

QString keyFingerprint(QByteArrayView privateKey)
{
    auto key = readOpenSshKey(privateKey);
    if (!key || key->publicKey.isEmpty())
        return {};
    const QByteArray digest = QCryptographicHash::hash(key->publicKey, QCryptographicHash::Sha256);
    return u"SHA256:"_s + QString::fromLatin1(digest.toBase64(QByteArray::OmitTrailingEquals));
}

namespace {

Result<std::optional<Connection>> closest(const QList<Connection> &candidates, const QString &repo, bool image)
{
    int best = -1;
    QList<Connection> chosen;
    for (const Connection &c : candidates) {
        auto address = image ? adapters::parseImageAddress(repo) : adapters::parseRepoAddress(repo, c.scope.kind);
        if (!address)
            continue;
        const int score = adapters::coverage(c.scope, c.overHttps(), *address);
        if (score < 0 || score < best)
            continue;
        if (score > best)
            chosen.clear();
        best = score;
        chosen << c;
    }
    if (chosen.isEmpty())
        return std::optional<Connection>{};
    if (chosen.size() > 1) {
        QStringList names;
        for (const Connection &c : chosen)
            names << c.name;
        return std::unexpected(Error{ErrorCode::Conflict,
                                     u"connections %1 all cover %2 equally"_s.arg(names.join(u", "_s), repo),
                                     u"source.connection"_s, u"name the one to use as source.connection"_s});
    }
    return std::optional<Connection>{chosen.first()};
}

} // namespace

Result<std::optional<Connection>> choose(const QList<Connection> &candidates, const QString &repo)
{
    return closest(candidates, repo, false);
}

Result<std::optional<Connection>> chooseForImage(const QList<Connection> &candidates, const QString &image)
{
    return closest(candidates, image, true);
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
