#include "adapters/kit/dockerapi/archivecheck.h"

#include "adapters/api/archiveptr.h"

#include <QFile>
#include <QSet>
#include <archive.h>
#include <archive_entry.h>
#include <memory>
#include <optional>

using namespace Qt::StringLiterals;

namespace pando::adapters::dockerapi {

namespace {

// The name's parts without "." ones and a leading "./"; nullopt when it is absolute or climbs out.
std::optional<QList<QByteArray>> parts(const QByteArray &name)
{
    if (name.startsWith('/'))
        return std::nullopt;
    QList<QByteArray> out;
    for (const QByteArray &part : name.split('/')) {
        if (part == "..")
            return std::nullopt;
        if (!part.isEmpty() && part != ".")
            out.append(part);
    }
    return out;
}

} // namespace

Result<QString> checkArchiveTree(const QString &path, const QString &top)
{
    const ArchiveReader in(archive_read_new());
    archive_read_support_format_tar(in.get());
    archive_read_support_format_gnutar(in.get());
    archive_read_support_filter_gzip(in.get());
    archive_read_support_filter_bzip2(in.get());
    archive_read_support_filter_xz(in.get());
    archive_read_support_filter_zstd(in.get());
    const QString hint = u"restore an archive `pando volumes backup` wrote"_s;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(ErrorCode::Invalid, u"cannot read the archive: %1"_s.arg(file.errorString()), path);
    file.close();
    if (archive_read_open_filename(in.get(), QFile::encodeName(path).constData(), 1 << 16) != ARCHIVE_OK)
        return fail(ErrorCode::Invalid, u"the file is not a tar archive: %1"_s.arg(archiveError(in.get())), path, hint);
    QByteArray root = top.toUtf8();
    QSet<QByteArray> symlinks;
    archive_entry *entry = nullptr;
    int entries = 0;
    int r = ARCHIVE_OK;
    while ((r = archive_read_next_header(in.get(), &entry)) == ARCHIVE_OK) {
        const QByteArray raw(archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "");
        const QString where = u"archive entry %1"_s.arg(QString::fromUtf8(raw));
        const auto name = parts(raw);
        if (!name)
            return fail(ErrorCode::Invalid, u"the name is absolute or climbs out with \"..\""_s, where);
        if (name->isEmpty())
            continue; // "./": the directory it is unpacked into
        if (root.isEmpty())
            root = name->first();
        if (name->first() != root)
            return fail(ErrorCode::Invalid,
                        u"it is not below %1, the archive's top directory"_s.arg(QString::fromUtf8(root)), where, hint);
        for (qsizetype i = 1; i < name->size(); ++i)
            if (symlinks.contains(name->first(i).join('/')))
                return fail(
                    ErrorCode::Invalid,
                    u"it lies below %1, a symlink the archive made"_s.arg(QString::fromUtf8(name->first(i).join('/'))),
                    where);
        if (const char *link = archive_entry_hardlink(entry)) {
            const auto target = parts(QByteArray(link));
            if (!target || target->isEmpty() || target->first() != root)
                return fail(ErrorCode::Invalid,
                            u"a hard link to %1, outside the archive's tree"_s.arg(QString::fromUtf8(link)), where);
        }
        const mode_t type = archive_entry_filetype(entry);
        if (name->size() == 1 && type != AE_IFDIR)
            return fail(ErrorCode::Invalid, u"the archive's top is a file, not a directory"_s, where, hint);
        if (type == AE_IFCHR || type == AE_IFBLK)
            return fail(ErrorCode::Invalid, u"a device node, which a volume does not take"_s, where);
        if (type == AE_IFLNK)
            symlinks.insert(name->join('/'));
        ++entries;
        if (r = archive_read_data_skip(in.get()); r != ARCHIVE_OK)
            break;
    }
    if (r != ARCHIVE_EOF && entries == 0)
        return fail(ErrorCode::Invalid, u"the file is not a tar archive: %1"_s.arg(archiveError(in.get())), path, hint);
    if (r != ARCHIVE_EOF)
        return fail(
            ErrorCode::Invalid,
            u"the archive is damaged or cut short after %1 entries: %2"_s.arg(entries).arg(archiveError(in.get())),
            path);
    if (entries == 0)
        return fail(ErrorCode::Invalid, u"the archive holds no files"_s, path);
    return QString::fromUtf8(root);
}

} // namespace pando::adapters::dockerapi
