#pragma once
// Package httpkit is the HTTP transport the REST clients of local engines share (Docker, Incus):
// one request in, status and body out, or a body streamed to a callback, over a unix socket or
// HTTPS with a client certificate and a pinned server certificate. It speaks HTTP through
// libcurl; what a status or an error body means is the client's business.
//
// Threading: every call uses its own curl handle, so calls may be made from any thread,
// concurrently.

#include "adapters/api/cancel.h"

#include <QByteArray>
#include <QIODevice>
#include <QList>
#include <QPair>
#include <QString>
#include <functional>

namespace pando::adapters::httpkit {

// Where requests go.
struct Endpoint {
    QString unixSocket;    // set: every request goes over this socket
    QByteArray baseUrl;    // prefixed to every path: "http://localhost/v1.41", "https://host:8443"
    QString clientCert;    // PEM file of the client certificate (TLS only)
    QString clientKey;     // PEM file of its key
    QString serverCert;    // PEM file: the one certificate the server must present; empty = system CAs
    QString caFile;        // PEM roots the server's certificate must chain to, for its name; empty = system CAs
    bool insecure = false; // TLS without checking the server's certificate (a user's explicit choice)
    // Refuse to talk to a link-local address (169.254.0.0/16, fe80::/10: where clouds serve
    // instance credentials), checked on the address connected to, so a name that resolves there
    // is refused too. For addresses a user's configuration names.
    bool refuseLinkLocal = false;
};

struct Request {
    QByteArray method = "GET";
    QString path;                         // "/containers/abc/start", after the endpoint's base URL
    bool pathIsEncoded = false;           // path is sent as it is (percent-encoded already, as signed)
    QList<QPair<QString, QString>> query; // encoded by the transport
    QByteArray body;                      // sent when bodyDevice is null and body is set
    QIODevice *bodyDevice = nullptr;      // large bodies (build contexts, images) streamed from here
    QByteArray contentType;               // defaults to application/json when a body is set
    QList<QPair<QByteArray, QByteArray>> headers;
    int timeoutMs = 0;        // 0: no limit (builds, follows)
    int stallMs = 0;          // > 0: timed out when no byte comes in or goes out for this long
    bool keepHeaders = false; // collect the answer's headers into Exchange::headers

    Request &addQuery(const QString &key, const QString &value)
    {
        query.append({key, value});
        return *this;
    }
};

// What came back. transportFailed: no HTTP answer (see error); otherwise status and body (for a
// streamed success the body holds nothing: it went to onChunk).
struct Exchange {
    bool transportFailed = false;
    bool timedOut = false;
    bool couldNotConnect = false;
    bool cancelled = false;
    bool stoppedByConsumer = false;
    QString error; // curl's words when transportFailed
    int status = 0;
    QByteArray body;
    // The final answer's headers (names as sent), when Request::keepHeaders asked for them.
    QList<QPair<QByteArray, QByteArray>> headers;
    // The first header named name (case-insensitive); empty when there is none.
    QByteArray header(QByteArrayView name) const;
};

// Runs one request. onChunk (optional) receives the body of a 1xx-2xx answer as it arrives and
// returns false to stop early; error and redirect bodies (>= 300) are collected into
// Exchange::body, capped at 1 MiB. cancel (optional) is checked at least every 50 ms, also while the peer is quiet.
Exchange perform(const Endpoint &endpoint, const Request &request, const CancelToken *cancel = nullptr,
                 const std::function<bool(QByteArrayView chunk)> &onChunk = {});

// Whether ip (as text) is in 169.254.0.0/16 or fe80::/10 (also IPv4-mapped).
bool isLinkLocalAddress(QByteArrayView ip);

// Encodes a query string: everything but unreserved characters is percent-encoded.
QByteArray encodeQuery(const QList<QPair<QString, QString>> &query);

} // namespace pando::adapters::httpkit
