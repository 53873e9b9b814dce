#include "tests/support/tarfiles.h"

#include <QFile>
#include <archive.h>
#include <archive_entry.h>

namespace pando::test {

QMap<QString, QByteArray> tarFiles(const QString &archivePath)
{
    QMap<QString, QByteArray> files;
    archive *a = archive_read_new();
    archive_read_support_format_tar(a);
    archive_read_support_filter_all(a);
    if (archive_read_open_filename(a, QFile::encodeName(archivePath).constData(), 64 * 1024) != ARCHIVE_OK) {
        archive_read_free(a);
        return files;
    }
    archive_entry *entry = nullptr;
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
        if (archive_entry_filetype(entry) != AE_IFREG)
            continue;
        QByteArray content;
        char buffer[16384];
        for (la_ssize_t n = 0; (n = archive_read_data(a, buffer, sizeof buffer)) > 0;)
            content.append(buffer, qsizetype(n));
        files.insert(QString::fromUtf8(archive_entry_pathname(entry)), content);
    }
    archive_read_free(a);
    return files;
}

} // namespace pando::test
