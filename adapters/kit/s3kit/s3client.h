#pragma once
// Package s3kit is a small client of the S3 REST API for one bucket: list objects under a
// prefix (ListObjectsV2, every page), list the versions of one key (ListObjectVersions), stream
// an object (or one version of it) to a device, upload one from a device (PutObject), and make an
// object's URL, presigned when asked. Requests are signed with Signature Version 4 (sigv4.h), or
// sent unsigned when no keys are given (a public bucket). AWS is addressed by region, virtual-host
// style; any other S3-compatible server by its endpoint, path style.
//
// Every request has a deadline: small ones a total time, transfers a time without progress.
// Errors say what S3 answered (its Code and Message) and never carry a key or a signature.
//
// Threading: a client is immutable after construction; calls block and may be made from any
// thread, concurrently.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/kit/httpkit/httptransport.h"
#include "adapters/kit/s3kit/sigv4.h"

#include <QDateTime>
#include <QIODevice>
#include <QList>
#include <QString>

namespace pando::adapters::s3kit {

struct Config {
    QString bucket;
    QString region = QStringLiteral("us-east-1");
    QString endpoint; // empty: AWS; else "http://127.0.0.1:4568", "minio.example:9000" (https unless disableSsl)
    bool disableSsl = false;
    bool skipSslVerification = false;
    Credentials credentials;
    int requestTimeoutMs = 60'000; // listings and other small requests, in all
    int stallMs = 60'000;          // transfers: no byte moved for this long
};

struct ObjectInfo {
    QString key;
    qint64 size = 0;
    QString etag;
    QDateTime lastModified;
};

struct ObjectVersion {
    QString versionId;
    bool isLatest = false;
    QDateTime lastModified;
    qint64 size = 0;
};

struct UploadOptions {
    QString contentType; // default binary/octet-stream
    QString acl;         // a canned ACL ("private", "public-read", ...)
    QString serverSideEncryption;
    QString kmsKeyId;
};

class S3Client {
public:
    explicit S3Client(Config config);

    const Config &config() const { return m_config; }
    // Where objects are: "bucket sensor-hub at s3.eu-north-1.amazonaws.com", for messages.
    QString description() const;

    Result<QList<ObjectInfo>> listObjects(const QString &prefix, const CancelToken &cancel = {}) const;
    // The versions of exactly key, newest first (delete markers left out).
    Result<QList<ObjectVersion>> listVersions(const QString &key, const CancelToken &cancel = {}) const;
    // Streams the object (the version versionId when set) to out; returns the bytes written.
    Result<qint64> download(const QString &key, const QString &versionId, QIODevice &out,
                            const CancelToken &cancel = {}) const;
    // Uploads in (from its position to its end) as key; returns the version id S3 gave the object,
    // empty when the bucket keeps no versions.
    Result<QString> upload(const QString &key, QIODevice &in, const UploadOptions &options,
                           const CancelToken &cancel = {}) const;
    // Makes the bucket (for tests and first setups); an existing bucket of this owner is fine.
    Status createBucket(const CancelToken &cancel = {}) const;

    // The object's address, unsigned, or presigned for expiresSeconds when presign is set.
    QString objectUrl(const QString &key, const QString &versionId = {}, bool presign = false,
                      int expiresSeconds = 24 * 3600) const;

private:
    struct Target {
        httpkit::Endpoint endpoint;
        QByteArray host;
        QByteArray pathPrefix; // "/bucket" in path style
    };
    httpkit::Exchange send(httpkit::Request request, const QByteArray &payloadSha256Hex, const CancelToken &cancel,
                           const std::function<bool(QByteArrayView)> &onChunk = {}) const;
    Error answerError(const httpkit::Exchange &exchange, const QString &what) const;

    Config m_config;
    Target m_target;
};

// The parts of ListObjectsV2, ListObjectVersions and error answers, for tests.
struct ListPage {
    QList<ObjectInfo> objects;
    QString nextContinuationToken; // empty on the last page
};
Result<ListPage> parseListObjects(const QByteArray &xml);
struct VersionPage {
    QList<QPair<QString, ObjectVersion>> versions; // key → version
    QString nextKeyMarker;
    QString nextVersionIdMarker;
};
Result<VersionPage> parseListVersions(const QByteArray &xml);
// Code and Message of an S3 error document (both empty when it is none).
QPair<QString, QString> parseErrorDocument(const QByteArray &xml);

} // namespace pando::adapters::s3kit
