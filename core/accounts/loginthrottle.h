#pragma once
// Slows down password guessing: failed logins are counted per account name and per source
// network (IPv4 /24, IPv6 /64, and all of loopback — 127/8 and ::1 — as one: an attacker on the
// machine, or with a block of addresses, gets no fresh count by rotating through them); past a few free failures each
// further one locks that key for a delay that doubles, up to a ceiling. Time comes from the clock seam, so tests move a
// ManualClock instead of sleeping. State is in memory: a restart forgets it, which costs an attacker a restart of the
// install per batch of guesses, not a way around the limit.
//
// Threading: every method may be called from any thread.

#include "core/common/clock.h"

#include <QHash>
#include <QMutex>
#include <QString>

namespace pando::core::accounts {

struct ThrottlePolicy {
    int freeFailures = 3;                  // failures before the first lock
    qint64 baseDelayMs = 1000;             // the first lock; doubles with each further failure
    qint64 maxDelayMs = 15 * 60 * 1000;    // the longest lock
    qint64 forgetAfterMs = 60 * 60 * 1000; // failures this old (since the last one) are forgiven
};

class LoginThrottle {
public:
    LoginThrottle(Clock &clock, ThrottlePolicy perAccount, ThrottlePolicy perAddress);

    // The key failures from address are counted under: "loopback", "10.1.2.0/24",
    // "2001:db8::/64", or the text itself when it is no address.
    static QString networkOf(const QString &address);
    // How long logins for this account or from this address's network must still wait; 0 when
    // they may go ahead.
    qint64 waitMs(const QString &account, const QString &address) const;
    void recordFailure(const QString &account, const QString &address);
    // Forgives the account's failures. The address keeps its count: a guesser with an account
    // of their own must not be able to reset it by logging in.
    void recordSuccess(const QString &account);

private:
    struct Entry {
        int failures = 0;
        qint64 lastFailureMs = 0;
        qint64 lockedUntilMs = 0;
    };
    qint64 waitFor(const QHash<QString, Entry> &table, const QString &key, qint64 now) const;
    void fail(QHash<QString, Entry> &table, const QString &key, const ThrottlePolicy &policy, qint64 now);
    void prune(QHash<QString, Entry> &table, const ThrottlePolicy &policy, qint64 now);

    Clock &m_clock;
    ThrottlePolicy m_account, m_address;
    mutable QMutex m_mutex;
    QHash<QString, Entry> m_accounts, m_addresses;
};

} // namespace pando::core::accounts
