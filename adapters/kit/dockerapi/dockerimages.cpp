#include "adapters/kit/dockerapi/dockerimages.h"

#include "adapters/kit/dockerapi/tarball.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace pando::adapters::dockerapi {

QByteArray compactJson(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QJsonObject labelsJson(const Labels &labels)
{
    QJsonObject out;
    for (auto it = labels.cbegin(); it != labels.cend(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

void JsonLines::feed(QByteArrayView chunk)
{
    m_buffer.append(chunk);
    qsizetype start = 0;
    for (qsizetype nl = m_buffer.indexOf('\n'); nl >= 0; nl = m_buffer.indexOf('\n', start)) {
        parse(QByteArrayView(m_buffer).sliced(start, nl - start));
        start = nl + 1;
    }
    m_buffer.remove(0, start);
}

void JsonLines::finish()
{
    parse(m_buffer);
    m_buffer.clear();
}

void JsonLines::parse(QByteArrayView line)
{
    line = line.trimmed();
    if (line.isEmpty())
        return;
    const QJsonDocument doc = QJsonDocument::fromJson(line.toByteArray());
    if (doc.isObject())
        m_onObject(doc.object());
}

QString streamError(const QJsonObject &o)
{
    const QString detail = o.value(QLatin1String("errorDetail")).toObject().value(QLatin1String("message")).toString();
    return detail.isEmpty() ? o.value(QLatin1String("error")).toString() : detail;
}

bool hasStreamError(const QJsonObject &o)
{
    return o.contains(QLatin1String("error")) || o.contains(QLatin1String("errorDetail"));
}

Status removeImage(const DockerClient &client, const QString &idOrTag, bool force)
{
    Request r;
    r.method = "DELETE";
    r.path = QStringLiteral("/images/") + idOrTag;
    if (force)
        r.addQuery(QStringLiteral("force"), QStringLiteral("1"));
    r.timeoutMs = 60000;
    auto response = client.call(r);
    if (!response && response.error().code != ErrorCode::NotFound)
        return std::unexpected(response.error());
    return {};
}

Result<QString> imageId(const DockerClient &client, const QString &idOrTag)
{
    auto response = client.get(QStringLiteral("/images/") + idOrTag + QStringLiteral("/json"));
    if (!response)
        return std::unexpected(response.error());
    return response->json().object().value(QLatin1String("Id")).toString();
}

Result<BuilderCache> builderCache(const DockerClient &client)
{
    Request r;
    r.path = QStringLiteral("/system/df");
    r.addQuery(QStringLiteral("type"), QStringLiteral("build-cache")); // API 1.42; older engines answer all
    r.timeoutMs = 60000;
    auto response = client.call(r);
    if (!response)
        return std::unexpected(response.error());
    BuilderCache cache;
    for (const QJsonValue value : response->json().object().value(QLatin1String("BuildCache")).toArray()) {
        const QJsonObject record = value.toObject();
        ++cache.records;
        if (record.value(QLatin1String("Shared")).toBool())
            continue;
        const qint64 size = record.value(QLatin1String("Size")).toInteger();
        cache.bytes += size;
        if (!record.value(QLatin1String("InUse")).toBool())
            cache.reclaimableBytes += size;
    }
    return cache;
}

Result<QString> importImage(const DockerClient &client, const QString &rootfsDir, const QString &repoTag)
{
    auto rootfs = tarToTempFile(rootfsDir, TarOptions{.skipTopLevelGit = false});
    if (!rootfs)
        return std::unexpected(rootfs.error());
    QString repo = repoTag;
    QString tag = QStringLiteral("latest");
    const qsizetype colon = repoTag.lastIndexOf(u':');
    if (colon > repoTag.lastIndexOf(u'/')) {
        repo = repoTag.left(colon);
        tag = repoTag.mid(colon + 1);
    }
    Request r;
    r.method = "POST";
    r.path = QStringLiteral("/images/create");
    r.addQuery(QStringLiteral("fromSrc"), QStringLiteral("-"))
        .addQuery(QStringLiteral("repo"), repo)
        .addQuery(QStringLiteral("tag"), tag);
    r.bodyDevice = rootfs->get();
    r.contentType = "application/x-tar";
    auto response = client.call(r);
    if (!response)
        return std::unexpected(response.error());
    QString error;
    JsonLines parser([&](const QJsonObject &o) {
        if (hasStreamError(o))
            error = streamError(o);
    });
    parser.feed(response->body);
    parser.finish();
    if (!error.isEmpty())
        return fail(ErrorCode::Failed, error, QStringLiteral("import of %1 as %2").arg(rootfsDir, repoTag));
    return imageId(client, repoTag);
}

} // namespace pando::adapters::dockerapi
