#pragma once
// Filesystem primitives the tree packages (wire, treedigest, workspace, blobstore) share: a
// sorted walk of a directory tree that never follows a symlink, and a removal that never
// leaves the tree it was given. Everything works on directory file descriptors (openat and
// friends with O_NOFOLLOW), so a symlink swapped in mid-walk cannot redirect it.

#include "adapters/api/error.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <sys/types.h>

namespace pando::core {

struct TreeEntry {
    enum class Type { Directory, File, Symlink, Other };
    QByteArray path; // relative to the root, '/'-separated, raw bytes of the file names
    Type type = Type::Other;
    mode_t mode = 0;   // the permission bits (07777) as lstat reported them
    qint64 size = 0;   // files: bytes
    QByteArray target; // symlinks: the link target as stored
};

// Every entry below dir (dir itself excluded), sorted by path in byte order, which puts a
// directory before everything inside it. Symlinks are reported, never followed.
Result<QList<TreeEntry>> walkTree(const QString &dir);

// Removes path and everything under it. A symlink is removed as a link; nothing it points at
// is touched. A missing path is not an error.
Status removeTree(const QString &path);

// An fd-holding RAII wrapper; -1 when empty.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : m_fd(fd) {}
    UniqueFd(UniqueFd &&other) noexcept : m_fd(other.release()) {}
    UniqueFd &operator=(UniqueFd &&other) noexcept;
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    ~UniqueFd();
    int get() const { return m_fd; }
    int release();
    bool isValid() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

namespace detail {
// The system error text for errno, as a QString.
QString errnoText(int err);
// Opens a directory relative to dirfd without following a symlink at name.
UniqueFd openDirAt(int dirfd, const char *name);
// Opens relPath ('/'-separated, no "..") below rootFd, refusing a symlink at every component:
// each directory on the way is opened with O_NOFOLLOW, and so is the last name. Sets errno.
UniqueFd openBeneath(int rootFd, const QByteArray &relPath, int flags);
} // namespace detail

} // namespace pando::core
