#include "resourceio.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonValue>
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

Result<QString> fileInInputs(const QString &workDir, const QString &relative, const QString &where)
{
    const QString cleaned = QDir::cleanPath(relative);
    if (relative.isEmpty() || QDir::isAbsolutePath(relative) || cleaned == u".."_s || cleaned.startsWith(u"../"_s))
        return fail(ErrorCode::Invalid, u"\"%1\" is not a path inside the step's inputs"_s.arg(relative), where);
    const QString root = QDir(workDir).canonicalPath();
    const QFileInfo info(root + u'/' + cleaned);
    if (!info.exists())
        return fail(ErrorCode::Invalid, u"\"%1\" does not exist in the step's inputs"_s.arg(cleaned), where);
    const QString path = info.canonicalFilePath();
    if (!path.startsWith(root + u'/') || !info.isFile())
        return fail(ErrorCode::Invalid, u"\"%1\" is not a file in the step's inputs"_s.arg(cleaned), where);
    return path;
}

} // namespace pando::adapters
