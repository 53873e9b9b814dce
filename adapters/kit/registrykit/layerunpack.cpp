#include "layerunpack.h"

#include "adapters/api/archiveptr.h"

#include <QDir>
#include <QFile>
#include <QSet>
#include <archive.h>
#include <archive_entry.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::adapters::registrykit {

using namespace Qt::StringLiterals;

namespace {

constexpr int MaxLinksFollowed = 40;
constexpr QLatin1StringView Whiteout{".wh."};
constexpr QLatin1StringView Opaque{".wh..wh..opq"};

std::optional<struct stat> lstatOf(const QString &path)
{
    struct stat st {};
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return std::nullopt;
    return st;
}

QString linkTarget(const QString &path)
{
    char buffer[4096];
    const ssize_t n = ::readlink(QFile::encodeName(path).constData(), buffer, sizeof buffer);
    return n > 0 ? QFile::decodeName(QByteArray(buffer, n)) : QString();
}

// The path below root that parts name, following the links met on the way as if root were "/"
// (the last part is not followed, unless followLast); nullopt for a loop of links.
std::optional<QString> resolveInRoot(const QString &root, QStringList parts, bool followLast = false)
{
    QStringList done;
    int links = 0;
    while (!parts.isEmpty()) {
        const QString part = parts.takeFirst();
        if (part.isEmpty() || part == u"."_s)
            continue;
        if (part == u".."_s) {
            if (!done.isEmpty())
                done.removeLast();
            continue;
        }
        const QString here = root + u'/' + (done + QStringList{part}).join(u'/');
        const auto st = lstatOf(here);
        if (st && S_ISLNK(st->st_mode) && (!parts.isEmpty() || followLast)) {
            if (++links > MaxLinksFollowed)
                return std::nullopt;
            const QString target = linkTarget(here);
            if (target.startsWith(u'/'))
                done.clear();
            parts = target.split(u'/') + parts;
            continue;
        }
        done.append(part);
    }
    return done.isEmpty() ? root : root + u'/' + done.join(u'/');
}

// Removes path (a directory with all below it) without following links.
void removeTree(const QString &path)
{
    const auto st = lstatOf(path);
    if (!st)
        return;
    if (S_ISDIR(st->st_mode)) {
        ::chmod(QFile::encodeName(path).constData(), st->st_mode | S_IRWXU);
        QDir(path).removeRecursively();
    } else {
        ::unlink(QFile::encodeName(path).constData());
    }
}

} // namespace

RootfsBuilder::RootfsBuilder(QString rootfs, UnpackLimits limits) : m_root(std::move(rootfs)), m_limits(limits)
{}

Status RootfsBuilder::apply(const QString &file, const QString &what, const CancelToken &cancel)
{
    ArchiveReader in(archive_read_new());
    archive_read_support_filter_all(in.get());
    archive_read_support_format_tar(in.get());
    if (archive_read_open_filename(in.get(), QFile::encodeName(file).constData(), size_t{64} * 1024) != ARCHIVE_OK)
        return fail(ErrorCode::Failed, u"%1 is no layer Pando can read: %2"_s.arg(what, archiveError(in.get())));
    ArchiveWriter out(archive_write_disk_new());
    const bool root = ::geteuid() == 0;
    archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_UNLINK |
                                                  ARCHIVE_EXTRACT_SECURE_NODOTDOT | (root ? ARCHIVE_EXTRACT_OWNER : 0));
    QDir().mkpath(m_root);
    QSet<QString> written; // by this layer: an opaque directory keeps them
    QList<QString> opaque;
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"unpacking %1 was cancelled"_s.arg(what));
        archive_entry *entry = nullptr;
        const int r = archive_read_next_header(in.get(), &entry);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN)
            return fail(ErrorCode::Failed, u"%1 is cut short or no tar: %2"_s.arg(what, archiveError(in.get())));
        if (++m_entries > m_limits.maxEntries)
            return fail(ErrorCode::TooLarge, u"the image has more than %1 files"_s.arg(m_limits.maxEntries));
        const QString name = QString::fromUtf8(archive_entry_pathname_utf8(entry) ? archive_entry_pathname_utf8(entry)
                                                                                  : archive_entry_pathname(entry));
        QStringList parts = name.split(u'/', Qt::SkipEmptyParts);
        parts.removeAll(u"."_s);
        if (parts.isEmpty())
            continue; // "./" itself
        if (parts.contains(u".."_s))
            return fail(ErrorCode::Invalid, u"%1: %2 climbs out of the image"_s.arg(what, name));
        const QString base = parts.takeLast();
        const auto parent = resolveInRoot(m_root, parts, true);
        if (!parent)
            return fail(ErrorCode::Invalid, u"%1: a loop of links on the way to %2"_s.arg(what, name));
        if (base == Opaque) {
            opaque.append(*parent);
            continue;
        }
        if (base.startsWith(Whiteout)) {
            const QString gone = base.mid(Whiteout.size());
            if (gone.isEmpty() || gone == u"."_s || gone == u".."_s)
                return fail(ErrorCode::Invalid, u"%1: %2 is no whiteout of a file"_s.arg(what, name));
            removeTree(*parent + u'/' + gone);
            continue;
        }
        const mode_t type = archive_entry_filetype(entry);
        if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK) {
            ++m_devicesSkipped;
            continue;
        }
        QDir().mkpath(*parent);
        const QString target = *parent + u'/' + base;
        if (const auto existing = lstatOf(target); existing && !(type == AE_IFDIR && S_ISDIR(existing->st_mode)))
            removeTree(target); // a link is replaced, never written through
        if (const char *hardlink = archive_entry_hardlink(entry)) {
            const auto linked = resolveInRoot(m_root, QString::fromUtf8(hardlink).split(u'/', Qt::SkipEmptyParts));
            if (!linked || !lstatOf(*linked))
                return fail(ErrorCode::Invalid, u"%1: %2 links to %3, which the image does not have"_s.arg(
                                                    what, name, QString::fromUtf8(hardlink)));
            archive_entry_set_hardlink(entry, QFile::encodeName(*linked).constData());
        }
        archive_entry_set_pathname(entry, QFile::encodeName(target).constData());
        if (type == AE_IFDIR && !root)
            archive_entry_set_perm(entry, archive_entry_perm(entry) | S_IRWXU); // later layers write below it
        if (archive_write_header(out.get(), entry) < ARCHIVE_WARN)
            return fail(ErrorCode::Failed, u"%1: cannot write %2: %3"_s.arg(what, name, archiveError(out.get())));
        written.insert(target);
        const void *block = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        for (int d; (d = archive_read_data_block(in.get(), &block, &size, &offset)) != ARCHIVE_EOF;) {
            if (d < ARCHIVE_WARN)
                return fail(ErrorCode::Failed, u"%1 is cut short: %2"_s.arg(what, archiveError(in.get())));
            m_bytes += qint64(size);
            if (m_bytes > m_limits.maxBytes)
                return fail(ErrorCode::TooLarge, u"the image unpacks to more than %1 bytes"_s.arg(m_limits.maxBytes));
            if (archive_write_data_block(out.get(), block, size, offset) < ARCHIVE_WARN)
                return fail(ErrorCode::Failed, u"%1: cannot write %2: %3"_s.arg(what, name, archiveError(out.get())));
        }
        if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN)
            return fail(ErrorCode::Failed, u"%1: cannot write %2: %3"_s.arg(what, name, archiveError(out.get())));
    }
    if (archive_write_close(out.get()) != ARCHIVE_OK)
        return fail(ErrorCode::Failed, u"%1: %2"_s.arg(what, archiveError(out.get())));
    // An opaque directory shows only what this layer put in it (and the directories on the way).
    if (!opaque.isEmpty()) {
        QSet<QString> kept;
        for (QString path : std::as_const(written))
            for (; path.size() > m_root.size() && !kept.contains(path); path = path.section(u'/', 0, -2))
                kept.insert(path);
        for (const QString &dir : std::as_const(opaque))
            for (const QString &child :
                 QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot))
                if (!kept.contains(dir + u'/' + child))
                    removeTree(dir + u'/' + child);
    }
    return {};
}

} // namespace pando::adapters::registrykit
