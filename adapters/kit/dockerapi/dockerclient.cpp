#include "adapters/kit/dockerapi/dockerclient.h"

#include <QJsonObject>

namespace pando::adapters::dockerapi {

namespace {

const QString DefaultSocket = QStringLiteral("/var/run/docker.sock");
const QString UnavailableHint =
    QStringLiteral("is dockerd running? start it with `sudo dockerd` or `systemctl start docker`");

QString where(const Request &request)
{
    return QStringLiteral("docker %1 %2").arg(QString::fromLatin1(request.method), request.path);
}

std::unexpected<Error> statusError(const Request &request, int status, const QByteArray &body)
{
    QString message = DockerClient::errorMessage(body);
    if (message.isEmpty())
        message = QStringLiteral("the engine answered HTTP %1").arg(status);
    if (status == 404)
        return fail(ErrorCode::NotFound, message, where(request));
    if (status == 409)
        return fail(ErrorCode::Conflict, message, where(request));
    return fail(ErrorCode::Failed, message, where(request));
}

std::unexpected<Error> transportError(const QString &socketPath, const Request &request, const httpkit::Exchange &out)
{
    if (out.timedOut)
        return fail(ErrorCode::Timeout, QStringLiteral("the Docker engine did not answer in time: %1").arg(out.error),
                    where(request));
    if (out.couldNotConnect)
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("cannot connect to the Docker engine at %1: %2").arg(socketPath, out.error),
                    where(request), UnavailableHint);
    return fail(ErrorCode::Unavailable,
                QStringLiteral("the connection to the Docker engine at %1 failed: %2").arg(socketPath, out.error),
                where(request), UnavailableHint);
}

} // namespace

DockerClient::DockerClient(QString socketPath)
{
    m_endpoint.unixSocket = socketPath.isEmpty() ? defaultSocketPath() : std::move(socketPath);
    m_endpoint.baseUrl = QByteArray("http://localhost/") + ApiVersion;
}

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
        QString message = doc.object().value(QLatin1String("message")).toString();
        if (!message.isEmpty())
            return message;
    }
    return QString::fromUtf8(body).trimmed();
}

Result<Response> DockerClient::call(const Request &request) const
{
    httpkit::Exchange out = httpkit::perform(m_endpoint, request);
    if (out.transportFailed)
        return transportError(socketPath(), request, out);
    if (out.status >= 400)
        return statusError(request, out.status, out.body);
    return Response{out.status, std::move(out.body)};
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
    const httpkit::Exchange out = httpkit::perform(m_endpoint, request, &cancel, onChunk);
    if (out.cancelled)
        return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"), where(request));
    if (out.status >= 400)
        return statusError(request, out.status, out.body);
    if (out.transportFailed)
        return transportError(socketPath(), request, out);
    return out.status;
}

} // namespace pando::adapters::dockerapi
