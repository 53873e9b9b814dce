#include "localidentity.h"

#include <QRandomGenerator>
#include <QRegularExpression>
#include <argon2.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::local {

namespace {

// 4 GiB of memory, 100 iterations, 64 lanes: beyond any sane setting, so a typo in a
// configuration file cannot make every login take minutes.
constexpr quint32 MaxMemoryKiB = 4u * 1024 * 1024;
constexpr quint32 MaxIterations = 100;
constexpr quint32 MaxLanes = 64;

Status checkPassword(const QByteArray &utf8)
{
    if (utf8.isEmpty())
        return fail(ErrorCode::Invalid, u"the password is empty"_s, u"password"_s);
    if (utf8.size() > LocalIdentity::MaxPasswordBytes)
        return fail(ErrorCode::Invalid, u"the password is longer than %1 bytes"_s.arg(LocalIdentity::MaxPasswordBytes),
                    u"password"_s);
    return {};
}

} // namespace

std::optional<Argon2Params> parseArgon2idParams(const QString &encodedHash)
{
    // $argon2id$v=19$m=19456,t=2,p=1$<salt b64>$<hash b64> (unpadded standard base64)
    static const QRegularExpression re(
        uR"(^\$argon2id\$v=(\d{1,3})\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,3})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$)"_s);
    const auto m = re.match(encodedHash);
    if (!m.hasMatch() || m.captured(1).toUInt() != ARGON2_VERSION_NUMBER)
        return std::nullopt;
    Argon2Params p;
    bool ok1 = false, ok2 = false, ok3 = false;
    p.memoryKiB = m.captured(2).toUInt(&ok1);
    p.iterations = m.captured(3).toUInt(&ok2);
    p.lanes = m.captured(4).toUInt(&ok3);
    if (!ok1 || !ok2 || !ok3)
        return std::nullopt;
    // Unpadded base64: 4 characters carry 3 bytes.
    p.saltBytes = quint32(m.capturedLength(5) * 3 / 4);
    p.hashBytes = quint32(m.capturedLength(6) * 3 / 4);
    return p;
}

Result<LocalIdentity> LocalIdentity::create(Argon2Params params)
{
    const Argon2Params floor = Argon2Params::minimum();
    if (params.memoryKiB < floor.memoryKiB || params.iterations < floor.iterations || params.lanes < floor.lanes ||
        params.saltBytes < floor.saltBytes || params.hashBytes < floor.hashBytes)
        return fail(ErrorCode::Invalid,
                    u"argon2id parameters m=%1 KiB, t=%2, p=%3 are below the minimum m=%4 KiB, t=%5, p=%6"_s.arg(
                        QString::number(params.memoryKiB), QString::number(params.iterations),
                        QString::number(params.lanes), QString::number(floor.memoryKiB),
                        QString::number(floor.iterations), QString::number(floor.lanes)),
                    u"identity.local"_s, u"raise them to at least OWASP's recommendation"_s);
    if (params.memoryKiB > MaxMemoryKiB || params.iterations > MaxIterations || params.lanes > MaxLanes ||
        params.saltBytes > 64 || params.hashBytes > 64)
        return fail(ErrorCode::Invalid,
                    u"argon2id parameters m=%1 KiB, t=%2, p=%3 are too large"_s.arg(QString::number(params.memoryKiB),
                                                                                    QString::number(params.iterations),
                                                                                    QString::number(params.lanes)),
                    u"identity.local"_s);
    // argon2 needs at least 8 KiB per lane.
    if (params.memoryKiB < 8 * params.lanes)
        return fail(ErrorCode::Invalid, u"argon2id needs at least 8 KiB of memory per lane"_s, u"identity.local"_s);
    return LocalIdentity(params);
}

QString LocalIdentity::kind() const
{
    return u"local"_s;
}

bool LocalIdentity::supportsPasswords() const
{
    return true;
}

Result<QString> LocalIdentity::hashPassword(const QString &password) const
{
    const QByteArray utf8 = password.toUtf8();
    if (auto ok = checkPassword(utf8); !ok)
        return std::unexpected(ok.error());
    QByteArray salt(qsizetype(m_params.saltBytes), Qt::Uninitialized);
    for (char &c : salt)
        c = char(QRandomGenerator::system()->bounded(256));
    const size_t length = argon2_encodedlen(m_params.iterations, m_params.memoryKiB, m_params.lanes, m_params.saltBytes,
                                            m_params.hashBytes, Argon2_id);
    QByteArray encoded(qsizetype(length), '\0');
    const int rc = argon2id_hash_encoded(m_params.iterations, m_params.memoryKiB, m_params.lanes, utf8.constData(),
                                         size_t(utf8.size()), salt.constData(), size_t(salt.size()), m_params.hashBytes,
                                         encoded.data(), length);
    if (rc != ARGON2_OK)
        return fail(ErrorCode::Internal, u"argon2id hashing failed: "_s + QString::fromLatin1(argon2_error_message(rc)),
                    u"identity.local"_s);
    return QString::fromLatin1(encoded.constData()); // stops at the terminating NUL
}

Result<PasswordCheck> LocalIdentity::verifyPassword(const QString &password, const QString &encodedHash) const
{
    const auto params = parseArgon2idParams(encodedHash);
    // Refuse before libargon2 allocates what a corrupted row might ask for.
    if (!params || params->memoryKiB > MaxMemoryKiB || params->iterations > MaxIterations || params->lanes > MaxLanes)
        return fail(ErrorCode::Invalid, u"the stored password hash is not an argon2id hash this adapter reads"_s,
                    u"identity.local"_s);
    const QByteArray utf8 = password.toUtf8();
    // An over-long password cannot match anything hashPassword made; checking the length
    // first gives nothing away that the limit itself does not.
    if (utf8.isEmpty() || utf8.size() > MaxPasswordBytes)
        return PasswordCheck{false, false};
    const QByteArray encoded = encodedHash.toLatin1();
    // argon2id_verify recomputes the hash and compares it in constant time (argon2_compare).
    const int rc = argon2id_verify(encoded.constData(), utf8.constData(), size_t(utf8.size()));
    if (rc == ARGON2_VERIFY_MISMATCH)
        return PasswordCheck{false, false};
    if (rc != ARGON2_OK)
        return fail(ErrorCode::Invalid,
                    u"checking the password hash failed: "_s + QString::fromLatin1(argon2_error_message(rc)),
                    u"identity.local"_s);
    return PasswordCheck{true, *params != m_params};
}

bool LocalIdentity::needsRehash(const QString &encodedHash) const
{
    const auto params = parseArgon2idParams(encodedHash);
    return !params || *params != m_params;
}

} // namespace pando::adapters::local
