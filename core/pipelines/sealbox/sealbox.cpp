#include "core/pipelines/sealbox/sealbox.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <ranges>

namespace pando::core::pipelines {

namespace {

constexpr QLatin1StringView kVersion("pando-seal-v1");
constexpr QLatin1StringView kPrefix("pando-seal-");

struct CipherCtxFree {
    void operator()(EVP_CIPHER_CTX *ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

QByteArray associatedData(QStringView keyId, QByteArrayView context)
{
    QByteArray aad;
    aad.reserve(kVersion.size() + keyId.size() + context.size() + 2);
    aad.append(kVersion.data(), kVersion.size());
    aad.append('\0');
    aad.append(keyId.toLatin1());
    aad.append('\0');
    aad.append(context.data(), context.size());
    return aad;
}

struct Parsed {
    QString keyId;
    QByteArray blob; // nonce | ciphertext | tag
};

Result<Parsed> parse(QStringView envelope)
{
    const auto where = QStringLiteral("sealed value");
    if (!envelope.startsWith(kPrefix))
        return fail(ErrorCode::Invalid, QStringLiteral("is not a sealed value (no \"pando-seal-\" prefix)"), where);
    const qsizetype firstColon = envelope.indexOf(u':');
    if (firstColon < 0 || envelope.first(firstColon) != kVersion)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("uses an envelope version this build does not know: %1")
                        .arg(envelope.first(firstColon < 0 ? std::min<qsizetype>(envelope.size(), 24) : firstColon)),
                    where, QStringLiteral("a newer Pando sealed it; open it with that version"));
    const qsizetype secondColon = envelope.indexOf(u':', firstColon + 1);
    if (secondColon < 0)
        return fail(ErrorCode::Invalid, QStringLiteral("is truncated: no key id"), where);
    const QStringView keyId = envelope.sliced(firstColon + 1, secondColon - firstColon - 1);
    if (keyId.size() != 16 || !std::all_of(keyId.begin(), keyId.end(), [](QChar c) {
            return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f');
        }))
        return fail(ErrorCode::Invalid, QStringLiteral("has a malformed key id"), where);
    const QStringView body = envelope.sliced(secondColon + 1);
    for (QChar c : body) {
        const bool ok =
            (c >= u'A' && c <= u'Z') || (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9') || c == u'-' || c == u'_';
        if (!ok)
            return fail(ErrorCode::Invalid, QStringLiteral("has a character outside base64url in its body"), where);
    }
    auto decoded =
        QByteArray::fromBase64Encoding(body.toLatin1(), QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals |
                                                            QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return fail(ErrorCode::Invalid, QStringLiteral("has a body that is not valid base64url"), where);
    if (decoded.decoded.size() < SealBox::kNonceSize + SealBox::kTagSize)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("is truncated: %1 bytes, at least %2 needed")
                        .arg(decoded.decoded.size())
                        .arg(SealBox::kNonceSize + SealBox::kTagSize),
                    where);
    return Parsed{keyId.toString(), std::move(decoded.decoded)};
}

} // namespace

SealBox::SealBox(QList<SealKey> keys) : m_keys(std::move(keys))
{}

const SealKey *SealBox::findKey(QStringView id) const
{
    // Newest first: after a rotation most values name the newest key.
    for (const SealKey &key : std::views::reverse(m_keys)) {
        if (key.id() == id)
            return &key;
    }
    return nullptr;
}

QString SealBox::currentKeyId() const
{
    return m_keys.isEmpty() ? QString() : m_keys.last().id();
}

QStringList SealBox::keyIds() const
{
    QStringList ids;
    for (const SealKey &k : m_keys)
        ids << k.id();
    return ids;
}

Result<QString> SealBox::seal(QByteArrayView plaintext, QByteArrayView context) const
{
    if (m_keys.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("no sealing key is loaded"), QStringLiteral("sealbox"));
    if (plaintext.size() > kMaxPlaintext)
        return fail(
            ErrorCode::TooLarge,
            QStringLiteral("a secret of %1 bytes is over the %2-byte limit").arg(plaintext.size()).arg(kMaxPlaintext),
            QStringLiteral("sealbox"));
    const SealKey &key = m_keys.last();
    QByteArray blob(kNonceSize + plaintext.size() + kTagSize, Qt::Uninitialized);
    auto *nonce = reinterpret_cast<unsigned char *>(blob.data());
    auto *cipherOut = nonce + kNonceSize;
    if (RAND_bytes(nonce, kNonceSize) != 1)
        return fail(ErrorCode::Internal, QStringLiteral("OpenSSL's random generator failed to make a nonce"),
                    QStringLiteral("sealbox"));
    const QByteArray aad = associatedData(key.id(), context);
    CipherCtx ctx(EVP_CIPHER_CTX_new());
    int len = 0;
    int total = 0;
    bool ok = ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceSize, nullptr) == 1 &&
              EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.material(), nonce) == 1 &&
              EVP_EncryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char *>(aad.constData()),
                                int(aad.size())) == 1;
    if (ok && !plaintext.isEmpty()) {
        ok = EVP_EncryptUpdate(ctx.get(), cipherOut, &len, reinterpret_cast<const unsigned char *>(plaintext.data()),
                               int(plaintext.size())) == 1;
        total = len;
    }
    ok = ok && EVP_EncryptFinal_ex(ctx.get(), cipherOut + total, &len) == 1;
    total += ok ? len : 0;
    ok = ok && total == plaintext.size() &&
         EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagSize, cipherOut + total) == 1;
    if (!ok)
        return fail(ErrorCode::Internal, QStringLiteral("OpenSSL failed to seal the value"), QStringLiteral("sealbox"));
    return kVersion + u':' + key.id() + u':' +
           QString::fromLatin1(blob.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

Result<QByteArray> SealBox::open(QStringView envelope, QByteArrayView context) const
{
    auto parsed = parse(envelope);
    if (!parsed)
        return std::unexpected(parsed.error());
    const SealKey *key = findKey(parsed->keyId);
    if (!key)
        return fail(ErrorCode::NotFound,
                    QStringLiteral("was sealed with key %1, which is not among the loaded keys (%2)")
                        .arg(parsed->keyId, keyIds().join(QStringLiteral(", "))),
                    QStringLiteral("sealed value"),
                    QStringLiteral("load the key file that sealed it next to the current one"));
    const QByteArray &blob = parsed->blob;
    const auto *nonce = reinterpret_cast<const unsigned char *>(blob.constData());
    const auto *cipherIn = nonce + kNonceSize;
    const int cipherLen = int(blob.size()) - kNonceSize - kTagSize;
    const QByteArray aad = associatedData(parsed->keyId, context);
    // The tag is passed to OpenSSL through a non-const pointer; give it its own copy.
    std::array<unsigned char, kTagSize> tag{};
    std::memcpy(tag.data(), cipherIn + cipherLen, kTagSize);

    QByteArray plain(cipherLen, Qt::Uninitialized);
    auto *plainOut = reinterpret_cast<unsigned char *>(plain.data());
    CipherCtx ctx(EVP_CIPHER_CTX_new());
    int len = 0;
    int total = 0;
    bool ok = ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceSize, nullptr) == 1 &&
              EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key->material(), nonce) == 1 &&
              EVP_DecryptUpdate(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char *>(aad.constData()),
                                int(aad.size())) == 1;
    if (ok && cipherLen > 0) {
        ok = EVP_DecryptUpdate(ctx.get(), plainOut, &len, cipherIn, cipherLen) == 1;
        total = len;
    }
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagSize, tag.data()) == 1;
    // Final verifies the tag: nothing decrypted is used unless it returns 1.
    ok = ok && EVP_DecryptFinal_ex(ctx.get(), plainOut + total, &len) == 1;
    if (!ok) {
        wipe(plain);
        return fail(ErrorCode::Invalid,
                    QStringLiteral("does not authenticate: it was altered, belongs to another secret, or was sealed "
                                   "with a different key"),
                    QStringLiteral("sealed value"));
    }
    return plain;
}

bool SealBox::needsReseal(QStringView envelope) const
{
    auto id = keyIdOf(envelope);
    return id && *id != currentKeyId();
}

Result<QString> SealBox::reseal(QStringView envelope, QByteArrayView context) const
{
    auto plain = open(envelope, context);
    if (!plain)
        return std::unexpected(plain.error());
    auto sealed = seal(*plain, context);
    wipe(*plain);
    return sealed;
}

bool SealBox::isSealed(QStringView text)
{
    return text.startsWith(kPrefix);
}

Result<QString> SealBox::keyIdOf(QStringView envelope)
{
    auto parsed = parse(envelope);
    if (!parsed)
        return std::unexpected(parsed.error());
    return parsed->keyId;
}

QByteArray SealBox::context(std::initializer_list<QString> parts)
{
    QByteArray out;
    for (const QString &part : parts) {
        const QByteArray utf8 = part.toUtf8();
        out.append(QByteArray::number(utf8.size()));
        out.append(':');
        out.append(utf8);
    }
    return out;
}

void SealBox::wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty())
        OPENSSL_cleanse(bytes.data(), size_t(bytes.size()));
    bytes.clear();
}

} // namespace pando::core::pipelines
