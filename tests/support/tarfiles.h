#pragma once
// The regular files of a tar archive, by path, for tests that check what an archive holds; and
// archives written as a test needs them (also ones no honest tool writes).

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>

namespace pando::test {

// path inside the archive → content; empty when the file cannot be read as an archive.
QMap<QString, QByteArray> tarFiles(const QString &archivePath);

struct TarEntry {
    enum class Type { File, Directory, Symlink, Hardlink, CharDevice };
    QByteArray name; // as stored: "../x" and "/etc/x" too
    Type type = Type::File;
    QByteArray content; // a file's
    QByteArray target;  // a link's
};

// An uncompressed tar of entries in their order; false when it cannot be written.
bool writeTar(const QString &archivePath, const QList<TarEntry> &entries);

} // namespace pando::test
