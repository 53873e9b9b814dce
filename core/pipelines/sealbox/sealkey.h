#pragma once
// The keys sealbox seals with, and the key file they live in: 32 random bytes, nothing else,
// in a file outside the database that only its owner can read.

#include "adapters/api/error.h"

#include <QString>
#include <array>

namespace pando::core::pipelines {

class SealKey {
public:
    static constexpr int kSize = 32; // AES-256

    // 32 bytes from OpenSSL's CSPRNG.
    static Result<SealKey> generate();
    // Exactly 32 bytes, or an Invalid error that names the size (never the bytes).
    static Result<SealKey> fromBytes(QByteArrayView material);

    SealKey(const SealKey &other) = default;
    SealKey &operator=(const SealKey &other) = default;
    ~SealKey(); // wipes the material

    // 16 hex digits derived from the material (SHA-256 under a label): names the key in every
    // envelope it seals so a rotated key ring finds it, and reveals nothing usable about it.
    const QString &id() const { return m_id; }
    const unsigned char *material() const { return m_material.data(); }

private:
    SealKey() = default;
    std::array<unsigned char, kSize> m_material{};
    QString m_id;
};

// The key file: raw 32 bytes, mode 0600.
//
// create() makes a new one with O_CREAT|O_EXCL|O_NOFOLLOW (it never overwrites a key, never
// writes through a symlink), fsyncs it and its directory. load() refuses a symlink, anything but
// a regular file, a file group or others can read or write (a leaked key defeats the sealing:
// fix it with chmod 600), and a file of the wrong size. Errors name the path, never the content.
namespace keyfile {
Result<SealKey> create(const QString &path);
Result<SealKey> load(const QString &path);
// load() when the file exists, create() when it does not.
Result<SealKey> loadOrCreate(const QString &path);
} // namespace keyfile

} // namespace pando::core::pipelines
