#pragma once
// AccountService: users, the first administrator's bootstrap, login sessions and API tokens over
// the state store, with password checks delegated to an identity adapter (adapters/api/
// identity.h). It decides who a bearer secret stands for (authenticate → Principal); what that
// principal may do is decided by authz, not here. Every change writes an audit line and reports
// success only once the line is durable: a change whose line cannot be written is taken back
// (a new user, token or session) or, when it must stand (a revocation, a disabled user, a new
// password, the first administrator), answered with an error that says it was done
// (core::unaudited).
//
// Threading: every method may be called from any thread. login() and the methods that set a
// password spend tens of milliseconds in argon2id: call them off the GUI thread.

#include "adapters/api/identity.h"
#include "core/accounts/accounts.h"
#include "core/accounts/loginthrottle.h"
#include "core/audit/auditlog.h"
#include "core/common/clock.h"
#include "core/state/database.h"

#include <QByteArray>
#include <functional>
#include <memory>

namespace pando::core::accounts {

class PairingBook;

struct AccountOptions {
    qint64 sessionTtlMs = 12LL * 60 * 60 * 1000;
    int minPasswordLength = 8; // characters; the identity adapter caps the length
    ThrottlePolicy perAccount{3, 1000, 15 * 60 * 1000, 60 * 60 * 1000};
    ThrottlePolicy perAddress{10, 1000, 15 * 60 * 1000, 60 * 60 * 1000};
    // Where the engine wrote the initial admin token (<dataDir>/initial-admin-token): removed once
    // the token is spent, since it would only mislead and is a secret lying around. Empty: none.
    QString initialTokenFile;
};

// Credentials that stopped working: a session or token (tokenId), or every one of a user's
// (userId, when the user is disabled).
struct Revoked {
    QString tokenId;
    QString userId;
};

struct NewUser {
    QString username;
    QString displayName;
    Role role = Role::Member;
    QString password;
};

class AccountService {
public:
    // tokenKey: the key every digest is made with (core/accounts/tokenkey.h; the engine's
    // token.key file), so a copy of the database alone cannot check guesses.
    AccountService(Database &db, AuditLog &audit, std::shared_ptr<const adapters::IdentityProvider> identity,
                   QByteArray tokenKey, Clock &clock = SystemClock::instance(), AccountOptions options = {});
    ~AccountService();

    // True until the first administrator exists: the initial token is for nothing else.
    Result<bool> needsBootstrap();
    // Creates the first administrator with the one-time initial token (the engine's
    // bootstrapAdminToken()), which stops working in the same transaction, and removes the
    // token's file (options().initialTokenFile). A second call is Conflict; a wrong or spent
    // token Unauthorized.
    Result<User> createFirstAdmin(const QString &initialToken, const QString &username, const QString &password,
                                  const Actor &actor);

    // The first user of an install is its first administrator: while there is none, a user of
    // another role is refused (Conflict), so that spending the initial token on a member cannot
    // leave an install nobody may administer. Creating that first administrator spends the
    // initial token, as createFirstAdmin() does.
    Result<User> createUser(const NewUser &user, const Actor &actor);
    // Recovers a locked-out install (pandod --reset-admin, with the engine stopped): the user,
    // created when missing, becomes an enabled administrator with this password, and every
    // session it had ends. Audited as user.reset_admin; the caller runs it offline, so nobody
    // but whoever may read the data directory can call it.
    Result<User> resetAdmin(const QString &username, const QString &password, const Actor &actor);
    Result<QList<User>> users();
    Result<User> user(const QString &username);
    // A disabled user's sessions end at once and their tokens stop authenticating (until the
    // user is enabled again). Refuses to disable the last enabled administrator.
    Result<User> setDisabled(const QString &username, bool disabled, const Actor &actor);
    Status setPassword(const QString &username, const QString &password, const Actor &actor);

    // Checks the password and opens a session. Every failure — unknown user, wrong password,
    // disabled user — is the same Unauthorized error; while failures for this name or from this
    // address are being slowed down it is Unauthorized with the hint "try again in N s".
    Result<IssuedSession> login(const QString &username, const QString &password, const QString &sourceAddress,
                                const QString &requestId = {});
    // Ends the session the secret belongs to (NotFound when it is not an open session).
    Status logout(const QString &sessionSecret, const Actor &actor);
    // As logout(), for the principal the secret authenticated as: Invalid unless it is a login
    // session (API tokens are revoked by id).
    Status logout(const Principal &who, const QString &sessionSecret, const Actor &actor);

    // A token for the user with these scopes (each of knownScopes(); "admin" only for admins),
    // expiring at expiresMs (0: never). The secret is in the result and nowhere else.
    Result<IssuedToken> createToken(const QString &username, const QString &name, const QStringList &scopes,
                                    qint64 expiresMs, const Actor &actor);
    // As createToken(), expiring lifetimeMs from now by this service's clock (0: never).
    Result<IssuedToken> createTokenLasting(const QString &username, const QString &name, const QStringList &scopes,
                                           qint64 lifetimeMs, const Actor &actor);
    // A token maker asks for, always the maker's own: Invalid for the initial token (it belongs to
    // nobody), Forbidden for a scope the maker's own token lacks (a token never mints a broader
    // one), otherwise as createTokenLasting().
    Result<IssuedToken> issueToken(const Principal &maker, const QString &name, const QStringList &scopes,
                                   qint64 lifetimeMs, const Actor &actor);
    // Never the secrets. Empty username: every user's tokens.
    Result<QList<ApiToken>> tokens(const QString &username = {});
    // The tokens who may see: every user's for administrators (and the initial token), their own
    // for everyone else, also for an administrator's token without the admin scope.
    Result<QList<ApiToken>> tokensVisibleTo(const Principal &who);
    Result<ApiToken> token(const QString &id);
    Status revokeToken(const QString &id, const Actor &actor);

    // Who the bearer secret (API token, session, or the initial token) stands for; Unauthorized
    // for anything unknown, revoked, expired, or belonging to a disabled user.
    Result<Principal> authenticate(const QString &bearer);

    const AccountOptions &options() const;
    // Called after logout(), revokeToken() and setDisabled(true) succeeded, on the caller's
    // thread (the engine publishes EventType::TokenRevoked with data {"tokenId"} or {"userId"},
    // so that the server closes the WebSockets opened with those credentials). Set before the
    // service is shared.
    void setRevokedHook(std::function<void(const Revoked &)> hook);
    // One-time pairing codes for teammates' desktops (pairingbook.h); lives as long as this service.
    PairingBook &pairings();

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace pando::core::accounts
