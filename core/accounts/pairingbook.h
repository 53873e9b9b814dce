#pragma once
// PairingBook: one-time pairing codes that let a teammate's desktop attach to this install. An
// administrator creates a code for an account; whoever redeems it first, within a few minutes,
// gets a named API token for that account (the account's role decides its scopes) and the code is
// spent. Codes are kept in memory only, as SHA-256 digests compared in constant time: a restart
// forgets the open ones, which costs the administrator a new code and nothing else. Failed
// redemptions are throttled per source address like logins; every creation, redemption and
// refusal is audited.
//
// Threading: every method may be called from any thread.

#include "core/accounts/accounts.h"
#include "core/accounts/loginthrottle.h"
#include "core/audit/auditlog.h"
#include "core/common/clock.h"

#include <QList>
#include <QMutex>
#include <QString>

namespace pando::core::accounts {

class AccountService;

struct PairingOptions {
    qint64 ttlMs = 10LL * 60 * 1000; // how long a code may be redeemed
    int maxOpen = 32;                // open codes at one time; the oldest goes first
    // How long the token a redeemed code yields works: a teammate's desktop pairs again after it.
    qint64 tokenLifetimeMs = 90LL * 24 * 60 * 60 * 1000;
    ThrottlePolicy perAddress{5, 1000, 15 * 60 * 1000, 60 * 60 * 1000};
};

struct IssuedPairing {
    QString id;       // "p" + 16 hex digits: names the code in the audit log
    QString username; // whose token the code yields
    QString secret;   // "pandopair_" + 32 hex digits; shown once
    qint64 expiresMs = 0;
    QJsonObject toJson() const; // {id, user, token, expiresMs}
};

struct RedeemedPairing {
    IssuedToken token;
    QString username;
};

class PairingBook {
public:
    PairingBook(AccountService &accounts, AuditLog &audit, Clock &clock, PairingOptions options = {});

    // A new code for the account (NotFound for an unknown user, Conflict for a disabled one).
    Result<IssuedPairing> create(const QString &username, const Actor &actor);
    // Spends the code and returns a token named "paired: <deviceName>" for its account, expiring
    // after PairingOptions::tokenLifetimeMs (90 days). Every
    // refusal — unknown, spent or expired code — is the same Unauthorized error, and while
    // failures from this address are being slowed down it is Unauthorized with "try again in N s".
    Result<RedeemedPairing> redeem(const QString &secret, const QString &deviceName, const QString &sourceAddress,
                                   const QString &requestId = {});
    // Codes that may still be redeemed now.
    int openCount() const;

    static constexpr QStringView SecretPrefix = u"pandopair_";

private:
    struct Entry {
        QString id;
        QString username;
        QByteArray digest;
        qint64 expiresMs = 0;
    };
    void pruneLocked(qint64 now);

    AccountService &m_accounts;
    AuditLog &m_audit;
    Clock &m_clock;
    PairingOptions m_options;
    LoginThrottle m_throttle;
    mutable QMutex m_mutex;
    QList<Entry> m_open;
};

} // namespace pando::core::accounts
