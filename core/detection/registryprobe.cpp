#include "core/detection/registryprobe.h"

#include "core/spec/specrules.h"
#include "core/spec/yamlreader.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

using detail::DocNode;

constexpr qint64 MaxProbedFileBytes = 256LL * 1024;
constexpr int MaxWorkflows = 32;

// A file's text when it is a regular file inside root (no link leads out), small enough to read;
// else nothing. (No std::optional here or below: clang-tidy 16's unchecked-optional-access does
// not finish on this file with them.)
QByteArray readInside(const QString &root, const QString &relative)
{
    const QFileInfo info(root + u'/' + relative);
    const QString canonicalRoot = QFileInfo(root).canonicalFilePath();
    const QString canonical = info.canonicalFilePath();
    if (canonical.isEmpty() || !canonical.startsWith(canonicalRoot + u'/') || !info.isFile() ||
        info.size() > MaxProbedFileBytes)
        return {};
    QFile f(canonical);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll();
}

// The file's YAML when it reads as a mapping; else a Null node.
DocNode readYamlInside(const QString &root, const QString &relative)
{
    const QByteArray text = readInside(root, relative);
    if (text.isEmpty())
        return {};
    Result<DocNode> doc = detail::readYaml(text, {MaxProbedFileBytes, 64, 100000, u"file"_s, true});
    if (!doc.has_value() || doc.value().kind != DocNode::Kind::Map)
        return {};
    return std::move(doc.value());
}

// "owner/name" of a repository address in any form git takes: https://host/owner/name(.git),
// git@host:owner/name, ssh://…; empty when it has no such path or is a local one (file://).
QString repositoryPath(const QString &address)
{
    QString path;
    if (address.startsWith(u"file:"_s))
        return {}; // no forge: nothing its variables would name
    if (address.contains(u"://"_s))
        path = QUrl(address).path();
    else if (const qsizetype colon = address.indexOf(u':'); colon > 0)
        path = address.mid(colon + 1);
    path = path.trimmed();
    if (path.endsWith(u".git"_s))
        path.chop(4);
    while (path.startsWith(u'/'))
        path.remove(0, 1);
    return path;
}

QString hostOf(const QString &address)
{
    if (address.contains(u"://"_s))
        return QUrl(address).host().toLower();
    return address.section(u'@', -1).section(u':', 0, 0).toLower();
}

// The repository part of an image reference, when what is left is one ("ghcr.io/acme/web:1.2"
// → "ghcr.io/acme/web"); empty for anything else (an expression left unresolved, a variable).
QString imageRepository(QString reference)
{
    reference = reference.trimmed().section(u'@', 0, 0);
    const qsizetype slash = reference.lastIndexOf(u'/');
    if (const qsizetype colon = reference.lastIndexOf(u':'); colon > slash)
        reference.truncate(colon);
    return detail::checkImageReference(reference, {}) ? reference : QString();
}

// Scalars of a node that holds one value, a list of them, or a block of lines (tags: | …).
QStringList values(const DocNode *node)
{
    QStringList out;
    if (!node)
        return out;
    if (node->kind == DocNode::Kind::Scalar) {
        for (const QString &part : node->text.split(QRegularExpression(u"[\\n,]"_s), Qt::SkipEmptyParts))
            if (!part.trimmed().isEmpty())
                out << part.trimmed();
    } else if (node->kind == DocNode::Kind::Sequence) {
        for (const DocNode &item : node->items)
            out << values(&item);
    }
    return out;
}

class Found {
public:
    void add(const QString &reference, const QString &foundIn)
    {
        const QString image = imageRepository(reference);
        if (image.isEmpty())
            return;
        for (const PublishedImage &known : std::as_const(m_images))
            if (known.image == image)
                return;
        m_images.append({image, foundIn});
    }
    QList<PublishedImage> images() const { return m_images; }

private:
    QList<PublishedImage> m_images;
};

void probeCompose(const QString &root, Found &found)
{
    for (const QString &name :
         {u"compose.yaml"_s, u"compose.yml"_s, u"docker-compose.yml"_s, u"docker-compose.yaml"_s}) {
        const DocNode doc = readYamlInside(root, name);
        const DocNode *services = doc.value(u"services"_s);
        if (!services || services->kind != DocNode::Kind::Map)
            continue;
        // Entries by pair: clang-tidy 16 crashes on structured bindings over DocNode's entries.
        for (const std::pair<QString, DocNode> &service : services->entries) {
            const DocNode *image = service.second.value(u"image"_s);
            if (service.second.value(u"build"_s) && image && image->kind == DocNode::Kind::Scalar)
                found.add(image->text, u"%1 (service %2: build and image)"_s.arg(name, service.first));
        }
    }
}

// ${{ … }} in a workflow: env.X from the maps given (job first), github.repository and
// github.repository_owner; anything else stays, and the reference with it is passed over.
QString resolveExpressions(QString text, const QList<const DocNode *> &envs, const QString &repository)
{
    static const QRegularExpression expression(uR"(\$\{\{\s*([A-Za-z0-9_.-]+)\s*\}\})"_s);
    for (int pass = 0; pass < 4 && text.contains(u"${{"_s); ++pass) {
        QString out;
        qsizetype at = 0;
        for (auto it = expression.globalMatch(text); it.hasNext();) {
            const auto m = it.next();
            out += text.mid(at, m.capturedStart() - at);
            const QString name = m.captured(1);
            QString value = m.captured(0);
            if (name == u"github.repository"_s && !repository.isEmpty())
                value = repository;
            else if (name == u"github.repository_owner"_s && repository.contains(u'/'))
                value = repository.section(u'/', 0, 0);
            else if (name.startsWith(u"env."_s))
                for (const DocNode *env : envs)
                    if (const DocNode *v = env ? env->value(name.mid(4)) : nullptr;
                        v && v->kind == DocNode::Kind::Scalar) {
                        value = v->text;
                        break;
                    }
            out += value;
            at = m.capturedEnd();
        }
        text = out + text.mid(at);
    }
    return text;
}

bool pushes(const DocNode *with)
{
    const DocNode *push = with ? with->value(u"push"_s) : nullptr;
    if (!push || push->kind != DocNode::Kind::Scalar)
        return false;
    const QString value = push->text.trimmed().toLower();
    return value == u"true"_s || value.startsWith(u"${{"_s); // an expression: pushes on some events
}

void probeWorkflow(const DocNode &doc, const QString &file, const QString &repository, Found &found)
{
    const DocNode *jobs = doc.value(u"jobs"_s);
    if (!jobs || jobs->kind != DocNode::Kind::Map)
        return;
    for (const std::pair<QString, DocNode> &entry : jobs->entries) {
        const DocNode &job = entry.second;
        const DocNode *steps = job.value(u"steps"_s);
        if (!steps || steps->kind != DocNode::Kind::Sequence)
            continue;
        const QList<const DocNode *> envs{job.value(u"env"_s), doc.value(u"env"_s)};
        QStringList metadataImages; // what docker/metadata-action makes tags of, for outputs.tags
        for (const DocNode &step : steps->items) {
            const DocNode *uses = step.value(u"uses"_s);
            const DocNode *with = step.value(u"with"_s);
            if (!uses || uses->kind != DocNode::Kind::Scalar || !with)
                continue;
            const QString action = uses->text.section(u'@', 0, 0).trimmed();
            if (action == u"docker/metadata-action"_s) {
                for (const QString &image : values(with->value(u"images"_s)))
                    metadataImages << resolveExpressions(image.section(u',', 0, 0), envs, repository).toLower();
            } else if (action == u"docker/build-push-action"_s && pushes(with)) {
                const QString where = u"%1 (docker/build-push-action)"_s.arg(file);
                for (const QString &tag : values(with->value(u"tags"_s))) {
                    if (tag.contains(u"outputs.tags"_s)) {
                        for (const QString &image : std::as_const(metadataImages))
                            found.add(image, where);
                        continue;
                    }
                    found.add(resolveExpressions(tag, envs, repository), where);
                }
            }
        }
    }
}

void probeGitHub(const QString &root, const QString &repository, Found &found)
{
    const QDir workflows(root + u"/.github/workflows"_s);
    const QStringList files =
        workflows.entryList({u"*.yml"_s, u"*.yaml"_s}, QDir::Files | QDir::NoDotAndDotDot, QDir::Name);
    for (const QString &name : files.mid(0, MaxWorkflows)) {
        const QString relative = u".github/workflows/"_s + name;
        if (const DocNode doc = readYamlInside(root, relative); doc.kind == DocNode::Kind::Map)
            probeWorkflow(doc, relative, repository, found);
    }
}

void probeGitLab(const QString &root, const QString &host, const QString &repository, Found &found)
{
    if (host != u"gitlab.com"_s || repository.isEmpty())
        return;
    const QByteArray text = readInside(root, u".gitlab-ci.yml"_s);
    if (text.contains("$CI_REGISTRY_IMAGE") && text.contains("push"))
        found.add(u"registry.gitlab.com/"_s + repository.toLower(), u".gitlab-ci.yml (pushes $CI_REGISTRY_IMAGE)"_s);
}

} // namespace

QList<PublishedImage> publishedImages(const QString &checkoutDir, const QString &repoAddress)
{
    Found found;
    const QString repository = repositoryPath(repoAddress);
    probeCompose(checkoutDir, found);
    probeGitHub(checkoutDir, repository, found);
    probeGitLab(checkoutDir, hostOf(repoAddress), repository, found);
    return found.images();
}

QString publishedImagesOffer(const QList<PublishedImage> &images)
{
    if (images.isEmpty())
        return {};
    QStringList named;
    for (const PublishedImage &image : images)
        named << u"%1 (%2)"_s.arg(image.image, image.foundIn);
    return u"this repository publishes %1; to deploy that image instead of building, set source.image: %2:TAG"_s.arg(
        named.join(u", "_s), images.first().image);
}

} // namespace pando::core
