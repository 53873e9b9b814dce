#pragma once
// What built-in resource types share: reading a resource's source and params as Concourse's
// resource types do (a number YAML wrote is text; a flag may be the text "true" or "false"; errors
// name the field, "source.bucket", "params.unpack"), writing the files a get leaves, and finding
// the file a put names in the step's inputs without leaving them.

#include "error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <initializer_list>
#include <utility>

namespace pando::adapters {

// The text at key (empty when absent or null); prefix is "source." or "params.".
Result<QString> sourceText(const QJsonObject &o, const QString &key, const QString &prefix);
// The flag at key (false when absent or null).
Result<bool> sourceFlag(const QJsonObject &o, const QString &key, const QString &prefix);
// Several of them at once, each into its place; the first wrong one is the error.
Status readTexts(const QJsonObject &o, std::initializer_list<std::pair<QString, QString *>> fields,
                 const QString &prefix);
Status readFlags(const QJsonObject &o, std::initializer_list<std::pair<QString, bool *>> fields, const QString &prefix);

// Writes content to path whole or not at all; the error names the file, not its directory.
Status writeResourceFile(const QString &path, const QByteArray &content);

// The real path of the regular file `relative` names below workDir (the step's inputs), refused at
// `where` when it is absolute, leaves workDir (by ".." or a link), is missing or is no file.
Result<QString> fileInInputs(const QString &workDir, const QString &relative, const QString &where);
// The same for a directory (a repository a put pushes from).
Result<QString> dirInInputs(const QString &workDir, const QString &relative, const QString &where);

// The one regular file below root that pattern names, a glob as fly's resources read them
// (wildcards * ? [..] within a path segment; hidden names only when the segment starts with a
// dot), refused at `where` when none or several match, or it is a link out of root or no file.
Result<QString> findOneFileInInputs(const QString &root, const QString &pattern, const QString &where);

} // namespace pando::adapters
