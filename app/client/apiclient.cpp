#include "apiclient.h"

#include <QCryptographicHash>
#include <QIODevice>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslError>
#include <QWebSocket>
#include <memory>
#include <optional>

namespace pando::client {

ErrorCode errorCodeFromName(const QString &name)
{
    static const struct {
        const char *name;
        ErrorCode code;
    } names[] = {
        {"invalid", ErrorCode::Invalid},           {"not_found", ErrorCode::NotFound},
        {"conflict", ErrorCode::Conflict},         {"too_large", ErrorCode::TooLarge},
        {"unauthorized", ErrorCode::Unauthorized}, {"forbidden", ErrorCode::Forbidden},
        {"unavailable", ErrorCode::Unavailable},   {"timeout", ErrorCode::Timeout},
        {"cancelled", ErrorCode::Cancelled},       {"failed", ErrorCode::Failed},
        {"internal", ErrorCode::Internal},
    };
    for (const auto &entry : names) {
        if (name == QLatin1String(entry.name))
            return entry.code;
    }
    return ErrorCode::Internal;
}

namespace {

ErrorCode codeForStatus(int status)
{
    switch (status) {
    case 400:
        return ErrorCode::Invalid;
    case 401:
        return ErrorCode::Unauthorized;
    case 403:
        return ErrorCode::Forbidden;
    case 404:
        return ErrorCode::NotFound;
    case 409:
        return ErrorCode::Conflict;
    case 413:
        return ErrorCode::TooLarge;
    case 422:
        return ErrorCode::Failed;
    case 503:
        return ErrorCode::Unavailable;
    case 504:
        return ErrorCode::Timeout;
    default:
        return status >= 400 && status < 500 ? ErrorCode::Invalid : ErrorCode::Internal;
    }
}

// With a pin, no CA is trusted: every certificate then raises sslErrors, where the pin alone
// decides, before the request (and its bearer token) goes out.
QSslConfiguration pinnedConfiguration()
{
    QSslConfiguration config = QSslConfiguration::defaultConfiguration();
    config.setCaCertificates({});
    return config;
}

// The server's own certificate as the handshake saw it.
QSslCertificate peerOf(const QSslConfiguration &config, const QList<QSslError> &errors)
{
    if (!config.peerCertificate().isNull())
        return config.peerCertificate();
    for (const QSslError &error : errors) {
        if (!error.certificate().isNull())
            return error.certificate();
    }
    return QSslCertificate();
}

Error pinMismatch(const QString &actual, const QString &pinned, const QString &server)
{
    return Error{ErrorCode::Unauthorized,
                 QStringLiteral("the server's certificate has the fingerprint %1, but this connection is pinned to %2")
                     .arg(actual.isEmpty() ? QStringLiteral("(none)") : actual, pinned),
                 server,
                 QStringLiteral("if the install's certificate was replaced, pair again with a new link; otherwise "
                                "something between you and the install is answering in its place")};
}

} // namespace

QString certificateFingerprint(const QSslCertificate &certificate)
{
    return QString::fromLatin1(certificate.digest(QCryptographicHash::Sha256).toHex());
}

Error errorFromResponse(int status, const QByteArray &body)
{
    const QJsonObject error = QJsonDocument::fromJson(body).object().value(QStringLiteral("error")).toObject();
    if (error.isEmpty()) {
        QString text = QString::fromUtf8(body.left(200)).trimmed();
        return Error{codeForStatus(status),
                     text.isEmpty() ? QStringLiteral("the server answered HTTP %1").arg(status)
                                    : QStringLiteral("the server answered HTTP %1: %2").arg(status).arg(text)};
    }
    return Error{errorCodeFromName(error.value(QStringLiteral("code")).toString()),
                 error.value(QStringLiteral("message")).toString(), error.value(QStringLiteral("where")).toString(),
                 error.value(QStringLiteral("hint")).toString()};
}

ApiClient::ApiClient(QUrl baseUrl, QString token, QObject *parent)
    : QObject(parent), m_baseUrl(std::move(baseUrl)), m_token(std::move(token)),
      m_network(new QNetworkAccessManager(this))
{}

ApiClient::~ApiClient() = default;

Result<QUrl> ApiClient::parseServerUrl(const QString &text)
{
    QString value = text.trimmed();
    if (value.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("the server URL is empty"), QStringLiteral("--server"));
    if (!value.contains(QStringLiteral("://")))
        value.prepend(QStringLiteral("http://"));
    const QUrl url(value, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("\"%1\" is not a server URL").arg(text),
                    QStringLiteral("--server"), QStringLiteral("write it as http://host:port"));
    if (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https"))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("the scheme must be http or https, not \"%1\"").arg(url.scheme()),
                    QStringLiteral("--server"));
    return url;
}

QUrl ApiClient::urlFor(const QString &path) const
{
    QUrl url = m_baseUrl;
    const qsizetype q = path.indexOf(QLatin1Char('?'));
    QString base = url.path(QUrl::FullyEncoded);
    if (base.endsWith(QLatin1Char('/')))
        base.chop(1);
    // path arrives percent-encoded (app/client/api.h): TolerantMode keeps "%20" and "%2F" as they
    // are, where the default (DecodedMode) would encode the '%' again.
    url.setPath(base + (q < 0 ? path : path.left(q)), QUrl::TolerantMode);
    url.setQuery(q < 0 ? QString() : path.mid(q + 1), QUrl::TolerantMode);
    return url;
}

QUrl ApiClient::webSocketUrlFor(const QString &path) const
{
    QUrl url = urlFor(path);
    url.setScheme(url.scheme() == QLatin1String("https") ? QStringLiteral("wss") : QStringLiteral("ws"));
    return url;
}

QNetworkReply *ApiClient::send(const QByteArray &method, const QString &path, const QByteArray &body,
                               const QByteArray &contentType, const QByteArray &accept, int timeoutMs,
                               const std::shared_ptr<std::optional<Error>> &mismatch)
{
    QNetworkRequest request(urlFor(path));
    request.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    if (!accept.isEmpty())
        request.setRawHeader("Accept", accept);
    if (!contentType.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    request.setTransferTimeout(timeoutMs);
    if (!m_pinned.isEmpty())
        request.setSslConfiguration(pinnedConfiguration());
    QNetworkReply *reply = m_network->sendCustomRequest(request, method, body);
    if (!m_pinned.isEmpty()) {
        connect(reply, &QNetworkReply::sslErrors, this,
                [reply, pinned = m_pinned, mismatch, server = m_baseUrl.toString()](const QList<QSslError> &errors) {
                    const QString actual = certificateFingerprint(peerOf(reply->sslConfiguration(), errors));
                    if (actual == pinned)
                        reply->ignoreSslErrors();
                    else
                        *mismatch = pinMismatch(actual, pinned, server);
                });
    }
    return reply;
}

Error ApiClient::unreachable(QNetworkReply *reply) const
{
    const bool timedOut =
        reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError;
    return Error{timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                 QStringLiteral("cannot reach the server: %1").arg(reply->errorString()), m_baseUrl.toString(),
                 QStringLiteral("check --server / PANDO_SERVER and that pandod is running")};
}

void ApiClient::request(const QByteArray &method, const QString &path, const QByteArray &body,
                        const QByteArray &contentType, Callback callback)
{
    auto mismatch = std::make_shared<std::optional<Error>>();
    QNetworkReply *reply = send(method, path, body, contentType, "application/json", m_timeoutMs, mismatch);
    connect(reply, &QNetworkReply::finished, this, [this, reply, callback = std::move(callback), mismatch]() {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray data = reply->readAll();
        if (*mismatch) {
            callback(std::unexpected(**mismatch));
            return;
        }
        if (status == 0) {
            callback(std::unexpected(unreachable(reply)));
            return;
        }
        if (status < 200 || status >= 300) {
            callback(std::unexpected(errorFromResponse(status, data)));
            return;
        }
        ApiResponse response;
        response.status = status;
        response.body = data;
        response.json = QJsonDocument::fromJson(data).object();
        response.requestId = reply->rawHeader("X-Request-Id");
        callback(response);
    });
}

void ApiClient::download(const QByteArray &method, const QString &path, QIODevice *out, int timeoutMs,
                         const ProgressCallback &progress, Callback callback)
{
    const QString server = m_baseUrl.toString();
    auto mismatch = std::make_shared<std::optional<Error>>();
    QNetworkReply *reply = send(method, path, {}, {}, {}, timeoutMs, mismatch);
    struct State {
        qint64 written = 0;
        QByteArray errorBody; // a non-2xx answer's body, for its error
        std::optional<Error> writeError;
    };
    auto state = std::make_shared<State>();
    const auto drain = [reply, out, state, progress, path]() {
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray chunk = reply->readAll();
        if (status < 200 || status >= 300) {
            state->errorBody += chunk.left(65536 - state->errorBody.size());
            return;
        }
        if (state->writeError)
            return;
        if (out->write(chunk) != chunk.size()) {
            state->writeError =
                Error{ErrorCode::Failed, QStringLiteral("cannot write: %1").arg(out->errorString()), path};
            reply->abort();
            return;
        }
        state->written += chunk.size();
        if (progress)
            progress(state->written);
    };
    connect(reply, &QNetworkReply::readyRead, this, drain);
    connect(reply, &QNetworkReply::finished, this,
            [this, reply, state, drain, callback = std::move(callback), server, mismatch]() {
                reply->deleteLater();
                if (reply->bytesAvailable() > 0)
                    drain();
                const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
                if (*mismatch)
                    return callback(std::unexpected(**mismatch));
                if (state->writeError)
                    return callback(std::unexpected(*state->writeError));
                if (status >= 200 && status < 300 && reply->error() != QNetworkReply::NoError)
                    return callback(fail(ErrorCode::Unavailable,
                                         QStringLiteral("the download broke off after %1 bytes: %2")
                                             .arg(state->written)
                                             .arg(reply->errorString()),
                                         server));
                if (status == 0)
                    return callback(std::unexpected(unreachable(reply)));
                if (status < 200 || status >= 300)
                    return callback(std::unexpected(errorFromResponse(status, state->errorBody)));
                ApiResponse response;
                response.status = status;
                response.requestId = reply->rawHeader("X-Request-Id");
                callback(response);
            });
}

void ApiClient::postJson(const QString &path, const QJsonObject &body, Callback callback)
{
    request("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json", std::move(callback));
}

QWebSocket *ApiClient::newWebSocket(QObject *parent, const std::shared_ptr<std::optional<Error>> &mismatch)
{
    auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, parent);
    if (!m_pinned.isEmpty()) {
        socket->setSslConfiguration(pinnedConfiguration());
        connect(socket, &QWebSocket::sslErrors, socket,
                [socket, pinned = m_pinned, mismatch, server = m_baseUrl.toString()](const QList<QSslError> &errors) {
                    const QString actual = certificateFingerprint(peerOf(socket->sslConfiguration(), errors));
                    if (actual == pinned)
                        socket->ignoreSslErrors();
                    else
                        *mismatch = pinMismatch(actual, pinned, server);
                });
    }
    return socket;
}

void ApiClient::openWebSocket(QWebSocket *socket, const QString &path) const
{
    QNetworkRequest request(webSocketUrlFor(path));
    request.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    socket->open(request);
}

QWebSocket *ApiClient::follow(const QString &path, MessageCallback onMessage, ClosedCallback onClosed)
{
    // The callback runs once, whether the socket closes or fails first.
    auto closed = std::make_shared<ClosedCallback>(std::move(onClosed));
    const QString server = m_baseUrl.toString();
    auto mismatch = std::make_shared<std::optional<Error>>();
    QWebSocket *socket = newWebSocket(this, mismatch);
    connect(socket, &QWebSocket::textMessageReceived, this, [onMessage = std::move(onMessage)](const QString &text) {
        const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8());
        if (doc.isObject())
            onMessage(doc.object());
    });
    connect(socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
            [socket, closed, server, mismatch](QAbstractSocket::SocketError error) {
                // A server that closes after its last message may be seen closing before the
                // close frame is read: disconnected() follows and reads the frame's code and reason.
                if (!*closed || error == QAbstractSocket::RemoteHostClosedError)
                    return;
                auto callback = std::exchange(*closed, nullptr);
                if (*mismatch) {
                    callback(std::unexpected(**mismatch));
                    socket->deleteLater();
                    return;
                }
                callback(fail(ErrorCode::Unavailable,
                              QStringLiteral("the stream failed: %1").arg(socket->errorString()), server));
                socket->deleteLater();
            });
    connect(socket, &QWebSocket::disconnected, this, [socket, closed, server, mismatch]() {
        if (!*closed)
            return;
        auto callback = std::exchange(*closed, nullptr);
        if (*mismatch) {
            callback(std::unexpected(**mismatch));
            socket->deleteLater();
            return;
        }
        const auto code = socket->closeCode();
        const QString reason = socket->closeReason();
        socket->deleteLater();
        if (code == QWebSocketProtocol::CloseCodeNormal || code == QWebSocketProtocol::CloseCodeGoingAway) {
            callback({});
            return;
        }
        ErrorCode errorCode = ErrorCode::Unavailable;
        if (code == QWebSocketProtocol::CloseCodePolicyViolated)
            errorCode = reason.startsWith(QLatin1String("forbidden")) ? ErrorCode::Forbidden : ErrorCode::Unauthorized;
        else if (int(code) == 4404)
            errorCode = ErrorCode::NotFound;
        else if (int(code) == 4409)
            errorCode = ErrorCode::Conflict;
        else if (code == QWebSocketProtocol::CloseCodeProtocolError)
            errorCode = ErrorCode::Invalid;
        callback(
            fail(errorCode,
                 reason.isEmpty() ? QStringLiteral("the server closed the stream (code %1)").arg(int(code)) : reason,
                 server));
    });
    openWebSocket(socket, path);
    return socket;
}

} // namespace pando::client
