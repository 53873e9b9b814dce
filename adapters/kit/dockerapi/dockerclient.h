#pragma once
// Package dockerapi is a small client of the Docker Engine REST API over its unix socket: one
// request in, status and body out, or a body streamed to a callback (build progress, logs).
// It speaks HTTP through httpkit and never runs the docker CLI.
//
// Threading: a DockerClient holds only the socket path; every call uses its own curl handle,
// so calls may be made from any thread, concurrently.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QList>
#include <QPair>
#include <QString>
#include <functional>

namespace pando::adapters::dockerapi {

// The API version every path is prefixed with (Debian's docker.io 20.10 speaks 1.41).
inline constexpr const char *ApiVersion = "v1.41";

using Request = httpkit::Request;

struct Response {
    int status = 0;
    QByteArray body;
    QJsonDocument json() const { return QJsonDocument::fromJson(body); }
};

class DockerClient {
public:
    // socketPath empty: $DOCKER_HOST when it is unix://..., else /var/run/docker.sock.
    explicit DockerClient(QString socketPath = {});

    static QString defaultSocketPath();
    QString socketPath() const { return m_endpoint.unixSocket; }

    // Sends the request and returns the response for 1xx-3xx statuses. Fails with
    // Unavailable when the engine does not answer, NotFound on 404, Conflict on 409 and Failed
    // with Docker's own message on any other 4xx/5xx.
    Result<Response> call(const Request &request) const;
    Result<Response> get(const QString &path, const QList<QPair<QString, QString>> &query = {}) const;
    Result<Response> post(const QString &path, const QList<QPair<QString, QString>> &query = {},
                          const QByteArray &jsonBody = {}) const;

    // Streams a successful response's body to onChunk as it arrives; onChunk returns false to
    // stop early (not an error). Cancel is checked at least every 50 ms, also while the stream
    // is quiet; a cancelled call fails with ErrorCode::Cancelled. Returns the HTTP status.
    // Error statuses are mapped as in call(); their body is not passed to onChunk.
    Result<int> stream(const Request &request, const CancelToken &cancel,
                       const std::function<bool(QByteArrayView chunk)> &onChunk) const;

    // Docker's {"message": "..."} from an error body, or the body itself.
    static QString errorMessage(const QByteArray &body);

private:
    httpkit::Endpoint m_endpoint;
};

using httpkit::encodeQuery;

} // namespace pando::adapters::dockerapi
