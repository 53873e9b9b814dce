#include "adapters/api/jose/es256.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QStringList>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

namespace pando::adapters::jose {

namespace {

constexpr int CoordinateBytes = 32;

// One deleter for each OpenSSL type, by its free function.
template<auto Free> struct Deleter {
    template<class T> void operator()(T *object) const { Free(object); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using SigPtr = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX_free>>;
using ParamPtr = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM_free>>;
using ParamBldPtr = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD_free>>;

bool isP256(EVP_PKEY *key)
{
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC)
        return false;
    char group[64] = {};
    size_t length = 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1)
        return false;
    return QByteArrayView(group, qsizetype(length)) == "prime256v1" ||
           QByteArrayView(group, qsizetype(length)) == "P-256";
}

// A big number as exactly 32 big-endian bytes (left-padded), as JWK and JWS want it.
QByteArray fixedBytes(const BIGNUM *bn)
{
    QByteArray out(CoordinateBytes, '\0');
    if (BN_bn2binpad(bn, reinterpret_cast<unsigned char *>(out.data()), CoordinateBytes) != CoordinateBytes)
        return {};
    return out;
}

QByteArray coordinate(EVP_PKEY *key, const char *name)
{
    BIGNUM *raw = nullptr;
    if (EVP_PKEY_get_bn_param(key, name, &raw) != 1)
        return {};
    BnPtr bn(raw);
    return fixedBytes(bn.get());
}

} // namespace

QByteArray base64Url(QByteArrayView bytes)
{
    return bytes.toByteArray().toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

std::optional<QByteArray> fromBase64Url(QByteArrayView text)
{
    auto decoded = QByteArray::fromBase64Encoding(text.toByteArray(), QByteArray::Base64UrlEncoding |
                                                                          QByteArray::OmitTrailingEquals |
                                                                          QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || text.contains('='))
        return std::nullopt;
    return decoded.decoded;
}

QString jwkThumbprint(const QJsonObject &jwk)
{
    const QString kty = jwk.value(QStringLiteral("kty")).toString();
    QStringList members;
    if (kty == QLatin1String("EC"))
        members = {QStringLiteral("crv"), QStringLiteral("kty"), QStringLiteral("x"), QStringLiteral("y")};
    else if (kty == QLatin1String("RSA"))
        members = {QStringLiteral("e"), QStringLiteral("kty"), QStringLiteral("n")};
    else if (kty == QLatin1String("oct"))
        members = {QStringLiteral("k"), QStringLiteral("kty")};
    else
        return {};
    // The members' values are base64url or fixed names: none needs escaping, so the canonical
    // form is written out rather than trusting a serializer's member order.
    QByteArray canonical = "{";
    for (const QString &member : std::as_const(members)) {
        const QJsonValue value = jwk.value(member);
        if (!value.isString() || value.toString().isEmpty())
            return {};
        if (canonical.size() > 1)
            canonical += ',';
        canonical += '"' + member.toLatin1() + "\":\"" + value.toString().toUtf8() + '"';
    }
    canonical += '}';
    return QString::fromLatin1(base64Url(QCryptographicHash::hash(canonical, QCryptographicHash::Sha256)));
}

Result<EcKey> EcKey::generate()
{
    EVP_PKEY *raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    if (raw == nullptr)
        return fail(ErrorCode::Internal, QStringLiteral("OpenSSL could not make a P-256 key"));
    EcKey key;
    key.m_key.reset(raw, EVP_PKEY_free);
    key.m_private = true;
    return key;
}

Result<EcKey> EcKey::fromPem(const QByteArray &pem)
{
    BioPtr bio(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    EVP_PKEY *raw = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
    if (raw == nullptr)
        return fail(ErrorCode::Invalid, QStringLiteral("is not a PEM private key"));
    EcKey key;
    key.m_key.reset(raw, EVP_PKEY_free);
    key.m_private = true;
    if (!isP256(raw))
        return fail(ErrorCode::Invalid, QStringLiteral("is not a P-256 key"));
    return key;
}

Result<EcKey> EcKey::fromJwk(const QJsonObject &jwk)
{
    if (jwk.value(QStringLiteral("kty")).toString() != QLatin1String("EC"))
        return fail(ErrorCode::Invalid, QStringLiteral("must be \"EC\""), QStringLiteral("kty"));
    if (jwk.value(QStringLiteral("crv")).toString() != QLatin1String("P-256"))
        return fail(ErrorCode::Invalid, QStringLiteral("must be \"P-256\""), QStringLiteral("crv"));
    QByteArray point("\x04", 1); // uncompressed: 04 || x || y
    for (const char *name : {"x", "y"}) {
        const auto bytes = fromBase64Url(jwk.value(QLatin1String(name)).toString().toLatin1());
        if (!bytes || bytes->size() != CoordinateBytes)
            return fail(ErrorCode::Invalid, QStringLiteral("must be 32 bytes in base64url"), QLatin1String(name));
        point += *bytes;
    }
    ParamBldPtr bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.constData(), size_t(point.size())) !=
            1)
        return fail(ErrorCode::Internal, QStringLiteral("OpenSSL could not take the key's parameters"));
    ParamPtr params(OSSL_PARAM_BLD_to_param(bld.get()));
    PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    EVP_PKEY *raw = nullptr;
    // fromdata checks that the point is on the curve: a point off it is refused here.
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1 || raw == nullptr)
        return fail(ErrorCode::Invalid, QStringLiteral("is not a point on P-256"), QStringLiteral("x, y"));
    EcKey key;
    key.m_key.reset(raw, EVP_PKEY_free);
    PkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, raw, nullptr));
    if (!check || EVP_PKEY_public_check(check.get()) != 1)
        return fail(ErrorCode::Invalid, QStringLiteral("is not a point on P-256"), QStringLiteral("x, y"));
    return key;
}

QByteArray EcKey::privatePem() const
{
    if (!m_key || !m_private)
        return {};
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), m_key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return {};
    char *data = nullptr;
    const long length = BIO_get_mem_data(bio.get(), &data);
    return {data, qsizetype(length)};
}

QJsonObject EcKey::publicJwk() const
{
    if (!m_key)
        return {};
    return QJsonObject{
        {QStringLiteral("kty"), QStringLiteral("EC")},
        {QStringLiteral("crv"), QStringLiteral("P-256")},
        {QStringLiteral("x"), QString::fromLatin1(base64Url(coordinate(m_key.get(), OSSL_PKEY_PARAM_EC_PUB_X)))},
        {QStringLiteral("y"), QString::fromLatin1(base64Url(coordinate(m_key.get(), OSSL_PKEY_PARAM_EC_PUB_Y)))}};
}

QString EcKey::thumbprint() const
{
    return jwkThumbprint(publicJwk());
}

QByteArray EcKey::sign(QByteArrayView data) const
{
    if (!m_key || !m_private)
        return {};
    MdCtxPtr ctx(EVP_MD_CTX_new());
    size_t length = 0;
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &length, reinterpret_cast<const unsigned char *>(data.data()),
                       size_t(data.size())) != 1)
        return {};
    QByteArray der(qsizetype(length), '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char *>(der.data()), &length,
                       reinterpret_cast<const unsigned char *>(data.data()), size_t(data.size())) != 1)
        return {};
    // OpenSSL gives DER (SEQUENCE of two INTEGERs); JWS wants r and s as 32 bytes each.
    const auto *cursor = reinterpret_cast<const unsigned char *>(der.constData());
    SigPtr sig(d2i_ECDSA_SIG(nullptr, &cursor, long(length)));
    if (!sig)
        return {};
    const BIGNUM *r = nullptr;
    const BIGNUM *s = nullptr;
    ECDSA_SIG_get0(sig.get(), &r, &s);
    const QByteArray rs = fixedBytes(r) + fixedBytes(s);
    return rs.size() == qsizetype(2) * CoordinateBytes ? rs : QByteArray();
}

bool EcKey::verify(QByteArrayView data, QByteArrayView signature) const
{
    if (!m_key || signature.size() != qsizetype(2) * CoordinateBytes)
        return false;
    SigPtr sig(ECDSA_SIG_new());
    BIGNUM *r = BN_bin2bn(reinterpret_cast<const unsigned char *>(signature.data()), CoordinateBytes, nullptr);
    BIGNUM *s = BN_bin2bn(reinterpret_cast<const unsigned char *>(signature.data()) + CoordinateBytes, CoordinateBytes,
                          nullptr);
    if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
        BN_free(r);
        BN_free(s);
        return false;
    }
    unsigned char *der = nullptr;
    const int derLength = i2d_ECDSA_SIG(sig.get(), &der);
    if (derLength <= 0)
        return false;
    MdCtxPtr ctx(EVP_MD_CTX_new());
    const bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) == 1 &&
                    EVP_DigestVerify(ctx.get(), der, size_t(derLength),
                                     reinterpret_cast<const unsigned char *>(data.data()), size_t(data.size())) == 1;
    OPENSSL_free(der);
    return ok;
}

} // namespace pando::adapters::jose
