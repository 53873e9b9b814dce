#include "adapters/services/docker/dockerexec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtEndian>

namespace pando::adapters::docker {

namespace {

// Docker's multiplexed stream: frames of an 8-byte header (stream, 0, 0, 0, big-endian size)
// and that many bytes.
class FrameReader {
public:
    FrameReader(std::function<bool(QByteArrayView)> out, QByteArray &err) : m_out(std::move(out)), m_err(err) {}
    bool feed(QByteArrayView chunk)
    {
        m_buffer.append(chunk);
        qsizetype pos = 0;
        bool go = true;
        while (go && m_buffer.size() - pos >= 8) {
            const auto *header = reinterpret_cast<const uchar *>(m_buffer.constData() + pos);
            const auto size = qFromBigEndian<quint32>(header + 4);
            if (m_buffer.size() - pos - 8 < qsizetype(size))
                break;
            const QByteArrayView payload(m_buffer.constData() + pos + 8, size);
            if (header[0] == 2) {
                m_err.append(payload);
                if (m_err.size() > 4096)
                    m_err = m_err.right(4096);
            } else {
                go = m_out(payload);
            }
            pos += 8 + size;
        }
        m_buffer.remove(0, pos);
        return go;
    }

private:
    std::function<bool(QByteArrayView)> m_out;
    QByteArray &m_err;
    QByteArray m_buffer;
};

} // namespace

Result<ExecResult> execIn(const dockerapi::DockerClient &client, const QString &container, const QStringList &cmd,
                          const QMap<QString, QString> &env, int timeoutMs, const CancelToken &cancel,
                          const std::function<bool(QByteArrayView)> &stdoutSink)
{
    QJsonArray envList;
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        envList.append(QString(it.key() + u'=' + it.value()));
    const QJsonObject create{{QStringLiteral("AttachStdout"), true},
                             {QStringLiteral("AttachStderr"), true},
                             {QStringLiteral("Cmd"), QJsonArray::fromStringList(cmd)},
                             {QStringLiteral("Env"), envList}};
    auto created = client.post(QStringLiteral("/containers/%1/exec").arg(container), {},
                               QJsonDocument(create).toJson(QJsonDocument::Compact));
    if (!created)
        return std::unexpected(created.error());
    const QString id = created->json().object().value(QLatin1String("Id")).toString();
    if (id.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("the engine made an exec without an id"),
                    QStringLiteral("container %1").arg(container.left(12)));

    ExecResult result;
    dockerapi::Request start;
    start.method = "POST";
    start.path = QStringLiteral("/exec/%1/start").arg(id);
    start.body = QJsonDocument(QJsonObject{{QStringLiteral("Detach"), false}, {QStringLiteral("Tty"), false}})
                     .toJson(QJsonDocument::Compact);
    start.timeoutMs = timeoutMs;
    FrameReader reader(
        [&](QByteArrayView data) {
            if (stdoutSink)
                return stdoutSink(data);
            result.output.append(data);
            return true;
        },
        result.errorTail);
    auto streamed = client.stream(start, cancel, [&](QByteArrayView chunk) { return reader.feed(chunk); });
    if (!streamed)
        return std::unexpected(streamed.error());
    auto inspected = client.get(QStringLiteral("/exec/%1/json").arg(id));
    if (!inspected)
        return std::unexpected(inspected.error());
    const QJsonObject o = inspected->json().object();
    result.exitCode = o.value(QLatin1String("Running")).toBool() ? -1 : o.value(QLatin1String("ExitCode")).toInt(-1);
    return result;
}

} // namespace pando::adapters::docker
