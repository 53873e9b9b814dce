#include "accountservice.h"

#include "core/accounts/accountrepository.h"
#include "core/accounts/pairingbook.h"
#include "core/accounts/tokenkey.h"

#include <QFile>
#include <QJsonArray>
#include <QRandomGenerator>
#include <mutex>

using namespace Qt::StringLiterals;

namespace pando::core::accounts {

namespace {

const QString SessionPrefix = u"pandosess_"_s;
const QString TokenPrefix = u"pando_"_s;
constexpr int MaxSecretLength = 256;
constexpr int MaxTokenNameLength = 100;

QString newId(QChar prefix)
{
    return QString(prefix) + u"%1"_s.arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
}

QString newSessionSecret()
{
    // Same 256 random bits as an API token, with a prefix that says what it is when it turns
    // up in a log or a secret scanner.
    return SessionPrefix + detail::newTokenSecret().mid(TokenPrefix.size());
}

std::unexpected<Error> invalidToken()
{
    return fail(ErrorCode::Unauthorized, u"invalid token"_s, {}, u"log in again or use a valid API token"_s);
}

std::unexpected<Error> wrongCredentials()
{
    return fail(ErrorCode::Unauthorized, u"wrong username or password"_s);
}

Status checkUsername(const QString &username)
{
    if (isValidUsername(username))
        return {};
    return fail(
        ErrorCode::Invalid,
        u"username \"%1\" must be 1-64 of a-z 0-9 . _ - and start with a letter or digit"_s.arg(username.left(64)),
        u"username"_s);
}

} // namespace

struct AccountService::Private {
    Private(Database &db, AuditLog &audit, std::shared_ptr<const adapters::IdentityProvider> identity, QByteArray key,
            Clock &clock, AccountOptions options)
        : db(db), audit(audit), identity(std::move(identity)), key(std::move(key)), clock(clock),
          options(std::move(options)), throttle(clock, this->options.perAccount, this->options.perAddress)
    {}

    Database &db;
    AuditLog &audit;
    std::shared_ptr<const adapters::IdentityProvider> identity;
    QByteArray key;
    Clock &clock;
    AccountOptions options;
    LoginThrottle throttle;
    std::once_flag dummyOnce;
    QString dummyHash;
    std::unique_ptr<PairingBook> pairings;
    std::function<void(const Revoked &)> revokedHook;

    void revoked(const Revoked &what) const
    {
        if (revokedHook)
            revokedHook(what);
    }

    AccountRepository repo() { return AccountRepository(db); }
    QString digest(const QString &secret) const { return detail::tokenDigest(key, secret); }

    Status checkPassword(const QString &password) const
    {
        if (!identity->supportsPasswords())
            return fail(ErrorCode::Invalid, u"the %1 identity adapter does not keep passwords"_s.arg(identity->kind()),
                        u"password"_s);
        if (password.size() < options.minPasswordLength)
            return fail(ErrorCode::Invalid,
                        u"the password must have at least %1 characters"_s.arg(options.minPasswordLength),
                        u"password"_s);
        return {};
    }

    // Checking a password against a hash nobody has, so an unknown name costs the same time as
    // a known one and the response time does not tell which names exist.
    void spendVerifyTime(const QString &password)
    {
        std::call_once(dummyOnce,
                       [this] { dummyHash = identity->hashPassword(u"pando-no-such-user"_s).value_or(QString()); });
        if (!dummyHash.isEmpty())
            discardResult(identity->verifyPassword(password, dummyHash), "only its time is wanted");
    }

    Status record(const Actor &actor, const QString &action, const QString &object, const QString &outcome,
                  const QJsonObject &detail = {})
    {
        return audit.record(actor, action, object, outcome, detail);
    }
    // A refusal is the caller's answer whatever becomes of its audit line; a line that could not
    // be written is logged, since the trail of refusals is what shows an attack.
    void recordRefusal(const Actor &actor, const QString &action, const QString &object, const QJsonObject &detail)
    {
        if (auto ok = record(actor, action, object, u"denied"_s, detail); !ok)
            qWarning("audit: recording %s on %s failed: %s", qPrintable(action), qPrintable(object),
                     qPrintable(ok.error().text()));
    }
    // The same for someone who is not signed in: counted per source network, not a line each.
    void recordUnauthenticatedRefusal(const Actor &actor, const QString &action, const QString &object,
                                      const QJsonObject &detail)
    {
        if (auto ok = audit.recordUnauthenticated(actor, action, object, detail); !ok)
            qWarning("audit: recording %s on %s failed: %s", qPrintable(action), qPrintable(object),
                     qPrintable(ok.error().text()));
    }

    Result<Principal> principalFor(const User &user, Principal::Kind kind, const QString &tokenId,
                                   const QStringList &scopes, qint64 expiresMs, qint64 revokedMs)
    {
        if (revokedMs != 0 || user.disabled)
            return invalidToken();
        if (expiresMs != 0 && expiresMs <= clock.nowMs())
            return fail(ErrorCode::Unauthorized,
                        kind == Principal::Kind::Session ? u"the session has expired"_s : u"the token has expired"_s,
                        {}, kind == Principal::Kind::Session ? u"log in again"_s : u"create a new token"_s);
        return Principal{user.id, user.username, user.role, scopes, tokenId, kind, expiresMs};
    }
};

AccountService::AccountService(Database &db, AuditLog &audit,
                               std::shared_ptr<const adapters::IdentityProvider> identity, QByteArray tokenKey,
                               Clock &clock, AccountOptions options)
    : d(std::make_unique<Private>(db, audit, std::move(identity), std::move(tokenKey), clock, std::move(options)))
{
    Q_ASSERT(d->identity);
    Q_ASSERT(d->key.size() >= 32);
    d->pairings = std::make_unique<PairingBook>(*this, d->audit, d->clock);
}

AccountService::~AccountService() = default;

const AccountOptions &AccountService::options() const
{
    return d->options;
}

PairingBook &AccountService::pairings()
{
    return *d->pairings;
}

Result<bool> AccountService::needsBootstrap()
{
    auto count = d->repo().countUsers();
    if (!count)
        return std::unexpected(count.error());
    return *count == 0;
}

Result<User> AccountService::createFirstAdmin(const QString &initialToken, const QString &username,
                                              const QString &password, const Actor &actor)
{
    auto needed = needsBootstrap();
    if (!needed)
        return std::unexpected(needed.error());
    if (!*needed) {
        d->recordRefusal(actor, u"user.create"_s, u"user/"_s + username.left(64),
                         {{u"reason"_s, u"already bootstrapped"_s}});
        return fail(ErrorCode::Conflict, u"the install already has accounts; bootstrap works only once"_s,
                    u"bootstrap"_s, u"log in as an administrator and create users from there"_s);
    }
    if (auto ok = checkUsername(username); !ok)
        return std::unexpected(ok.error());
    if (auto ok = d->checkPassword(password); !ok)
        return std::unexpected(ok.error());
    const QString digest = initialToken.size() <= MaxSecretLength ? d->digest(initialToken) : QString();
    auto initial = d->repo().findLegacyToken(digest);
    if (!initial || initial->second != u"initial-admin"_s) {
        if (initial || initial.error().code == ErrorCode::NotFound) {
            d->recordRefusal(actor, u"user.create"_s, u"user/"_s + username,
                             {{u"reason"_s, u"invalid initial token"_s}});
            return fail(ErrorCode::Unauthorized, u"the initial admin token is not valid"_s, u"bootstrap"_s,
                        u"use the token from the install's initial-admin-token file; it works once"_s);
        }
        return std::unexpected(initial.error());
    }
    auto hash = d->identity->hashPassword(password);
    if (!hash)
        return std::unexpected(hash.error());
    const qint64 now = d->clock.nowMs();
    UserRow row;
    row.user = User{newId(u'u'), username, username, Role::Admin, false, now, now};
    row.identity = d->identity->kind();
    row.passwordHash = *hash;
    if (auto created = d->repo().createFirstAdmin(row, digest, now); !created)
        return std::unexpected(created.error());
    // The token is spent: its file would only mislead (and is a secret lying around).
    if (!d->options.initialTokenFile.isEmpty())
        QFile::remove(d->options.initialTokenFile);
    const QString tokenObject = u"token/"_s + initial->first;
    auto spent = d->record(actor, u"token.revoke"_s, tokenObject, u"success"_s, {{u"name"_s, u"initial-admin"_s}});
    auto made = d->record(actor, u"user.create"_s, u"user/"_s + username, u"success"_s,
                          {{u"role"_s, roleName(Role::Admin)}, {u"bootstrap"_s, true}});
    // The administrator stands (the initial token is gone with its creation): say so.
    if (!spent || !made)
        return std::unexpected(unaudited(u"the first administrator %1 was created"_s.arg(username),
                                         !spent ? spent.error() : made.error()));
    return row.user;
}

Result<User> AccountService::createUser(const NewUser &user, const Actor &actor)
{
    if (auto ok = checkUsername(user.username); !ok)
        return std::unexpected(ok.error());
    if (user.displayName.size() > 200)
        return fail(ErrorCode::Invalid, u"the display name is longer than 200 characters"_s, u"displayName"_s);
    if (auto ok = d->checkPassword(user.password); !ok)
        return std::unexpected(ok.error());
    auto first = needsBootstrap();
    if (!first)
        return std::unexpected(first.error());
    if (*first && user.role != Role::Admin) {
        d->recordRefusal(actor, u"user.create"_s, u"user/"_s + user.username,
                         {{u"reason"_s, u"the first user must be an administrator"_s}});
        return fail(
            ErrorCode::Conflict,
            u"the install has no administrator yet: its first user must be one, not a %1"_s.arg(roleName(user.role)),
            u"role"_s, u"create the administrator first (pando users create NAME --role admin), then the others"_s);
    }
    auto hash = d->identity->hashPassword(user.password);
    if (!hash)
        return std::unexpected(hash.error());
    const qint64 now = d->clock.nowMs();
    UserRow row;
    row.user = User{newId(u'u'), user.username, user.displayName.isEmpty() ? user.username : user.displayName,
                    user.role,   false,         now,
                    now};
    row.identity = d->identity->kind();
    row.passwordHash = *hash;
    if (auto created = d->repo().createUser(row); !created)
        return std::unexpected(created.error());
    if (auto ok = d->record(actor, u"user.create"_s, u"user/"_s + user.username, u"success"_s,
                            {{u"role"_s, roleName(user.role)}});
        !ok) {
        // Not audited, not made: nobody has used the account yet.
        discardResult(d->repo().removeNewUser(row.user.id), "the audit error is the answer");
        return std::unexpected(ok.error());
    }
    // The initial token stopped working with the first user (authenticate() checks): its file
    // would only mislead, and is a secret lying around.
    if (*first && !d->options.initialTokenFile.isEmpty())
        QFile::remove(d->options.initialTokenFile);
    return row.user;
}

Result<User> AccountService::resetAdmin(const QString &username, const QString &password, const Actor &actor)
{
    if (auto ok = checkUsername(username); !ok)
        return std::unexpected(ok.error());
    if (auto ok = d->checkPassword(password); !ok)
        return std::unexpected(ok.error());
    auto row = d->repo().findUser(username);
    if (!row && row.error().code != ErrorCode::NotFound)
        return std::unexpected(row.error());
    if (!row) {
        auto made = createUser(NewUser{username, username, Role::Admin, password}, actor);
        if (!made)
            return made;
        if (auto ok =
                d->record(actor, u"user.reset_admin"_s, u"user/"_s + username, u"success"_s, {{u"created"_s, true}});
            !ok)
            return std::unexpected(unaudited(u"the administrator %1 was created"_s.arg(username), ok.error()));
        return made;
    }
    auto hash = d->identity->hashPassword(password);
    if (!hash)
        return std::unexpected(hash.error());
    const qint64 now = d->clock.nowMs();
    if (auto ok = d->repo().restoreAdmin(row->user.id, d->identity->kind(), *hash, now); !ok)
        return std::unexpected(ok.error());
    // Whoever held the old password may hold a session: it ends with it.
    if (auto ok = d->repo().revokeSessionsOf(row->user.id, now); !ok)
        return std::unexpected(ok.error());
    const QJsonObject detail{{u"wasRole"_s, roleName(row->user.role)}, {u"wasDisabled"_s, row->user.disabled}};
    if (auto ok = d->record(actor, u"user.reset_admin"_s, u"user/"_s + username, u"success"_s, detail); !ok)
        return std::unexpected(unaudited(u"%1 was made an enabled administrator"_s.arg(username), ok.error()));
    row->user.role = Role::Admin;
    row->user.disabled = false;
    row->user.updatedMs = now;
    return row->user;
}

Result<QList<User>> AccountService::users()
{
    return d->repo().listUsers();
}

Result<User> AccountService::user(const QString &username)
{
    auto row = d->repo().findUser(username);
    if (!row)
        return std::unexpected(row.error());
    return row->user;
}

Result<User> AccountService::setDisabled(const QString &username, bool disabled, const Actor &actor)
{
    auto row = d->repo().findUser(username);
    if (!row)
        return std::unexpected(row.error());
    if (disabled && row->user.role == Role::Admin && !row->user.disabled) {
        auto others = d->repo().countOtherEnabledAdmins(row->user.id);
        if (!others)
            return std::unexpected(others.error());
        if (*others == 0)
            return fail(ErrorCode::Conflict, u"%1 is the last enabled administrator"_s.arg(username),
                        u"user/"_s + username, u"make another user an administrator first"_s);
    }
    const qint64 now = d->clock.nowMs();
    if (auto ok = d->repo().setDisabled(row->user.id, disabled, now); !ok)
        return std::unexpected(ok.error());
    // Sessions end for good; tokens only stop while the user is disabled (authenticate checks).
    if (disabled)
        if (auto ok = d->repo().revokeSessionsOf(row->user.id, now); !ok)
            return std::unexpected(ok.error());
    auto audited =
        d->record(actor, disabled ? u"user.disable"_s : u"user.enable"_s, u"user/"_s + username, u"success"_s);
    // Whatever became of the line: the user's sockets close with their credentials.
    if (disabled)
        d->revoked(Revoked{{}, row->user.id});
    if (!audited)
        return std::unexpected(
            unaudited(u"%1 was %2"_s.arg(username, disabled ? u"disabled"_s : u"enabled"_s), audited.error()));
    row->user.disabled = disabled;
    row->user.updatedMs = now;
    return row->user;
}

Status AccountService::setPassword(const QString &username, const QString &password, const Actor &actor)
{
    auto row = d->repo().findUser(username);
    if (!row)
        return std::unexpected(row.error());
    if (auto ok = d->checkPassword(password); !ok)
        return ok;
    auto hash = d->identity->hashPassword(password);
    if (!hash)
        return std::unexpected(hash.error());
    const qint64 now = d->clock.nowMs();
    if (auto ok = d->repo().setPasswordHash(row->user.id, *hash, now); !ok)
        return ok;
    // Whoever knew the old password may hold a session: it ends with the password.
    if (auto ok = d->repo().revokeSessionsOf(row->user.id, now); !ok)
        return ok;
    if (auto ok = d->record(actor, u"user.password"_s, u"user/"_s + username, u"success"_s); !ok)
        return std::unexpected(unaudited(u"the password of %1 was changed"_s.arg(username), ok.error()));
    return {};
}

Result<IssuedSession> AccountService::login(const QString &username, const QString &password,
                                            const QString &sourceAddress, const QString &requestId)
{
    const QString name = username.trimmed().toLower().left(64);
    const Actor actor{u"user:"_s + name, sourceAddress.isEmpty() ? u"engine"_s : sourceAddress, requestId};
    const QString object = u"user/"_s + name;
    auto recordRefusal = [&](const QString &reason) {
        d->throttle.recordFailure(name, sourceAddress);
        d->recordUnauthenticatedRefusal(actor, u"session.failed"_s, object, {{u"reason"_s, reason}});
    };
    auto refuse = [&](const QString &reason) -> std::unexpected<Error> {
        recordRefusal(reason);
        return wrongCredentials();
    };

    if (const qint64 wait = d->throttle.waitMs(name, sourceAddress); wait > 0) {
        d->recordUnauthenticatedRefusal(actor, u"session.failed"_s, object, {{u"reason"_s, u"throttled"_s}});
        return fail(ErrorCode::Unauthorized, u"too many failed logins"_s, {},
                    u"try again in %1 s"_s.arg((wait + 999) / 1000));
    }
    if (!d->identity->supportsPasswords())
        return refuse(u"the identity adapter takes no passwords"_s);
    auto row = d->repo().findUser(name);
    if (!row) {
        if (row.error().code != ErrorCode::NotFound)
            return std::unexpected(row.error());
        d->spendVerifyTime(password);
        return refuse(u"unknown user"_s);
    }
    if (row->identity != d->identity->kind() || row->passwordHash.isEmpty()) {
        d->spendVerifyTime(password);
        return refuse(u"the user has no local password"_s);
    }
    auto check = d->identity->verifyPassword(password, row->passwordHash);
    if (!check)
        return std::unexpected(check.error());
    if (!check->matches)
        return refuse(u"wrong password"_s);
    // Checked after the password: only someone who knows it learns that the account exists and is
    // disabled; without it a disabled account answers exactly like a wrong password or no account.
    // The one who knows it is told the truth, not sent to retype a password that was right.
    if (row->user.disabled) {
        recordRefusal(u"disabled user"_s);
        return fail(ErrorCode::Unauthorized, u"the account %1 is disabled"_s.arg(name), {},
                    u"only an administrator of this install can give you access again"_s);
    }

    const qint64 now = d->clock.nowMs();
    if (check->needsRehash) {
        // Best effort: the login stands even if the stronger hash cannot be stored now.
        if (auto hash = d->identity->hashPassword(password))
            if (auto ok = d->repo().setPasswordHash(row->user.id, *hash, now); !ok)
                qWarning("accounts: rehashing the password of %s failed: %s", qPrintable(name),
                         qPrintable(ok.error().text()));
    }
    IssuedSession issued;
    issued.secret = newSessionSecret();
    issued.user = row->user;
    issued.session = Session{newId(u's'), row->user.id, sourceAddress, now, now + d->options.sessionTtlMs, 0};
    if (auto ok = d->repo().createSession({issued.session, d->digest(issued.secret)}); !ok)
        return std::unexpected(ok.error());
    if (auto ok = d->record(actor, u"session.login"_s, object, u"success"_s, {{u"session"_s, issued.session.id}});
        !ok) {
        // Not audited, not granted.
        discardResult(d->repo().revokeSession(d->digest(issued.secret), now),
                      "the audit error is the answer; the caller never got the session");
        return std::unexpected(ok.error());
    }
    d->throttle.recordSuccess(name);
    return issued;
}

Status AccountService::logout(const QString &sessionSecret, const Actor &actor)
{
    if (!sessionSecret.startsWith(SessionPrefix) || sessionSecret.size() > MaxSecretLength)
        return fail(ErrorCode::NotFound, u"that is not a session secret"_s, u"session"_s);
    const QString digest = d->digest(sessionSecret);
    auto found = d->repo().findSession(digest);
    if (!found)
        return std::unexpected(found.error());
    if (auto ok = d->repo().revokeSession(digest, d->clock.nowMs()); !ok)
        return ok;
    auto audited = d->record(actor, u"session.logout"_s, u"session/"_s + found->row.id, u"success"_s,
                             {{u"user"_s, found->user.username}});
    // Whatever became of the line: the session's sockets close with it.
    d->revoked(Revoked{found->row.id, {}});
    if (!audited)
        return std::unexpected(unaudited(u"the session was ended"_s, audited.error()));
    return {};
}

Status AccountService::logout(const Principal &who, const QString &sessionSecret, const Actor &actor)
{
    if (who.kind != Principal::Kind::Session)
        return fail(ErrorCode::Invalid, u"the bearer is not a login session"_s, u"Authorization"_s,
                    u"revoke API tokens with DELETE /api/v1/tokens/{id}"_s);
    return logout(sessionSecret, actor);
}

Result<IssuedToken> AccountService::createToken(const QString &username, const QString &name, const QStringList &scopes,
                                                qint64 expiresMs, const Actor &actor)
{
    auto row = d->repo().findUser(username);
    if (!row)
        return std::unexpected(row.error());
    if (row->user.disabled)
        return fail(ErrorCode::Conflict, u"%1 is disabled"_s.arg(username), u"user/"_s + username);
    if (name.trimmed().isEmpty() || name.size() > MaxTokenNameLength)
        return fail(ErrorCode::Invalid, u"a token needs a name of 1-%1 characters"_s.arg(MaxTokenNameLength),
                    u"name"_s);
    for (const QChar c : name)
        if (c.category() == QChar::Other_Control)
            return fail(ErrorCode::Invalid, u"the token name contains control characters"_s, u"name"_s);
    QStringList wanted;
    for (const QString &scope : scopes) {
        if (!knownScopes().contains(scope))
            return fail(ErrorCode::Invalid,
                        u"unknown scope \"%1\"; known: %2"_s.arg(scope.left(64), knownScopes().join(u", "_s)),
                        u"scopes"_s);
        if (scope == u"admin"_s && row->user.role != Role::Admin)
            return fail(ErrorCode::Forbidden, u"only administrators may hold tokens with the admin scope"_s,
                        u"scopes"_s);
        if (!wanted.contains(scope))
            wanted.append(scope);
    }
    if (wanted.isEmpty())
        return fail(ErrorCode::Invalid, u"a token needs at least one scope"_s, u"scopes"_s);
    const qint64 now = d->clock.nowMs();
    if (expiresMs != 0 && expiresMs <= now)
        return fail(ErrorCode::Invalid, u"the expiry lies in the past"_s, u"expiresMs"_s);

    IssuedToken issued;
    issued.secret = detail::newTokenSecret();
    issued.token = ApiToken{newId(u't'), row->user.id, name, wanted, now, expiresMs, 0};
    if (auto ok = d->repo().createToken({issued.token, d->digest(issued.secret)}); !ok)
        return std::unexpected(ok.error());
    if (auto ok = d->record(actor, u"token.create"_s, u"token/"_s + issued.token.id, u"success"_s,
                            {{u"user"_s, username},
                             {u"name"_s, name},
                             {u"scopes"_s, QJsonArray::fromStringList(wanted)},
                             {u"expiresMs"_s, expiresMs}});
        !ok) {
        discardResult(d->repo().revokeToken(issued.token.id, now),
                      "the audit error is the answer; the caller never got the token");
        return std::unexpected(ok.error());
    }
    return issued;
}

Result<QList<ApiToken>> AccountService::tokens(const QString &username)
{
    if (username.isEmpty())
        return d->repo().listTokens({});
    auto row = d->repo().findUser(username);
    if (!row)
        return std::unexpected(row.error());
    return d->repo().listTokens(row->user.id);
}

Result<QList<ApiToken>> AccountService::tokensVisibleTo(const Principal &who)
{
    // The initial token stands for the install's administrator before there is one.
    // An administrator's token narrowed to other scopes is not the administrator: it lists its
    // user's own tokens, like anyone's.
    const bool everyone = who.kind == Principal::Kind::Initial || (who.role == Role::Admin && who.hasScope(u"admin"_s));
    return tokens(everyone ? QString() : who.username);
}

Result<IssuedToken> AccountService::issueToken(const Principal &maker, const QString &name, const QStringList &scopes,
                                               qint64 lifetimeMs, const Actor &actor)
{
    if (maker.kind == Principal::Kind::Initial || maker.username.isEmpty())
        return fail(ErrorCode::Invalid, u"the initial token belongs to nobody and cannot make tokens"_s,
                    u"Authorization"_s, u"bootstrap the first administrator and log in"_s);
    // A token cannot mint a broader one: each scope asked for must be one the maker's token holds.
    for (const QString &scope : scopes) {
        if (!maker.hasScope(scope))
            return fail(ErrorCode::Forbidden, u"the token making this one lacks the scope \"%1\""_s.arg(scope.left(64)),
                        u"scopes"_s, u"log in, or use a token that holds the scope"_s);
    }
    // Always the maker's own token, whoever else a caller might name.
    return createTokenLasting(maker.username, name, scopes, lifetimeMs, actor);
}

Result<ApiToken> AccountService::token(const QString &id)
{
    return d->repo().tokenById(id);
}

Status AccountService::revokeToken(const QString &id, const Actor &actor)
{
    if (auto ok = d->repo().revokeToken(id, d->clock.nowMs()); !ok)
        return ok;
    auto audited = d->record(actor, u"token.revoke"_s, u"token/"_s + id, u"success"_s);
    // Whatever became of the line: the token's sockets close with it.
    d->revoked(Revoked{id, {}});
    if (!audited)
        return std::unexpected(unaudited(u"token %1 was revoked"_s.arg(id), audited.error()));
    return {};
}

Result<IssuedToken> AccountService::createTokenLasting(const QString &username, const QString &name,
                                                       const QStringList &scopes, qint64 lifetimeMs, const Actor &actor)
{
    return createToken(username, name, scopes, lifetimeMs > 0 ? d->clock.nowMs() + lifetimeMs : 0, actor);
}

void AccountService::setRevokedHook(std::function<void(const Revoked &)> hook)
{
    d->revokedHook = std::move(hook);
}

Result<Principal> AccountService::authenticate(const QString &bearer)
{
    if (bearer.isEmpty() || bearer.size() > MaxSecretLength)
        return invalidToken();
    const QString digest = d->digest(bearer);
    if (bearer.startsWith(SessionPrefix)) {
        auto found = d->repo().findSession(digest);
        if (!found)
            return found.error().code == ErrorCode::NotFound ? invalidToken() : std::unexpected(found.error());
        const Session &s = found->row;
        return d->principalFor(found->user, Principal::Kind::Session, s.id, {}, s.expiresMs, s.revokedMs);
    }
    if (!bearer.startsWith(TokenPrefix))
        return invalidToken();
    auto found = d->repo().findToken(digest);
    if (found) {
        const ApiToken &t = found->row;
        return d->principalFor(found->user, Principal::Kind::Token, t.id, t.scopes, t.expiresMs, t.revokedMs);
    }
    if (found.error().code != ErrorCode::NotFound)
        return std::unexpected(found.error());
    auto legacy = d->repo().findLegacyToken(digest);
    if (!legacy)
        return legacy.error().code == ErrorCode::NotFound ? invalidToken() : std::unexpected(legacy.error());
    // The initial token is for the time before the first administrator; if one exists (the
    // token was made again after bootstrap, say), it is worth nothing.
    auto needed = needsBootstrap();
    if (!needed)
        return std::unexpected(needed.error());
    if (!*needed)
        return invalidToken();
    return Principal{{}, {}, Role::Admin, {}, legacy->first, Principal::Kind::Initial};
}

} // namespace pando::core::accounts
