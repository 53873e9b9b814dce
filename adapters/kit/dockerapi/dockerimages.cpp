#include "adapters/kit/dockerapi/dockerimages.h"

#include "adapters/kit/dockerapi/tarball.h"

#include <QHash>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSet>
#include <optional>

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

namespace {

// A build's failure, said where it happened: the Dockerfile's instruction ("Step 2/5 : RUN
// make"), and for a FROM the base image that is not on the engine and how to get it there.
Error failedStep(const BuildRequest &request, const QString &step, const QString &error)
{
    const QString dockerfile = request.dockerfile.isEmpty() ? QStringLiteral("Dockerfile") : request.dockerfile;
    const qsizetype colon = step.indexOf(QLatin1String(" : "));
    if (colon < 0)
        return Error{ErrorCode::Failed, error, QStringLiteral("build of %1").arg(request.tag)};
    // "2" of "2/5": the total counts the LABEL steps the engine adds for the build's labels.
    const QString number = step.mid(5, colon - 5).section(u'/', 0, 0);
    const QString instruction = step.mid(colon + 3);
    QString shown = instruction.left(120);
    if (shown.size() < instruction.size())
        shown += QStringLiteral("…");
    const QString where = QStringLiteral("%1, step %2 (%3)").arg(dockerfile, number, shown);
    QStringList words = instruction.split(u' ', Qt::SkipEmptyParts);
    if (words.isEmpty() || words.first().compare(QLatin1String("FROM"), Qt::CaseInsensitive) != 0)
        return Error{ErrorCode::Failed, error, where};
    words.removeFirst();
    while (!words.isEmpty() && words.first().startsWith(QLatin1String("--")))
        words.removeFirst(); // --platform=...
    const QString image = words.value(0);
    return Error{ErrorCode::Failed,
                 QStringLiteral("the base image %1 is not on the Docker engine, and the engine could not pull it: %2")
                     .arg(image, error),
                 where,
                 QStringLiteral("put %1 on the engine first (docker pull %1 where a registry can be reached, or "
                                "docker load from a saved copy), or name in FROM an image `docker images` lists")
                     .arg(image)};
}

// The images a classic build made, read from its output: each step ends in " ---> ID", the
// image it committed, but a FROM's (the stage's base, or an earlier stage) and a cached step's
// (" ---> Using cache" first), which were there before the build.
class MadeImages {
public:
    void read(const QString &line)
    {
        static const QRegularExpression committed(QStringLiteral("^---> ([0-9a-f]{12,64})$"));
        if (line.startsWith(QLatin1String("Step ")) && line.contains(QLatin1String(" : "))) {
            const QString instruction = line.section(QLatin1String(" : "), 1).trimmed();
            m_skipNext = instruction.startsWith(QLatin1String("FROM "), Qt::CaseInsensitive);
        } else if (line == QLatin1String("---> Using cache")) {
            m_skipNext = true;
        } else if (const auto match = committed.match(line); match.hasMatch()) {
            if (!m_skipNext && !m_ids.contains(match.captured(1)))
                m_ids << match.captured(1);
            m_skipNext = false;
        }
    }
    const QStringList &ids() const { return m_ids; }

private:
    QStringList m_ids;
    bool m_skipNext = false;
};

// Tells request.leftover of each image in made that built (an image id, or empty when the build
// failed) does not keep: those not among its ancestors.
void reportLeftovers(const DockerClient &client, const BuildRequest &request, const QStringList &made,
                     const QString &built)
{
    if (!request.leftover || made.isEmpty())
        return;
    struct Inspected {
        QString id;
        QString parent;
        qint64 size = 0;
    };
    const auto shortId = [](const QString &id) {
        return id.section(u':', -1).left(12);
    };
    // Each image asked about once: a leftover's parent is often the leftover before it.
    QHash<QString, std::optional<Inspected>> seen;
    const auto inspect = [&client, &seen, &shortId](const QString &id) -> std::optional<Inspected> {
        const QString key = shortId(id);
        if (const auto known = seen.constFind(key); known != seen.cend())
            return *known;
        std::optional<Inspected> image;
        if (auto response = client.get(QStringLiteral("/images/") + id + QStringLiteral("/json"))) {
            const QJsonObject o = response->json().object();
            image = Inspected{o.value(QLatin1String("Id")).toString(), o.value(QLatin1String("Parent")).toString(),
                              qint64(o.value(QLatin1String("Size")).toDouble())};
        }
        seen.insert(key, image);
        return image;
    };
    QSet<QString> kept; // short ids of built and its ancestors
    for (QString at = built; !at.isEmpty() && kept.size() < 1000;) {
        auto image = inspect(at);
        if (!image)
            break;
        kept.insert(shortId(image->id));
        at = image->parent;
    }
    for (const QString &id : made) {
        if (kept.contains(id.left(12)))
            continue;
        auto image = inspect(id);
        if (!image)
            continue; // gone already: nothing to tell
        const auto parent = image->parent.isEmpty() ? std::nullopt : inspect(image->parent);
        request.leftover(image->id, parent ? std::max<qint64>(0, image->size - parent->size) : image->size);
    }
}

// One build of the tar'd context read from context; what it made goes to made.
Result<QString> buildFrom(const DockerClient &client, const BuildRequest &request, QIODevice &context,
                          const CancelToken &cancel, const std::function<void(const QString &line)> &progress,
                          MadeImages &made)
{
    Request r;
    r.method = "POST";
    r.path = QStringLiteral("/build");
    if (!request.tag.isEmpty())
        r.addQuery(QStringLiteral("t"), request.tag);
    if (!request.dockerfile.isEmpty())
        r.addQuery(QStringLiteral("dockerfile"), request.dockerfile);
    if (!request.labels.isEmpty())
        r.addQuery(QStringLiteral("labels"), QString::fromUtf8(compactJson(labelsJson(request.labels))));
    if (!request.buildArgs.isEmpty())
        r.addQuery(QStringLiteral("buildargs"), QString::fromUtf8(compactJson(labelsJson(request.buildArgs))));
    r.addQuery(QStringLiteral("rm"), QStringLiteral("1")).addQuery(QStringLiteral("forcerm"), QStringLiteral("1"));
    r.bodyDevice = &context;
    r.contentType = "application/x-tar";

    QString imageId;
    QString error;
    QString step;        // the instruction running: "Step 2/5 : RUN make"
    QString pendingText; // "stream" text arrives in pieces that need not end at a newline
    auto emitLines = [&](bool flush) {
        qsizetype nl;
        while ((nl = pendingText.indexOf(u'\n')) >= 0) {
            const QString line = pendingText.left(nl).trimmed();
            pendingText.remove(0, nl + 1);
            if (line.startsWith(QLatin1String("Step ")) && line.contains(QLatin1String(" : ")))
                step = line;
            made.read(line);
            if (!line.isEmpty() && progress)
                progress(line);
        }
        if (flush && !pendingText.trimmed().isEmpty() && progress)
            progress(pendingText.trimmed());
        if (flush)
            pendingText.clear();
    };
    JsonLines parser([&](const QJsonObject &o) {
        if (hasStreamError(o)) {
            error = streamError(o);
            return;
        }
        if (o.contains(QLatin1String("stream"))) {
            pendingText += o.value(QLatin1String("stream")).toString();
            emitLines(false);
        } else if (o.contains(QLatin1String("status"))) {
            pendingText += o.value(QLatin1String("status")).toString() + u'\n';
            emitLines(false);
        }
        const QString id = o.value(QLatin1String("aux")).toObject().value(QLatin1String("ID")).toString();
        if (!id.isEmpty())
            imageId = id;
    });
    auto status = client.stream(r, cancel, [&](QByteArrayView chunk) {
        parser.feed(chunk);
        return true;
    });
    parser.finish();
    emitLines(true);
    if (!status) {
        Error e = status.error();
        if (e.code == ErrorCode::Cancelled)
            e.message = QStringLiteral("the build of %1 was cancelled").arg(request.tag);
        else if (e.code != ErrorCode::Unavailable)
            e.code = ErrorCode::Failed; // a refused context or Dockerfile is a failed build
        return std::unexpected(e);
    }
    if (!error.isEmpty())
        return std::unexpected(failedStep(request, step, error));
    if (imageId.isEmpty()) {
        if (request.tag.isEmpty())
            return fail(ErrorCode::Failed, QStringLiteral("the engine did not report the image it built"),
                        request.contextDir);
        return dockerapi::imageId(client, request.tag);
    }
    return imageId;
}

} // namespace

Result<QString> buildImage(const DockerClient &client, const BuildRequest &request, const CancelToken &cancel,
                           const std::function<void(const QString &line)> &progress)
{
    auto ignore = DockerIgnore::forContext(request.contextDir, request.dockerfile);
    if (!ignore)
        return fail(ErrorCode::Failed, ignore.error().message, ignore.error().where, ignore.error().hint);
    auto context = tarToTempFile(request.contextDir, TarOptions{.skipTopLevelGit = true, .ignore = std::move(*ignore)});
    if (!context)
        return std::unexpected(context.error());
    MadeImages made;
    auto built = buildFrom(client, request, *context->get(), cancel, progress, made);
    // The classic builder reuses cached layers by id; when another build's clean-up removes an
    // image in between (deploys of different apps share layers), it fails with this. The cache
    // entry is gone by then, so a second attempt builds the step instead of reusing it.
    if (!built && built.error().message.contains(QLatin1String("unknown parent image ID")) && !cancel.isCancelled() &&
        context->get()->seek(0)) {
        if (progress)
            progress(QStringLiteral("a cached layer was removed during the build; building again"));
        built = buildFrom(client, request, *context->get(), cancel, progress, made);
    }
    reportLeftovers(client, request, made.ids(), built ? *built : QString());
    return built;
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
