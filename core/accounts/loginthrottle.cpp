#include "loginthrottle.h"

#include <QHostAddress>
#include <QMutexLocker>
#include <algorithm>

namespace pando::core::accounts {

namespace {
// Past this many keys the table drops the ones whose failures are forgiven anyway, so names
// and addresses an attacker makes up cannot grow it without bound.
constexpr qsizetype PruneAbove = 10000;
} // namespace

QString LoginThrottle::networkOf(const QString &address)
{
    QHostAddress host;
    if (!host.setAddress(address))
        return address.left(100);
    if (host.isLoopback())
        return QStringLiteral("loopback");
    bool v4 = false;
    const quint32 ip4 = host.toIPv4Address(&v4); // also for ::ffff:a.b.c.d
    if (v4)
        return QHostAddress(ip4 & 0xffffff00u).toString() + QStringLiteral("/24");
    Q_IPV6ADDR ip6 = host.toIPv6Address();
    for (int i = 8; i < 16; ++i)
        ip6[i] = 0;
    return QHostAddress(ip6).toString() + QStringLiteral("/64");
}

LoginThrottle::LoginThrottle(Clock &clock, ThrottlePolicy perAccount, ThrottlePolicy perAddress)
    : m_clock(clock), m_account(perAccount), m_address(perAddress)
{}

qint64 LoginThrottle::waitFor(const QHash<QString, Entry> &table, const QString &key, qint64 now) const
{
    const auto it = table.constFind(key);
    if (it == table.constEnd())
        return 0;
    return std::max<qint64>(0, it->lockedUntilMs - now);
}

qint64 LoginThrottle::waitMs(const QString &account, const QString &address) const
{
    QMutexLocker lock(&m_mutex);
    const qint64 now = m_clock.nowMs();
    return std::max(waitFor(m_accounts, account, now), waitFor(m_addresses, networkOf(address), now));
}

void LoginThrottle::fail(QHash<QString, Entry> &table, const QString &key, const ThrottlePolicy &policy, qint64 now)
{
    if (table.size() > PruneAbove)
        prune(table, policy, now);
    Entry &e = table[key];
    if (e.failures > 0 && now - e.lastFailureMs > policy.forgetAfterMs)
        e = Entry{};
    ++e.failures;
    e.lastFailureMs = now;
    const int over = e.failures - policy.freeFailures;
    if (over <= 0)
        return;
    // base * 2^(over-1), without overflowing the shift.
    qint64 delay = policy.baseDelayMs;
    for (int i = 1; i < over && delay < policy.maxDelayMs; ++i)
        delay *= 2;
    e.lockedUntilMs = now + std::min(delay, policy.maxDelayMs);
}

void LoginThrottle::prune(QHash<QString, Entry> &table, const ThrottlePolicy &policy, qint64 now)
{
    for (auto it = table.begin(); it != table.end();) {
        if (now - it->lastFailureMs > policy.forgetAfterMs && it->lockedUntilMs <= now)
            it = table.erase(it);
        else
            ++it;
    }
}

void LoginThrottle::recordFailure(const QString &account, const QString &address)
{
    QMutexLocker lock(&m_mutex);
    const qint64 now = m_clock.nowMs();
    fail(m_accounts, account, m_account, now);
    fail(m_addresses, networkOf(address), m_address, now);
}

void LoginThrottle::recordSuccess(const QString &account)
{
    QMutexLocker lock(&m_mutex);
    m_accounts.remove(account);
}

} // namespace pando::core::accounts
