#include "adapters/kit/dockerapi/dockerclient.h"

#include <QJsonObject>
#include <QUrl>
#include <curl/curl.h>
#include <mutex>

namespace pando::adapters::dockerapi {

namespace {

const QString DefaultSocket = QStringLiteral("/var/run/docker.sock");
const QString UnavailableHint =
    QStringLiteral("is dockerd running? start it with `sudo dockerd` or `systemctl start docker`");

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
    QByteArray collected; // the whole body for call(), an error body for stream()
    bool cancelled = false;
    bool stoppedByConsumer = false;
};

size_t writeCallback(char *ptr, size_t size, size_t count, void *userData)
{
    auto *t = static_cast<Transfer *>(userData);
    const size_t length = size * count;
    if (t->cancel && t->cancel->isCancelled()) {
        t->cancelled = true;
        return 0; // anything but length aborts the transfer
    }
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    if (!t->onChunk || status >= 400) {
        // Error bodies are short JSON; cap them so a misbehaving peer cannot grow us unbounded.
        if (t->onChunk && t->collected.size() > 1 << 20)
            return length;
        t->collected.append(ptr, qsizetype(length));
        return length;
    }
    if (!(*t->onChunk)(QByteArrayView(ptr, qsizetype(length)))) {
        t->stoppedByConsumer = true;
        return 0;
    }
    return length;
}

size_t readCallback(char *buffer, size_t size, size_t count, void *userData)
{
    auto *t = static_cast<Transfer *>(userData);
    if (t->cancel && t->cancel->isCancelled()) {
        t->cancelled = true;
        return CURL_READFUNC_ABORT;
    }
    const qint64 n = t->device->read(buffer, qint64(size * count));
    if (n < 0)
        return CURL_READFUNC_ABORT;
    return size_t(n);
}

int progressCallback(void *userData, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
{
    auto *t = static_cast<Transfer *>(userData);
    if (t->cancel && t->cancel->isCancelled()) {
        t->cancelled = true;
        return 1;
    }
    return 0;
}

QByteArray encodePath(const QString &path)
{
    // Image references carry '/' and ':' and Docker's router takes them literally.
    return QUrl::toPercentEncoding(path, "/:@");
}

struct Outcome {
    CURLcode code = CURLE_OK;
    long status = 0;
    QString curlError;
};

// Runs one transfer on its own easy and multi handle. The multi loop (instead of
// curl_easy_perform) lets us check the cancel token every 50 ms even when the peer is quiet;
// libcurl's own progress callback may wait a second between calls then.
Outcome perform(const QString &socketPath, const Request &request, Transfer &t)
{
    ensureCurlInitialised();
    Outcome out;
    CURL *easy = curl_easy_init();
    if (!easy) {
        out.code = CURLE_FAILED_INIT;
        out.curlError = QStringLiteral("curl_easy_init failed");
        return out;
    }
    t.easy = easy;
    char errorBuffer[CURL_ERROR_SIZE] = {};

    QByteArray url = QByteArray("http://localhost/") + ApiVersion + encodePath(request.path);
    if (!request.query.isEmpty())
        url += '?' + encodeQuery(request.query);
    const QByteArray socket = socketPath.toLocal8Bit();

    curl_easy_setopt(easy, CURLOPT_URL, url.constData());
    curl_easy_setopt(easy, CURLOPT_UNIX_SOCKET_PATH, socket.constData());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errorBuffer);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    if (request.timeoutMs > 0)
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, long(request.timeoutMs));
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

    CURLM *multi = curl_multi_init();
    curl_multi_add_handle(multi, easy);
    int running = 1;
    bool finished = false;
    while (!finished) {
        const CURLMcode mc = curl_multi_perform(multi, &running);
        if (mc != CURLM_OK) {
            out.code = CURLE_FAILED_INIT;
            out.curlError = QString::fromUtf8(curl_multi_strerror(mc));
            break;
        }
        int queued = 0;
        while (CURLMsg *msg = curl_multi_info_read(multi, &queued)) {
            if (msg->msg == CURLMSG_DONE) {
                out.code = msg->data.result;
                finished = true;
            }
        }
        if (finished || !running)
            break;
        if (t.cancel && t.cancel->isCancelled()) {
            t.cancelled = true;
            break;
        }
        curl_multi_poll(multi, nullptr, 0, t.cancel ? 50 : 1000, nullptr);
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &out.status);
    if (out.code != CURLE_OK && out.curlError.isEmpty())
        out.curlError =
            errorBuffer[0] ? QString::fromUtf8(errorBuffer) : QString::fromUtf8(curl_easy_strerror(out.code));

    curl_multi_remove_handle(multi, easy);
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
    return out;
}

std::unexpected<Error> statusError(const Request &request, long status, const QByteArray &body)
{
    const QString where = QStringLiteral("docker %1 %2").arg(QString::fromLatin1(request.method), request.path);
    QString message = DockerClient::errorMessage(body);
    if (message.isEmpty())
        message = QStringLiteral("the engine answered HTTP %1").arg(status);
    if (status == 404)
        return fail(ErrorCode::NotFound, message, where);
    if (status == 409)
        return fail(ErrorCode::Conflict, message, where);
    return fail(ErrorCode::Failed, message, where);
}

std::unexpected<Error> transportError(const QString &socketPath, const Request &request, const Outcome &out)
{
    const QString where = QStringLiteral("docker %1 %2").arg(QString::fromLatin1(request.method), request.path);
    if (out.code == CURLE_OPERATION_TIMEDOUT)
        return fail(ErrorCode::Timeout,
                    QStringLiteral("the Docker engine did not answer in time: %1").arg(out.curlError), where);
    if (out.code == CURLE_COULDNT_CONNECT || out.code == CURLE_COULDNT_RESOLVE_HOST)
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("cannot connect to the Docker engine at %1: %2").arg(socketPath, out.curlError),
                    where, UnavailableHint);
    return fail(ErrorCode::Unavailable,
                QStringLiteral("the connection to the Docker engine at %1 failed: %2").arg(socketPath, out.curlError),
                where, UnavailableHint);
}

} // namespace

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

DockerClient::DockerClient(QString socketPath)
    : m_socketPath(socketPath.isEmpty() ? defaultSocketPath() : std::move(socketPath))
{}

QString DockerClient::defaultSocketPath()
{
    const QString host = qEnvironmentVariable("DOCKER_HOST");
    if (host.startsWith(QLatin1String("unix://")))
        return host.mid(7);
    return DefaultSocket;
}

QString DockerClient::errorMessage(const QByteArray &body)
{
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    if (doc.isObject()) {
        const QString message = doc.object().value(QLatin1String("message")).toString();
        if (!message.isEmpty())
            return message;
    }
    return QString::fromUtf8(body).trimmed();
}

Result<Response> DockerClient::call(const Request &request) const
{
    Transfer t;
    const Outcome out = perform(m_socketPath, request, t);
    if (out.code != CURLE_OK)
        return transportError(m_socketPath, request, out);
    if (out.status >= 400)
        return statusError(request, out.status, t.collected);
    return Response{int(out.status), std::move(t.collected)};
}

Result<Response> DockerClient::get(const QString &path, const QList<QPair<QString, QString>> &query) const
{
    Request r;
    r.path = path;
    r.query = query;
    r.timeoutMs = 60000;
    return call(r);
}

Result<Response> DockerClient::post(const QString &path, const QList<QPair<QString, QString>> &query,
                                    const QByteArray &jsonBody) const
{
    Request r;
    r.method = "POST";
    r.path = path;
    r.query = query;
    r.body = jsonBody;
    r.timeoutMs = 120000;
    return call(r);
}

Result<int> DockerClient::stream(const Request &request, const CancelToken &cancel,
                                 const std::function<bool(QByteArrayView chunk)> &onChunk) const
{
    Transfer t;
    t.cancel = &cancel;
    t.onChunk = &onChunk;
    const Outcome out = perform(m_socketPath, request, t);
    if (t.cancelled || cancel.isCancelled())
        return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"),
                    QStringLiteral("docker %1 %2").arg(QString::fromLatin1(request.method), request.path));
    if (out.status >= 400)
        return statusError(request, out.status, t.collected);
    if (out.code != CURLE_OK && !t.stoppedByConsumer)
        return transportError(m_socketPath, request, out);
    return int(out.status);
}

} // namespace pando::adapters::dockerapi
