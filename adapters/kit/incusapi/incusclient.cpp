#include "adapters/kit/incusapi/incusclient.h"

#include "adapters/kit/httpkit/devicesink.h"

#include <QDeadlineTimer>
#include <QIODevice>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QThread>
#include <QUrl>

namespace pando::adapters::incusapi {

namespace {

// How long a given-up operation may take to end before wait() returns anyway.
constexpr int SettleSeconds = 60;

const QString UnavailableHint =
    QStringLiteral("is incusd running and initialised? start it with `systemctl start incus` (or `incusd &`), then "
                   "`incus admin init`");

QString where(const httpkit::Request &request)
{
    return QStringLiteral("incus %1 %2").arg(QString::fromLatin1(request.method), request.path);
}

StringMap stringMap(const QJsonValue &value)
{
    StringMap out;
    const QJsonObject object = value.toObject();
    for (auto it = object.begin(); it != object.end(); ++it)
        out.insert(it.key(), it.value().toString());
    return out;
}

QJsonObject toObject(const StringMap &map)
{
    QJsonObject out;
    for (auto it = map.begin(); it != map.end(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

std::unexpected<Error> statusError(const httpkit::Request &request, int status, const QString &message)
{
    const QString text = message.isEmpty() ? QStringLiteral("Incus answered HTTP %1").arg(status) : message;
    switch (status) {
    case 404:
        return fail(ErrorCode::NotFound, text, where(request));
    case 409:
        return fail(ErrorCode::Conflict, text, where(request));
    case 403:
        return fail(ErrorCode::Forbidden, text, where(request),
                    QStringLiteral("add this client's certificate to the Incus trust store "
                                   "(`incus config trust add-certificate`)"));
    default:
        return fail(ErrorCode::Failed, text, where(request));
    }
}

} // namespace

QString Connection::defaultSocket()
{
    const QString fromEnv = qEnvironmentVariable("INCUS_SOCKET");
    return fromEnv.isEmpty() ? QStringLiteral("/var/lib/incus/unix.socket") : fromEnv;
}

Server Server::fromJson(const QJsonObject &metadata)
{
    Server s;
    const QJsonObject env = metadata.value(QLatin1String("environment")).toObject();
    s.serverVersion = env.value(QLatin1String("server_version")).toString();
    for (const QString &driver :
         env.value(QLatin1String("driver")).toString().split(QLatin1Char('|'), Qt::SkipEmptyParts))
        s.drivers << driver.trimmed();
    s.kernelArchitecture = env.value(QLatin1String("kernel_architecture")).toString();
    s.auth = metadata.value(QLatin1String("auth")).toString();
    for (const QJsonValue e : metadata.value(QLatin1String("api_extensions")).toArray())
        s.apiExtensions << e.toString();
    return s;
}

Operation Operation::fromJson(const QJsonObject &object)
{
    Operation op;
    op.id = object.value(QLatin1String("id")).toString();
    op.description = object.value(QLatin1String("description")).toString();
    op.status = object.value(QLatin1String("status")).toString();
    op.statusCode = object.value(QLatin1String("status_code")).toInt();
    op.err = object.value(QLatin1String("err")).toString();
    op.mayCancel = object.value(QLatin1String("may_cancel")).toBool();
    op.metadata = object.value(QLatin1String("metadata")).toObject();
    return op;
}

QJsonObject InstancesPost::toJson() const
{
    QJsonObject devs;
    for (auto it = devices.begin(); it != devices.end(); ++it)
        devs.insert(it.key(), toObject(it.value()));
    return QJsonObject{
        {QStringLiteral("name"), name},
        {QStringLiteral("type"), type},
        {QStringLiteral("source"), QJsonObject{{QStringLiteral("type"), QStringLiteral("image")},
                                               {QStringLiteral("fingerprint"), sourceFingerprint}}},
        {QStringLiteral("config"), toObject(config)},
        {QStringLiteral("devices"), devs},
        {QStringLiteral("profiles"), QJsonArray::fromStringList(profiles)},
        {QStringLiteral("start"), start},
    };
}

Instance Instance::fromJson(const QJsonObject &object)
{
    Instance i;
    i.name = object.value(QLatin1String("name")).toString();
    i.type = object.value(QLatin1String("type")).toString();
    i.status = object.value(QLatin1String("status")).toString();
    i.statusCode = object.value(QLatin1String("status_code")).toInt();
    i.config = stringMap(object.value(QLatin1String("config")));
    i.createdAt = object.value(QLatin1String("created_at")).toString();
    i.lastUsedAt = object.value(QLatin1String("last_used_at")).toString();
    return i;
}

InstanceState InstanceState::fromJson(const QJsonObject &object)
{
    InstanceState s;
    s.status = object.value(QLatin1String("status")).toString();
    s.pid = object.value(QLatin1String("pid")).toInteger();
    s.memoryUsage = object.value(QLatin1String("memory")).toObject().value(QLatin1String("usage")).toInteger();
    const QJsonObject network = object.value(QLatin1String("network")).toObject();
    for (auto it = network.begin(); it != network.end(); ++it) {
        QStringList inet;
        for (const QJsonValue a : it.value().toObject().value(QLatin1String("addresses")).toArray()) {
            const QJsonObject address = a.toObject();
            if (address.value(QLatin1String("family")).toString() == QLatin1String("inet"))
                inet << address.value(QLatin1String("address")).toString();
        }
        s.inetAddresses.insert(it.key(), inet);
    }
    return s;
}

Image Image::fromJson(const QJsonObject &object)
{
    Image i;
    i.fingerprint = object.value(QLatin1String("fingerprint")).toString();
    i.type = object.value(QLatin1String("type")).toString();
    i.size = object.value(QLatin1String("size")).toInteger();
    i.properties = stringMap(object.value(QLatin1String("properties")));
    for (const QJsonValue a : object.value(QLatin1String("aliases")).toArray())
        i.aliases << a.toObject().value(QLatin1String("name")).toString();
    return i;
}

IncusClient::IncusClient(Connection connection) : m_connection(std::move(connection))
{
    if (m_connection.url.isEmpty()) {
        if (m_connection.socket.isEmpty())
            m_connection.socket = Connection::defaultSocket();
        m_endpoint.unixSocket = m_connection.socket;
        m_endpoint.baseUrl = "http://incus";
        m_description = QStringLiteral("the Incus server at ") + m_connection.socket;
    } else {
        QString url = m_connection.url;
        while (url.endsWith(QLatin1Char('/')))
            url.chop(1);
        m_endpoint.baseUrl = url.toUtf8();
        m_endpoint.clientCert = m_connection.clientCert;
        m_endpoint.clientKey = m_connection.clientKey;
        m_endpoint.serverCert = m_connection.serverCert;
        m_description = QStringLiteral("the Incus server at ") + url;
    }
}

Result<IncusClient::Answer> IncusClient::call(const httpkit::Request &request) const
{
    httpkit::Request r = request;
    if (r.timeoutMs == 0)
        r.timeoutMs = 60000;
    const httpkit::Exchange out = httpkit::perform(m_endpoint, r);
    if (out.transportFailed) {
        if (out.timedOut)
            return fail(ErrorCode::Timeout, QStringLiteral("%1 did not answer in time").arg(description()), where(r));
        return fail(ErrorCode::Unavailable, QStringLiteral("cannot reach %1: %2").arg(description(), out.error),
                    where(r), UnavailableHint);
    }
    const QJsonObject envelope = QJsonDocument::fromJson(out.body).object();
    const QString type = envelope.value(QLatin1String("type")).toString();
    if (out.status >= 400 || type == QLatin1String("error")) {
        const int code = envelope.value(QLatin1String("error_code")).toInt(out.status);
        QString message = envelope.value(QLatin1String("error")).toString();
        if (message.isEmpty())
            message = QString::fromUtf8(out.body.left(512)).trimmed();
        return statusError(r, code, message);
    }
    Answer answer;
    answer.metadata = envelope.value(QLatin1String("metadata"));
    if (type == QLatin1String("async"))
        answer.operation = Operation::fromJson(answer.metadata.toObject());
    else if (type != QLatin1String("sync"))
        return fail(ErrorCode::Failed,
                    QStringLiteral("%1 answered something that is not an Incus response (HTTP %2)")
                        .arg(description())
                        .arg(out.status),
                    where(r), QStringLiteral("check that the socket or URL is an Incus server's"));
    return answer;
}

Result<QJsonValue> IncusClient::get(const QString &path, const QList<QPair<QString, QString>> &query) const
{
    httpkit::Request r;
    r.path = path;
    r.query = query;
    auto answer = call(r);
    if (!answer)
        return std::unexpected(answer.error());
    return answer->metadata;
}

Result<Operation> IncusClient::wait(const Operation &operation, int timeoutMs, const CancelToken *cancel) const
{
    const QString path = QStringLiteral("/1.0/operations/") + operation.id;
    const QDeadlineTimer deadline(timeoutMs);
    auto giveUp = [&](ErrorCode code, const QString &why) -> Result<Operation> {
        httpkit::Request del;
        del.method = "DELETE";
        del.path = path;
        del.timeoutMs = 10000;
        discardResult(call(del), "best effort: not every operation may be cancelled");
        // What the operation makes must not appear after the caller cleaned up: let it end
        // (cancelled, or finished when it cannot be cancelled) before returning.
        httpkit::Request settle;
        settle.path = path + QStringLiteral("/wait");
        settle.addQuery(QStringLiteral("timeout"), QString::number(SettleSeconds));
        settle.timeoutMs = (SettleSeconds + 10) * 1000;
        discardResult(call(settle), "the wait's end is all that matters; the error returned says why we gave up");
        return fail(code, why, QStringLiteral("incus operation %1 (%2)").arg(operation.id, operation.description));
    };
    for (;;) {
        if (cancel && cancel->isCancelled())
            return giveUp(ErrorCode::Cancelled, QStringLiteral("cancelled"));
        if (deadline.hasExpired())
            return giveUp(ErrorCode::Timeout,
                          QStringLiteral("the operation did not finish in %1 s").arg(timeoutMs / 1000.0));
        // Incus waits in whole seconds: one-second slices while more than a second is left (a
        // cancel is noticed within one), then short polls up to the deadline.
        const bool longWait = deadline.remainingTime() >= 1000;
        httpkit::Request r;
        r.path = longWait ? path + QStringLiteral("/wait") : path;
        if (longWait)
            r.addQuery(QStringLiteral("timeout"), QStringLiteral("1"));
        r.timeoutMs = 15000;
        auto answer = call(r);
        // A wait that ran out of its second is Incus saying "still running".
        if (!answer && longWait && answer.error().message.contains(QLatin1String("deadline exceeded")))
            continue;
        if (!answer)
            return std::unexpected(answer.error());
        const Operation op = Operation::fromJson(answer->metadata.toObject());
        if (op.status == QLatin1String("Success"))
            return op;
        if (op.status == QLatin1String("Failure") || op.status == QLatin1String("Cancelled"))
            return fail(ErrorCode::Failed, op.err.isEmpty() ? op.status : op.err,
                        QStringLiteral("incus operation %1 (%2)").arg(op.id, op.description));
        if (!longWait)
            QThread::msleep(std::clamp<qint64>(deadline.remainingTime(), 1, 20));
    }
}

Result<Operation> IncusClient::run(const httpkit::Request &request, int timeoutMs, const CancelToken *cancel) const
{
    auto answer = call(request);
    if (!answer)
        return std::unexpected(answer.error());
    const std::optional<Operation> &operation = answer->operation;
    if (!operation)
        return Operation{.status = QStringLiteral("Success"), .metadata = answer->metadata.toObject()};
    return wait(*operation, timeoutMs, cancel);
}

Result<Server> IncusClient::server() const
{
    auto metadata = get(QStringLiteral("/1.0"));
    if (!metadata)
        return std::unexpected(metadata.error());
    return Server::fromJson(metadata->toObject());
}

Result<QList<Instance>> IncusClient::instances() const
{
    auto metadata = get(QStringLiteral("/1.0/instances"), {{QStringLiteral("recursion"), QStringLiteral("1")}});
    if (!metadata)
        return std::unexpected(metadata.error());
    QList<Instance> out;
    for (const QJsonValue v : metadata->toArray())
        out << Instance::fromJson(v.toObject());
    return out;
}

Result<Instance> IncusClient::instance(const QString &name) const
{
    auto metadata = get(QStringLiteral("/1.0/instances/") + name);
    if (!metadata)
        return std::unexpected(metadata.error());
    return Instance::fromJson(metadata->toObject());
}

Result<InstanceState> IncusClient::state(const QString &name) const
{
    auto metadata = get(QStringLiteral("/1.0/instances/") + name + QStringLiteral("/state"));
    if (!metadata)
        return std::unexpected(metadata.error());
    return InstanceState::fromJson(metadata->toObject());
}

Status IncusClient::createInstance(const InstancesPost &post, int timeoutMs, const CancelToken *cancel) const
{
    httpkit::Request r;
    r.method = "POST";
    r.path = QStringLiteral("/1.0/instances");
    r.body = QJsonDocument(post.toJson()).toJson(QJsonDocument::Compact);
    auto op = run(r, timeoutMs, cancel);
    if (!op)
        return std::unexpected(op.error());
    return {};
}

Status IncusClient::changeState(const QString &name, const QString &action, int timeoutSeconds, bool force) const
{
    httpkit::Request r;
    r.method = "PUT";
    r.path = QStringLiteral("/1.0/instances/") + name + QStringLiteral("/state");
    r.body = QJsonDocument(QJsonObject{{QStringLiteral("action"), action},
                                       {QStringLiteral("timeout"), timeoutSeconds},
                                       {QStringLiteral("force"), force}})
                 .toJson(QJsonDocument::Compact);
    // Incus waits up to `timeout` for a clean stop before it reports failure; give it room.
    auto op = run(r, (timeoutSeconds + 30) * 1000);
    if (!op)
        return std::unexpected(op.error());
    return {};
}

Status IncusClient::deleteInstance(const QString &name, int timeoutMs) const
{
    httpkit::Request r;
    r.method = "DELETE";
    r.path = QStringLiteral("/1.0/instances/") + name;
    auto op = run(r, timeoutMs);
    if (!op)
        return std::unexpected(op.error());
    return {};
}

Result<QByteArray> IncusClient::download(const QString &path, const QList<QPair<QString, QString>> &query) const
{
    httpkit::Request r;
    r.path = path;
    r.query = query;
    r.timeoutMs = 30000;
    const httpkit::Exchange out = httpkit::perform(m_endpoint, r);
    if (out.transportFailed)
        return fail(ErrorCode::Unavailable, QStringLiteral("cannot reach %1: %2").arg(description(), out.error),
                    where(r), UnavailableHint);
    if (out.status >= 400) {
        const QJsonObject envelope = QJsonDocument::fromJson(out.body).object();
        return statusError(r, out.status, envelope.value(QLatin1String("error")).toString());
    }
    return out.body;
}

Result<qint64> IncusClient::downloadTo(const QString &path, QIODevice &out, const CancelToken *cancel) const
{
    httpkit::Request r;
    r.path = path;
    r.stallMs = 120000;
    // An error's envelope is not passed on as the body (httpkit keeps it for the status).
    httpkit::DeviceSink sink{out};
    const httpkit::Exchange exchange = httpkit::perform(m_endpoint, r, cancel, std::ref(sink));
    if (sink.failed)
        return fail(ErrorCode::Internal, QStringLiteral("cannot write what Incus sent: %1").arg(out.errorString()),
                    where(r));
    if (exchange.cancelled)
        return fail(ErrorCode::Cancelled, QStringLiteral("cancelled"), where(r));
    if (exchange.status >= 400) {
        const QJsonObject envelope = QJsonDocument::fromJson(exchange.body).object();
        return statusError(r, exchange.status, envelope.value(QLatin1String("error")).toString());
    }
    if (exchange.transportFailed)
        return fail(exchange.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                    QStringLiteral("cannot reach %1: %2").arg(description(), exchange.error), where(r),
                    UnavailableHint);
    return sink.written;
}

Result<QByteArray> IncusClient::consoleLog(const QString &name) const
{
    return download(QStringLiteral("/1.0/instances/") + name + QStringLiteral("/console"));
}

// POST /1.0/instances/{name}/files of one file or directory, owned as given.
static httpkit::Request fileRequest(const QString &name, const QString &path, const QByteArray &type, int mode, int uid,
                                    int gid)
{
    httpkit::Request r;
    r.method = "POST";
    r.path = QStringLiteral("/1.0/instances/") + name + QStringLiteral("/files");
    r.addQuery(QStringLiteral("path"), path);
    r.contentType = "application/octet-stream";
    r.headers = {{"X-Incus-type", type},
                 {"X-Incus-mode", QByteArray::number(mode, 8).rightJustified(4, '0')},
                 {"X-Incus-uid", QByteArray::number(uid)},
                 {"X-Incus-gid", QByteArray::number(gid)}};
    return r;
}

Status IncusClient::makeDirectory(const QString &name, const QString &path, int mode) const
{
    auto answer = call(fileRequest(name, path, "directory", mode, 0, 0));
    if (!answer && !answer.error().message.contains(QLatin1String("exists")))
        return std::unexpected(answer.error());
    return {};
}

Status IncusClient::pushFile(const QString &name, const QString &path, const QByteArray &content, int mode, int uid,
                             int gid) const
{
    httpkit::Request r = fileRequest(name, path, "file", mode, uid, gid);
    r.body = content;
    r.headers.append(qMakePair(QByteArray("X-Incus-write"), QByteArray("overwrite")));
    auto answer = call(r);
    if (!answer)
        return std::unexpected(answer.error());
    return {};
}

Result<QByteArray> IncusClient::pullFile(const QString &name, const QString &path) const
{
    return download(QStringLiteral("/1.0/instances/") + name + QStringLiteral("/files"),
                    {{QStringLiteral("path"), path}});
}

Result<ExecResult> IncusClient::exec(const QString &name, const QStringList &argv, int timeoutMs,
                                     const CancelToken *cancel) const
{
    httpkit::Request r;
    r.method = "POST";
    r.path = QStringLiteral("/1.0/instances/") + name + QStringLiteral("/exec");
    r.body = QJsonDocument(QJsonObject{{QStringLiteral("command"), QJsonArray::fromStringList(argv)},
                                       {QStringLiteral("wait-for-websocket"), false},
                                       {QStringLiteral("interactive"), false},
                                       {QStringLiteral("record-output"), true}})
                 .toJson(QJsonDocument::Compact);
    auto op = run(r, timeoutMs, cancel);
    if (!op)
        return std::unexpected(op.error());
    ExecResult result;
    result.exitCode = op->metadata.value(QLatin1String("return")).toInt(-1);
    const QJsonObject output = op->metadata.value(QLatin1String("output")).toObject();
    // The recorded output lives under the instance's logs (exec-output/ in Incus 6).
    const QString logs = QStringLiteral("/1.0/instances/") + name + QStringLiteral("/logs/");
    for (const auto &[fd, target] : {std::pair{"1", &result.out}, std::pair{"2", &result.err}}) {
        const QString file = output.value(QLatin1String(fd)).toString();
        if (!file.startsWith(logs) || file.contains(QLatin1String("..")))
            continue;
        if (auto got = download(file))
            *target = *got;
        httpkit::Request del;
        del.method = "DELETE";
        del.path = file;
        discardResult(call(del), "a log file left on the server is removed with its instance");
    }
    return result;
}

Result<QString> IncusClient::importImage(QIODevice *body, int timeoutMs, const CancelToken *cancel) const
{
    httpkit::Request r;
    r.method = "POST";
    r.path = QStringLiteral("/1.0/images");
    r.bodyDevice = body;
    r.contentType = "application/octet-stream";
    r.timeoutMs = timeoutMs;
    auto op = run(r, timeoutMs, cancel);
    if (!op)
        return std::unexpected(op.error());
    const QString fingerprint = op->metadata.value(QLatin1String("fingerprint")).toString();
    if (fingerprint.isEmpty())
        return fail(ErrorCode::Failed, QStringLiteral("Incus imported the image but named no fingerprint"),
                    QStringLiteral("incus POST /1.0/images"));
    return fingerprint;
}

Result<QList<Image>> IncusClient::images() const
{
    auto metadata = get(QStringLiteral("/1.0/images"), {{QStringLiteral("recursion"), QStringLiteral("1")}});
    if (!metadata)
        return std::unexpected(metadata.error());
    QList<Image> out;
    for (const QJsonValue v : metadata->toArray())
        out << Image::fromJson(v.toObject());
    return out;
}

Status IncusClient::deleteImage(const QString &fingerprint, int timeoutMs) const
{
    httpkit::Request r;
    r.method = "DELETE";
    r.path = QStringLiteral("/1.0/images/") + fingerprint;
    auto op = run(r, timeoutMs);
    if (!op)
        return std::unexpected(op.error());
    return {};
}

Status IncusClient::updateImageProperties(const QString &fingerprint, const StringMap &properties) const
{
    httpkit::Request r;
    r.method = "PATCH";
    r.path = QStringLiteral("/1.0/images/") + fingerprint;
    r.body =
        QJsonDocument(QJsonObject{{QStringLiteral("properties"), toObject(properties)}}).toJson(QJsonDocument::Compact);
    auto answer = call(r);
    if (!answer)
        return std::unexpected(answer.error());
    return {};
}

Status checkInstanceName(const QString &name)
{
    const QString where = QStringLiteral("instance name \"%1\"").arg(name);
    if (name.isEmpty() || name.size() > 63)
        return fail(ErrorCode::Invalid, QStringLiteral("an Incus instance name has 1 to 63 characters"), where);
    static const QRegularExpression allowed(QStringLiteral("^[A-Za-z0-9-]+$"));
    if (!allowed.match(name).hasMatch())
        return fail(ErrorCode::Invalid, QStringLiteral("an Incus instance name has only letters, digits and hyphens"),
                    where);
    if (name.front().isDigit() || name.front() == QLatin1Char('-'))
        return fail(ErrorCode::Invalid, QStringLiteral("an Incus instance name starts with a letter"), where);
    if (name.back() == QLatin1Char('-'))
        return fail(ErrorCode::Invalid, QStringLiteral("an Incus instance name does not end with a hyphen"), where);
    return {};
}

} // namespace pando::adapters::incusapi
