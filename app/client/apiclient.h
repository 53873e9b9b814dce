#pragma once
// Package client: the Pando API as seen from a client (the `pando` CLI, and the desktop when it
// attaches to a remote install): JSON requests with bearer auth whose failures come back as
// pando::Error values, and WebSocket streams for live logs and events. No dependency on core.
//
// Threading: an ApiClient and its callbacks live on the thread that created it; requests never
// block, callbacks run on that thread's event loop.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>
#include <functional>
#include <memory>
#include <optional>

class QIODevice;
class QNetworkAccessManager;
class QNetworkReply;
class QSslCertificate;
class QWebSocket;

namespace pando::client {

struct ApiResponse {
    int status = 0;       // HTTP status
    QJsonObject json;     // the body, when it is a JSON object
    QByteArray body;      // the raw body
    QByteArray requestId; // the server's X-Request-Id
};

// SHA-256 of a certificate's DER as 64 lowercase hex digits, as pairing links carry it.
QString certificateFingerprint(const QSslCertificate &certificate);

// Turns a server's error body ({"error":{code,message,where,hint}}) into an Error; a body that is
// not one gives an error naming the HTTP status.
Error errorFromResponse(int status, const QByteArray &body);
ErrorCode errorCodeFromName(const QString &name);

class ApiClient : public QObject {
    Q_OBJECT
public:
    // Callbacks get the response for a 2xx status and the server's error otherwise.
    using Callback = std::function<void(const Result<ApiResponse> &)>;
    using MessageCallback = std::function<void(const QJsonObject &)>;
    // Called once when a stream ends: an error, or a value when the server closed it normally.
    using ClosedCallback = std::function<void(const Status &)>;

    ApiClient(QUrl baseUrl, QString token, QObject *parent = nullptr);
    ~ApiClient() override;

    // "http://host:port", "https://host", or "host:port" (http assumed).
    static Result<QUrl> parseServerUrl(const QString &text);

    QUrl baseUrl() const { return m_baseUrl; }
    void setTimeoutMs(int ms) { m_timeoutMs = ms; }
    // Pins the server's certificate (https/wss only): with a fingerprint (SHA-256 of the
    // certificate, 64 hex digits) TLS accepts exactly that certificate, self-signed or not, and
    // refuses any other before anything is sent, with an error naming both fingerprints. Empty:
    // the system's CAs decide, as usual.
    void setPinnedFingerprint(const QString &sha256Hex) { m_pinned = sha256Hex.toLower(); }
    QString pinnedFingerprint() const { return m_pinned; }

    // path is below the base URL, percent-encoded, and may carry a query:
    // "/api/v1/apps/my%20app/deploys?limit=5". Build it with app/client/api.h, not by hand.
    void request(const QByteArray &method, const QString &path, const QByteArray &body, const QByteArray &contentType,
                 Callback callback);
    void get(const QString &path, Callback callback) { request("GET", path, {}, {}, std::move(callback)); }
    void postJson(const QString &path, const QJsonObject &body, Callback callback);
    void remove(const QString &path, Callback callback) { request("DELETE", path, {}, {}, std::move(callback)); }

    // Streams the body of a 2xx answer into out as it arrives, never whole in memory (service
    // backups); progress gets the bytes written so far. The callback gets the answer without its
    // body, or the server's error (whose body is not written to out), or the error writing out.
    // timeoutMs bounds the time without a byte, which includes the server's time to its first.
    using ProgressCallback = std::function<void(qint64 bytes)>;
    void download(const QByteArray &method, const QString &path, QIODevice *out, int timeoutMs,
                  const ProgressCallback &progress, Callback callback);

    // Opens a WebSocket stream ("/api/v1/events?app=hello"); each text message that is a JSON
    // object goes to onMessage. The socket is owned by this client; close it to stop early.
    QWebSocket *follow(const QString &path, MessageCallback onMessage, ClosedCallback onClosed);

    // A WebSocket that checks the server's certificate as every request does (the pin, when
    // set: a mismatch is put in mismatch before the socket fails), owned by parent; then opened
    // to path with the token. For streams that are not JSON (a tunnel's bytes, appforwarder.h).
    QWebSocket *newWebSocket(QObject *parent, const std::shared_ptr<std::optional<Error>> &mismatch);
    void openWebSocket(QWebSocket *socket, const QString &path) const;

    QUrl urlFor(const QString &path) const;
    QUrl webSocketUrlFor(const QString &path) const;

private:
    // Sends one request with the token and, when pinned, the certificate check (a mismatch is
    // put in mismatch before the reply finishes).
    QNetworkReply *send(const QByteArray &method, const QString &path, const QByteArray &body,
                        const QByteArray &contentType, const QByteArray &accept, int timeoutMs,
                        const std::shared_ptr<std::optional<Error>> &mismatch);
    // The error of a request that got no HTTP answer.
    Error unreachable(QNetworkReply *reply) const;

    QUrl m_baseUrl;
    QString m_token;
    int m_timeoutMs = 30000;
    QString m_pinned;
    QNetworkAccessManager *m_network;
};

} // namespace pando::client
