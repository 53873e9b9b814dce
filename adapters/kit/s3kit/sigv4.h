#pragma once
// AWS Signature Version 4 for S3 requests, as AWS documents it ("Authenticating Requests: Using
// the Authorization Header" and "Query String Authentication"): the canonical request, the string
// to sign and the derived signing key, for a request's headers or for a presigned URL. Pure
// functions; the secret key never leaves them except inside the HMAC.

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>

namespace pando::adapters::s3kit {

struct Credentials {
    QString accessKeyId;
    QString secretAccessKey;
    QString sessionToken; // STS; sent as x-amz-security-token when set
    bool anonymous() const { return accessKeyId.isEmpty() && secretAccessKey.isEmpty(); }
};

using Headers = QList<QPair<QByteArray, QByteArray>>;
using Query = QList<QPair<QString, QString>>;

// What is signed. host is the Host header as sent ("bucket.s3.amazonaws.com", "127.0.0.1:4568");
// encodedPath is the path as sent, already encoded with encodePath; headers are those the request
// sends besides Host and the x-amz-* headers signing adds (names any case).
struct SignRequest {
    QByteArray method = "GET";
    QByteArray host;
    QByteArray encodedPath = "/";
    Query query;
    Headers headers;
    QByteArray payloadSha256Hex; // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
    QDateTime time;              // UTC
    QString region = QStringLiteral("us-east-1");
    QString service = QStringLiteral("s3");
};

// S3's URI encoding: every byte but A-Z a-z 0-9 - . _ ~ percent-encoded in upper-case hex; '/'
// kept in a path.
QByteArray uriEncode(QStringView text, bool keepSlash);
// An object key as a request path: "/" + the key with each segment encoded.
QByteArray encodePath(QStringView path);
QByteArray sha256Hex(QByteArrayView data);
// The hash of an empty body.
QByteArray emptySha256Hex();

// The headers to add to the request: x-amz-date, x-amz-content-sha256, x-amz-security-token
// (with a session token) and Authorization.
Headers signHeaders(const SignRequest &request, const Credentials &credentials);

// The query (sorted, as it must be sent) of a presigned URL valid for expiresSeconds from
// request.time: the request's own query plus the X-Amz-* parameters and the signature.
Query presignQuery(const SignRequest &request, const Credentials &credentials, int expiresSeconds);

// The pieces, for tests and for reading a SignatureDoesNotMatch answer.
QByteArray canonicalRequest(const SignRequest &request, const Headers &signedHeaders);
QByteArray stringToSign(const SignRequest &request, QByteArrayView canonical);

} // namespace pando::adapters::s3kit
