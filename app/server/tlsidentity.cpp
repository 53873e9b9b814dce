#include "tlsidentity.h"

#include "core/accounts/tokenkey.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QHostAddress>
#include <QSslCertificateExtension>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

using namespace Qt::StringLiterals;

namespace pando::server {

namespace {

constexpr int ValidDays = 5 * 365;

template<typename T, void (*Free)(T *)> struct Deleter {
    void operator()(T *p) const { Free(p); }
};
using PKey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Ext = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

QString openSslError()
{
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0)
        return u"no detail from OpenSSL"_s;
    char text[256] = {};
    ERR_error_string_n(code, text, sizeof text);
    return QString::fromLatin1(text);
}

std::unexpected<Error> sslFailure(const QString &what)
{
    return fail(ErrorCode::Internal, u"cannot %1: %2"_s.arg(what, openSslError()), u"tls"_s);
}

QByteArray bioBytes(BIO *bio)
{
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    return {data, qsizetype(size)};
}

QStringList wantedNames(const QStringList &hostNames)
{
    QStringList names{u"localhost"_s, u"127.0.0.1"_s};
    for (const QString &name : hostNames) {
        const QString trimmed = name.trimmed().toLower();
        if (!trimmed.isEmpty() && !names.contains(trimmed))
            names.append(trimmed);
    }
    return names;
}

// "DNS:localhost,IP:127.0.0.1,…" for OpenSSL's config syntax.
Result<QByteArray> subjectAltNames(const QStringList &names)
{
    QStringList entries;
    for (const QString &name : names) {
        const QHostAddress address(name);
        if (!address.isNull()) {
            entries.append(u"IP:"_s + address.toString());
            continue;
        }
        for (const QChar c : name) {
            if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != u'-' && c != u'.')
                return fail(ErrorCode::Invalid, u"\"%1\" is neither a host name nor an IP address"_s.arg(name.left(80)),
                            u"hostNames"_s, u"use letters, digits, '-' and '.' for a host name"_s);
        }
        entries.append(u"DNS:"_s + name);
    }
    return entries.join(u',').toLatin1();
}

Status addExtension(X509 *cert, int nid, const QByteArray &value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
    Ext ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.constData()));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
        return sslFailure(u"add the certificate extension %1"_s.arg(QString::fromLatin1(OBJ_nid2sn(nid))));
    return {};
}

struct Pem {
    QByteArray certificate;
    QByteArray key;
};

Result<Pem> generate(const QStringList &names)
{
    auto san = subjectAltNames(names);
    if (!san)
        return std::unexpected(san.error());
    PKey key(EVP_EC_gen("P-256"));
    if (!key)
        return sslFailure(u"generate an EC P-256 key"_s);
    X509Ptr cert(X509_new());
    if (!cert || X509_set_version(cert.get(), 2) != 1)
        return sslFailure(u"make a certificate"_s);
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1)
        return sslFailure(u"make a serial number"_s);
    serial[0] &= 0x7f; // positive
    std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> bn(BN_bin2bn(serial, sizeof serial, nullptr));
    if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())))
        return sslFailure(u"set the serial number"_s);
    // A day back, so a teammate's clock a little behind still accepts it.
    if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), -24L * 3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert.get()), long(ValidDays) * 24 * 3600))
        return sslFailure(u"set the validity"_s);
    X509_NAME *subject = X509_get_subject_name(cert.get());
    const QByteArray commonName = u"Pando embedded server (%1)"_s.arg(names.value(2, names.first())).toUtf8();
    if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char *>(commonName.constData()), -1, -1, 0) != 1 ||
        X509_set_issuer_name(cert.get(), subject) != 1 || X509_set_pubkey(cert.get(), key.get()) != 1)
        return sslFailure(u"set the subject"_s);
    for (const auto &[nid, value] :
         {std::pair{NID_basic_constraints, QByteArray("critical,CA:FALSE")},
          std::pair{NID_key_usage, QByteArray("critical,digitalSignature")},
          std::pair{NID_ext_key_usage, QByteArray("serverAuth")}, std::pair{NID_subject_alt_name, *san}}) {
        if (auto ok = addExtension(cert.get(), nid, value); !ok)
            return std::unexpected(ok.error());
    }
    if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0)
        return sslFailure(u"sign the certificate"_s);

    Bio certBio(BIO_new(BIO_s_mem()));
    Bio keyBio(BIO_new(BIO_s_mem()));
    if (!certBio || !keyBio || PEM_write_bio_X509(certBio.get(), cert.get()) != 1 ||
        PEM_write_bio_PrivateKey(keyBio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return sslFailure(u"write the certificate as PEM"_s);
    return Pem{bioBytes(certBio.get()), bioBytes(keyBio.get())};
}

QStringList certificateNames(const QSslCertificate &certificate)
{
    QStringList names;
    const auto alternates = certificate.subjectAlternativeNames();
    for (auto it = alternates.cbegin(); it != alternates.cend(); ++it)
        names.append(it.key() == QSsl::IpAddressEntry ? QHostAddress(it.value()).toString() : it.value().toLower());
    return names;
}

// Whether the PEM key is the private half of the PEM certificate's public key.
bool keyMatches(const QByteArray &certPem, const QByteArray &keyPem)
{
    Bio certBio(BIO_new_mem_buf(certPem.constData(), int(certPem.size())));
    Bio keyBio(BIO_new_mem_buf(keyPem.constData(), int(keyPem.size())));
    if (!certBio || !keyBio)
        return false;
    X509Ptr cert(PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr));
    PKey key(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr));
    const bool matches = cert && key && X509_check_private_key(cert.get(), key.get()) == 1;
    ERR_clear_error();
    return matches;
}

// The loaded pair, or nullopt when it must be made anew.
std::optional<TlsIdentity> loadExisting(const QString &certPath, const QString &keyPath, const QStringList &names)
{
    QFile certFile(certPath);
    QFile keyFile(keyPath);
    if (!certFile.open(QIODevice::ReadOnly) || !keyFile.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray certPem = certFile.readAll();
    const QByteArray keyPem = keyFile.readAll();
    if (!keyMatches(certPem, keyPem))
        return std::nullopt;
    const QList<QSslCertificate> certs = QSslCertificate::fromData(certPem, QSsl::Pem);
    const QSslKey key(keyPem, QSsl::Ec, QSsl::Pem, QSsl::PrivateKey);
    if (certs.isEmpty() || key.isNull())
        return std::nullopt;
    const QSslCertificate &cert = certs.first();
    if (cert.expiryDate() <= QDateTime::currentDateTimeUtc().addDays(1))
        return std::nullopt;
    const QStringList present = certificateNames(cert);
    for (const QString &name : names) {
        const QHostAddress address(name);
        if (!present.contains(address.isNull() ? name : address.toString()))
            return std::nullopt;
    }
    return TlsIdentity{cert, key, certificateFingerprint(cert), certPath, keyPath, false};
}

} // namespace

QString certificateFingerprint(const QSslCertificate &certificate)
{
    return QString::fromLatin1(certificate.digest(QCryptographicHash::Sha256).toHex());
}

QString normalizeFingerprint(const QString &text)
{
    QString hex;
    for (const QChar c : text) {
        if (c == u':' || c == u' ' || c == u'-')
            continue;
        hex.append(c.toLower());
    }
    if (hex.size() != 64)
        return {};
    for (const QChar c : hex) {
        if (!((c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f')))
            return {};
    }
    return hex;
}

Result<TlsIdentity> loadTlsIdentity(const QString &certificatePath, const QString &keyPath)
{
    QFile certFile(certificatePath);
    if (!certFile.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the certificate: %1"_s.arg(certFile.errorString()),
                    certificatePath);
    QFile keyFile(keyPath);
    if (!keyFile.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the private key: %1"_s.arg(keyFile.errorString()), keyPath);
    const QByteArray certPem = certFile.readAll();
    const QByteArray keyPem = keyFile.readAll();
    const QList<QSslCertificate> certs = QSslCertificate::fromData(certPem, QSsl::Pem);
    if (certs.isEmpty())
        return fail(ErrorCode::Invalid, u"not a PEM certificate"_s, certificatePath);
    if (!keyMatches(certPem, keyPem))
        return fail(ErrorCode::Invalid, u"not the private key of %1"_s.arg(certificatePath), keyPath,
                    u"give the key the certificate was made for, in PEM"_s);
    QSslKey key;
    for (const QSsl::KeyAlgorithm algorithm : {QSsl::Rsa, QSsl::Ec, QSsl::Dsa}) {
        key = QSslKey(keyPem, algorithm, QSsl::Pem, QSsl::PrivateKey);
        if (!key.isNull())
            break;
    }
    if (key.isNull())
        return fail(ErrorCode::Invalid, u"the private key is neither RSA, EC nor DSA, or is encrypted"_s, keyPath);
    return TlsIdentity{certs.first(), key, certificateFingerprint(certs.first()), certificatePath, keyPath, false};
}

Result<TlsIdentity> loadOrCreateTlsIdentity(const QString &dir, const QStringList &hostNames)
{
    const QStringList names = wantedNames(hostNames);
    if (!QDir().mkpath(dir))
        return fail(ErrorCode::Internal, u"cannot create the directory %1"_s.arg(dir), u"tls"_s);
    const QString certPath = QDir(dir).filePath(u"server.crt"_s);
    const QString keyPath = QDir(dir).filePath(u"server.key"_s);
    if (auto existing = loadExisting(certPath, keyPath, names)) {
        // A key someone made readable to others is made private again.
        QFile::setPermissions(keyPath, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        return *existing;
    }
    auto pem = generate(names);
    if (!pem)
        return std::unexpected(pem.error());
    // The key first: a certificate without its key is useless, the other way round it is redone.
    if (auto ok = core::detail::writePrivateFile(keyPath, pem->key); !ok)
        return std::unexpected(ok.error());
    QFile certFile(certPath);
    if (!certFile.open(QIODevice::WriteOnly | QIODevice::Truncate) || certFile.write(pem->certificate) < 0)
        return fail(ErrorCode::Internal, u"cannot write %1: %2"_s.arg(certPath, certFile.errorString()), u"tls"_s);
    certFile.close();
    const QList<QSslCertificate> certs = QSslCertificate::fromData(pem->certificate, QSsl::Pem);
    const QSslKey key(pem->key, QSsl::Ec, QSsl::Pem, QSsl::PrivateKey);
    if (certs.isEmpty() || key.isNull())
        return fail(ErrorCode::Internal, u"the certificate just made cannot be read back"_s, certPath);
    return TlsIdentity{certs.first(), key, certificateFingerprint(certs.first()), certPath, keyPath, true};
}

} // namespace pando::server
