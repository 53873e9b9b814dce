#include "core/pipelines/wire/treefs.h"

#include <QFile>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::core {

namespace {

// Deeper trees than this are refused rather than walked: each level holds a descriptor.
constexpr int kMaxDepth = 256;

Result<QList<QByteArray>> listNames(int dirfd, const QString &where)
{
    const int dupFd = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dupFd < 0)
        return fail(ErrorCode::Internal,
                    QStringLiteral("cannot duplicate a directory descriptor: ") + detail::errnoText(errno), where);
    DIR *d = ::fdopendir(dupFd);
    if (!d) {
        const int err = errno;
        ::close(dupFd);
        return fail(ErrorCode::Internal, QStringLiteral("cannot list directory: ") + detail::errnoText(err), where);
    }
    QList<QByteArray> names;
    errno = 0;
    while (const dirent *e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            names.append(QByteArray(e->d_name));
        errno = 0;
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0)
        return fail(ErrorCode::Internal, QStringLiteral("cannot list directory: ") + detail::errnoText(err), where);
    return names;
}

Status walkDir(int dirfd, const QByteArray &prefix, const QString &root, QList<TreeEntry> &out, int depth)
{
    const QString here = prefix.isEmpty() ? root : root + u'/' + QFile::decodeName(prefix);
    if (depth > kMaxDepth)
        return fail(ErrorCode::TooLarge,
                    QStringLiteral("directory tree is nested deeper than %1 levels").arg(kMaxDepth), here);
    auto names = listNames(dirfd, here);
    if (!names)
        return std::unexpected(names.error());
    for (const QByteArray &name : *names) {
        const QByteArray rel = prefix.isEmpty() ? name : prefix + '/' + name;
        const QString where = root + u'/' + QFile::decodeName(rel);
        struct stat st {};
        if (::fstatat(dirfd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return fail(ErrorCode::Internal, QStringLiteral("cannot stat: ") + detail::errnoText(errno), where);
        TreeEntry entry;
        entry.path = rel;
        entry.mode = st.st_mode & 07777;
        if (S_ISREG(st.st_mode)) {
            entry.type = TreeEntry::Type::File;
            entry.size = st.st_size;
        } else if (S_ISDIR(st.st_mode)) {
            entry.type = TreeEntry::Type::Directory;
        } else if (S_ISLNK(st.st_mode)) {
            entry.type = TreeEntry::Type::Symlink;
            QByteArray buf(qMax<qsizetype>(st.st_size, 255) + 1, Qt::Uninitialized);
            const ssize_t n = ::readlinkat(dirfd, name.constData(), buf.data(), buf.size());
            if (n < 0 || n >= buf.size())
                return fail(ErrorCode::Internal, QStringLiteral("cannot read symlink: ") + detail::errnoText(errno),
                            where);
            buf.truncate(n);
            entry.target = buf;
        } else {
            entry.type = TreeEntry::Type::Other;
        }
        out.append(entry);
        if (entry.type == TreeEntry::Type::Directory) {
            UniqueFd sub = detail::openDirAt(dirfd, name.constData());
            if (!sub.isValid())
                return fail(ErrorCode::Internal, QStringLiteral("cannot open directory: ") + detail::errnoText(errno),
                            where);
            if (auto st2 = walkDir(sub.get(), rel, root, out, depth + 1); !st2)
                return st2;
        }
    }
    return {};
}

Status removeChildren(int dirfd, const QString &where, int depth)
{
    if (depth > kMaxDepth * 4)
        return fail(ErrorCode::TooLarge, QStringLiteral("directory tree is too deep to remove"), where);
    // A directory we made read-only (an unpacked 0555 dir) must be writable to empty it.
    ::fchmod(dirfd, 0700);
    auto names = listNames(dirfd, where);
    if (!names)
        return std::unexpected(names.error());
    for (const QByteArray &name : *names) {
        const QString childWhere = where + u'/' + QFile::decodeName(name);
        struct stat st {};
        if (::fstatat(dirfd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            return fail(ErrorCode::Internal, QStringLiteral("cannot stat: ") + detail::errnoText(errno), childWhere);
        }
        if (S_ISDIR(st.st_mode)) {
            UniqueFd sub = detail::openDirAt(dirfd, name.constData());
            if (!sub.isValid())
                return fail(ErrorCode::Internal, QStringLiteral("cannot open directory: ") + detail::errnoText(errno),
                            childWhere);
            if (auto r = removeChildren(sub.get(), childWhere, depth + 1); !r)
                return r;
            if (::unlinkat(dirfd, name.constData(), AT_REMOVEDIR) != 0 && errno != ENOENT)
                return fail(ErrorCode::Internal, QStringLiteral("cannot remove directory: ") + detail::errnoText(errno),
                            childWhere);
        } else if (::unlinkat(dirfd, name.constData(), 0) != 0 && errno != ENOENT) {
            return fail(ErrorCode::Internal, QStringLiteral("cannot remove: ") + detail::errnoText(errno), childWhere);
        }
    }
    return {};
}

} // namespace

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = other.release();
    }
    return *this;
}

UniqueFd::~UniqueFd()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

int UniqueFd::release()
{
    const int fd = m_fd;
    m_fd = -1;
    return fd;
}

QString detail::errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

UniqueFd detail::openDirAt(int dirfd, const char *name)
{
    return UniqueFd(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

UniqueFd detail::openBeneath(int rootFd, const QByteArray &relPath, int flags)
{
    const QList<QByteArray> parts = relPath.split('/');
    UniqueFd current;
    int dirfd = rootFd;
    for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i].isEmpty() || parts[i] == "." || parts[i] == "..") {
            errno = EINVAL;
            return {};
        }
        UniqueFd next = openDirAt(dirfd, parts[i].constData());
        if (!next.isValid())
            return {};
        current = std::move(next);
        dirfd = current.get();
    }
    return UniqueFd(::openat(dirfd, parts.last().constData(), flags | O_NOFOLLOW | O_CLOEXEC));
}

Result<QList<TreeEntry>> walkTree(const QString &dir)
{
    UniqueFd root(::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.isValid())
        return fail(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Invalid,
                    QStringLiteral("cannot open the tree's directory: ") + detail::errnoText(errno), dir);
    QList<TreeEntry> out;
    if (auto st = walkDir(root.get(), {}, dir, out, 0); !st)
        return std::unexpected(st.error());
    // Byte order of the whole path: a directory sorts before everything inside it, and the
    // order matches `LC_ALL=C sort` on the same paths (what treedigest.sh does).
    std::sort(out.begin(), out.end(), [](const TreeEntry &a, const TreeEntry &b) { return a.path < b.path; });
    return out;
}

Status removeTree(const QString &path)
{
    const QByteArray encoded = QFile::encodeName(path);
    struct stat st {};
    if (::lstat(encoded.constData(), &st) != 0) {
        if (errno == ENOENT)
            return {};
        return fail(ErrorCode::Internal, QStringLiteral("cannot stat: ") + detail::errnoText(errno), path);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlink(encoded.constData()) != 0 && errno != ENOENT)
            return fail(ErrorCode::Internal, QStringLiteral("cannot remove: ") + detail::errnoText(errno), path);
        return {};
    }
    UniqueFd fd(::open(encoded.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.isValid())
        return fail(ErrorCode::Internal, QStringLiteral("cannot open directory: ") + detail::errnoText(errno), path);
    if (auto r = removeChildren(fd.get(), path, 0); !r)
        return r;
    fd = UniqueFd();
    if (::rmdir(encoded.constData()) != 0 && errno != ENOENT)
        return fail(ErrorCode::Internal, QStringLiteral("cannot remove directory: ") + detail::errnoText(errno), path);
    return {};
}

} // namespace pando::core
