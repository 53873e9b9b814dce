#pragma once
// The local identity adapter: usernames and passwords checked against argon2id hashes (through
// libargon2) that core keeps in its users table. Parameters default to OWASP's minimum for
// argon2id (19 MiB of memory, 2 iterations, 1 lane) and may only be raised; hashes made with
// other parameters still verify and report that they need rehashing.

#include "adapters/api/identity.h"

#include <QtGlobal>
#include <optional>

namespace pando::adapters::local {

struct Argon2Params {
    quint32 memoryKiB = 19 * 1024;
    quint32 iterations = 2;
    quint32 lanes = 1;
    quint32 saltBytes = 16;
    quint32 hashBytes = 32;

    // OWASP's floor: anything weaker is refused by LocalIdentity::create().
    static Argon2Params minimum() { return {}; }
    bool operator==(const Argon2Params &) const = default;
};

class LocalIdentity final : public IdentityProvider {
public:
    // Refuses parameters below Argon2Params::minimum() (or absurdly large ones) with Invalid.
    static Result<LocalIdentity> create(Argon2Params params = {});

    // Longest password accepted, in UTF-8 bytes: long enough for any passphrase, short enough
    // that nobody makes the server hash megabytes.
    static constexpr int MaxPasswordBytes = 1024;

    QString kind() const override;
    bool supportsPasswords() const override;
    Result<QString> hashPassword(const QString &password) const override;
    Result<PasswordCheck> verifyPassword(const QString &password, const QString &encodedHash) const override;
    bool needsRehash(const QString &encodedHash) const override;

    const Argon2Params &params() const { return m_params; }

private:
    explicit LocalIdentity(Argon2Params params) : m_params(params) {}
    Argon2Params m_params;
};

// The parameters an encoded argon2id hash names; nullopt when it is not one.
std::optional<Argon2Params> parseArgon2idParams(const QString &encodedHash);

} // namespace pando::adapters::local
