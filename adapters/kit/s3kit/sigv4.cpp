#include "sigv4.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>
#include <algorithm>

namespace pando::adapters::s3kit {

namespace {

constexpr QByteArrayView Algorithm = "AWS4-HMAC-SHA256";

QByteArray hmac(const QByteArray &key, const QByteArray &data)
{
    return QMessageAuthenticationCode::hash(data, key, QCryptographicHash::Sha256);
}

QByteArray amzDate(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'")).toLatin1();
}

QByteArray day(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyyMMdd")).toLatin1();
}

QByteArray scope(const SignRequest &request)
{
    return day(request.time) + '/' + request.region.toUtf8() + '/' + request.service.toUtf8() + "/aws4_request";
}

// A header value as signed: trimmed, runs of spaces made one.
QByteArray canonicalValue(QByteArrayView value)
{
    return value.toByteArray().simplified();
}

// Lower-case names, sorted; values of a repeated name joined with ','.
Headers canonicalHeaders(const Headers &headers)
{
    Headers out;
    for (const auto &[name, value] : headers) {
        const QByteArray lower = name.toLower();
        auto same = std::find_if(out.begin(), out.end(), [&](const auto &h) { return h.first == lower; });
        if (same != out.end())
            same->second += ',' + canonicalValue(value);
        else
            out.append({lower, canonicalValue(value)});
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    return out;
}

QByteArray signedHeaderNames(const Headers &canonical)
{
    QByteArray names;
    for (const auto &header : canonical) {
        if (!names.isEmpty())
            names += ';';
        names += header.first;
    }
    return names;
}

QByteArray canonicalQuery(const Query &query)
{
    QList<QPair<QByteArray, QByteArray>> encoded;
    for (const auto &[key, value] : query)
        encoded.append({uriEncode(key, false), uriEncode(value, false)});
    std::sort(encoded.begin(), encoded.end());
    QByteArray out;
    for (const auto &[key, value] : encoded) {
        if (!out.isEmpty())
            out += '&';
        out += key + '=' + value;
    }
    return out;
}

QByteArray signature(const SignRequest &request, const Credentials &credentials, QByteArrayView canonical)
{
    QByteArray key = hmac(QByteArray("AWS4") + credentials.secretAccessKey.toUtf8(), day(request.time));
    key = hmac(key, request.region.toUtf8());
    key = hmac(key, request.service.toUtf8());
    key = hmac(key, QByteArrayLiteral("aws4_request"));
    return hmac(key, stringToSign(request, canonical)).toHex();
}

} // namespace

QByteArray uriEncode(QStringView text, bool keepSlash)
{
    static constexpr char Hex[] = "0123456789ABCDEF";
    const QByteArray utf8 = text.toUtf8();
    QByteArray out;
    out.reserve(utf8.size() * 3);
    for (const char c : utf8) {
        const auto u = static_cast<unsigned char>(c);
        const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') ||
                                u == '-' || u == '.' || u == '_' || u == '~';
        if (unreserved || (keepSlash && u == '/')) {
            out += c;
        } else {
            out += '%';
            out += Hex[u >> 4];
            out += Hex[u & 0xF];
        }
    }
    return out;
}

QByteArray encodePath(QStringView path)
{
    const QByteArray encoded = uriEncode(path, true);
    return encoded.startsWith('/') ? encoded : '/' + encoded;
}

QByteArray sha256Hex(QByteArrayView data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

QByteArray emptySha256Hex()
{
    return sha256Hex({});
}

QByteArray canonicalRequest(const SignRequest &request, const Headers &signedHeaders)
{
    const Headers canonical = canonicalHeaders(signedHeaders);
    QByteArray headerBlock;
    for (const auto &[name, value] : canonical)
        headerBlock += name + ':' + value + '\n';
    return request.method + '\n' + request.encodedPath + '\n' + canonicalQuery(request.query) + '\n' + headerBlock +
           '\n' + signedHeaderNames(canonical) + '\n' + request.payloadSha256Hex;
}

QByteArray stringToSign(const SignRequest &request, QByteArrayView canonical)
{
    return Algorithm.toByteArray() + '\n' + amzDate(request.time) + '\n' + scope(request) + '\n' + sha256Hex(canonical);
}

Headers signHeaders(const SignRequest &request, const Credentials &credentials)
{
    Headers added{{"x-amz-date", amzDate(request.time)}, {"x-amz-content-sha256", request.payloadSha256Hex}};
    if (!credentials.sessionToken.isEmpty())
        added.append({"x-amz-security-token", credentials.sessionToken.toUtf8()});
    if (credentials.anonymous())
        return added;
    Headers all = request.headers;
    all.append({"host", request.host});
    all.append(added);
    const QByteArray canonical = canonicalRequest(request, all);
    added.append({"Authorization", Algorithm.toByteArray() + " Credential=" + credentials.accessKeyId.toUtf8() + '/' +
                                       scope(request) + ",SignedHeaders=" + signedHeaderNames(canonicalHeaders(all)) +
                                       ",Signature=" + signature(request, credentials, canonical)});
    return added;
}

Query presignQuery(const SignRequest &request, const Credentials &credentials, int expiresSeconds)
{
    SignRequest presigned = request;
    presigned.payloadSha256Hex = "UNSIGNED-PAYLOAD";
    Headers all = request.headers;
    all.append({"host", request.host});
    presigned.query.append({QStringLiteral("X-Amz-Algorithm"), QString::fromLatin1(Algorithm)});
    presigned.query.append(
        {QStringLiteral("X-Amz-Credential"), credentials.accessKeyId + u'/' + QString::fromLatin1(scope(request))});
    presigned.query.append({QStringLiteral("X-Amz-Date"), QString::fromLatin1(amzDate(request.time))});
    presigned.query.append({QStringLiteral("X-Amz-Expires"), QString::number(expiresSeconds)});
    presigned.query.append(
        {QStringLiteral("X-Amz-SignedHeaders"), QString::fromLatin1(signedHeaderNames(canonicalHeaders(all)))});
    if (!credentials.sessionToken.isEmpty())
        presigned.query.append({QStringLiteral("X-Amz-Security-Token"), credentials.sessionToken});
    const QByteArray canonical = canonicalRequest(presigned, all);
    Query out = presigned.query;
    std::sort(out.begin(), out.end());
    out.append({QStringLiteral("X-Amz-Signature"), QString::fromLatin1(signature(presigned, credentials, canonical))});
    return out;
}

} // namespace pando::adapters::s3kit
