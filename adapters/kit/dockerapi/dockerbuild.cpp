#include "adapters/kit/dockerapi/dockerbuild.h"

#include "adapters/kit/dockerapi/dockerpull.h"

#include "adapters/kit/dockerapi/buildkittrace.h"
#include "adapters/kit/dockerapi/dockerimages.h"
#include "adapters/kit/dockerapi/tarball.h"

#include <QDir>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <optional>

namespace pando::adapters::dockerapi {

Builder builderFromEnvironment()
{
    const QByteArray value = qgetenv("DOCKER_BUILDKIT").trimmed().toLower();
    if (value == "0" || value == "false")
        return Builder::Classic;
    if (value == "1" || value == "true")
        return Builder::BuildKit;
    return Builder::Auto;
}

namespace {

QString dockerfileName(const BuildRequest &request)
{
    return request.dockerfile.isEmpty() ? QStringLiteral("Dockerfile") : request.dockerfile;
}

// "docker.io/library/node:20" as people write it: "node:20".
QString shortImageName(QString image)
{
    if (image.startsWith(QLatin1String("docker.io/library/")))
        image.remove(0, 18);
    else if (image.startsWith(QLatin1String("docker.io/")))
        image.remove(0, 10);
    return image;
}

// A FROM's image that the engine neither has nor could pull, and how to get it there.
Error missingBaseImage(const QString &image, const QString &error, const QString &where)
{
    if (wantsLogin(error))
        return Error{ErrorCode::Failed,
                     QStringLiteral("the base image %1 is not on the Docker engine, and its registry wants a login the "
                                    "build did not give: %2")
                         .arg(image, error),
                     where,
                     QStringLiteral("log the engine in to its registry and pull it first (docker login, then "
                                    "docker pull %1), or give the build a login for it")
                         .arg(image)};
    return Error{ErrorCode::Failed,
                 QStringLiteral("the base image %1 is not on the Docker engine, and the engine could not pull it: %2")
                     .arg(image, error),
                 where,
                 QStringLiteral("put %1 on the engine first (docker pull %1 where a registry can be reached, or "
                                "docker load from a saved copy), or name in FROM an image `docker images` lists")
                     .arg(image)};
}

// The image FROM names in an instruction ("FROM --platform=linux/amd64 node:20 AS build").
QString fromImage(const QString &instruction)
{
    QStringList words = instruction.split(u' ', Qt::SkipEmptyParts);
    if (words.isEmpty() || words.first().compare(QLatin1String("FROM"), Qt::CaseInsensitive) != 0)
        return {};
    words.removeFirst();
    while (!words.isEmpty() && words.first().startsWith(QLatin1String("--")))
        words.removeFirst(); // --platform=...
    return words.value(0);
}

QString shortened(const QString &instruction)
{
    QString shown = instruction.left(120);
    if (shown.size() < instruction.size())
        shown += QStringLiteral("…");
    return shown;
}

// A Dockerfile's `# syntax=IMAGE` parser directive: among the directives its first lines may
// hold, before any comment, blank line or instruction.
struct SyntaxDirective {
    int line = 0; // 1-based
    QString image;
};

std::optional<SyntaxDirective> syntaxDirective(const QByteArray &dockerfile)
{
    static const QRegularExpression directive(QStringLiteral("^#\\s*([A-Za-z]+)\\s*=\\s*(\\S+)\\s*$"));
    const QList<QByteArray> lines = dockerfile.left(4096).split('\n');
    for (int i = 0; i < lines.size(); ++i) {
        const auto match = directive.match(QString::fromUtf8(lines.at(i)).trimmed());
        if (!match.hasMatch())
            return std::nullopt;
        if (match.captured(1).compare(QLatin1String("syntax"), Qt::CaseInsensitive) == 0)
            return SyntaxDirective{i + 1, match.captured(2)};
    }
    return std::nullopt;
}

// Docker's own Dockerfile frontend, whose syntax the engine's built-in frontend mostly knows.
bool isDockerfileFrontend(const QString &image)
{
    const QString name = shortImageName(image).section(u'@', 0, 0).section(u':', 0, 0);
    return name == QLatin1String("docker/dockerfile") || name == QLatin1String("docker/dockerfile-upstream");
}

// What a build sends in place of the Dockerfile, and why.
struct Rewrite {
    QString frontend;                  // the directive's image left out; empty: the Dockerfile as it is
    QMap<QString, QByteArray> replace; // for TarOptions
};

Rewrite rewriteFor(const DockerClient &client, const BuildRequest &request,
                   const std::function<void(const QString &line)> &progress)
{
    const QString relative = QDir::cleanPath(dockerfileName(request));
    QFile file(QDir(request.contextDir).filePath(relative));
    if (!file.open(QIODevice::ReadOnly))
        return Rewrite{};                     // the engine says what is wrong with it
    constexpr qint64 Largest = 1024LL * 1024; // a larger Dockerfile is sent as it is
    const QByteArray content = file.read(Largest);
    const auto syntax = syntaxDirective(content);
    if (!syntax || !isDockerfileFrontend(syntax->image))
        return Rewrite{};
    if (auto local = imageId(client, syntax->image); local || local.error().code != ErrorCode::NotFound)
        return Rewrite{}; // the engine has it (or will say what else is wrong)
    if (content.size() != file.size())
        return Rewrite{};
    QList<QByteArray> lines = content.split('\n');
    lines[syntax->line - 1] = "#";
    if (progress)
        progress(QStringLiteral("%1, line %2 asks for the Dockerfile frontend %3, which is not on the engine: building "
                                "with the engine's built-in frontend")
                     .arg(relative)
                     .arg(syntax->line)
                     .arg(syntax->image));
    return Rewrite{syntax->image, {{relative, lines.join('\n')}}};
}

// A classic build's failure, said where it happened: the Dockerfile's instruction ("Step 2/5 :
// RUN make"), and for a FROM the base image that is not on the engine and how to get it there.
Error classicFailure(const BuildRequest &request, const QString &step, const QString &error)
{
    const qsizetype colon = step.indexOf(QLatin1String(" : "));
    if (colon < 0)
        return Error{ErrorCode::Failed, error, QStringLiteral("build of %1").arg(request.tag)};
    // "2" of "2/5": the total counts the LABEL steps the engine adds for the build's labels.
    const QString number = step.mid(5, colon - 5).section(u'/', 0, 0);
    const QString instruction = step.mid(colon + 3);
    const QString where =
        QStringLiteral("%1, step %2 (%3)").arg(dockerfileName(request), number, shortened(instruction));
    const QString image = fromImage(instruction);
    return image.isEmpty() ? Error{ErrorCode::Failed, error, where} : missingBaseImage(image, error, where);
}

// A BuildKit build's failure: the step that failed first (BuildKit's "[stage 2/5] RUN make"),
// else the frontend's own error (a Dockerfile it cannot read), with hints for what people meet.
Error buildKitFailure(const BuildRequest &request, const std::optional<BuildKitTrace::Failure> &failed, QString error,
                      const Rewrite &rewrite)
{
    const QString dockerfile = dockerfileName(request);
    if (failed) {
        static const QRegularExpression step(QStringLiteral("^\\[(?:(.+) )?(\\d+)/(\\d+)\\] (.*)$"),
                                             QRegularExpression::DotMatchesEverythingOption);
        static const QLatin1String metadata("[internal] load metadata for ");
        static const QLatin1String frontend("resolve image config for ");
        if (const auto m = step.match(failed->step); m.hasMatch()) {
            // In a Dockerfile of several stages BuildKit counts each stage's steps and names the
            // stage (stage-0, stage-1, … without AS); in one of a single stage it names none.
            static const QRegularExpression unnamed(QStringLiteral("^stage-\\d+$"));
            const QString name = m.captured(1);
            const QString stage = name.isEmpty() ? QString()
                                  : unnamed.match(name).hasMatch()
                                      ? QStringLiteral("stage %1, ").arg(name.mid(6).toInt() + 1)
                                      : QStringLiteral("stage %1, ").arg(name);
            const QString instruction = m.captured(4);
            const QString where = QStringLiteral("%1, %2step %3/%4 (%5)")
                                      .arg(dockerfile, stage, m.captured(2), m.captured(3), shortened(instruction));
            if (const QString image = fromImage(instruction); !image.isEmpty())
                return missingBaseImage(image, failed->error, where);
            const QString verb = instruction.section(u' ', 0, 0).toUpper();
            if ((verb == QLatin1String("COPY") || verb == QLatin1String("ADD")) &&
                failed->error.contains(QLatin1String("not found")))
                return Error{ErrorCode::Failed, failed->error, where,
                             QStringLiteral("%1 takes files from the build context (the repository, or build.context "
                                            "when set): check the path, and that .dockerignore does not leave it out")
                                 .arg(verb)};
            QString message = failed->error;
            if (!failed->lastOutput.isEmpty())
                message += QStringLiteral("; its last output: ") + failed->lastOutput.last().trimmed();
            return Error{ErrorCode::Failed, message, where};
        }
        if (failed->step.startsWith(metadata)) {
            const QString image = shortImageName(failed->step.mid(metadata.size()));
            return missingBaseImage(image, failed->error, QStringLiteral("%1 (FROM %2)").arg(dockerfile, image));
        }
        if (failed->step.startsWith(frontend)) {
            const QString image = shortImageName(failed->step.mid(frontend.size()));
            return Error{ErrorCode::Failed,
                         QStringLiteral("the Dockerfile's syntax directive asks for the frontend image %1, which is "
                                        "not on the Docker engine, and the engine could not pull it: %2")
                             .arg(image, failed->error),
                         QStringLiteral("%1, # syntax=").arg(dockerfile),
                         QStringLiteral("put %1 on the engine first (docker load from a saved copy), or remove the "
                                        "# syntax line to build with the engine's built-in frontend")
                             .arg(image)};
        }
    }
    for (const QLatin1String prefix :
         {QLatin1String("failed to solve with frontend dockerfile.v0: "), QLatin1String("failed to solve: "),
          QLatin1String("failed to create LLB definition: ")})
        if (error.startsWith(prefix))
            error.remove(0, prefix.size());
    static const QRegularExpression lineOf(QStringLiteral("(?:parse error (?:on )?line|:)\\s*(\\d+)"));
    QString where = dockerfile;
    if (const auto m = lineOf.match(error); m.hasMatch() && error.contains(QLatin1String("parse error")))
        where += QStringLiteral(", line ") + m.captured(1);
    QString hint;
    if (!rewrite.frontend.isEmpty())
        hint = QStringLiteral("the engine's built-in Dockerfile frontend built this in place of %1, which is not on "
                              "the engine; when the Dockerfile uses newer syntax (heredocs, new flags), put %1 on the "
                              "engine (docker load from a saved copy)")
                   .arg(rewrite.frontend);
    return Error{ErrorCode::Failed, error, where, hint};
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

// Whether the engine refused the request to build with BuildKit (an engine without it, or one
// that has it only in experimental mode), as opposed to a build that failed.
bool refusedBuildKit(const Error &error)
{
    return error.code == ErrorCode::Failed && error.where.startsWith(QLatin1String("docker POST /build")) &&
           error.message.contains(QLatin1String("buildkit"), Qt::CaseInsensitive);
}

// One build of the tar'd context read from context; what a classic build made goes to made.
Result<QString> buildFrom(const DockerClient &client, const BuildRequest &request, QIODevice &context, bool buildKit,
                          const Rewrite &rewrite, const CancelToken &cancel,
                          const std::function<void(const QString &line)> &progress, MadeImages &made)
{
    Request r;
    r.method = "POST";
    r.path = QStringLiteral("/build");
    r.addQuery(QStringLiteral("version"), buildKit ? QStringLiteral("2") : QStringLiteral("1"));
    if (!request.tag.isEmpty())
        r.addQuery(QStringLiteral("t"), request.tag);
    if (!request.dockerfile.isEmpty())
        r.addQuery(QStringLiteral("dockerfile"), request.dockerfile);
    if (!request.labels.isEmpty())
        r.addQuery(QStringLiteral("labels"), QString::fromUtf8(compactJson(labelsJson(request.labels))));
    if (!request.buildArgs.isEmpty())
        r.addQuery(QStringLiteral("buildargs"), QString::fromUtf8(compactJson(labelsJson(request.buildArgs))));
    r.addQuery(QStringLiteral("rm"), QStringLiteral("1")).addQuery(QStringLiteral("forcerm"), QStringLiteral("1"));
    if (request.pull)
        r.addQuery(QStringLiteral("pull"), QStringLiteral("1"));
    r.bodyDevice = &context;
    r.contentType = "application/x-tar";

    QString imageId;
    QString error;
    QString step;        // the classic instruction running: "Step 2/5 : RUN make"
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
    BuildKitTrace trace(progress);
    JsonLines parser([&](const QJsonObject &o) {
        if (hasStreamError(o)) {
            error = streamError(o);
            return;
        }
        const QJsonValue aux = o.value(QLatin1String("aux"));
        if (o.value(QLatin1String("id")) == QLatin1String("moby.buildkit.trace")) {
            trace.feed(aux.toString().toLatin1());
            return;
        }
        if (o.contains(QLatin1String("stream"))) {
            pendingText += o.value(QLatin1String("stream")).toString();
            emitLines(false);
        } else if (o.contains(QLatin1String("status"))) {
            pendingText += o.value(QLatin1String("status")).toString() + u'\n';
            emitLines(false);
        }
        const QString id = aux.toObject().value(QLatin1String("ID")).toString();
        if (!id.isEmpty())
            imageId = id;
    });
    auto status = client.stream(r, cancel, [&](QByteArrayView chunk) {
        parser.feed(chunk);
        return true;
    });
    parser.finish();
    trace.finish();
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
        return std::unexpected(trace.seen() ? buildKitFailure(request, trace.failure(), error, rewrite)
                                            : classicFailure(request, step, error));
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
                           const std::function<void(const QString &line)> &progress, Builder builder)
{
    auto ignore = DockerIgnore::forContext(request.contextDir, request.dockerfile);
    if (!ignore)
        return fail(ErrorCode::Failed, ignore.error().message, ignore.error().where, ignore.error().hint);
    for (const CredentialedPull &first : request.pullFirst) {
        if (!first.always && imageId(client, first.image)) {
            if (progress)
                progress(QStringLiteral("%1: the engine's copy").arg(first.image));
            continue;
        }
        if (auto pulled = pullImage(client, first.image, first.credential, cancel, progress); !pulled)
            return std::unexpected(pulled.error());
    }
    if (!request.pullFirst.isEmpty() && request.pull) {
        // Asked of the registry again in the build, BuildKit would have no credential to give.
        BuildRequest pulled = request;
        pulled.pull = false;
        pulled.pullFirst.clear();
        return buildImage(client, pulled, cancel, progress, builder);
    }
    const Rewrite rewrite = builder == Builder::Classic ? Rewrite{} : rewriteFor(client, request, progress);
    auto context =
        tarToTempFile(request.contextDir,
                      TarOptions{.skipTopLevelGit = true, .ignore = std::move(*ignore), .replace = rewrite.replace});
    if (!context)
        return std::unexpected(context.error());
    MadeImages made;
    bool buildKit = builder != Builder::Classic;
    auto built = buildFrom(client, request, *context->get(), buildKit, rewrite, cancel, progress, made);
    if (!built && buildKit && refusedBuildKit(built.error())) {
        if (builder == Builder::BuildKit) {
            built.error().hint = QStringLiteral("DOCKER_BUILDKIT=1 asks for BuildKit: unset it, or set it to 0, to "
                                                "build with the classic builder");
            return built;
        }
        if (!cancel.isCancelled() && context->get()->seek(0)) {
            if (progress)
                progress(QStringLiteral("the engine cannot build with BuildKit (%1): building with the classic builder")
                             .arg(built.error().message));
            buildKit = false;
            built = buildFrom(client, request, *context->get(), false, rewrite, cancel, progress, made);
        }
    }
    // The classic builder reuses cached layers by id; when another build's clean-up removes an
    // image in between (deploys of different apps share layers), it fails with this. The cache
    // entry is gone by then, so a second attempt builds the step instead of reusing it.
    if (!buildKit && !built && built.error().message.contains(QLatin1String("unknown parent image ID")) &&
        !cancel.isCancelled() && context->get()->seek(0)) {
        if (progress)
            progress(QStringLiteral("a cached layer was removed during the build; building again"));
        built = buildFrom(client, request, *context->get(), false, rewrite, cancel, progress, made);
    }
    reportLeftovers(client, request, made.ids(), built ? *built : QString());
    return built;
}

} // namespace pando::adapters::dockerapi
