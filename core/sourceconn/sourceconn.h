#pragma once
// Package sourceconn is the install's source connections: a forge (kind and base address,
// optionally one owner there), or a container image registry (docker login's), with a credential — an HTTPS token, an
// SSH deploy key with the host's keys pinned, a GitHub App installation whose tokens are minted as needed, or an OAuth
// application a user authorized, whose access token is renewed as needed — that reads
// the repositories it covers. Credentials are sealed at rest with
// the install's seal key (core/pipelines/sealbox), bound to the connection's name, and never
// leave core except as the SourceCredential of one fetch. Which connection reads a repository is
// decided here (adapters/api/repoaddress.h says what covers what); who may use one is the
// engine's rule (administrators all, others those they hold a grant on).
//
// Nothing here logs, and no error text contains a credential.
//
// Threading: a ConnectionStore is a borrowed view over a Database, a SealBox and the install's
// InstallationTokens, all safe to use from any thread; make one per call.

#include "adapters/api/error.h"
#include "adapters/api/forge.h"
#include "adapters/api/repoaddress.h"
#include "adapters/api/runtime.h"
#include "adapters/api/source.h"
#include "core/common/clock.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/state/database.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <QString>
#include <functional>
#include <memory>
#include <optional>

namespace pando::core::sourceconn {

inline constexpr qsizetype MaxTokenBytes = 4096;
inline constexpr qsizetype MaxKeyBytes = 16 * 1024;
inline constexpr int MaxConnections = 200;

enum class AuthKind { Token, SshKey, GitHubApp, OAuth };
QString authKindName(AuthKind kind); // "token", "ssh-key", "github-app", "oauth"
// The user name GitHub takes with an installation token over git's https.
inline constexpr QStringView InstallationTokenUser = u"x-access-token";

// A connection as lists show it: everything but the credential.
struct Connection {
    QString name;
    adapters::ForgeScope scope;
    AuthKind auth = AuthKind::Token;
    QString username;    // sent with the token, or the ssh user; empty: the forge's default
    QString knownHosts;  // ssh-key: the pinned host keys (known_hosts lines); not secret
    QString fingerprint; // ssh-key: the public key's SHA256 fingerprint, to find it on the forge
    QString createdBy;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
    qint64 checkedMs = 0;   // the last test; 0 never
    QString checkResult;    // what it said: "ok: …" or why it failed
    QString appId;          // github-app: the app's id
    QString installationId; // github-app: the installation's id on the account
    QString clientId;       // oauth: the OAuth application's client id
    // A token (given, or minted for a GitHub App) reads https:// addresses and the forge's API; a
    // deploy key ssh ones, and no API.
    bool overHttps() const { return auth != AuthKind::SshKey; }
};

// What adding one takes. secret is the token, the deploy key's or the GitHub App's private key's
// text, or the OAuth application's client secret.
struct ConnectionInput {
    QString name;
    adapters::ForgeScope scope;
    AuthKind auth = AuthKind::Token;
    QString username;
    QByteArray secret;
    QString knownHosts;
    QString appId;
    QString installationId;
    QString clientId;
};

// A connection's name: a DNS label, 1-63 characters of [a-z0-9-].
Status checkConnectionName(const QString &name);
// Every rule for a new connection, each error naming its field: name, url, owner, token or
// ssh_key (the secret's size, text, and for a key its form and that it has no passphrase: a
// deploy key is used unattended), known_hosts (required for a key, one host key per line),
// username (required for a token on generic and Gitea hosts); for a GitHub App a GitHub scope,
// app_id and installation_id (numbers), private_key (an RSA key of at least 2048 bits, no
// passphrase) and no username; for an OAuth application a forge that has them (GitHub, GitLab,
// Gitea, Bitbucket Cloud) at an https:// address, client_id and client_secret, and no username.
Status checkConnectionInput(const ConnectionInput &input);
// The SHA256 fingerprint ("SHA256:…") of an OpenSSH private key's public half, read from the
// key's unencrypted public section; empty for a PEM key, whose public half is not stored apart.
QString keyFingerprint(QByteArrayView privateKey);

// Which of the candidates reads repo: the one covering it most closely. nullopt when none
// covers it; Conflict, naming them, when two cover it equally.
Result<std::optional<Connection>> choose(const QList<Connection> &candidates, const QString &repo);
// The same for an image reference, among registry connections.
Result<std::optional<Connection>> chooseForImage(const QList<Connection> &candidates, const QString &image);

// The install's GitHub App installation tokens: minted when a fetch or a forge API call needs one
// (EngineOptions::forgeAppTokens, the forge adapter) and kept in memory, never stored, until five
// minutes before they expire. A connection removed, or removed and added again under its name,
// never gets the tokens of the one before. Safe to use from any thread; a slow mint holds up only
// the callers wanting the same connection's token.
class InstallationTokens {
public:
    using Mint = std::function<Result<adapters::ForgeAccessToken>(const adapters::ForgeAppInstallation &app)>;
    static constexpr qint64 RenewBeforeMs = 5LL * 60 * 1000;

    InstallationTokens(Mint mint, Clock &clock) : m_mint(std::move(mint)), m_clock(clock) {}

    // A token of connection (as it was made at createdMs) for app, from memory or minted now.
    Result<QByteArray> token(const QString &connection, qint64 createdMs, const adapters::ForgeAppInstallation &app);
    // Forgets connection's token: it was removed.
    void forget(const QString &connection);

private:
    struct Held {
        qint64 createdMs = 0;
        adapters::ForgeAccessToken token;
        std::shared_ptr<QMutex> minting = std::make_shared<QMutex>();
    };
    Mint m_mint;
    Clock &m_clock;
    QMutex m_mutex;
    QHash<QString, Held> m_held;
};

// The address a forge sends the browser back to with an authorization code: http on a loopback
// address (127.0.0.1, [::1], localhost) with a port, where the CLI or the desktop listens for it
// (RFC 8252). Invalid at "redirect_uri" for any other.
Status checkRedirectUri(const QString &uri);

// The install's OAuth connections: the authorizations under way, and one renewal of an access
// token at a time per connection (the forges hand out a new refresh token with each renewal and
// refuse the old one after, so two renewals at once would lose the connection).
//
// An authorization under way is held in memory only, for PendingTtlMs, and finished only by who
// began it and only once: its state is the key the forge hands back, and its PKCE verifier never
// leaves this object, so an authorization code alone is of no use to anyone who catches it.
// Threading: safe to use from any thread.
class OAuthGrants {
public:
    static constexpr qint64 PendingTtlMs = 10LL * 60 * 1000;
    static constexpr int MaxPending = 32;

    struct Pending {
        ConnectionInput input;    // the connection to add; or, reauthorizing, the one there is
        bool reauthorize = false; // the connection exists: only its tokens change
        QString redirectUri;
        QByteArray verifier; // the PKCE code verifier
        QString actor;       // who began it
        qint64 expiresMs = 0;
        // Overwrites the client secret and the verifier.
        void wipe();
    };
    struct Begun {
        QString state;
        QString codeChallenge; // S256 of the verifier
        qint64 expiresMs = 0;
    };

    OAuthGrants(std::shared_ptr<const adapters::ForgeOAuth> forge, Clock &clock)
        : m_forge(std::move(forge)), m_clock(clock)
    {}
    ~OAuthGrants();
    OAuthGrants(const OAuthGrants &) = delete;
    OAuthGrants &operator=(const OAuthGrants &) = delete;

    const adapters::ForgeOAuth &forge() const { return *m_forge; }
    // Holds pending (its verifier and expiry are made here); the oldest is dropped past MaxPending.
    Begun begin(Pending pending);
    // The authorization begun with state by actor, taken: NotFound (where "state") for one that is
    // unknown, expired, taken already or begun by someone else.
    Result<Pending> take(const QString &state, const QString &actor);
    // The lock one renewal of connection's access token holds.
    std::shared_ptr<QMutex> renewal(const QString &connection);

private:
    void dropExpired(qint64 nowMs);

    std::shared_ptr<const adapters::ForgeOAuth> m_forge;
    Clock &m_clock;
    QMutex m_mutex;
    QHash<QString, Pending> m_pending;
    QHash<QString, std::shared_ptr<QMutex>> m_renewals;
};

class ConnectionStore {
public:
    // tokens: where GitHub App connections' tokens come from, oauth OAuth connections' renewals;
    // null: such a connection's credential is Unavailable.
    ConnectionStore(Database &db, const pipelines::SealBox &seal, Clock &clock, InstallationTokens *tokens = nullptr,
                    OAuthGrants *oauth = nullptr)
        : m_db(db), m_seal(seal), m_clock(clock), m_tokens(tokens), m_oauth(oauth)
    {}

    // Checks, seals and stores a new connection; Conflict when the name is taken. An OAuth
    // connection is stored with the grant its authorization gave (Invalid without one).
    Result<Connection> add(const ConnectionInput &input, const QString &createdBy,
                           const adapters::ForgeOAuthGrant *grant = nullptr);
    // Replaces OAuth connection name's tokens with a new authorization's grant.
    Status reauthorize(const QString &name, const adapters::ForgeOAuthGrant &grant);
    // OAuth connection name's application as its renewals need it (the client secret opened; the
    // caller wipes it).
    Result<adapters::ForgeOAuthApp> oauthApp(const QString &name);
    // By name.
    Result<QList<Connection>> list();
    // NotFound names it.
    Result<Connection> find(const QString &name);
    // NotFound names it; Conflict, naming them, while apps read their source through it.
    Status remove(const QString &name);
    // The names of the apps that read their source through it.
    Result<QStringList> appsUsing(const QString &name);
    // The credential one fetch offers, opened; a GitHub App's is an installation token, minted
    // when none is held, sent as x-access-token; an OAuth connection's is its access token, renewed
    // first when it expires within InstallationTokens::RenewBeforeMs. The caller wipes it.
    Result<adapters::SourceCredential> credential(const QString &name);
    // Registry connection name's login as a pull offers it, opened; the caller wipes it. Invalid
    // for a forge's connection.
    Result<adapters::RegistryCredential> registryLogin(const QString &name);
    // Records what the last test said.
    Status recordCheck(const QString &name, const QString &result);

private:
    Database &m_db;
    const pipelines::SealBox &m_seal;
    Clock &m_clock;
    InstallationTokens *m_tokens = nullptr;
    OAuthGrants *m_oauth = nullptr;

    Result<QByteArray> oauthAccessToken(const Connection &connection);
};

// The associated data a credential is sealed under: "source-connection", name.
QByteArray sealContext(const QString &name);

} // namespace pando::core::sourceconn
