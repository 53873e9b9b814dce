// S3's request signing against the examples AWS documents, and the answers S3 documents read as
// S3 writes them.

#include "adapters/kit/s3kit/s3client.h"
#include "adapters/kit/s3kit/sigv4.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::adapters::s3kit;

namespace {

Credentials exampleKeys()
{
    return Credentials{u"AKIAIOSFODNN7EXAMPLE"_s, u"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"_s, {}};
}

SignRequest exampleGet()
{
    SignRequest r;
    r.host = "examplebucket.s3.amazonaws.com";
    r.encodedPath = "/test.txt";
    r.time = QDateTime(QDate(2013, 5, 24), QTime(0, 0), Qt::UTC);
    return r;
}

QByteArray header(const Headers &headers, QByteArrayView name)
{
    for (const auto &[key, value] : headers)
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    return {};
}

} // namespace

class TestS3Kit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void signsAsAwsDocumentsForAGetWithRange()
    {
        // AWS's "GET Object" example of Signature Version 4 with an Authorization header.
        SignRequest r = exampleGet();
        r.headers = {{"Range", "bytes=0-9"}};
        r.payloadSha256Hex = emptySha256Hex();
        const Headers added = signHeaders(r, exampleKeys());
        QCOMPARE(header(added, "x-amz-date"), QByteArray("20130524T000000Z"));
        QCOMPARE(header(added, "x-amz-content-sha256"),
                 QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(header(added, "Authorization"),
                 QByteArray("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
    }

    void signsAsAwsDocumentsForAPut()
    {
        // AWS's "PUT Object" example: a '$' in the key, a Date and a storage class header.
        SignRequest r = exampleGet();
        r.method = "PUT";
        r.encodedPath = encodePath(u"test$file.text"_s);
        r.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
        r.payloadSha256Hex = sha256Hex("Welcome to Amazon S3.");
        QCOMPARE(r.payloadSha256Hex, QByteArray("44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"));
        QCOMPARE(header(signHeaders(r, exampleKeys()), "Authorization"),
                 QByteArray("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                            "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
                            "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"));
    }

    void signsAsAwsDocumentsForAListing()
    {
        // AWS's "GET Bucket (List Objects)" example: a query, sorted and encoded.
        SignRequest r = exampleGet();
        r.encodedPath = "/";
        r.query = {{u"prefix"_s, u"J"_s}, {u"max-keys"_s, u"2"_s}};
        r.payloadSha256Hex = emptySha256Hex();
        QCOMPARE(header(signHeaders(r, exampleKeys()), "Authorization"),
                 QByteArray("AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                            "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
                            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
    }

    void presignsAsAwsDocuments()
    {
        // AWS's presigned URL example: GET /test.txt for a day.
        const Query query = presignQuery(exampleGet(), exampleKeys(), 86400);
        QMap<QString, QString> by;
        for (const auto &[key, value] : query)
            by.insert(key, value);
        QCOMPARE(by.value(u"X-Amz-Credential"_s), u"AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"_s);
        QCOMPARE(by.value(u"X-Amz-SignedHeaders"_s), u"host"_s);
        QCOMPARE(by.value(u"X-Amz-Expires"_s), u"86400"_s);
        QCOMPARE(by.value(u"X-Amz-Signature"_s), u"aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"_s);
        QCOMPARE(query.last().first, u"X-Amz-Signature"_s);
    }

    void aSessionTokenIsSentAndSigned()
    {
        SignRequest r = exampleGet();
        r.payloadSha256Hex = emptySha256Hex();
        Credentials keys = exampleKeys();
        keys.sessionToken = u"token/with+chars"_s;
        const Headers added = signHeaders(r, keys);
        QCOMPARE(header(added, "x-amz-security-token"), QByteArray("token/with+chars"));
        QVERIFY(header(added, "Authorization").contains("x-amz-security-token"));
    }

    void noKeysSendNoSignature()
    {
        SignRequest r = exampleGet();
        r.payloadSha256Hex = emptySha256Hex();
        const Headers added = signHeaders(r, Credentials{});
        QVERIFY(header(added, "Authorization").isEmpty());
    }

    void theSecretIsNowhereInWhatIsSent()
    {
        SignRequest r = exampleGet();
        r.payloadSha256Hex = emptySha256Hex();
        const QByteArray secret = exampleKeys().secretAccessKey.toUtf8();
        for (const auto &[name, value] : signHeaders(r, exampleKeys()))
            QVERIFY2(!value.contains(secret), name.constData());
        for (const auto &[name, value] : presignQuery(exampleGet(), exampleKeys(), 60))
            QVERIFY2(!value.toUtf8().contains(secret), qPrintable(name));
    }

    void keysAreEncodedAsS3Signs()
    {
        QCOMPARE(uriEncode(u"a b/c~d+é*"_s, true), QByteArray("a%20b/c~d%2B%C3%A9%2A"));
        QCOMPARE(uriEncode(u"a/b"_s, false), QByteArray("a%2Fb"));
        QCOMPARE(encodePath(u"dir/x:y@z.tgz"_s), QByteArray("/dir/x%3Ay%40z.tgz"));
    }

    void theCanonicalRequestSortsQueryAndHeaders()
    {
        SignRequest r;
        r.method = "GET";
        r.host = "h";
        r.encodedPath = "/b";
        r.query = {{u"prefix"_s, u"a b"_s}, {u"list-type"_s, u"2"_s}, {u"versions"_s, QString()}};
        r.payloadSha256Hex = "UNSIGNED-PAYLOAD";
        const QByteArray canonical = canonicalRequest(r, {{"X-Amz-Date", "d"}, {"host", "h"}, {"Range", " a   b "}});
        QCOMPARE(canonical, QByteArray("GET\n/b\nlist-type=2&prefix=a%20b&versions=\n"
                                       "host:h\nrange:a b\nx-amz-date:d\n\nhost;range;x-amz-date\nUNSIGNED-PAYLOAD"));
    }

    void readsAListingPageByPage()
    {
        const QByteArray xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\n"
            "  <Name>releases</Name><Prefix>app/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>\n"
            "  "
            "<IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</"
            "NextContinuationToken>\n"
            "  <Contents><Key>app/app-1.0.tgz</Key><LastModified>2024-03-01T10:00:00.000Z</LastModified>\n"
            "    "
            "<ETag>\"9b2cf535f27731c974343645a3985328\"</ETag><Size>434234</Size><StorageClass>STANDARD</"
            "StorageClass></Contents>\n"
            "  <Contents><Key>app/app-1.1 &amp; more.tgz</Key><LastModified>2024-03-02T10:00:00Z</LastModified>\n"
            "    <ETag>\"x\"</ETag><Size>7</Size><StorageClass>STANDARD</StorageClass></Contents>\n"
            "</ListBucketResult>";
        auto page = parseListObjects(xml);
        QVERIFY(page);
        QCOMPARE(page->objects.size(), 2);
        QCOMPARE(page->objects[0].key, u"app/app-1.0.tgz"_s);
        QCOMPARE(page->objects[0].size, 434234);
        QCOMPARE(page->objects[0].etag, u"9b2cf535f27731c974343645a3985328"_s);
        QCOMPARE(page->objects[0].lastModified, QDateTime(QDate(2024, 3, 1), QTime(10, 0), Qt::UTC));
        QCOMPARE(page->objects[1].key, u"app/app-1.1 & more.tgz"_s);
        QCOMPARE(page->nextContinuationToken, u"1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="_s);

        QVERIFY(!parseListObjects("<ListBucketResult><Contents><Key>a</Key>"));
        auto cut = parseListObjects("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>");
        QVERIFY(!cut);
        QVERIFY(cut.error().message.contains(u"next page"_s));
    }

    void readsVersionsLeavingDeleteMarkersOut()
    {
        const QByteArray xml =
            "<ListVersionsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\n"
            "  <Name>cfg</Name><Prefix>etl/settings.yml</Prefix><IsTruncated>false</IsTruncated>\n"
            "  <DeleteMarker><Key>etl/settings.yml</Key><VersionId>dm1</VersionId><IsLatest>true</IsLatest>\n"
            "    <LastModified>2024-05-03T00:00:00Z</LastModified></DeleteMarker>\n"
            "  <Version><Key>etl/settings.yml</Key><VersionId>v2</VersionId><IsLatest>false</IsLatest>\n"
            "    <LastModified>2024-05-02T00:00:00Z</LastModified><Size>10</Size></Version>\n"
            "  <Version><Key>etl/settings.yml.bak</Key><VersionId>b1</VersionId><IsLatest>true</IsLatest>\n"
            "    <LastModified>2024-05-01T00:00:00Z</LastModified><Size>3</Size></Version>\n"
            "</ListVersionsResult>";
        auto page = parseListVersions(xml);
        QVERIFY(page);
        QCOMPARE(page->versions.size(), 2);
        QCOMPARE(page->versions[0].first, u"etl/settings.yml"_s);
        QCOMPARE(page->versions[0].second.versionId, u"v2"_s);
        QCOMPARE(page->versions[1].first, u"etl/settings.yml.bak"_s);
        QVERIFY(page->nextKeyMarker.isEmpty());
    }

    void readsWhatAnErrorSays()
    {
        const auto [code, message] = parseErrorDocument(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message>\n"
            "<BucketName>nope</BucketName><RequestId>4442587FB7D0A2F9</RequestId></Error>");
        QCOMPARE(code, u"NoSuchBucket"_s);
        QCOMPARE(message, u"The specified bucket does not exist"_s);
        QCOMPARE(parseErrorDocument("<html>gateway</html>").first, QString());
    }

    void cloudCredentialAddressesAreRefused()
    {
        // Every S3 request refuses a connection that reached one of these (see httpkit).
        using pando::adapters::httpkit::isLinkLocalAddress;
        for (const char *ip :
             {"169.254.169.254", "169.254.0.1", "fe80::1", "FE80::a:b", "febf::1", "::ffff:169.254.1.1"})
            QVERIFY2(isLinkLocalAddress(ip), ip);
        for (const char *ip : {"127.0.0.1", "10.0.0.1", "169.25.1.1", "fec0::1", "2001:db8::1", "::1"})
            QVERIFY2(!isLinkLocalAddress(ip), ip);
    }

    void addressesAwsAndOtherServers()
    {
        Config aws;
        aws.bucket = u"sensor-hub"_s;
        aws.region = u"eu-north-1"_s;
        QCOMPARE(S3Client(aws).objectUrl(u"tools/a b.tgz"_s),
                 u"https://sensor-hub.s3.eu-north-1.amazonaws.com/tools/a%20b.tgz"_s);
        aws.bucket = u"dotted.bucket"_s; // no virtual host under a wildcard certificate
        QCOMPARE(S3Client(aws).objectUrl(u"k"_s), u"https://s3.eu-north-1.amazonaws.com/dotted.bucket/k"_s);
        Config other;
        other.bucket = u"b"_s;
        other.endpoint = u"minio.example:9000"_s;
        QCOMPARE(S3Client(other).objectUrl(u"k"_s, u"v1"_s), u"https://minio.example:9000/b/k?versionId=v1"_s);
        other.disableSsl = true;
        QCOMPARE(S3Client(other).objectUrl(u"k"_s), u"http://minio.example:9000/b/k"_s);
        other.endpoint = u"http://127.0.0.1:4568/"_s;
        other.credentials = Credentials{u"AK"_s, u"secret-value"_s, {}};
        const QString presigned = S3Client(other).objectUrl(u"k"_s, {}, true, 60);
        QVERIFY2(presigned.startsWith(u"http://127.0.0.1:4568/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&"_s),
                 qPrintable(presigned));
        QVERIFY(presigned.contains(u"X-Amz-Signature="_s));
        QVERIFY(!presigned.contains(u"secret-value"_s));
    }
};

QTEST_GUILESS_MAIN(TestS3Kit)
#include "tst_s3kit.moc"
