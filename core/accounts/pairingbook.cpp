#include "pairingbook.h"

#include "core/accounts/accountservice.h"

#include <QCryptographicHash>
#include <QMutexLocker>
#include <QRandomGenerator>

using namespace Qt::StringLiterals;

namespace pando::core::accounts {

namespace {

constexpr int SecretHexDigits = 32; // 128 random bits
constexpr int MaxPairingSecretLength = 128;
constexpr int MaxDeviceNameLength = 60;

QByteArray digestOf(const QString &secret)
{
    return QCryptographicHash::hash(secret.toUtf8(), QCryptographicHash::Sha256);
}

// Equal-length digests compared without an early exit, so the time taken says nothing about
// how many leading bytes matched.
bool sameDigest(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

QString randomHex(int digits)
{
    QString out;
    while (out.size() < digits)
        out += u"%1"_s.arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
    return out.left(digits);
}

std::unexpected<Error> refused()
{
    return fail(ErrorCode::Unauthorized, u"the pairing code is unknown, spent or expired"_s, u"token"_s,
                u"ask the install's administrator for a new pairing link"_s);
}

// The scopes a paired desktop needs to do what its account may: all of them for an administrator,
// everything but "admin" for the others (authz still applies the role on top).
QStringList scopesFor(Role role)
{
    if (role == Role::Admin)
        return {u"admin"_s};
    QStringList scopes = knownScopes();
    scopes.removeAll(u"admin"_s);
    return scopes;
}

} // namespace

QJsonObject IssuedPairing::toJson() const
{
    return {{u"id"_s, id}, {u"user"_s, username}, {u"token"_s, secret}, {u"expiresMs"_s, expiresMs}};
}

PairingBook::PairingBook(AccountService &accounts, AuditLog &audit, Clock &clock, PairingOptions options)
    : m_accounts(accounts), m_audit(audit), m_clock(clock), m_options(options),
      // Only the address counts: the code names no account before it is found.
      m_throttle(clock, options.perAddress, options.perAddress)
{}

void PairingBook::pruneLocked(qint64 now)
{
    m_open.removeIf([now](const Entry &e) { return e.expiresMs <= now; });
}

int PairingBook::openCount() const
{
    QMutexLocker lock(&m_mutex);
    const qint64 now = m_clock.nowMs();
    return int(std::count_if(m_open.cbegin(), m_open.cend(), [now](const Entry &e) { return e.expiresMs > now; }));
}

Result<IssuedPairing> PairingBook::create(const QString &username, const Actor &actor)
{
    auto user = m_accounts.user(username);
    if (!user)
        return std::unexpected(user.error());
    if (user->disabled)
        return fail(ErrorCode::Conflict, u"%1 is disabled"_s.arg(username), u"user/"_s + username,
                    u"enable the user first, or pair another account"_s);
    IssuedPairing issued;
    issued.id = u"p"_s + randomHex(16);
    issued.username = user->username;
    issued.secret = SecretPrefix.toString() + randomHex(SecretHexDigits);
    issued.expiresMs = m_clock.nowMs() + m_options.ttlMs;
    // Audited before the code can be used: a code nobody knows was made must not work.
    if (auto ok = m_audit.record(actor, u"pairing.create"_s, u"user/"_s + issued.username, u"success"_s,
                                 {{u"pairing"_s, issued.id}, {u"expiresMs"_s, issued.expiresMs}});
        !ok)
        return std::unexpected(ok.error());
    QMutexLocker lock(&m_mutex);
    pruneLocked(m_clock.nowMs());
    while (m_open.size() >= m_options.maxOpen)
        m_open.removeFirst();
    m_open.append(Entry{issued.id, issued.username, digestOf(issued.secret), issued.expiresMs});
    return issued;
}

Result<RedeemedPairing> PairingBook::redeem(const QString &secret, const QString &deviceName,
                                            const QString &sourceAddress, const QString &requestId)
{
    const Actor anonymous{u"pairing"_s, sourceAddress.isEmpty() ? u"engine"_s : sourceAddress, requestId};
    const QString name = deviceName.trimmed().isEmpty() ? u"desktop"_s : deviceName.trimmed();
    if (name.size() > MaxDeviceNameLength)
        return fail(ErrorCode::Invalid, u"the device name has more than %1 characters"_s.arg(MaxDeviceNameLength),
                    u"name"_s);
    if (const qint64 wait = m_throttle.waitMs(sourceAddress, sourceAddress); wait > 0) {
        discardResult(m_audit.recordUnauthenticated(anonymous, u"pairing.failed"_s, u"pairing"_s,
                                                    {{u"reason"_s, u"throttled"_s}}),
                      "the refusal is the answer; a failing audit log must not replace it");
        return fail(ErrorCode::Unauthorized, u"too many failed pairing attempts"_s, u"token"_s,
                    u"try again in %1 s"_s.arg((wait + 999) / 1000));
    }

    std::optional<Entry> found;
    if (secret.startsWith(SecretPrefix) && secret.size() <= MaxPairingSecretLength) {
        const QByteArray digest = digestOf(secret);
        QMutexLocker lock(&m_mutex);
        const qint64 now = m_clock.nowMs();
        // Every open code is compared, whichever matches: the time does not depend on where.
        qsizetype match = -1;
        for (qsizetype i = 0; i < m_open.size(); ++i) {
            if (sameDigest(m_open[i].digest, digest))
                match = i;
        }
        if (match >= 0) {
            // Spent whether or not it is still in time: a code is tried once.
            Entry entry = m_open.takeAt(match);
            if (entry.expiresMs > now)
                found = std::move(entry);
        }
        pruneLocked(now);
    }
    if (!found) {
        m_throttle.recordFailure(sourceAddress, sourceAddress);
        discardResult(m_audit.recordUnauthenticated(anonymous, u"pairing.failed"_s, u"pairing"_s,
                                                    {{u"reason"_s, u"unknown, spent or expired code"_s}}),
                      "the refusal is the answer; a failing audit log must not replace it");
        return refused();
    }

    auto user = m_accounts.user(found->username);
    if (!user)
        return std::unexpected(user.error());
    const Actor actor{u"pairing:"_s + found->id, anonymous.source, requestId};
    auto token = m_accounts.createTokenLasting(found->username, u"paired: "_s + name, scopesFor(user->role),
                                               m_options.tokenLifetimeMs, actor);
    if (!token)
        return std::unexpected(token.error());
    if (auto ok = m_audit.record(actor, u"pairing.redeem"_s, u"user/"_s + found->username, u"success"_s,
                                 {{u"pairing"_s, found->id}, {u"token"_s, token->token.id}, {u"name"_s, name}});
        !ok) {
        discardResult(m_accounts.revokeToken(token->token.id, actor),
                      "the audit error is the answer; the caller never got the token");
        return std::unexpected(ok.error());
    }
    return RedeemedPairing{*token, found->username};
}

} // namespace pando::core::accounts
