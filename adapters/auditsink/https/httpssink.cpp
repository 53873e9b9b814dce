#include "httpssink.h"

#include "adapters/kit/sinkkit/sinkkit.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSysInfo>
#include <QUrl>
#include <curl/curl.h>
#include <memory>

using namespace Qt::StringLiterals;

namespace pando::adapters::https {

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

size_t collect(char *data, size_t size, size_t count, void *user)
{
    auto *out = static_cast<QByteArray *>(user);
    const size_t bytes = size * count;
    // The reply only feeds an error message: keep its start.
    if (out->size() < 64LL * 1024)
        out->append(data, qsizetype(bytes));
    return bytes;
}

int progress(void *user, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    return static_cast<const CancelToken *>(user)->isCancelled() ? 1 : 0;
}

void initCurlOnce()
{
    static const bool done = [] {
        return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    }();
    Q_UNUSED(done);
}

} // namespace

Result<HttpsSinkConfig> HttpsSinkConfig::fromJson(const QJsonObject &json, const QString &where)
{
    HttpsSinkConfig config;
    auto settings = sinkkit::parseSettings(json, where);
    if (!settings)
        return std::unexpected(settings.error());
    config.settings = *settings;
    config.name = json.value(u"name"_s).toString();
    if (config.name.isEmpty())
        return fail(ErrorCode::Invalid, u"an https sink needs a name"_s, where + u".name"_s);
    config.url = json.value(u"url"_s).toString();
    config.allowInsecure = json.value(u"allowInsecure"_s).toBool(false);
    const QUrl url(config.url);
    if (!url.isValid() || url.host().isEmpty() ||
        !(url.scheme() == u"https"_s || (config.allowInsecure && url.scheme() == u"http"_s)))
        return fail(ErrorCode::Invalid, u"expected an https:// URL"_s, where + u".url"_s,
                    u"plain http:// needs \"allowInsecure\": true"_s);
    const QString body = json.value(u"body"_s).toString(u"ndjson"_s);
    if (body == u"ndjson"_s)
        config.body = Body::Ndjson;
    else if (body == u"array"_s)
        config.body = Body::JsonArray;
    else if (body == u"hec"_s)
        config.body = Body::SplunkHec;
    else if (body == u"elastic"_s)
        config.body = Body::ElasticBulk;
    else
        return fail(ErrorCode::Invalid, u"unknown body \""_s + body + u"\" (ndjson, array, hec, elastic)"_s,
                    where + u".body"_s);
    const QString auth = json.value(u"auth"_s).toString(u"none"_s);
    if (auth == u"none"_s)
        config.auth = Auth::None;
    else if (auth == u"bearer"_s)
        config.auth = Auth::Bearer;
    else if (auth == u"basic"_s)
        config.auth = Auth::Basic;
    else if (auth == u"hec"_s)
        config.auth = Auth::SplunkHec;
    else
        return fail(ErrorCode::Invalid, u"unknown auth \""_s + auth + u"\" (none, bearer, basic, hec)"_s,
                    where + u".auth"_s);
    const auto credential = [&](const QString &key, QString &out) -> Status {
        auto value = sinkkit::readCredential(json.value(key).toString(), where + u'.' + key);
        if (!value)
            return std::unexpected(value.error());
        if (value->isEmpty())
            return fail(ErrorCode::Invalid, u"auth \""_s + auth + u"\" needs it"_s, where + u'.' + key);
        out = *value;
        return {};
    };
    if (config.auth == Auth::Bearer || config.auth == Auth::SplunkHec)
        if (auto ok = credential(u"token"_s, config.token); !ok)
            return std::unexpected(ok.error());
    if (config.auth == Auth::Basic) {
        if (auto ok = credential(u"user"_s, config.user); !ok)
            return std::unexpected(ok.error());
        if (auto ok = credential(u"password"_s, config.password); !ok)
            return std::unexpected(ok.error());
    }
    config.caBundle = json.value(u"caBundle"_s).toString();
    if (!config.caBundle.isEmpty())
        if (auto ca = sinkkit::loadCaBundle(config.caBundle); !ca)
            return std::unexpected(Error{ca.error().code, ca.error().message, where + u".caBundle"_s, {}});
    config.index = json.value(u"index"_s).toString();
    config.sourcetype = json.value(u"sourcetype"_s).toString(u"pando:audit"_s);
    config.host = json.value(u"host"_s).toString();
    config.timeoutMs = json.value(u"timeoutMs"_s).toInt(15'000);
    return config;
}

HttpsBody formatBody(const QList<AuditLine> &batch, const HttpsSinkConfig &config)
{
    HttpsBody body;
    switch (config.body) {
    case HttpsSinkConfig::Body::Ndjson:
        body.contentType = "application/x-ndjson";
        for (const AuditLine &line : batch)
            body.bytes += compact(sinkkit::shapeLine(line, config.settings)) + '\n';
        break;
    case HttpsSinkConfig::Body::JsonArray: {
        body.contentType = "application/json";
        QJsonArray array;
        for (const AuditLine &line : batch)
            array.append(sinkkit::shapeLine(line, config.settings));
        body.bytes = QJsonDocument(array).toJson(QJsonDocument::Compact);
        break;
    }
    case HttpsSinkConfig::Body::SplunkHec: {
        // HEC takes several event envelopes back to back in one POST; time is epoch seconds.
        body.contentType = "application/json";
        const QString host = config.host.isEmpty() ? QSysInfo::machineHostName() : config.host;
        for (const AuditLine &line : batch) {
            QJsonObject envelope{{u"time"_s, double(line.timeMs) / 1000.0},
                                 {u"host"_s, host},
                                 {u"source"_s, u"pando"_s},
                                 {u"sourcetype"_s, config.sourcetype},
                                 {u"event"_s, sinkkit::shapeLine(line, config.settings)}};
            if (!config.index.isEmpty())
                envelope.insert(u"index"_s, config.index);
            body.bytes += compact(envelope) + '\n';
        }
        break;
    }
    case HttpsSinkConfig::Body::ElasticBulk: {
        // "index" with the line's hash as _id: a batch sent again after an outage overwrites
        // the same documents instead of adding copies.
        body.contentType = "application/x-ndjson";
        const QString index = config.index.isEmpty() ? u"pando-audit"_s : config.index;
        for (const AuditLine &line : batch) {
            const QString id = line.hash.isEmpty() ? QString::number(line.seq) : line.hash;
            body.bytes += compact(QJsonObject{{u"index"_s, QJsonObject{{u"_index"_s, index}, {u"_id"_s, id}}}}) + '\n';
            body.bytes += compact(sinkkit::shapeLine(line, config.settings)) + '\n';
        }
        break;
    }
    }
    return body;
}

Status HttpsSink::deliver(const QList<AuditLine> &batch, const CancelToken &cancel)
{
    initCurlOnce();
    const QString where = QUrl(m_config.url).adjusted(QUrl::RemoveUserInfo | QUrl::RemoveQuery).toString();
    const HttpsBody body = formatBody(batch, m_config);
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
    if (!curl)
        return fail(ErrorCode::Internal, u"libcurl could not make a handle"_s, where);
    curl_slist *rawHeaders = nullptr;
    rawHeaders = curl_slist_append(rawHeaders, QByteArray("Content-Type: " + body.contentType).constData());
    rawHeaders = curl_slist_append(rawHeaders, "Expect:"); // no 100-continue round trip
    QByteArray authHeader;
    if (m_config.auth == HttpsSinkConfig::Auth::Bearer)
        authHeader = "Authorization: Bearer " + m_config.token.toUtf8();
    else if (m_config.auth == HttpsSinkConfig::Auth::SplunkHec)
        authHeader = "Authorization: Splunk " + m_config.token.toUtf8();
    if (!authHeader.isEmpty())
        rawHeaders = curl_slist_append(rawHeaders, authHeader.constData());
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(rawHeaders, &curl_slist_free_all);

    const QByteArray url = m_config.url.toUtf8();
    const QByteArray caBundle = m_config.caBundle.toLocal8Bit();
    const QByteArray user = m_config.user.toUtf8(), password = m_config.password.toUtf8();
    QByteArray reply;
    CURL *h = curl.get();
    curl_easy_setopt(h, CURLOPT_URL, url.constData());
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.bytes.constData());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.bytes.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, m_config.allowInsecure ? "https,http" : "https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, long(m_config.timeoutMs));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, long(m_config.timeoutMs));
    if (!caBundle.isEmpty())
        curl_easy_setopt(h, CURLOPT_CAINFO, caBundle.constData());
    if (m_config.auth == HttpsSinkConfig::Auth::Basic) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, long(CURLAUTH_BASIC));
        curl_easy_setopt(h, CURLOPT_USERNAME, user.constData());
        curl_easy_setopt(h, CURLOPT_PASSWORD, password.constData());
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &cancel);

    const CURLcode code = curl_easy_perform(h);
    if (code != CURLE_OK) {
        const QString why = QString::fromUtf8(curl_easy_strerror(code));
        switch (code) {
        case CURLE_ABORTED_BY_CALLBACK:
            return fail(ErrorCode::Cancelled, u"cancelled"_s, where);
        case CURLE_OPERATION_TIMEDOUT:
            return fail(ErrorCode::Timeout, u"no answer in "_s + QString::number(m_config.timeoutMs) + u" ms"_s, where);
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CERTPROBLEM:
            return fail(ErrorCode::Failed, u"TLS verification failed: "_s + why, where,
                        u"check caBundle against the endpoint's certificate"_s);
        default:
            return fail(ErrorCode::Unavailable, u"POST failed: "_s + why, where);
        }
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    const QString replyStart = QString::fromUtf8(reply.left(300)).simplified();
    if (status < 200 || status > 299) {
        const QString message = u"the endpoint answered HTTP "_s + QString::number(status) +
                                (replyStart.isEmpty() ? QString() : u": "_s + replyStart);
        if (status == 401 || status == 403)
            return fail(ErrorCode::Unauthorized, message, where, u"check the sink's token or user"_s);
        if (status == 408 || status == 429 || status >= 500)
            return fail(ErrorCode::Unavailable, message, where);
        return fail(ErrorCode::Failed, message, where);
    }
    if (m_config.body == HttpsSinkConfig::Body::ElasticBulk) {
        // Bulk answers 200 even when items failed; then the batch as a whole did not land.
        const QJsonObject answer = QJsonDocument::fromJson(reply).object();
        if (answer.value(u"errors"_s).toBool(false))
            return fail(ErrorCode::Failed, u"the bulk request had item errors: "_s + replyStart, where);
    }
    return {};
}

} // namespace pando::adapters::https
