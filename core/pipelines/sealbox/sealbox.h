#pragma once
// Package sealbox encrypts the secrets Pando keeps in its state database, so a copy of the
// database without the key file is worth nothing. AES-256-GCM through OpenSSL, a fresh random
// 96-bit nonce per seal, and associated data that binds each sealed value to the row it belongs
// to: a value copied into another secret's row does not open there.
//
// Envelope (text, safe in SQL, YAML and URLs):
//
//   pando-seal-v1:<key id, 16 hex>:<base64url, no padding, of nonce(12) | ciphertext | tag(16)>
//
// The associated data is "pando-seal-v1" NUL <key id> NUL <context>, so the version and key id
// in the header are authenticated too. The context is the caller's name for where the value
// lives; build it with SealBox::context({scope, name}) so "a/b"+"c" and "a"+"b/c" differ.
//
// Rotation: a SealBox holds a key ring, oldest first. It seals with the newest (the last) key
// and opens with whichever key the envelope names; needsReseal()/reseal() move old values to the
// newest key. Random nonces are safe for about 2^32 seals per key: rotate well before.
//
// Errors never contain plaintext or key bytes. Plaintext buffers sealbox allocates are wiped
// (OPENSSL_cleanse); the QByteArray open() returns belongs to the caller, who can wipe() it.
//
// Threading: a SealBox is immutable after construction; seal/open may run concurrently.

#include "adapters/api/error.h"
#include "core/pipelines/sealbox/sealkey.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <initializer_list>

namespace pando::core::pipelines {

class SealBox {
public:
    static constexpr int kNonceSize = 12;
    static constexpr int kTagSize = 16;
    static constexpr qsizetype kMaxPlaintext = 16 * 1024 * 1024;

    // keys: oldest first; the last one seals. An empty ring seals nothing and opens nothing.
    explicit SealBox(QList<SealKey> keys);

    Result<QString> seal(QByteArrayView plaintext, QByteArrayView context) const;
    Result<QByteArray> open(QStringView envelope, QByteArrayView context) const;

    // Whether the envelope was sealed with a key other than the newest one.
    bool needsReseal(QStringView envelope) const;
    // open() with the key that sealed it, seal() with the newest.
    Result<QString> reseal(QStringView envelope, QByteArrayView context) const;

    QString currentKeyId() const;
    QStringList keyIds() const;

    // Whether text looks like an envelope (any version), e.g. to refuse storing one unsealed.
    static bool isSealed(QStringView text);
    // The key id an envelope names, without opening it.
    static Result<QString> keyIdOf(QStringView envelope);
    // An unambiguous context from parts: each part length-prefixed, UTF-8.
    static QByteArray context(std::initializer_list<QString> parts);
    // Overwrites the array's bytes with zeros (this copy only: detach before you share it).
    static void wipe(QByteArray &bytes);

private:
    const SealKey *findKey(QStringView id) const;
    QList<SealKey> m_keys;
};

} // namespace pando::core::pipelines
