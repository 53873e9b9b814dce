#include "adapters/kit/httpkit/httptransport.h"

#include <QUrl>
#include <curl/curl.h>
#include <mutex>

namespace pando::adapters::httpkit {

namespace {

constexpr qsizetype MaxErrorBody = 1 << 20;

// curl_global_init is not thread-safe on every libcurl build: run it once, before any handle.
void ensureCurlInitialised()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
    CURL *easy = nullptr;
    const CancelToken *cancel = nullptr;
    const std::function<bool(QByteArrayView)> *onChunk = nullptr;
    QIODevice *device = nullptr;
    Exchange *out = nullptr;
    bool refusedAddress = false;
};

size_t writeCallback(char *ptr, size_t size, size_t count, void *userData)
{
    auto *t = static_cast<Transfer *>(userData);
    const size_t length = size * count;
    if (t->cancel && t->cancel->isCancelled()) {
        t->out->cancelled = true;
        return 0; // anything but length aborts the transfer
    }
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (!*t->onChunk || status >= 300) {
        // Error and redirect bodies are short; cap them so a misbehaving peer cannot grow us
        // unbounded. Only what was asked for reaches onChunk, never a redirect's page.
        if (*t->onChunk && t->out->body.size() > MaxErrorBody)
            return length;
        t->out->body.append(ptr, qsizetype(length));
        return length;
    }
    if (!(*t->onChunk)(QByteArrayView(ptr, qsizetype(length)))) {
        t->out->stoppedByConsumer = true;
        return 0;
    }
    return length;
}

size_t readCallback(char *buffer, size_t size, size_t count, void *userData)
{
    auto *t = static_cast<Transfer *>(userData);
    if (t->cancel && t->cancel->isCancelled()) {
        t->out->cancelled = true;
        return CURL_READFUNC_ABORT;
    }
    const qint64 n = t->device->read(buffer, qint64(size) * qint64(count));
    if (n < 0)
        return CURL_READFUNC_ABORT;
    return size_t(n);
}

size_t headerCallback(char *buffer, size_t size, size_t count, void *userData)
{
    auto *out = static_cast<Exchange *>(userData);
    const size_t length = size * count;
    const QByteArray line = QByteArray(buffer, qsizetype(length)).trimmed();
    // A status line starts each answer (an interim 100 or a redirect's too): keep the last one's.
    if (line.startsWith("HTTP/")) {
        out->headers.clear();
        return length;
    }
    const qsizetype colon = line.indexOf(':');
    if (colon > 0 && out->headers.size() < 200)
        out->headers.append({line.left(colon).trimmed(), line.mid(colon + 1).trimmed()});
    return length;
}

int progressCallback(void *userData, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    auto *t = static_cast<Transfer *>(userData);
    if (t->cancel && t->cancel->isCancelled()) {
        t->out->cancelled = true;
        return 1;
    }
    return 0;
}

// CURLOPT_PREREQFUNCTION: the connection is made; refuse it when it reached a link-local address.
int prerequestCallback(void *userData, char *connPrimaryIp, char *, int, int)
{
    auto *t = static_cast<Transfer *>(userData);
    if (isLinkLocalAddress(connPrimaryIp)) {
        t->refusedAddress = true;
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}

QByteArray encodePath(const QString &path)
{
    // Image references carry '/' and ':' and the engines' routers take them literally.
    return QUrl::toPercentEncoding(path, "/:@");
}

} // namespace

bool isLinkLocalAddress(QByteArrayView ip)
{
    const QByteArray lower = ip.toByteArray().toLower();
    return lower.startsWith("169.254.") || lower.startsWith("::ffff:169.254.") || lower.startsWith("fe8") ||
           lower.startsWith("fe9") || lower.startsWith("fea") || lower.startsWith("feb");
}

QByteArray Exchange::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers)
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    return {};
}

QByteArray encodeQuery(const QList<QPair<QString, QString>> &query)
{
    QByteArray out;
    for (const auto &[key, value] : query) {
        if (!out.isEmpty())
            out += '&';
        out += QUrl::toPercentEncoding(key) + '=' + QUrl::toPercentEncoding(value);
    }
    return out;
}

// One transfer on its own easy and multi handle. The multi loop (instead of curl_easy_perform)
// lets us check the cancel token every 50 ms even when the peer is quiet; libcurl's own
// progress callback may wait a second between calls then.
Exchange perform(const Endpoint &endpoint, const Request &request, const CancelToken *cancel,
                 const std::function<bool(QByteArrayView chunk)> &onChunk)
{
    ensureCurlInitialised();
    Exchange out;
    CURL *easy = curl_easy_init();
    if (!easy) {
        out.transportFailed = true;
        out.error = QStringLiteral("curl_easy_init failed");
        return out;
    }
    Transfer t{easy, cancel, &onChunk, nullptr, &out};
    char errorBuffer[CURL_ERROR_SIZE] = {};

    QByteArray url = endpoint.baseUrl + (request.pathIsEncoded ? request.path.toLatin1() : encodePath(request.path));
    if (!request.query.isEmpty())
        url += '?' + encodeQuery(request.query);
    const QByteArray socket = endpoint.unixSocket.toLocal8Bit();
    const QByteArray cert = endpoint.clientCert.toLocal8Bit();
    const QByteArray key = endpoint.clientKey.toLocal8Bit();
    const QByteArray serverCert = endpoint.serverCert.toLocal8Bit();
    const QByteArray caFile = endpoint.caFile.toLocal8Bit();

    curl_easy_setopt(easy, CURLOPT_URL, url.constData());
    if (!socket.isEmpty())
        curl_easy_setopt(easy, CURLOPT_UNIX_SOCKET_PATH, socket.constData());
    if (!cert.isEmpty()) {
        curl_easy_setopt(easy, CURLOPT_SSLCERT, cert.constData());
        curl_easy_setopt(easy, CURLOPT_SSLKEY, key.constData());
    }
    if (!serverCert.isEmpty()) {
        // The server's own (often self-signed) certificate is the only one trusted; its name
        // need not match the address, as with `incus remote add` after accepting a fingerprint.
        curl_easy_setopt(easy, CURLOPT_CAINFO, serverCert.constData());
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!caFile.isEmpty()) {
        curl_easy_setopt(easy, CURLOPT_CAINFO, caFile.constData());
    }
    if (endpoint.refuseLinkLocal) {
        curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, prerequestCallback);
        curl_easy_setopt(easy, CURLOPT_PREREQDATA, &t);
    }
    if (endpoint.insecure) {
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (request.keepHeaders) {
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, headerCallback);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, &out);
    }
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errorBuffer);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    if (request.timeoutMs > 0)
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, long(request.timeoutMs));
    if (request.stallMs > 0) {
        // Fewer than one byte a second for that many seconds.
        curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, long((request.stallMs + 999) / 1000));
    }
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, writeCallback);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, progressCallback);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &t);

    const bool hasBody = request.bodyDevice || !request.body.isEmpty();
    curl_slist *headers = nullptr;
    // No "Expect: 100-continue" round trip for large bodies.
    headers = curl_slist_append(headers, "Expect:");
    if (hasBody) {
        const QByteArray type =
            "Content-Type: " + (request.contentType.isEmpty() ? QByteArray("application/json") : request.contentType);
        headers = curl_slist_append(headers, type.constData());
    }
    for (const auto &[name, value] : request.headers)
        headers = curl_slist_append(headers, QByteArray(name + ": " + value).constData());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);

    if (request.method == "POST" || hasBody) {
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        if (request.bodyDevice) {
            t.device = request.bodyDevice;
            curl_easy_setopt(easy, CURLOPT_READFUNCTION, readCallback);
            curl_easy_setopt(easy, CURLOPT_READDATA, &t);
            const qint64 size =
                request.bodyDevice->isSequential() ? -1 : request.bodyDevice->size() - request.bodyDevice->pos();
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(size));
        } else {
            curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.constData());
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.size()));
        }
    }
    if (request.method != "GET" && request.method != "POST")
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.constData());

    CURLcode code = CURLE_OK;
    CURLM *multi = curl_multi_init();
    curl_multi_add_handle(multi, easy);
    int running = 1;
    bool finished = false;
    while (!finished) {
        const CURLMcode mc = curl_multi_perform(multi, &running);
        if (mc != CURLM_OK) {
            code = CURLE_FAILED_INIT;
            out.error = QString::fromUtf8(curl_multi_strerror(mc));
            break;
        }
        int queued = 0;
        while (CURLMsg *msg = curl_multi_info_read(multi, &queued)) {
            if (msg->msg == CURLMSG_DONE) {
                code = msg->data.result;
                finished = true;
            }
        }
        if (finished || !running)
            break;
        if (cancel && cancel->isCancelled()) {
            out.cancelled = true;
            break;
        }
        curl_multi_poll(multi, nullptr, 0, cancel ? 50 : 1000, nullptr);
    }
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    out.status = int(status);
    if (cancel && cancel->isCancelled())
        out.cancelled = true;
    if (code != CURLE_OK && !out.stoppedByConsumer && !out.cancelled) {
        out.transportFailed = true;
        out.timedOut = code == CURLE_OPERATION_TIMEDOUT;
        out.couldNotConnect = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST;
        if (t.refusedAddress)
            out.error = QStringLiteral("refused to connect to a link-local address");
        if (out.error.isEmpty())
            out.error = errorBuffer[0] ? QString::fromUtf8(errorBuffer) : QString::fromUtf8(curl_easy_strerror(code));
    }

    curl_multi_remove_handle(multi, easy);
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
    return out;
}

} // namespace pando::adapters::httpkit
