#include "adapters/api/jose/rs256.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>

namespace pando::adapters::jose {

namespace {

struct BioFree {
    void operator()(BIO *bio) const { BIO_free(bio); }
};
struct MdCtxFree {
    void operator()(EVP_MD_CTX *ctx) const { EVP_MD_CTX_free(ctx); }
};

// A passphrase callback that offers none: an encrypted key fails to read instead of prompting
// on the terminal, as OpenSSL's default callback would.
int noPassphrase(char *, int, int, void *)
{
    return -1;
}

} // namespace

Result<RsaKey> RsaKey::fromPem(const QByteArray &pem)
{
    const QByteArray text = pem.trimmed();
    if (text.contains("ENCRYPTED"))
        return fail(ErrorCode::Invalid, QStringLiteral("the private key is protected by a passphrase; it is used "
                                                       "unattended, so it must have none"));
    std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(text.constData(), int(text.size())));
    EVP_PKEY *raw = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, noPassphrase, nullptr) : nullptr;
    if (raw == nullptr)
        return fail(ErrorCode::Invalid, text.startsWith("-----BEGIN")
                                            ? QStringLiteral("the PEM private key is damaged or cut short")
                                            : QStringLiteral("is not a PEM private key (-----BEGIN RSA PRIVATE "
                                                             "KEY----- …)"));
    RsaKey key;
    key.m_key.reset(raw, EVP_PKEY_free);
    if (EVP_PKEY_get_base_id(raw) != EVP_PKEY_RSA)
        return fail(ErrorCode::Invalid, QStringLiteral("is a %1 key; RS256 needs an RSA key")
                                            .arg(QString::fromLatin1(OBJ_nid2sn(EVP_PKEY_get_base_id(raw)))));
    if (key.bits() < MinimumBits)
        return fail(
            ErrorCode::Invalid,
            QStringLiteral("the RSA key has %1 bits; RS256 needs at least %2").arg(key.bits()).arg(MinimumBits));
    return key;
}

int RsaKey::bits() const
{
    return m_key ? EVP_PKEY_get_bits(m_key.get()) : 0;
}

QByteArray RsaKey::sign(QByteArrayView data) const
{
    if (!m_key)
        return {};
    std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
    size_t length = 0;
    const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &length, bytes, size_t(data.size())) != 1)
        return {};
    QByteArray signature(qsizetype(length), '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char *>(signature.data()), &length, bytes,
                       size_t(data.size())) != 1)
        return {};
    signature.truncate(qsizetype(length));
    return signature;
}

bool RsaKey::verify(QByteArrayView data, QByteArrayView signature) const
{
    if (!m_key)
        return false;
    std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
    return ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) == 1 &&
           EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char *>(signature.data()),
                            size_t(signature.size()), reinterpret_cast<const unsigned char *>(data.data()),
                            size_t(data.size())) == 1;
}

} // namespace pando::adapters::jose
