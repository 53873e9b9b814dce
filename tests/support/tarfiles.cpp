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

bool writeTar(const QString &archivePath, const QList<TarEntry> &entries)
{
    archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    bool ok = archive_write_open_filename(a, QFile::encodeName(archivePath).constData()) == ARCHIVE_OK;
    for (const TarEntry &e : entries) {
        if (!ok)
            break;
        archive_entry *entry = archive_entry_new();
        archive_entry_set_pathname(entry, e.name.constData());
        archive_entry_set_perm(entry, e.type == TarEntry::Type::Directory ? 0755 : 0644);
        switch (e.type) {
        case TarEntry::Type::File:
            archive_entry_set_filetype(entry, AE_IFREG);
            archive_entry_set_size(entry, e.content.size());
            break;
        case TarEntry::Type::Directory:
            archive_entry_set_filetype(entry, AE_IFDIR);
            break;
        case TarEntry::Type::Symlink:
            archive_entry_set_filetype(entry, AE_IFLNK);
            archive_entry_set_symlink(entry, e.target.constData());
            break;
        case TarEntry::Type::Hardlink:
            archive_entry_set_filetype(entry, AE_IFREG);
            archive_entry_set_hardlink(entry, e.target.constData());
            break;
        case TarEntry::Type::CharDevice:
            archive_entry_set_filetype(entry, AE_IFCHR);
            archive_entry_set_rdev(entry, 0x0103);
            break;
        }
        ok = archive_write_header(a, entry) == ARCHIVE_OK;
        if (ok && e.type == TarEntry::Type::File && !e.content.isEmpty())
            ok = archive_write_data(a, e.content.constData(), size_t(e.content.size())) == e.content.size();
        archive_entry_free(entry);
    }
    ok = archive_write_close(a) == ARCHIVE_OK && ok;
    archive_write_free(a);
    return ok;
}

} // namespace pando::test
