#include "core/pipelines/wire/wire.h"

#include "core/pipelines/wire/treefs.h"

#include <QFile>
#include <QFileInfo>
#include <QIODevice>
#include <QScopeGuard>
#include <algorithm>
#include <archive.h>
#include <archive_entry.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::core {

namespace {

using detail::errnoText;

constexpr qint64 kChunk = 256LL * 1024;
// A stream may carry tar padding and a compressor's epilogue after the end-of-archive marker;
// anything longer is not a tar stream we wrote.
constexpr qint64 kMaxTrailingBytes = 1024LL * 1024;

struct ArchiveDeleter {
    void operator()(archive *a) const { archive_free(a); }
};
struct EntryDeleter {
    void operator()(archive_entry *e) const { archive_entry_free(e); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveDeleter>;
using EntryPtr = std::unique_ptr<archive_entry, EntryDeleter>;

QString archiveText(archive *a)
{
    const char *s = archive_error_string(a);
    return s ? QString::fromLocal8Bit(s) : QStringLiteral("unknown archive error");
}

// ---- packing ----

struct PackContext {
    const WireSink *sink = nullptr; // null once the stream is abandoned
    std::optional<Error> error;
};

la_ssize_t packWrite(archive *a, void *client, const void *buf, size_t n)
{
    auto *ctx = static_cast<PackContext *>(client);
    if (!ctx->sink) {
        archive_set_error(a, ECANCELED, "the stream was abandoned");
        return -1;
    }
    if (auto st = (*ctx->sink)(QByteArrayView(static_cast<const char *>(buf), qsizetype(n))); !st) {
        ctx->error = st.error();
        archive_set_error(a, EIO, "the sink refused the data");
        return -1;
    }
    return la_ssize_t(n);
}

Status packFile(archive *a, int rootFd, const TreeEntry &entry, const QString &where, const CancelToken &cancel)
{
    UniqueFd fd = detail::openBeneath(rootFd, entry.path, O_RDONLY);
    if (!fd.isValid())
        return fail(ErrorCode::Failed, QStringLiteral("cannot open file for packing: ") + errnoText(errno), where);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != entry.size)
        return fail(ErrorCode::Conflict, QStringLiteral("file changed while it was being packed"), where);
    QByteArray buf(kChunk, Qt::Uninitialized);
    qint64 left = entry.size;
    while (left > 0) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, QStringLiteral("packing was cancelled"), where);
        const ssize_t n = ::read(fd.get(), buf.data(), size_t(std::min<qint64>(left, kChunk)));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail(ErrorCode::Failed, QStringLiteral("cannot read file: ") + errnoText(errno), where);
        }
        if (n == 0)
            return fail(ErrorCode::Conflict, QStringLiteral("file shrank while it was being packed"), where);
        if (archive_write_data(a, buf.constData(), size_t(n)) != n)
            return fail(ErrorCode::Failed, QStringLiteral("cannot write tar data: ") + archiveText(a), where);
        left -= n;
    }
    return {};
}

// ---- unpacking ----

struct UnpackContext {
    const WireSource *source = nullptr;
    QByteArray buf = QByteArray(kChunk, Qt::Uninitialized);
    std::optional<Error> error;
};

la_ssize_t unpackRead(archive *a, void *client, const void **out)
{
    auto *ctx = static_cast<UnpackContext *>(client);
    auto n = (*ctx->source)(ctx->buf.data(), ctx->buf.size());
    if (!n) {
        ctx->error = n.error();
        archive_set_error(a, EIO, "the source failed");
        return -1;
    }
    *out = ctx->buf.constData();
    return la_ssize_t(*n);
}

struct DeferredMode {
    QList<QByteArray> parts;
    mode_t mode = 0755;
};

class Unpacker {
public:
    Unpacker(int rootFd, const WireLimits &limits) : m_rootFd(rootFd), m_limits(limits) {}

    Status entry(archive *a, archive_entry *e);
    Status applyModes();
    const UnpackStats &stats() const { return m_stats; }
    mode_t rootMode() const { return m_rootMode; }

private:
    // Opens (creating where missing) the directory holding the entry, one component at a
    // time, never following a symlink.
    Result<UniqueFd> openParent(const QList<QByteArray> &parts, const QString &where);
    Status writeFile(archive *a, int parentFd, const QByteArray &name, mode_t mode, qint64 declaredSize,
                     const QString &where);

    int m_rootFd;
    WireLimits m_limits;
    UnpackStats m_stats;
    QList<DeferredMode> m_dirModes;
    mode_t m_rootMode = 0755;
};

Result<UniqueFd> Unpacker::openParent(const QList<QByteArray> &parts, const QString &where)
{
    UniqueFd current;
    int dirfd = m_rootFd;
    QByteArray walked;
    for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
        walked += (walked.isEmpty() ? "" : "/") + parts[i];
        UniqueFd next = detail::openDirAt(dirfd, parts[i].constData());
        if (!next.isValid() && errno == ENOENT) {
            // Streams may leave out directory entries; make them as tar does.
            if (::mkdirat(dirfd, parts[i].constData(), 0700) != 0)
                return fail(
                    ErrorCode::Failed,
                    QStringLiteral("cannot create directory %1: %2").arg(QFile::decodeName(walked), errnoText(errno)),
                    where);
            next = detail::openDirAt(dirfd, parts[i].constData());
            if (next.isValid())
                ::fchmod(next.get(), 0755);
        }
        if (!next.isValid()) {
            if (errno == ELOOP || errno == ENOTDIR)
                return fail(ErrorCode::Invalid,
                            QStringLiteral("entry goes through %1, which is a symlink or not a directory")
                                .arg(QFile::decodeName(walked)),
                            where);
            return fail(ErrorCode::Failed,
                        QStringLiteral("cannot open directory %1: %2").arg(QFile::decodeName(walked), errnoText(errno)),
                        where);
        }
        current = std::move(next);
        dirfd = current.get();
    }
    if (!current.isValid())
        current = UniqueFd(::fcntl(m_rootFd, F_DUPFD_CLOEXEC, 0));
    return current;
}

Status Unpacker::writeFile(archive *a, int parentFd, const QByteArray &name, mode_t mode, qint64 declaredSize,
                           const QString &where)
{
    UniqueFd fd(::openat(parentFd, name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.isValid()) {
        if (errno == EEXIST)
            return fail(ErrorCode::Invalid, QStringLiteral("duplicate entry: the path already exists in the tree"),
                        where);
        return fail(ErrorCode::Failed, QStringLiteral("cannot create file: ") + errnoText(errno), where);
    }
    for (;;) {
        const void *block = nullptr;
        size_t size = 0;
        la_int64_t offset = 0;
        const int r = archive_read_data_block(a, &block, &size, &offset);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN)
            return fail(ErrorCode::Invalid, QStringLiteral("cannot read file data: ") + archiveText(a), where);
        // Sparse entries give offsets; anything beyond the limit counts whether or not it is a hole.
        if (offset + qint64(size) > m_limits.maxTotalBytes || m_stats.bytes + qint64(size) > m_limits.maxTotalBytes)
            return fail(ErrorCode::TooLarge,
                        QStringLiteral("the tree is larger than the limit of %1 bytes").arg(m_limits.maxTotalBytes),
                        where);
        const char *p = static_cast<const char *>(block);
        size_t left = size;
        while (left > 0) {
            const ssize_t n = ::pwrite(fd.get(), p, left, off_t(offset));
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return fail(ErrorCode::Failed, QStringLiteral("cannot write file: ") + errnoText(errno), where);
            }
            p += n;
            offset += n;
            left -= size_t(n);
        }
        m_stats.bytes += qint64(size);
    }
    // A sparse entry may end in a hole: the file still has its declared size.
    if (::ftruncate(fd.get(), off_t(declaredSize)) != 0)
        return fail(ErrorCode::Failed, QStringLiteral("cannot size file: ") + errnoText(errno), where);
    if (::fchmod(fd.get(), mode) != 0)
        return fail(ErrorCode::Failed, QStringLiteral("cannot set file mode: ") + errnoText(errno), where);
    return {};
}

Status Unpacker::entry(archive *a, archive_entry *e)
{
    const char *rawName = archive_entry_pathname(e);
    const QByteArray name = rawName ? QByteArray(rawName) : QByteArray();
    const QString where = QFile::decodeName(name);
    if (++m_stats.entries > m_limits.maxEntries)
        return fail(ErrorCode::TooLarge, QStringLiteral("the stream has more than %1 entries").arg(m_limits.maxEntries),
                    where);
    if (name.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("entry has an empty name"),
                    QStringLiteral("entry %1").arg(m_stats.entries));
    if (name.size() > m_limits.maxPathBytes)
        return fail(ErrorCode::TooLarge,
                    QStringLiteral("entry name is longer than %1 bytes").arg(m_limits.maxPathBytes), where);
    if (name.startsWith('/'))
        return fail(ErrorCode::Invalid, QStringLiteral("entry has an absolute path"), where);
    QList<QByteArray> parts;
    for (const QByteArray &part : name.split('/')) {
        if (part.isEmpty() || part == ".")
            continue;
        if (part == "..")
            return fail(ErrorCode::Invalid, QStringLiteral("entry has a '..' component"), where);
        parts.append(part);
    }
    if (parts.size() > m_limits.maxDepth)
        return fail(ErrorCode::TooLarge, QStringLiteral("entry is nested deeper than %1 levels").arg(m_limits.maxDepth),
                    where);
    if (archive_entry_hardlink(e))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("hardlink entries are not accepted (link to %1)")
                        .arg(QFile::decodeName(archive_entry_hardlink(e))),
                    where);
    const mode_t type = archive_entry_filetype(e);
    // Only the permission bits survive: setuid, setgid and sticky are dropped.
    const mode_t perm = archive_entry_perm(e) & 0777;
    if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
        return fail(
            ErrorCode::Invalid,
            QStringLiteral("entry is a device, fifo or socket; only files, directories and symlinks are accepted"),
            where);
    if (parts.isEmpty()) {
        // "." or "./": the tree's root. Its mode is kept; it is nothing else.
        if (type != AE_IFDIR)
            return fail(ErrorCode::Invalid, QStringLiteral("entry names the tree's root but is not a directory"),
                        where);
        m_rootMode = perm;
        return {};
    }
    const qint64 declared = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
    if (type == AE_IFREG && (declared < 0 || declared > m_limits.maxTotalBytes - m_stats.bytes))
        return fail(ErrorCode::TooLarge,
                    QStringLiteral("entry declares %1 bytes; the tree may hold %2 bytes in all")
                        .arg(declared)
                        .arg(m_limits.maxTotalBytes),
                    where);

    auto parent = openParent(parts, where);
    if (!parent)
        return std::unexpected(parent.error());
    const QByteArray &last = parts.last();
    switch (type) {
    case AE_IFDIR: {
        if (::mkdirat(parent->get(), last.constData(), 0700) != 0) {
            const int err = errno;
            struct stat st {};
            if (err != EEXIST)
                return fail(ErrorCode::Failed, QStringLiteral("cannot create directory: ") + errnoText(err), where);
            // A directory named twice is harmless; anything else there is a duplicate.
            if (::fstatat(parent->get(), last.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
                return fail(ErrorCode::Invalid,
                            QStringLiteral("duplicate entry: a non-directory already has this path"), where);
        }
        // Applied once everything is in: a read-only directory must still take its entries.
        m_dirModes.append({parts, perm});
        return {};
    }
    case AE_IFLNK: {
        const char *target = archive_entry_symlink(e);
        if (!target || !*target)
            return fail(ErrorCode::Invalid, QStringLiteral("symlink entry has an empty target"), where);
        if (::symlinkat(target, parent->get(), last.constData()) != 0) {
            if (errno == EEXIST)
                return fail(ErrorCode::Invalid, QStringLiteral("duplicate entry: the path already exists in the tree"),
                            where);
            return fail(ErrorCode::Failed, QStringLiteral("cannot create symlink: ") + errnoText(errno), where);
        }
        return {};
    }
    default:
        ++m_stats.files;
        return writeFile(a, parent->get(), last, perm, declared, where);
    }
}

Status Unpacker::applyModes()
{
    // Deepest first, so a directory losing its x bit does not lock us out of its children.
    std::stable_sort(m_dirModes.begin(), m_dirModes.end(),
                     [](const DeferredMode &x, const DeferredMode &y) { return x.parts.size() > y.parts.size(); });
    for (const DeferredMode &d : m_dirModes) {
        const QByteArray rel = d.parts.join('/');
        UniqueFd fd = detail::openBeneath(m_rootFd, rel, O_RDONLY | O_DIRECTORY);
        if (!fd.isValid() || ::fchmod(fd.get(), d.mode) != 0)
            return fail(ErrorCode::Failed, QStringLiteral("cannot set directory mode: ") + errnoText(errno),
                        QFile::decodeName(rel));
    }
    if (::fchmod(m_rootFd, m_rootMode) != 0)
        return fail(ErrorCode::Failed, QStringLiteral("cannot set the tree's mode: ") + errnoText(errno));
    return {};
}

// dest must be absent or an empty directory (not a symlink).
Status checkDestination(const QString &dest)
{
    struct stat st {};
    const QByteArray encoded = QFile::encodeName(dest);
    if (::lstat(encoded.constData(), &st) != 0)
        return errno == ENOENT
                   ? Status{}
                   : fail(ErrorCode::Failed, QStringLiteral("cannot stat destination: ") + errnoText(errno), dest);
    if (!S_ISDIR(st.st_mode))
        return fail(ErrorCode::Conflict, QStringLiteral("destination exists and is not a directory"), dest);
    auto entries = walkTree(dest);
    if (!entries)
        return std::unexpected(entries.error());
    if (!entries->isEmpty())
        return fail(ErrorCode::Conflict, QStringLiteral("destination directory is not empty"), dest);
    return {};
}

} // namespace

Status packTree(const QString &dir, const WireSink &sink, const CancelToken &cancel)
{
    auto entries = walkTree(dir);
    if (!entries)
        return std::unexpected(entries.error());
    UniqueFd rootFd(::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rootFd.isValid())
        return fail(ErrorCode::NotFound, QStringLiteral("cannot open directory: ") + errnoText(errno), dir);

    PackContext ctx{&sink, {}};
    ArchivePtr a(archive_write_new());
    // Freeing an archive that was not closed flushes what it holds through packWrite: a stream
    // given up on (an error, a cancel) must not send its tail to the sink after the fact.
    const auto abandon = qScopeGuard([&ctx] { ctx.sink = nullptr; });
    // pax only where ustar cannot say it (long names, big files); names as raw bytes so no
    // locale conversion can change or refuse them.
    if (archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK ||
        archive_write_set_format_option(a.get(), "pax", "hdrcharset", "BINARY") < ARCHIVE_WARN ||
        archive_write_add_filter_none(a.get()) != ARCHIVE_OK ||
        archive_write_open(a.get(), &ctx, nullptr, packWrite, nullptr) != ARCHIVE_OK)
        return fail(ErrorCode::Internal, QStringLiteral("cannot start a tar stream: ") + archiveText(a.get()), dir);

    EntryPtr e(archive_entry_new());
    for (const TreeEntry &entry : *entries) {
        const QString where = dir + u'/' + QFile::decodeName(entry.path);
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, QStringLiteral("packing was cancelled"), where);
        archive_entry_clear(e.get());
        archive_entry_copy_pathname(e.get(), entry.path.constData());
        archive_entry_set_uid(e.get(), 0);
        archive_entry_set_gid(e.get(), 0);
        archive_entry_set_mtime(e.get(), 0, 0);
        switch (entry.type) {
        case TreeEntry::Type::Directory:
            archive_entry_set_filetype(e.get(), AE_IFDIR);
            archive_entry_set_perm(e.get(), entry.mode & 0777);
            break;
        case TreeEntry::Type::File:
            archive_entry_set_filetype(e.get(), AE_IFREG);
            archive_entry_set_perm(e.get(), entry.mode & 0777);
            archive_entry_set_size(e.get(), entry.size);
            break;
        case TreeEntry::Type::Symlink:
            archive_entry_set_filetype(e.get(), AE_IFLNK);
            archive_entry_set_perm(e.get(), 0777);
            archive_entry_copy_symlink(e.get(), entry.target.constData());
            break;
        case TreeEntry::Type::Other:
            return fail(ErrorCode::Invalid,
                        QStringLiteral("a device, fifo or socket cannot be packed; only files, directories and "
                                       "symlinks can"),
                        where);
        }
        if (archive_write_header(a.get(), e.get()) < ARCHIVE_WARN) {
            if (ctx.error)
                return std::unexpected(*ctx.error);
            return fail(ErrorCode::Failed, QStringLiteral("cannot write tar header: ") + archiveText(a.get()), where);
        }
        if (entry.type == TreeEntry::Type::File) {
            if (auto st = packFile(a.get(), rootFd.get(), entry, where, cancel); !st)
                return ctx.error ? std::unexpected(*ctx.error) : st;
        }
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK) {
        if (ctx.error)
            return std::unexpected(*ctx.error);
        return fail(ErrorCode::Failed, QStringLiteral("cannot finish tar stream: ") + archiveText(a.get()), dir);
    }
    return {};
}

Status packTree(const QString &dir, QIODevice *out, const CancelToken &cancel)
{
    return packTree(dir, deviceSink(out), cancel);
}

Result<UnpackStats> unpackTree(const WireSource &source, const QString &dest, const WireLimits &limits,
                               const CancelToken &cancel)
{
    const QFileInfo destInfo(dest);
    const QString parentDir = destInfo.absolutePath();
    if (auto st = checkDestination(dest); !st)
        return std::unexpected(st.error());

    QByteArray tmpl =
        QFile::encodeName(parentDir + QStringLiteral("/.") + destInfo.fileName() + QStringLiteral(".unpack-XXXXXX"));
    if (!::mkdtemp(tmpl.data()))
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot create a directory next to the destination: ") + errnoText(errno),
                    parentDir);
    const QString tmpDir = QFile::decodeName(tmpl);
    auto cleanup = [&tmpDir](Error error) -> Result<UnpackStats> {
        discardResult(removeTree(tmpDir), "the unpack's own error is the one to report");
        return std::unexpected(std::move(error));
    };

    UniqueFd rootFd(::open(tmpl.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!rootFd.isValid())
        return cleanup(Error{ErrorCode::Failed, QStringLiteral("cannot open directory: ") + errnoText(errno), tmpDir});

    UnpackContext ctx; // outlives the archive, whose callbacks it serves
    ctx.source = &source;
    ArchivePtr a(archive_read_new());
    // tar in its ustar, pax and GNU forms, and no compression: that is the compress package's.
    archive_read_support_format_tar(a.get());
    if (archive_read_open(a.get(), &ctx, nullptr, unpackRead, nullptr) != ARCHIVE_OK)
        return cleanup(
            ctx.error ? *ctx.error
                      : Error{ErrorCode::Invalid, QStringLiteral("not a tar stream: ") + archiveText(a.get()), dest});

    Unpacker unpacker(rootFd.get(), limits);
    for (;;) {
        if (cancel.isCancelled())
            return cleanup(Error{ErrorCode::Cancelled, QStringLiteral("unpacking was cancelled"), dest});
        archive_entry *e = nullptr;
        const int r = archive_read_next_header(a.get(), &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            if (ctx.error)
                return cleanup(*ctx.error);
            return cleanup(Error{ErrorCode::Invalid, QStringLiteral("not a valid tar stream: ") + archiveText(a.get()),
                                 QStringLiteral("after entry %1").arg(unpacker.stats().entries)});
        }
        if (auto st = unpacker.entry(a.get(), e); !st)
            return cleanup(ctx.error ? *ctx.error : st.error());
    }
    a.reset();
    // Reading the rest lets a decompressing or verifying source check its end too.
    qint64 trailing = 0;
    for (;;) {
        auto n = source(ctx.buf.data(), ctx.buf.size());
        if (!n)
            return cleanup(n.error());
        if (*n == 0)
            break;
        trailing += *n;
        if (trailing > kMaxTrailingBytes)
            return cleanup(
                Error{ErrorCode::Invalid, QStringLiteral("the stream goes on after the end of the tar archive"), dest});
    }
    if (auto st = unpacker.applyModes(); !st)
        return cleanup(st.error());
    rootFd = UniqueFd();

    const QByteArray destEncoded = QFile::encodeName(destInfo.absoluteFilePath());
    // An empty directory at dest is replaced in one step; otherwise dest must still be free.
    if (::renameat2(AT_FDCWD, tmpl.constData(), AT_FDCWD, destEncoded.constData(), RENAME_NOREPLACE) != 0) {
        struct stat st {};
        const bool emptyDirThere = errno == EEXIST && ::lstat(destEncoded.constData(), &st) == 0 && S_ISDIR(st.st_mode);
        if (!emptyDirThere || ::rename(tmpl.constData(), destEncoded.constData()) != 0)
            return cleanup(Error{ErrorCode::Conflict,
                                 QStringLiteral("cannot move the unpacked tree into place: ") + errnoText(errno),
                                 dest});
    }
    return unpacker.stats();
}

Result<UnpackStats> unpackTree(QIODevice *in, const QString &dest, const WireLimits &limits, const CancelToken &cancel)
{
    return unpackTree(deviceSource(in), dest, limits, cancel);
}

WireSink deviceSink(QIODevice *out)
{
    return [out](QByteArrayView data) -> Status {
        qsizetype done = 0;
        while (done < data.size()) {
            const qint64 n = out->write(data.data() + done, data.size() - done);
            if (n <= 0)
                return fail(ErrorCode::Failed, QStringLiteral("cannot write the stream: ") + out->errorString());
            done += n;
        }
        return {};
    };
}

WireSource deviceSource(QIODevice *in)
{
    return [in](char *buf, qint64 max) -> Result<qint64> {
        for (;;) {
            const qint64 n = in->read(buf, max);
            if (n > 0)
                return n;
            if (n < 0) {
                return fail(ErrorCode::Failed, QStringLiteral("cannot read the stream: ") + in->errorString());
            }
            // Nothing yet: a process or socket may still deliver; a file is at its end.
            if (!in->waitForReadyRead(30'000))
                return 0;
        }
    };
}

} // namespace pando::core
