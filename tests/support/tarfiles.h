#pragma once
// The regular files of a tar archive, by path, for tests that check what an archive holds.

#include <QByteArray>
#include <QMap>
#include <QString>

namespace pando::test {

// path inside the archive → content; empty when the file cannot be read as an archive.
QMap<QString, QByteArray> tarFiles(const QString &archivePath);

} // namespace pando::test
