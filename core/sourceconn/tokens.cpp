// What core/sourceconn holds in memory rather than in the database: GitHub App installation
// tokens (InstallationTokens), OAuth authorizations under way and the renewal locks
// (OAuthGrants), and the check of the loopback address an authorization comes back to.

#include "core/sourceconn/sourceconn.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::core::sourceconn {

Status checkRedirectUri(const QString &uri)
{
    const QUrl url(uri, QUrl::StrictMode);
    const QString host = url.host();
    const bool loopback = host == u"127.0.0.1"_s || host == u"::1"_s || host == u"localhost"_s;
    if (!url.isValid() || url.scheme() != u"http"_s || !loopback || url.port() <= 0 || !url.userInfo().isEmpty() ||
        url.hasFragment())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a loopback address to send the browser back to"_s.arg(uri.left(200)),
                    u"redirect_uri"_s,
                    u"give http://127.0.0.1:PORT/callback, where the CLI or the desktop listens for the forge's "
                    u"answer"_s);
    return {};
}

namespace {

QByteArray randomBase64Url(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->generate(raw.begin(), raw.end());
    return raw.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

} // namespace

void OAuthGrants::Pending::wipe()
{
    pipelines::SealBox::wipe(input.secret);
    pipelines::SealBox::wipe(verifier);
}

OAuthGrants::~OAuthGrants()
{
    for (Pending &pending : m_pending)
        pending.wipe();
}

void OAuthGrants::dropExpired(qint64 nowMs)
{
    for (auto it = m_pending.begin(); it != m_pending.end();) {
        if (it->expiresMs > nowMs) {
            ++it;
            continue;
        }
        it->wipe();
        it = m_pending.erase(it);
    }
}

OAuthGrants::Begun OAuthGrants::begin(Pending pending)
{
    const qint64 now = m_clock.nowMs();
    pending.verifier = randomBase64Url(48);
    pending.expiresMs = now + PendingTtlMs;
    Begun begun{QString::fromLatin1(randomBase64Url(32)),
                QString::fromLatin1(QCryptographicHash::hash(pending.verifier, QCryptographicHash::Sha256)
                                        .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals)),
                pending.expiresMs};
    QMutexLocker lock(&m_mutex);
    dropExpired(now);
    while (m_pending.size() >= MaxPending) {
        auto oldest = std::min_element(m_pending.begin(), m_pending.end(),
                                       [](const Pending &a, const Pending &b) { return a.expiresMs < b.expiresMs; });
        oldest->wipe();
        m_pending.erase(oldest);
    }
    m_pending.emplace(begun.state, std::move(pending));
    return begun;
}

Result<OAuthGrants::Pending> OAuthGrants::take(const QString &state, const QString &actor)
{
    QMutexLocker lock(&m_mutex);
    dropExpired(m_clock.nowMs());
    const auto it = m_pending.find(state);
    if (it == m_pending.end() || it->actor != actor)
        return fail(ErrorCode::NotFound,
                    u"no authorization of yours is waiting under this state: it was finished already, or began more "
                    u"than %1 minutes ago"_s.arg(PendingTtlMs / 60000),
                    u"state"_s, u"begin it again"_s);
    Pending pending = std::move(*it);
    m_pending.erase(it);
    return pending;
}

std::shared_ptr<QMutex> OAuthGrants::renewal(const QString &connection)
{
    QMutexLocker lock(&m_mutex);
    std::shared_ptr<QMutex> &held = m_renewals[connection];
    if (!held)
        held = std::make_shared<QMutex>();
    return held;
}

Result<QByteArray> InstallationTokens::token(const QString &connection, qint64 createdMs,
                                             const adapters::ForgeAppInstallation &app)
{
    std::shared_ptr<QMutex> minting;
    {
        QMutexLocker lock(&m_mutex);
        Held &held = m_held[connection];
        if (held.createdMs != createdMs)
            held = Held{createdMs, {}, std::make_shared<QMutex>()};
        minting = held.minting;
    }
    // One mint at a time per connection: callers that waited find the token it made.
    QMutexLocker mintLock(minting.get());
    const auto fresh = [&]() -> std::optional<QByteArray> {
        QMutexLocker lock(&m_mutex);
        const auto held = m_held.constFind(connection);
        if (held == m_held.cend() || held->createdMs != createdMs || held->token.token.isEmpty() ||
            held->token.expiresMs - RenewBeforeMs <= m_clock.nowMs())
            return std::nullopt;
        return held->token.token;
    };
    if (auto held = fresh())
        return *held;
    auto minted = m_mint(app);
    if (!minted)
        return std::unexpected(minted.error());
    QMutexLocker lock(&m_mutex);
    // Removed while it was minted: the token is handed out once and not kept.
    const auto held = m_held.find(connection);
    if (held != m_held.end() && held->createdMs == createdMs)
        held->token = *minted;
    return minted->token;
}

void InstallationTokens::forget(const QString &connection)
{
    QMutexLocker lock(&m_mutex);
    if (auto held = m_held.find(connection); held != m_held.end()) {
        pipelines::SealBox::wipe(held->token.token);
        m_held.erase(held);
    }
}

} // namespace pando::core::sourceconn
