#include "core/detection/detection.h"

#include "core/detection/baseimages.h"
#include "core/detection/stacks.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

constexpr qint64 MaxDockerfileBytes = 1024LL * 1024;

bool isInside(const QString &path, const QString &root)
{
    return path == root || path.startsWith(root.endsWith(u'/') ? root : root + u'/');
}

bool climbs(const QString &relative)
{
    const QString clean = QDir::cleanPath(relative);
    return QDir::isAbsolutePath(relative) || clean == u".." || clean.startsWith(u"../"_s);
}

// Files at the top of a context that look like a Dockerfile, for "did you mean" hints.
QStringList dockerfileLikeFiles(const QString &dir)
{
    QStringList found;
    const auto entries = QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::System, QDir::Name);
    for (const QString &entry : entries) {
        const QString lower = entry.toLower();
        if (lower.startsWith(u"dockerfile"_s) || lower.endsWith(u".dockerfile"_s) ||
            lower.startsWith(u"containerfile"_s))
            found.append(entry);
    }
    return found;
}

// Dockerfiles below dir (not at its top), nearest first: "apps/web/Dockerfile". Links are not
// followed, so nothing outside the repository is named; .git and dependency folders are skipped.
QStringList nestedDockerfiles(const QString &dir)
{
    constexpr int MaxDepth = 3;
    constexpr qsizetype MaxFound = 5;
    QStringList found;
    QStringList level{QString()};
    for (int depth = 1; depth <= MaxDepth && found.size() < MaxFound && !level.isEmpty(); ++depth) {
        QStringList next;
        for (const QString &parent : std::as_const(level)) {
            const QDir here(parent.isEmpty() ? dir : dir + u'/' + parent);
            const auto subdirs =
                here.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks | QDir::Hidden, QDir::Name);
            for (const QString &sub : subdirs) {
                if (sub == u".git"_s || sub == u"node_modules"_s || sub == u"vendor"_s)
                    continue;
                const QString relative = parent.isEmpty() ? sub : parent + u'/' + sub;
                next.append(relative);
                const QFileInfo candidate(dir + u'/' + relative + u"/Dockerfile"_s);
                if (candidate.isFile() && !candidate.isSymLink() && found.size() < MaxFound)
                    found.append(relative + u"/Dockerfile"_s);
            }
        }
        level = next;
    }
    return found;
}

// The first numeric port of the first EXPOSE instruction that has one ("EXPOSE 8080/tcp").
int exposedPort(const QString &text)
{
    // Join continuation lines first, so "EXPOSE \\\n 8080" counts.
    QString joined = text;
    joined.replace(QRegularExpression(u"\\\\[ \\t]*\\r?\\n"_s), u" "_s);
    static const QRegularExpression expose(u"^\\s*EXPOSE\\s+(.*)$"_s, QRegularExpression::CaseInsensitiveOption |
                                                                          QRegularExpression::MultilineOption);
    static const QRegularExpression portToken(u"^([0-9]{1,5})(-[0-9]{1,5})?(/(tcp|udp|sctp))?$"_s,
                                              QRegularExpression::CaseInsensitiveOption);
    for (auto it = expose.globalMatch(joined); it.hasNext();) {
        const auto line = it.next();
        const auto tokens = line.captured(1).split(QRegularExpression(u"\\s+"_s), Qt::SkipEmptyParts);
        for (const QString &token : tokens) {
            const auto m = portToken.match(token);
            if (!m.hasMatch())
                continue;
            const int port = m.captured(1).toInt();
            if (port >= 1 && port <= 65535)
                return port;
        }
    }
    return 0;
}

} // namespace

Result<Detection> detect(const AppSpec &spec, const QString &checkoutDir)
{
    const QString root = QFileInfo(checkoutDir).canonicalFilePath();
    if (root.isEmpty() || !QFileInfo(root).isDir())
        return fail(ErrorCode::NotFound, u"the checkout directory \"%1\" does not exist"_s.arg(checkoutDir));
    if (climbs(spec.build.context)) {
        return fail(ErrorCode::Invalid, u"\"%1\" leaves the repository"_s.arg(spec.build.context), u"build.context"_s);
    }
    if (climbs(spec.build.dockerfile)) {
        return fail(ErrorCode::Invalid, u"\"%1\" leaves the build context"_s.arg(spec.build.dockerfile),
                    u"build.dockerfile"_s);
    }

    // A path that does not exist and one that leads out (through a link the repository holds)
    // get one answer: two would tell whoever pushed the link whether a path exists on this host.
    const QString contextRelative = QDir::cleanPath(spec.build.context);
    const QFileInfo contextInfo(root + u'/' + contextRelative);
    const QString contextDir = contextInfo.exists() ? contextInfo.canonicalFilePath() : QString();
    if (contextDir.isEmpty() || !isInside(contextDir, root))
        return fail(
            ErrorCode::Invalid,
            u"\"%1\" is not a directory in the repository (it is missing, or a link that leads out of it)"_s.arg(
                contextRelative),
            u"build.context"_s, u"set build.context to a directory of the repository"_s);
    if (!contextInfo.isDir())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a directory"_s.arg(contextRelative), u"build.context"_s);

    const QString dockerfileRelative = QDir::cleanPath(spec.build.dockerfile);
    const QString shownPath =
        contextRelative == u"." ? dockerfileRelative : QDir::cleanPath(contextRelative + u'/' + dockerfileRelative);
    const QFileInfo dockerfileInfo(contextDir + u'/' + dockerfileRelative);
    const QString dockerfilePath = dockerfileInfo.exists() ? dockerfileInfo.canonicalFilePath() : QString();
    // The build sends only the context, so a Dockerfile elsewhere in the repository is unusable.
    if (dockerfilePath.isEmpty() || !isInside(dockerfilePath, contextDir)) {
        const QStringList candidates = dockerfileLikeFiles(contextDir);
        const QString contextName =
            contextRelative == u"." ? u"the repository root"_s : u"\"%1\""_s.arg(contextRelative);
        const QStringList nested = candidates.isEmpty() ? nestedDockerfiles(contextDir) : QStringList();
        QString hint;
        if (!candidates.isEmpty()) {
            hint = u"Dockerfile-like files at the top of %1: %2; set build.dockerfile to one of them"_s.arg(
                contextName, candidates.join(u", "_s));
        } else if (!nested.isEmpty()) {
            // A monorepo: the app's directory is the context it needs, not only its Dockerfile.
            const QString appDir = nested.first().section(u'/', 0, -2);
            hint = u"no Dockerfile at the top of %1, but below it: %2; in a monorepo set build.context to the app's "
                   u"directory (build.context: %3): the build sends only the context, and build.dockerfile is "
                   u"read inside it"_s.arg(contextName, nested.join(u", "_s),
                                           contextRelative == u"." ? appDir : contextRelative + u'/' + appDir);
        } else if (spec.build.dockerfile == u"Dockerfile" && !dockerfileInfo.exists() && !dockerfileInfo.isSymLink()) {
            // The default name, and nothing there at all: a repository without a Dockerfile,
            // built for the stack it holds.
            auto generated = detectStack(contextDir, spec.build.base);
            if (!generated) {
                Error e = generated.error();
                e.message = u"\"%1\" is not a file in the build context, and %2"_s.arg(shownPath, e.message);
                return std::unexpected(e);
            }
            Detection detection;
            detection.builder = u"generated"_s;
            detection.contextDir = contextDir;
            detection.dockerfile = QString::fromLatin1(GeneratedDockerfileName);
            detection.dockerfilePath = contextDir + u'/' + detection.dockerfile;
            detection.exposedPort = GeneratedPort;
            detection.stack = generated->stack;
            detection.summary = generated->summary;
            detection.generated = generated->dockerfile;
            detection.baseImages = baseImages(detection.generated.toUtf8(), spec.build.args);
            return detection;
        } else {
            hint = u"no Dockerfile-like files at the top of %1; add a Dockerfile or set build.dockerfile"_s.arg(
                contextName);
        }
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a file in the build context (it is missing, or a link that leads out of it)"_s.arg(
                        shownPath),
                    u"build.dockerfile"_s, hint);
    }
    if (!dockerfileInfo.isFile())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a file"_s.arg(shownPath), u"build.dockerfile"_s);

    Detection detection;
    detection.builder = u"dockerfile"_s;
    detection.contextDir = contextDir;
    detection.dockerfilePath = dockerfilePath;
    detection.dockerfile = QDir(contextDir).relativeFilePath(dockerfilePath);
    QFile file(dockerfilePath);
    const QByteArray text = file.open(QIODevice::ReadOnly) ? file.read(MaxDockerfileBytes) : QByteArray();
    detection.exposedPort = exposedPort(QString::fromUtf8(text));
    detection.baseImages = baseImages(text, spec.build.args);
    return detection;
}

} // namespace pando::core
