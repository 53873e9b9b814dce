#include "resourceio.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonValue>
#include <QRegularExpression>
#include <QSaveFile>

namespace pando::adapters {

using namespace Qt::StringLiterals;

Result<QString> sourceText(const QJsonObject &o, const QString &key, const QString &prefix)
{
    const QJsonValue value = o.value(key);
    if (value.isUndefined() || value.isNull())
        return QString();
    if (value.isDouble())
        return QString::number(value.toDouble());
    if (!value.isString())
        return fail(ErrorCode::Invalid, u"must be text"_s, prefix + key);
    return value.toString();
}

Result<bool> sourceFlag(const QJsonObject &o, const QString &key, const QString &prefix)
{
    const QJsonValue value = o.value(key);
    if (value.isUndefined() || value.isNull())
        return false;
    if (value.isBool())
        return value.toBool();
    if (value.isString() && (value.toString() == u"true"_s || value.toString() == u"false"_s))
        return value.toString() == u"true"_s;
    return fail(ErrorCode::Invalid, u"must be true or false"_s, prefix + key);
}

Status readTexts(const QJsonObject &o, std::initializer_list<std::pair<QString, QString *>> fields,
                 const QString &prefix)
{
    for (const auto &[key, into] : fields) {
        auto value = sourceText(o, key, prefix);
        if (!value)
            return std::unexpected(value.error());
        *into = *value;
    }
    return {};
}

Status readFlags(const QJsonObject &o, std::initializer_list<std::pair<QString, bool *>> fields, const QString &prefix)
{
    for (const auto &[key, into] : fields) {
        auto value = sourceFlag(o, key, prefix);
        if (!value)
            return std::unexpected(value.error());
        *into = *value;
    }
    return {};
}

Status writeResourceFile(const QString &path, const QByteArray &content)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size() || !file.commit())
        return fail(ErrorCode::Failed, u"cannot write %1: %2"_s.arg(QFileInfo(path).fileName(), file.errorString()));
    return {};
}

namespace {
Result<QString> pathInInputs(const QString &workDir, const QString &relative, const QString &where, bool directory)
{
    const QString cleaned = QDir::cleanPath(relative);
    if (relative.isEmpty() || QDir::isAbsolutePath(relative) || cleaned == u".."_s || cleaned.startsWith(u"../"_s))
        return fail(ErrorCode::Invalid, u"\"%1\" is not a path inside the step's inputs"_s.arg(relative), where);
    const QString root = QDir(workDir).canonicalPath();
    const QFileInfo info(root + u'/' + cleaned);
    if (!info.exists())
        return fail(ErrorCode::Invalid, u"\"%1\" does not exist in the step's inputs"_s.arg(cleaned), where);
    const QString path = info.canonicalFilePath();
    if (!path.startsWith(root + u'/') || (directory ? !info.isDir() : !info.isFile()))
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a %2 in the step's inputs"_s.arg(cleaned, directory ? u"directory"_s : u"file"_s),
                    where);
    return path;
}
} // namespace

Result<QString> fileInInputs(const QString &workDir, const QString &relative, const QString &where)
{
    return pathInInputs(workDir, relative, where, false);
}

Result<QString> dirInInputs(const QString &workDir, const QString &relative, const QString &where)
{
    return pathInInputs(workDir, relative, where, true);
}

namespace {
bool hasWildcard(const QString &segment)
{
    return segment.contains(u'*') || segment.contains(u'?') || segment.contains(u'[');
}
} // namespace

Result<QString> findOneFileInInputs(const QString &root, const QString &pattern, const QString &where)
{
    const QStringList segments = pattern.split(u'/', Qt::SkipEmptyParts);
    if (pattern.startsWith(u'/') || segments.isEmpty() || segments.contains(u".."_s))
        return fail(ErrorCode::Invalid, u"\"%1\" is not a path inside the step's inputs"_s.arg(pattern), where);
    QStringList found{QDir(root).absolutePath()};
    for (const QString &segment : segments) {
        QStringList next;
        for (const QString &dir : std::as_const(found)) {
            if (!hasWildcard(segment)) {
                if (QFileInfo::exists(dir + u'/' + segment) || QFileInfo(dir + u'/' + segment).isSymLink())
                    next.append(dir + u'/' + segment);
                continue;
            }
            const QRegularExpression match(QRegularExpression::wildcardToRegularExpression(segment));
            const QStringList names =
                QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
            for (const QString &name : names)
                if (match.match(name).hasMatch() && (!name.startsWith(u'.') || segment.startsWith(u'.')))
                    next.append(dir + u'/' + name);
        }
        found = next;
    }
    if (found.isEmpty())
        return fail(ErrorCode::Invalid,
                    u"no file matches \"%1\" in the step's inputs (%2)"_s.arg(
                        pattern, QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot).join(u", "_s)),
                    where);
    if (found.size() > 1) {
        QStringList names;
        for (const QString &path : std::as_const(found))
            names.append(QDir(root).relativeFilePath(path));
        return fail(ErrorCode::Invalid,
                    u"\"%1\" matches %2 files (%3); it must name exactly one"_s.arg(pattern)
                        .arg(found.size())
                        .arg(names.mid(0, 5).join(u", "_s)),
                    where);
    }
    const QFileInfo info(found.first());
    const QString canonicalRoot = QDir(root).canonicalPath() + u'/';
    if (!info.canonicalFilePath().startsWith(canonicalRoot))
        return fail(
            ErrorCode::Invalid,
            u"%1 is a link to outside the step's inputs; refused"_s.arg(QDir(root).relativeFilePath(found.first())),
            where);
    if (!info.isFile())
        return fail(ErrorCode::Invalid, u"%1 is not a regular file"_s.arg(QDir(root).relativeFilePath(found.first())),
                    where);
    return info.canonicalFilePath();
}

} // namespace pando::adapters
