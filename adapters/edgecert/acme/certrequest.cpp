#include "adapters/edgecert/acme/certrequest.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

using namespace Qt::StringLiterals;

namespace pando::adapters::edgecert {

namespace {

struct OpenSslFree {
    void operator()(EVP_PKEY *p) const { EVP_PKEY_free(p); }
    void operator()(X509_REQ *p) const { X509_REQ_free(p); }
    void operator()(BIO *p) const { BIO_free(p); }
    void operator()(STACK_OF(X509_EXTENSION) * p) const { sk_X509_EXTENSION_pop_free(p, X509_EXTENSION_free); }
};

} // namespace

Result<CertificateRequest> makeCertificateRequest(const QString &host)
{
    const auto failed = [&host](const char *step) {
        return fail(ErrorCode::Internal, u"OpenSSL could not %1 for %2"_s.arg(QLatin1String(step), host));
    };
    const QByteArray name = host.toLatin1();
    std::unique_ptr<EVP_PKEY, OpenSslFree> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    if (!key)
        return failed("make a P-256 key");
    std::unique_ptr<X509_REQ, OpenSslFree> request(X509_REQ_new());
    if (!request || X509_REQ_set_version(request.get(), 0) != 1 || X509_REQ_set_pubkey(request.get(), key.get()) != 1)
        return failed("start a certificate request");
    X509_NAME *subject = X509_REQ_get_subject_name(request.get());
    if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char *>(name.constData()), int(name.size()), -1,
                                   0) != 1)
        return failed("name the certificate request");
    const QByteArray san = "DNS:" + name;
    std::unique_ptr<STACK_OF(X509_EXTENSION), OpenSslFree> extensions(sk_X509_EXTENSION_new_null());
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, san.constData());
    if (!extensions || extension == nullptr || sk_X509_EXTENSION_push(extensions.get(), extension) == 0) {
        X509_EXTENSION_free(extension); // the stack did not take it
        return failed("add the subjectAltName");
    }
    if (X509_REQ_add_extensions(request.get(), extensions.get()) != 1 ||
        X509_REQ_sign(request.get(), key.get(), EVP_sha256()) <= 0)
        return failed("sign the certificate request");

    CertificateRequest out;
    unsigned char *der = nullptr;
    const int length = i2d_X509_REQ(request.get(), &der);
    if (length <= 0)
        return failed("encode the certificate request");
    out.csrDer = QByteArray(reinterpret_cast<const char *>(der), length);
    OPENSSL_free(der);
    std::unique_ptr<BIO, OpenSslFree> bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return failed("write the certificate's key");
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    out.keyPem = QByteArray(data, qsizetype(size));
    return out;
}

} // namespace pando::adapters::edgecert
