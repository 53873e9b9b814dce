#include "core/assertion/keyring.h"

#include "core/accounts/tokenkey.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pando::core::assertion {

namespace {

Result<SigningKey> newKey(qint64 nowMs)
{
    auto key = adapters::jose::EcKey::generate();
    if (!key)
        return std::unexpected(key.error());
    return SigningKey{key->thumbprint(), nowMs, 0, *key};
}

} // namespace

KeyRing::KeyRing(QString path, Clock &clock, KeyRingOptions options)
    : m_path(std::move(path)), m_clock(clock), m_options(options)
{}

Status KeyRing::open()
{
    QMutexLocker lock(&m_mutex);
    QFile file(m_path);
    if (!file.exists()) {
        auto first = newKey(m_clock.nowMs());
        if (!first)
            return std::unexpected(first.error());
        if (auto saved = save({*first}); !saved)
            return saved;
        m_keys = {*first};
        m_open = true;
        return {};
    }
    const QString hint = QStringLiteral("restore it from a backup, or remove it to start with a new key (apps then "
                                        "refuse assertions signed before, which live a minute at most)");
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Internal, QStringLiteral("cannot read the assertion keys: %1").arg(file.errorString()),
                    m_path);
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(qint64(1024) * 1024), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return fail(ErrorCode::Internal, QStringLiteral("the assertion keys are not JSON"), m_path, hint);
    QList<SigningKey> keys;
    const QJsonArray list = doc.object().value(QStringLiteral("keys")).toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QJsonObject entry = list.at(i).toObject();
        auto key = adapters::jose::EcKey::fromPem(entry.value(QStringLiteral("pem")).toString().toLatin1());
        if (!key)
            return fail(ErrorCode::Internal, QStringLiteral("key %1 %2").arg(i).arg(key.error().message), m_path, hint);
        keys.append(SigningKey{key->thumbprint(), qint64(entry.value(QStringLiteral("created_ms")).toDouble()),
                               qint64(entry.value(QStringLiteral("retired_ms")).toDouble()), *key});
    }
    if (keys.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("the assertion key file holds no key"), m_path, hint);
    std::stable_sort(keys.begin(), keys.end(),
                     [](const SigningKey &a, const SigningKey &b) { return a.createdMs > b.createdMs; });
    m_keys = keys;
    m_open = true;
    return {};
}

Status KeyRing::save(const QList<SigningKey> &keys)
{
    QJsonArray list;
    for (const SigningKey &key : keys)
        list.append(QJsonObject{{QStringLiteral("kid"), key.kid},
                                {QStringLiteral("created_ms"), key.createdMs},
                                {QStringLiteral("retired_ms"), key.retiredMs},
                                {QStringLiteral("pem"), QString::fromLatin1(key.key.privatePem())}});
    const QByteArray text = QJsonDocument(QJsonObject{{QStringLiteral("keys"), list}}).toJson();
    // Written whole beside it and renamed over it: a crash leaves the old ring or the new one.
    const QString temporary = m_path + QStringLiteral(".new");
    if (auto written = core::detail::writePrivateFile(temporary, text); !written)
        return written;
    if (::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(m_path).constData()) != 0)
        return fail(
            ErrorCode::Internal,
            QStringLiteral("cannot replace the assertion keys: %1").arg(QString::fromLocal8Bit(strerror(errno))),
            m_path);
    return {};
}

Status KeyRing::rotateIfDue(bool force)
{
    if (!m_open)
        return fail(ErrorCode::Unavailable, QStringLiteral("the assertion keys are not open"), m_path);
    const qint64 now = m_clock.nowMs();
    QList<SigningKey> keys = m_keys;
    bool changed = false;
    if (force || now - keys.constFirst().createdMs >= m_options.rotateAfterMs) {
        auto next = newKey(now);
        if (!next)
            return std::unexpected(next.error());
        keys.first().retiredMs = now;
        keys.prepend(*next);
        changed = true;
    }
    // A retired key verifies until the last assertion it signed has expired, plus the margin.
    const qint64 keptFor = m_options.assertionTtlMs + m_options.marginMs;
    const qsizetype before = keys.size();
    keys.removeIf([&](const SigningKey &key) { return key.retiredMs > 0 && now - key.retiredMs > keptFor; });
    changed = changed || keys.size() != before;
    if (!changed)
        return {};
    if (auto saved = save(keys); !saved)
        return saved;
    m_keys = keys;
    return {};
}

Result<SigningKey> KeyRing::signingKey()
{
    QMutexLocker lock(&m_mutex);
    if (auto rotated = rotateIfDue(false); !rotated) {
        // The key that signs is still good for a while: apps keep working while the disk is full.
        if (!m_open)
            return std::unexpected(rotated.error());
        qWarning("assertion: rotating the signing key failed, the current one goes on signing: %s",
                 qPrintable(rotated.error().text()));
    }
    return m_keys.constFirst();
}

Result<QList<SigningKey>> KeyRing::publishedKeys()
{
    QMutexLocker lock(&m_mutex);
    if (auto rotated = rotateIfDue(false); !rotated)
        return std::unexpected(rotated.error());
    return m_keys;
}

Result<SigningKey> KeyRing::rotate()
{
    QMutexLocker lock(&m_mutex);
    if (auto rotated = rotateIfDue(true); !rotated)
        return std::unexpected(rotated.error());
    return m_keys.constFirst();
}

} // namespace pando::core::assertion
