#include "adapters/kit/dockerapi/dockerimages.h"

#include "adapters/kit/dockerapi/tarball.h"

#include <QFile>
#include <QFileInfo>
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

namespace {
std::pair<QString, QString> splitRepoTag(const QString &repoTag)
{
    const qsizetype colon = repoTag.lastIndexOf(u':');
    if (colon > repoTag.lastIndexOf(u'/'))
        return {repoTag.left(colon), repoTag.mid(colon + 1)};
    return {repoTag, QStringLiteral("latest")};
}
} // namespace

Result<QString> importImage(const DockerClient &client, const QString &rootfsDir, const QString &repoTag,
                            const QStringList &changes)
{
    auto rootfs = tarToTempFile(rootfsDir, TarOptions{.skipTopLevelGit = false});
    if (!rootfs)
        return std::unexpected(rootfs.error());
    const auto [repo, tag] = splitRepoTag(repoTag);
    Request r;
    r.method = "POST";
    r.path = QStringLiteral("/images/create");
    r.addQuery(QStringLiteral("fromSrc"), QStringLiteral("-"))
        .addQuery(QStringLiteral("repo"), repo)
        .addQuery(QStringLiteral("tag"), tag);
    for (const QString &change : changes)
        r.addQuery(QStringLiteral("changes"), change);
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

Result<QString> loadImage(const DockerClient &client, const QString &file, const QString &repoTag,
                          const CancelToken &cancel)
{
    QFile tar(file);
    if (!tar.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, QStringLiteral("cannot read %1: %2").arg(file, tar.errorString()));
    Request r;
    r.method = "POST";
    r.path = QStringLiteral("/images/load");
    r.bodyDevice = &tar;
    r.contentType = "application/x-tar";
    QString error;
    QString loaded;
    JsonLines parser([&](const QJsonObject &o) {
        if (hasStreamError(o))
            error = streamError(o);
        // "Loaded image: NAME:TAG" or, for a tarball that names no tag, "Loaded image ID: sha256:…".
        const QString said = o.value(QStringLiteral("stream")).toString().trimmed();
        for (const QLatin1StringView prefix :
             {QLatin1StringView("Loaded image ID: "), QLatin1StringView("Loaded image: ")})
            if (said.startsWith(prefix))
                loaded = said.mid(prefix.size());
    });
    auto status = client.stream(r, cancel, [&parser](QByteArrayView chunk) {
        parser.feed(chunk);
        return true;
    });
    parser.finish();
    if (!status)
        return std::unexpected(status.error());
    if (!error.isEmpty() || loaded.isEmpty())
        return fail(ErrorCode::Failed, error.isEmpty() ? QStringLiteral("the engine loaded no image") : error,
                    QStringLiteral("docker load of %1").arg(QFileInfo(file).fileName()));
    const auto [repo, tag] = splitRepoTag(repoTag);
    auto tagged = client.post(QStringLiteral("/images/%1/tag").arg(loaded),
                              {{QStringLiteral("repo"), repo}, {QStringLiteral("tag"), tag}});
    if (!tagged)
        return std::unexpected(tagged.error());
    return imageId(client, repoTag);
}

} // namespace pando::adapters::dockerapi
