// The JOSE pieces of Pando's ACME client without a CA: RFC 7638's published thumbprint, the
// key authorization a challenge answers with, the JWS every request is (jwk before the account
// exists, kid after; a signature the account's key verifies), the CA's problem documents, its
// Retry-After, the certificate request, and the store's files and their modes.

#include "adapters/edgecert/acme/acmeclient.h"
#include "adapters/edgecert/acme/acmejws.h"
#include "adapters/edgecert/acme/certrequest.h"
#include "adapters/edgecert/acme/certstore.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSslKey>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using namespace pando::adapters::edgecert;

namespace {

QJsonObject decodedPart(const QJsonObject &jws, const char *part)
{
    return QJsonDocument::fromJson(*jose::fromBase64Url(jws.value(QLatin1String(part)).toString().toLatin1())).object();
}

constexpr auto Private = QFile::ReadOwner | QFile::WriteOwner;

} // namespace

class TestAcmeJws : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void rfc7638Example()
    {
        // RFC 7638, section 3.1: the RSA key of its example and the thumbprint it publishes.
        const QJsonObject jwk{{"kty"_L1, "RSA"_L1},
                              {"n"_L1, "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR"
                                       "1L6tSoc_BJECPebWKRXjBZCiFV4n3"
                                       "oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_"
                                       "FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zg"
                                       "dAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-"
                                       "bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csF"
                                       "Cur-kEgU8awapJzKnqDKgw"_L1},
                              {"e"_L1, "AQAB"_L1},
                              {"alg"_L1, "RS256"_L1},
                              {"kid"_L1, "2011-04-29"_L1}};
        QCOMPARE(jose::jwkThumbprint(jwk), u"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"_s);
        // Optional members (alg, kid) are left out; a missing required one gives nothing.
        QJsonObject bare = jwk;
        bare.remove("alg"_L1);
        bare.remove("kid"_L1);
        QCOMPARE(jose::jwkThumbprint(bare), jose::jwkThumbprint(jwk));
        bare.remove("e"_L1);
        QVERIFY(jose::jwkThumbprint(bare).isEmpty());
    }

    void keyAuthorizationIsTokenDotThumbprint()
    {
        auto key = jose::EcKey::generate();
        QVERIFY(key);
        const QString thumbprint = key->thumbprint();
        QCOMPARE(thumbprint, jose::jwkThumbprint(key->publicJwk()));
        QCOMPARE(thumbprint.size(), 43); // 32 bytes of SHA-256 in unpadded base64url
        QCOMPARE(keyAuthorization(u"evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA"_s, *key),
                 u"evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA."_s + thumbprint);
    }

    void requestsAreSignedJws()
    {
        auto key = jose::EcKey::generate();
        QVERIFY(key);
        const QString url = u"https://ca.example/new-account"_s;
        // Before the account exists: the key itself (jwk), never kid.
        const QByteArray first =
            signedRequest(*key, protectedHeader(*key, "nonce-1", url, {}), R"({"termsOfServiceAgreed":true})");
        const QJsonObject jws = QJsonDocument::fromJson(first).object();
        QCOMPARE(jws.keys(), (QStringList{u"payload"_s, u"protected"_s, u"signature"_s}));
        const QJsonObject header = decodedPart(jws, "protected");
        QCOMPARE(header.value("alg"_L1).toString(), u"ES256"_s);
        QCOMPARE(header.value("nonce"_L1).toString(), u"nonce-1"_s);
        QCOMPARE(header.value("url"_L1).toString(), url);
        QCOMPARE(header.value("jwk"_L1).toObject(), key->publicJwk());
        QVERIFY(!header.contains("kid"_L1));
        QVERIFY(!header.value("jwk"_L1).toObject().contains("d"_L1)); // the public half only
        QCOMPARE(decodedPart(jws, "payload").value("termsOfServiceAgreed"_L1).toBool(), true);
        const QByteArray signingInput =
            jws.value("protected"_L1).toString().toLatin1() + '.' + jws.value("payload"_L1).toString().toLatin1();
        const auto signature = jose::fromBase64Url(jws.value("signature"_L1).toString().toLatin1());
        QVERIFY(signature && signature->size() == 64);
        QVERIFY(key->verify(signingInput, *signature));

        // After: the account's URL (kid), and a POST-as-GET has an empty payload.
        const QJsonObject later =
            QJsonDocument::fromJson(
                signedRequest(*key, protectedHeader(*key, "nonce-2", url, u"https://ca.example/acct/1"_s), {}))
                .object();
        const QJsonObject laterHeader = decodedPart(later, "protected");
        QCOMPARE(laterHeader.value("kid"_L1).toString(), u"https://ca.example/acct/1"_s);
        QVERIFY(!laterHeader.contains("jwk"_L1));
        QCOMPARE(later.value("payload"_L1).toString(), QString());
    }

    void problemDocuments()
    {
        const QJsonObject problem{
            {"type"_L1, "urn:ietf:params:acme:error:rejectedIdentifier"_L1},
            {"detail"_L1, "Error creating new order :: policy forbids"_L1},
            {"subproblems"_L1, QJsonArray{QJsonObject{{"type"_L1, "urn:ietf:params:acme:error:rejectedIdentifier"_L1},
                                                      {"detail"_L1, "bad.example.com is blocked"_L1}}}}};
        const QString text = problemText(problem);
        QVERIFY2(text.startsWith(u"urn:ietf:params:acme:error:rejectedIdentifier: Error creating new order"_s),
                 qPrintable(text));
        QVERIFY2(text.contains(u"bad.example.com is blocked"_s), qPrintable(text));
        QCOMPARE(problemText({}), QString());
    }

    void retryAfter()
    {
        const QDateTime now = QDateTime::fromString(u"2026-12-04T10:00:00Z"_s, Qt::ISODate);
        QCOMPARE(retryAfterMs("3", now), 3000);
        QCOMPARE(retryAfterMs("0", now), 0);
        QCOMPARE(retryAfterMs("86400", now), 30000); // no longer than a poll is worth
        QCOMPARE(retryAfterMs("Fri, 04 Dec 2026 10:00:05 GMT", now), 5000);
        QCOMPARE(retryAfterMs("Fri, 04 Dec 2026 09:59:00 GMT", now), 0); // already past
        QCOMPARE(retryAfterMs("", now), -1);
        QCOMPARE(retryAfterMs("soon", now), -1);
    }

    void certificateRequestForOneName()
    {
        auto request = makeCertificateRequest(u"shop.example.com"_s);
        QVERIFY(request);
        QVERIFY(!QSslKey(request->keyPem, QSsl::Ec).isNull());
        QVERIFY(request->csrDer.startsWith('\x30')); // a DER SEQUENCE
        QVERIFY(request->csrDer.contains("shop.example.com"));
        // A fresh key every time.
        QVERIFY(makeCertificateRequest(u"shop.example.com"_s)->keyPem != request->keyPem);
    }

    void storeKeepsPrivateFiles()
    {
        QTemporaryDir dir;
        CertStore store(dir.filePath(u"certs"_s));
        QVERIFY(store.prepare());
        QCOMPARE(QFileInfo(store.dir()).permissions() & 0x7777, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                                                    QFile::ReadUser | QFile::WriteUser |
                                                                    QFile::ExeUser);
        auto key = store.accountKey();
        QVERIFY(key);
        QCOMPARE(CertStore(store.dir()).accountKey()->thumbprint(), key->thumbprint()); // kept, not made again
        QCOMPARE(QFileInfo(store.dir() + u"/account.key"_s).permissions() & 0x7777,
                 Private | QFile::ReadUser | QFile::WriteUser);

        QVERIFY(store.setAccountUrl(u"https://ca/dir"_s, u"https://ca/acct/7"_s));
        QCOMPARE(store.accountUrl(u"https://ca/dir"_s), u"https://ca/acct/7"_s);
        QVERIFY(store.accountUrl(u"https://other-ca/dir"_s).isEmpty()); // an account is one CA's

        QVERIFY(!store.held(u"shop.example.com"_s));
        QVERIFY(store.recordError(u"shop.example.com"_s, u"ACME newOrder: refused"_s, QDateTime::currentDateTimeUtc()));
        QCOMPARE(store.lastError(u"shop.example.com"_s)->error, u"ACME newOrder: refused"_s);
        for (const QString &bad : {u"../x.example"_s, u"*.example.com"_s, u"Shop.example.com"_s, u"localhost"_s})
            QVERIFY2(!store.recordError(bad, u"x"_s, QDateTime::currentDateTimeUtc()), qPrintable(bad));
    }
};

QTEST_GUILESS_MAIN(TestAcmeJws)
#include "tst_acmejws.moc"
