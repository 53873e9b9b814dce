#include "s3client.h"

#include "adapters/kit/httpkit/devicesink.h"

#include <QCryptographicHash>
#include <QUrl>
#include <QXmlStreamReader>
#include <algorithm>

namespace pando::adapters::s3kit {

namespace {

// A single PutObject takes at most 5 GiB; larger objects need a multipart upload.
constexpr qint64 MaxSingleUpload = 5LL * 1024 * 1024 * 1024;

// A bucket name that can be a host name label under a wildcard certificate.
bool virtualHostable(const QString &bucket)
{
    if (bucket.size() < 3 || bucket.size() > 63 || bucket.startsWith(u'-') || bucket.endsWith(u'-'))
        return false;
    return std::all_of(bucket.begin(), bucket.end(),
                       [](QChar c) { return (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9') || c == u'-'; });
}

QDateTime parseTime(const QString &text)
{
    QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!time.isValid())
        time = QDateTime::fromString(text, Qt::ISODate);
    return time.toUTC();
}

QString unquoted(QString etag)
{
    if (etag.size() >= 2 && etag.startsWith(u'"') && etag.endsWith(u'"'))
        etag = etag.mid(1, etag.size() - 2);
    return etag;
}

Error xmlError(const QXmlStreamReader &xml, const QString &what)
{
    return Error{ErrorCode::Failed, QStringLiteral("%1 is not the XML S3 answers: %2 at line %3")
                                        .arg(what, xml.errorString())
                                        .arg(xml.lineNumber())};
}

} // namespace

Result<ListPage> parseListObjects(const QByteArray &body)
{
    ListPage page;
    QXmlStreamReader xml(body);
    bool truncated = false;
    ObjectInfo current;
    bool inContents = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == u"Contents") {
                inContents = true;
                current = {};
            } else if (inContents && name == u"Key") {
                current.key = xml.readElementText();
            } else if (inContents && name == u"Size") {
                current.size = xml.readElementText().toLongLong();
            } else if (inContents && name == u"ETag") {
                current.etag = unquoted(xml.readElementText());
            } else if (inContents && name == u"LastModified") {
                current.lastModified = parseTime(xml.readElementText());
            } else if (!inContents && name == u"IsTruncated") {
                truncated = xml.readElementText() == u"true";
            } else if (!inContents && name == u"NextContinuationToken") {
                page.nextContinuationToken = xml.readElementText();
            }
        } else if (xml.isEndElement() && xml.name() == u"Contents") {
            inContents = false;
            page.objects.append(current);
        }
    }
    if (xml.hasError())
        return std::unexpected(xmlError(xml, QStringLiteral("the object listing")));
    if (!truncated)
        page.nextContinuationToken.clear();
    else if (page.nextContinuationToken.isEmpty())
        return fail(ErrorCode::Failed, QStringLiteral("the object listing is cut short but names no next page"));
    return page;
}

Result<VersionPage> parseListVersions(const QByteArray &body)
{
    VersionPage page;
    QXmlStreamReader xml(body);
    bool truncated = false;
    QString key;
    ObjectVersion current;
    bool inVersion = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == u"Version") {
                inVersion = true;
                current = {};
                key.clear();
            } else if (inVersion && name == u"Key") {
                key = xml.readElementText();
            } else if (inVersion && name == u"VersionId") {
                current.versionId = xml.readElementText();
            } else if (inVersion && name == u"IsLatest") {
                current.isLatest = xml.readElementText() == u"true";
            } else if (inVersion && name == u"LastModified") {
                current.lastModified = parseTime(xml.readElementText());
            } else if (inVersion && name == u"Size") {
                current.size = xml.readElementText().toLongLong();
            } else if (!inVersion && name == u"IsTruncated") {
                truncated = xml.readElementText() == u"true";
            } else if (!inVersion && name == u"NextKeyMarker") {
                page.nextKeyMarker = xml.readElementText();
            } else if (!inVersion && name == u"NextVersionIdMarker") {
                page.nextVersionIdMarker = xml.readElementText();
            }
        } else if (xml.isEndElement() && xml.name() == u"Version") {
            inVersion = false;
            page.versions.append({key, current});
        }
    }
    if (xml.hasError())
        return std::unexpected(xmlError(xml, QStringLiteral("the version listing")));
    if (!truncated) {
        page.nextKeyMarker.clear();
        page.nextVersionIdMarker.clear();
    } else if (page.nextKeyMarker.isEmpty()) {
        return fail(ErrorCode::Failed, QStringLiteral("the version listing is cut short but names no next page"));
    }
    return page;
}

QPair<QString, QString> parseErrorDocument(const QByteArray &body)
{
    QXmlStreamReader xml(body);
    QString code;
    QString message;
    int depth = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            ++depth;
            if (depth == 1 && xml.name() != u"Error")
                return {};
            if (depth == 2 && xml.name() == u"Code") {
                code = xml.readElementText();
                --depth;
            } else if (depth == 2 && xml.name() == u"Message") {
                message = xml.readElementText();
                --depth;
            }
        } else if (xml.isEndElement()) {
            --depth;
        }
    }
    return {code, message};
}

S3Client::S3Client(Config config) : m_config(std::move(config))
{
    const QByteArray scheme = m_config.disableSsl ? "http" : "https";
    const QByteArray bucketPath = '/' + uriEncode(m_config.bucket, false);
    if (m_config.endpoint.isEmpty()) {
        const QByteArray regional = "s3." + m_config.region.toUtf8() + ".amazonaws.com";
        if (virtualHostable(m_config.bucket)) {
            m_target.host = m_config.bucket.toUtf8() + '.' + regional;
        } else {
            m_target.host = regional;
            m_target.pathPrefix = bucketPath;
        }
    } else {
        QString text = m_config.endpoint;
        if (!text.contains(QLatin1String("://")))
            text = QString::fromLatin1(scheme) + QStringLiteral("://") + text;
        const QUrl url(text);
        QByteArray host = url.host(QUrl::FullyEncoded).toUtf8();
        if (host.contains(':'))
            host = '[' + host + ']';
        if (url.port() != -1)
            host += ':' + QByteArray::number(url.port());
        m_target.host = host;
        QByteArray base = url.path(QUrl::FullyEncoded).toUtf8();
        while (base.endsWith('/'))
            base.chop(1);
        m_target.pathPrefix = base + bucketPath;
        m_target.endpoint.baseUrl = url.scheme().toUtf8() + "://" + host;
    }
    if (m_target.endpoint.baseUrl.isEmpty())
        m_target.endpoint.baseUrl = scheme + "://" + m_target.host;
    m_target.endpoint.insecure = m_config.skipSslVerification;
    // No S3 lives at a link-local address; a cloud's instance credentials do.
    m_target.endpoint.refuseLinkLocal = true;
}

QString S3Client::description() const
{
    return QStringLiteral("bucket %1 at %2").arg(m_config.bucket, QString::fromUtf8(m_target.endpoint.baseUrl));
}

httpkit::Exchange S3Client::send(httpkit::Request request, const QByteArray &payloadSha256Hex,
                                 const CancelToken &cancel, const std::function<bool(QByteArrayView)> &onChunk) const
{
    request.pathIsEncoded = true;
    SignRequest sign;
    sign.method = request.method;
    sign.host = m_target.host;
    sign.encodedPath = request.path.toLatin1();
    sign.query = request.query;
    sign.headers = request.headers;
    sign.payloadSha256Hex = payloadSha256Hex;
    sign.time = QDateTime::currentDateTimeUtc();
    sign.region = m_config.region;
    request.headers.append(signHeaders(sign, m_config.credentials));
    return httpkit::perform(m_target.endpoint, request, &cancel, onChunk);
}

Error S3Client::answerError(const httpkit::Exchange &exchange, const QString &what) const
{
    const QString where = description();
    if (exchange.cancelled)
        return Error{ErrorCode::Cancelled, what + QStringLiteral(" was cancelled"), where};
    if (exchange.transportFailed) {
        if (exchange.timedOut)
            return Error{ErrorCode::Timeout,
                         what + QStringLiteral(": S3 did not answer in time (%1)").arg(exchange.error), where,
                         QStringLiteral("check the endpoint and the network to it")};
        return Error{ErrorCode::Unavailable, what + QStringLiteral(": cannot reach S3: ") + exchange.error, where,
                     QStringLiteral("check endpoint, region_name and disable_ssl")};
    }
    const auto [code, message] = parseErrorDocument(exchange.body);
    QString said = code.isEmpty() ? QStringLiteral("HTTP %1").arg(exchange.status)
                                  : QStringLiteral("%1 (HTTP %2)").arg(code).arg(exchange.status);
    if (!message.isEmpty())
        said += QStringLiteral(": ") + message;
    const QString text = what + QStringLiteral(" failed: ") + said;
    switch (exchange.status) {
    case 301:
    case 307:
        return Error{ErrorCode::Invalid, text, where,
                     QStringLiteral("the bucket is in another region: set region_name to it")};
    case 400:
        return Error{ErrorCode::Invalid, text, where, {}};
    case 401:
    case 403:
        return Error{ErrorCode::Forbidden, text, where,
                     QStringLiteral("check access_key_id and secret_access_key, and what the bucket's policy allows")};
    case 404:
        return Error{ErrorCode::NotFound, text, where, {}};
    default:
        return Error{exchange.status >= 500 ? ErrorCode::Unavailable : ErrorCode::Failed, text, where, {}};
    }
}

Result<QList<ObjectInfo>> S3Client::listObjects(const QString &prefix, const CancelToken &cancel) const
{
    QList<ObjectInfo> out;
    QString token;
    do {
        httpkit::Request r;
        r.path = QString::fromLatin1(m_target.pathPrefix.isEmpty() ? QByteArray("/") : m_target.pathPrefix);
        r.addQuery(QStringLiteral("list-type"), QStringLiteral("2"));
        if (!prefix.isEmpty())
            r.addQuery(QStringLiteral("prefix"), prefix);
        if (!token.isEmpty())
            r.addQuery(QStringLiteral("continuation-token"), token);
        r.timeoutMs = m_config.requestTimeoutMs;
        const httpkit::Exchange answer = send(r, emptySha256Hex(), cancel);
        if (answer.transportFailed || answer.cancelled || answer.status != 200)
            return std::unexpected(answerError(answer, QStringLiteral("listing the objects under \"%1\"").arg(prefix)));
        auto page = parseListObjects(answer.body);
        if (!page)
            return std::unexpected(page.error());
        out.append(page->objects);
        token = page->nextContinuationToken;
    } while (!token.isEmpty());
    return out;
}

Result<QList<ObjectVersion>> S3Client::listVersions(const QString &key, const CancelToken &cancel) const
{
    QList<ObjectVersion> out;
    QString keyMarker;
    QString versionMarker;
    do {
        httpkit::Request r;
        r.path = QString::fromLatin1(m_target.pathPrefix.isEmpty() ? QByteArray("/") : m_target.pathPrefix);
        r.addQuery(QStringLiteral("versions"), QString());
        r.addQuery(QStringLiteral("prefix"), key);
        if (!keyMarker.isEmpty()) {
            r.addQuery(QStringLiteral("key-marker"), keyMarker);
            r.addQuery(QStringLiteral("version-id-marker"), versionMarker);
        }
        r.timeoutMs = m_config.requestTimeoutMs;
        const httpkit::Exchange answer = send(r, emptySha256Hex(), cancel);
        if (answer.transportFailed || answer.cancelled || answer.status != 200)
            return std::unexpected(answerError(answer, QStringLiteral("listing the versions of \"%1\"").arg(key)));
        auto page = parseListVersions(answer.body);
        if (!page)
            return std::unexpected(page.error());
        for (const auto &[name, version] : std::as_const(page->versions))
            if (name == key)
                out.append(version);
        keyMarker = page->nextKeyMarker;
        versionMarker = page->nextVersionIdMarker;
    } while (!keyMarker.isEmpty());
    std::stable_sort(out.begin(), out.end(),
                     [](const ObjectVersion &a, const ObjectVersion &b) { return a.lastModified > b.lastModified; });
    return out;
}

Result<qint64> S3Client::download(const QString &key, const QString &versionId, QIODevice &out,
                                  const CancelToken &cancel) const
{
    httpkit::Request r;
    r.path = QString::fromLatin1(m_target.pathPrefix + encodePath(key));
    if (!versionId.isEmpty())
        r.addQuery(QStringLiteral("versionId"), versionId);
    r.stallMs = m_config.stallMs;
    httpkit::DeviceSink sink{out};
    const httpkit::Exchange answer = send(r, emptySha256Hex(), cancel, std::ref(sink));
    if (sink.failed)
        return fail(ErrorCode::Failed, QStringLiteral("writing \"%1\" failed: %2").arg(key, out.errorString()));
    if (answer.transportFailed || answer.cancelled || answer.status != 200)
        return std::unexpected(answerError(answer, QStringLiteral("fetching \"%1\"").arg(key)));
    return sink.written;
}

Result<QString> S3Client::upload(const QString &key, QIODevice &in, const UploadOptions &options,
                                 const CancelToken &cancel) const
{
    if (in.isSequential())
        return fail(ErrorCode::Internal, QStringLiteral("an upload needs a file it can read twice"));
    const qint64 start = in.pos();
    const qint64 size = in.size() - start;
    if (size > MaxSingleUpload)
        return fail(ErrorCode::TooLarge,
                    QStringLiteral("\"%1\" is %2 bytes; one upload takes at most 5 GiB").arg(key).arg(size), {},
                    QStringLiteral("split the file; multipart uploads are not supported yet"));
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&in))
        return fail(ErrorCode::Failed,
                    QStringLiteral("reading the file for \"%1\" failed: %2").arg(key, in.errorString()));
    if (!in.seek(start))
        return fail(ErrorCode::Failed,
                    QStringLiteral("reading the file for \"%1\" failed: %2").arg(key, in.errorString()));
    httpkit::Request r;
    r.method = "PUT";
    r.path = QString::fromLatin1(m_target.pathPrefix + encodePath(key));
    r.bodyDevice = &in;
    r.contentType = options.contentType.isEmpty() ? QByteArray("binary/octet-stream") : options.contentType.toUtf8();
    if (!options.acl.isEmpty())
        r.headers.append({"x-amz-acl", options.acl.toUtf8()});
    if (!options.serverSideEncryption.isEmpty())
        r.headers.append({"x-amz-server-side-encryption", options.serverSideEncryption.toUtf8()});
    if (!options.kmsKeyId.isEmpty())
        r.headers.append({"x-amz-server-side-encryption-aws-kms-key-id", options.kmsKeyId.toUtf8()});
    r.stallMs = m_config.stallMs;
    r.keepHeaders = true;
    const httpkit::Exchange answer = send(r, hash.result().toHex(), cancel);
    if (answer.transportFailed || answer.cancelled || answer.status != 200)
        return std::unexpected(answerError(answer, QStringLiteral("uploading \"%1\"").arg(key)));
    return QString::fromUtf8(answer.header("x-amz-version-id"));
}

Status S3Client::createBucket(const CancelToken &cancel) const
{
    httpkit::Request r;
    r.method = "PUT";
    r.path = QString::fromLatin1(m_target.pathPrefix.isEmpty() ? QByteArray("/") : m_target.pathPrefix);
    if (m_config.endpoint.isEmpty() && m_config.region != QLatin1String("us-east-1")) {
        r.body = "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>" +
                 m_config.region.toUtf8() + "</LocationConstraint></CreateBucketConfiguration>";
        r.contentType = "application/xml";
    }
    r.timeoutMs = m_config.requestTimeoutMs;
    const httpkit::Exchange answer = send(r, sha256Hex(r.body), cancel);
    if (answer.status == 200 || parseErrorDocument(answer.body).first == QLatin1String("BucketAlreadyOwnedByYou"))
        return {};
    return std::unexpected(answerError(answer, QStringLiteral("making the bucket")));
}

QString S3Client::objectUrl(const QString &key, const QString &versionId, bool presign, int expiresSeconds) const
{
    const QByteArray path = m_target.pathPrefix + encodePath(key);
    Query query;
    if (!versionId.isEmpty())
        query.append({QStringLiteral("versionId"), versionId});
    if (presign && !m_config.credentials.anonymous()) {
        SignRequest sign;
        sign.host = m_target.host;
        sign.encodedPath = path;
        sign.query = query;
        sign.time = QDateTime::currentDateTimeUtc();
        sign.region = m_config.region;
        query = presignQuery(sign, m_config.credentials, expiresSeconds);
    }
    QByteArray url = m_target.endpoint.baseUrl + path;
    if (!query.isEmpty())
        url += '?' + httpkit::encodeQuery(query);
    return QString::fromUtf8(url);
}

} // namespace pando::adapters::s3kit
