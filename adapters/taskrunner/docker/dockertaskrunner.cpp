#include "adapters/taskrunner/docker/dockertaskrunner.h"

#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/taskrunner/docker/attachstream.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace pando::adapters::docker {

using namespace Qt::StringLiterals;
using dockerapi::Request;

namespace {

// What marks an image made from an artifact, so that the sweep finds only those.
constexpr auto ArtifactImageLabel = "dev.pando.kind=artifact-image";

QString missingImageHint(const QString &image)
{
    return u"Pando never pulls images: build it with `docker build -t %1 .` or load it with `docker load` / "
           u"`docker import`, then run again"_s.arg(image);
}

// Removes the container when the run ends, on every path out of run().
class ContainerGuard {
public:
    ContainerGuard(const dockerapi::DockerClient &client, QString id) : m_client(client), m_id(std::move(id)) {}
    ContainerGuard(const ContainerGuard &) = delete;
    ContainerGuard &operator=(const ContainerGuard &) = delete;
    ~ContainerGuard()
    {
        Request r;
        r.method = "DELETE";
        r.path = u"/containers/"_s + m_id;
        // force kills a container a timeout or cancel left running; v drops its anonymous volumes.
        r.addQuery(u"force"_s, u"1"_s).addQuery(u"v"_s, u"1"_s);
        r.timeoutMs = 60000;
        discardResult(m_client.call(r),
                      "a container left behind is removed by removeLeftovers() when pipelines next start");
    }

private:
    const dockerapi::DockerClient &m_client;
    QString m_id;
};

Result<QByteArray> createBody(const TaskSpec &spec, const QString &imageId)
{
    QJsonObject body;
    body.insert(u"Image"_s, imageId);
    body.insert(u"Cmd"_s, QJsonArray::fromStringList(spec.argv));
    // An explicit argv is the whole command: the image's entrypoint does not wrap it.
    body.insert(u"Entrypoint"_s, QJsonArray());
    QJsonArray env;
    for (auto it = spec.env.cbegin(); it != spec.env.cend(); ++it) {
        if (it.key().isEmpty() || it.key().contains(u'='))
            return fail(ErrorCode::Invalid, u"\"%1\" is not a valid environment variable name"_s.arg(it.key()),
                        u"env"_s);
        env.append(QString(it.key() + u'=' + it.value()));
    }
    body.insert(u"Env"_s, env);
    if (!spec.workDir.isEmpty()) {
        if (!spec.workDir.startsWith(u'/'))
            return fail(ErrorCode::Invalid, u"a container's work directory must be absolute: %1"_s.arg(spec.workDir),
                        u"workDir"_s);
        body.insert(u"WorkingDir"_s, spec.workDir);
    }
    if (!spec.user.isEmpty())
        body.insert(u"User"_s, spec.user);
    QJsonObject labels;
    for (auto it = spec.labels.cbegin(); it != spec.labels.cend(); ++it)
        labels.insert(it.key(), it.value());
    body.insert(u"Labels"_s, labels);
    const bool withStdin = !spec.stdinData.isEmpty();
    body.insert(u"AttachStdin"_s, withStdin);
    body.insert(u"OpenStdin"_s, withStdin);
    body.insert(u"StdinOnce"_s, withStdin);
    body.insert(u"AttachStdout"_s, true);
    body.insert(u"AttachStderr"_s, true);
    body.insert(u"Tty"_s, false);

    QJsonObject host;
    QJsonArray mounts;
    for (qsizetype i = 0; i < spec.mounts.size(); ++i) {
        const Mount &m = spec.mounts.at(i);
        const QString where = u"mounts[%1]"_s.arg(i);
        if (!QFileInfo::exists(m.hostPath))
            return fail(ErrorCode::NotFound, u"the mounted path %1 does not exist"_s.arg(m.hostPath), where);
        if (!m.path.startsWith(u'/'))
            return fail(ErrorCode::Invalid, u"a container mount path must be absolute: %1"_s.arg(m.path), where);
        // Mounts rather than Binds: "host:container:ro" strings break on paths holding ':'.
        mounts.append(QJsonObject{{u"Type"_s, u"bind"_s},
                                  {u"Source"_s, QFileInfo(m.hostPath).absoluteFilePath()},
                                  {u"Target"_s, m.path},
                                  {u"ReadOnly"_s, m.readOnly}});
    }
    if (!mounts.isEmpty())
        host.insert(u"Mounts"_s, mounts);
    if (spec.memoryBytes > 0)
        host.insert(u"Memory"_s, double(spec.memoryBytes));
    if (spec.cpus > 0)
        host.insert(u"NanoCpus"_s, std::round(spec.cpus * 1e9));
    if (spec.privileged)
        host.insert(u"Privileged"_s, true);
    body.insert(u"HostConfig"_s, host);
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

} // namespace

DockerTaskRunner::DockerTaskRunner(QString socketPath) : m_client(std::move(socketPath))
{}

Result<QString> DockerTaskRunner::imageDigest(const QString &image)
{
    if (image.isEmpty())
        return fail(ErrorCode::Invalid, u"a container task needs an image"_s, u"image"_s);
    auto response = m_client.get(u"/images/"_s + image + u"/json"_s);
    if (!response) {
        Error error = response.error();
        if (error.code == ErrorCode::NotFound) {
            error.message = u"image %1 is not in the local Docker engine"_s.arg(image);
            error.where = u"image"_s;
            error.hint = missingImageHint(image);
        }
        return std::unexpected(error);
    }
    const QString id = response->json().object().value(QLatin1String("Id")).toString();
    if (id.isEmpty())
        return fail(ErrorCode::Internal, u"the engine described image %1 without an id"_s.arg(image), u"image"_s);
    return id;
}

namespace {
// A value as a Dockerfile's ENV reads it back: quoted, with its quotes, backslashes and dollars
// escaped (ENV expands $NAME).
QString envValue(const QString &value)
{
    QString escaped = value;
    escaped.replace(u'\\', u"\\\\"_s).replace(u'"', u"\\\""_s).replace(u'$', u"\\$"_s);
    return u'"' + escaped + u'"';
}
} // namespace

Result<QString> DockerTaskRunner::importArtifactImage(const QString &artifactDir, const QString &repoTag,
                                                      const CancelToken &cancel)
{
    const QString artifact = QFileInfo(artifactDir).fileName();
    if (QFileInfo(artifactDir + u"/rootfs"_s).isDir()) {
        QStringList changes{u"LABEL dev.pando.managed=true"_s, u"LABEL "_s + QLatin1String(ArtifactImageLabel)};
        QFile file(artifactDir + u"/metadata.json"_s);
        const QJsonObject metadata = file.open(QIODevice::ReadOnly)
                                         ? QJsonDocument::fromJson(file.read(qint64{1024} * 1024)).object()
                                         : QJsonObject();
        for (const auto &entry : metadata.value("env"_L1).toArray()) {
            // One instruction each: a line break would start another.
            const QString text = entry.toString();
            const qsizetype eq = text.indexOf(u'=');
            static const QRegularExpression name(u"^[A-Za-z_][A-Za-z0-9_]*$"_s);
            if (eq > 0 && name.match(text.left(eq)).hasMatch() && !text.contains(u'\n') && !text.contains(u'\r'))
                changes.append(u"ENV %1=%2"_s.arg(text.left(eq), envValue(text.mid(eq + 1))));
        }
        static const QRegularExpression user(u"^[A-Za-z0-9_.-]+(?::[A-Za-z0-9_.-]+)?$"_s);
        if (const QString who = metadata.value("user"_L1).toString(); user.match(who).hasMatch())
            changes.append(u"USER "_s + who);
        return dockerapi::importImage(m_client, artifactDir + u"/rootfs"_s, repoTag, changes);
    }
    if (QFileInfo(artifactDir + u"/image.tar"_s).isFile())
        return dockerapi::loadImage(m_client, artifactDir + u"/image.tar"_s, repoTag, cancel);
    return fail(ErrorCode::Invalid, u"artifact %1 holds no image"_s.arg(artifact), u"image"_s,
                u"get it with a registry-image resource (rootfs/ and metadata.json, or image.tar with format: oci)"_s);
}

Result<int> DockerTaskRunner::removeStaleArtifactImages(const QString &repository, qint64 olderThanMs)
{
    const QString filters =
        QString::fromUtf8(QJsonDocument(QJsonObject{{u"label"_s, QJsonArray{QLatin1String(ArtifactImageLabel)}}})
                              .toJson(QJsonDocument::Compact));
    auto response = m_client.get(u"/images/json"_s, {{u"filters"_s, filters}});
    if (!response)
        return std::unexpected(response.error());
    const qint64 before = QDateTime::currentMSecsSinceEpoch() - olderThanMs;
    int removed = 0;
    for (const QJsonValue value : response->json().array()) {
        const QJsonObject image = value.toObject();
        if (qint64(image.value(u"Created"_s).toDouble()) * 1000 > before)
            continue;
        // By its tags, never forced: an image a container still uses stays.
        for (const QJsonValue tag : image.value(u"RepoTags"_s).toArray()) {
            if (!tag.toString().startsWith(repository + u':'))
                continue;
            if (Status gone = dockerapi::removeImage(m_client, tag.toString()); gone)
                ++removed;
            else if (gone.error().code != ErrorCode::Conflict && gone.error().code != ErrorCode::NotFound)
                return std::unexpected(gone.error());
        }
    }
    return removed;
}

Result<int> DockerTaskRunner::removeLeftovers(const QMap<QString, QString> &labels)
{
    QJsonArray wanted;
    for (auto it = labels.cbegin(); it != labels.cend(); ++it)
        wanted.append(QString(it.key() + u'=' + it.value()));
    const QString filters =
        QString::fromUtf8(QJsonDocument(QJsonObject{{u"label"_s, wanted}}).toJson(QJsonDocument::Compact));
    auto response = m_client.get(u"/containers/json"_s, {{u"all"_s, u"1"_s}, {u"filters"_s, filters}});
    if (!response)
        return std::unexpected(response.error());
    int removed = 0;
    for (const QJsonValue c : response->json().array()) {
        // The guard's destructor is the one forced removal every path uses.
        ContainerGuard guard(m_client, c.toObject().value(u"Id"_s).toString());
        ++removed;
    }
    return removed;
}

Result<TaskResult> DockerTaskRunner::run(const TaskSpec &spec, const CancelToken &cancel,
                                         const std::function<void(const OutputChunk &)> &output)
{
    if (spec.argv.isEmpty())
        return fail(ErrorCode::Invalid, u"the task has no command"_s, u"argv"_s);
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, u"the task was cancelled before it started"_s);
    QElapsedTimer clock;
    clock.start();

    Result<QString> imageId = imageDigest(spec.image);
    if (!imageId)
        return std::unexpected(imageId.error());
    Result<QByteArray> body = createBody(spec, *imageId);
    if (!body)
        return std::unexpected(body.error());
    auto created = m_client.post(u"/containers/create"_s, {}, *body);
    if (!created) {
        Error error = created.error();
        // The image can vanish between the inspect and the create.
        if (error.code == ErrorCode::NotFound) {
            error.message = u"image %1 is not in the local Docker engine"_s.arg(spec.image);
            error.hint = missingImageHint(spec.image);
        }
        return std::unexpected(error);
    }
    const QString id = created->json().object().value(QLatin1String("Id")).toString();
    if (id.isEmpty())
        return fail(ErrorCode::Internal, u"the engine created a container without an id"_s,
                    u"docker POST /containers/create"_s);
    const ContainerGuard guard(m_client, id);

    const bool withStdin = !spec.stdinData.isEmpty();
    detail::AttachStream stream;
    if (Status ok = stream.open(m_client.socketPath(), id, withStdin); !ok)
        return std::unexpected(ok.error());
    if (withStdin)
        stream.setStdin(spec.stdinData);

    TaskResult result;
    result.imageDigest = *imageId;
    result.startedMs = QDateTime::currentMSecsSinceEpoch();
    if (auto started = m_client.post(u"/containers/"_s + id + u"/start"_s); !started)
        return std::unexpected(started.error());

    detail::FrameSplitter splitter([&](bool isStderr, QByteArrayView data) {
        if (output && !data.isEmpty())
            output(OutputChunk{isStderr, data.toByteArray()});
    });
    const auto onData = [&](QByteArrayView data) {
        splitter.feed(data);
    };
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"the task in container %1 was cancelled"_s.arg(id.left(12)));
        if (spec.timeoutMs > 0 && clock.elapsed() >= spec.timeoutMs) {
            result.timedOut = true;
            result.exitCode = -1;
            result.finishedMs = QDateTime::currentMSecsSinceEpoch();
            return result; // the guard's forced removal kills the container
        }
        int waitMs = 50;
        if (spec.timeoutMs > 0)
            waitMs = int(std::clamp<qint64>(spec.timeoutMs - clock.elapsed(), 1, 50));
        if (stream.pump(waitMs, onData) == detail::AttachStream::Pump::Ended)
            break;
    }

    // The stream ended with the container; wait only collects its exit code.
    Request wait;
    wait.method = "POST";
    wait.path = u"/containers/"_s + id + u"/wait"_s;
    QByteArray waitBody;
    auto waited = m_client.stream(wait, cancel, [&](QByteArrayView chunk) {
        waitBody.append(chunk);
        return waitBody.size() < (1 << 16);
    });
    if (!waited)
        return std::unexpected(waited.error());
    const QJsonObject status = QJsonDocument::fromJson(waitBody).object();
    const QString waitError = status.value(u"Error"_s).toObject().value(u"Message"_s).toString();
    if (!status.contains(u"StatusCode"_s) || !waitError.isEmpty())
        return fail(ErrorCode::Failed,
                    u"cannot read the exit code of container %1: %2"_s.arg(
                        id.left(12), waitError.isEmpty() ? QString::fromUtf8(waitBody.left(200)) : waitError),
                    wait.path);
    result.exitCode = status.value(u"StatusCode"_s).toInt();
    result.finishedMs = QDateTime::currentMSecsSinceEpoch();
    return result;
}

} // namespace pando::adapters::docker
