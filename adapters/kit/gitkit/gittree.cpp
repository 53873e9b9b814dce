#include "gittree.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::git::detail {

namespace {

constexpr int MaxDepth = 256;

struct BlobDeleter {
    void operator()(git_blob *blob) const { git_blob_free(blob); }
};
struct TreeDeleter {
    void operator()(git_tree *tree) const { git_tree_free(tree); }
};

QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

// A tree entry name must be a single, ordinary path component. libgit2 refuses most of these
// when it builds a tree, but a hostile repository can still carry them in its objects.
Status checkName(const QByteArray &name, const QString &where)
{
    if (name.isEmpty() || name == "." || name == ".." || name.contains('/') || name.contains('\0'))
        return fail(ErrorCode::Invalid,
                    u"the tree holds an unsafe path component \"%1\""_s.arg(QString::fromUtf8(name)), where);
    if (name.toLower() == ".git")
        return fail(ErrorCode::Invalid, u"the tree holds a .git entry, which is never checked out"_s, where);
    return {};
}

Status writeAll(int fd, const char *data, size_t size, const QString &where)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail(ErrorCode::Internal, u"cannot write the file: %1"_s.arg(errnoText(errno)), where);
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
    return {};
}

Status writeBlob(git_repository *repo, const git_tree_entry *entry, const QByteArray &path, const QString &where,
                 bool executable)
{
    git_blob *raw = nullptr;
    if (git_blob_lookup(&raw, repo, git_tree_entry_id(entry)) != 0)
        return fail(ErrorCode::Internal, u"cannot read the blob: %1"_s.arg(lastGitError()), where);
    std::unique_ptr<git_blob, BlobDeleter> blob(raw);
    // O_EXCL and O_NOFOLLOW: the directory is new and ours, so anything already there (or a
    // symlink planted by an earlier entry) means the tree is not what it claims to be.
    const int fd = ::open(path.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(ErrorCode::Internal, u"cannot create the file: %1"_s.arg(errnoText(errno)), where);
    Status written = writeAll(fd, static_cast<const char *>(git_blob_rawcontent(blob.get())),
                              static_cast<size_t>(git_blob_rawsize(blob.get())), where);
    if (written && ::fchmod(fd, executable ? 0755 : 0644) != 0)
        written = fail(ErrorCode::Internal, u"cannot set the file mode: %1"_s.arg(errnoText(errno)), where);
    ::close(fd);
    return written;
}

Status writeSymlink(git_repository *repo, const git_tree_entry *entry, const QByteArray &path, const QString &where)
{
    git_blob *raw = nullptr;
    if (git_blob_lookup(&raw, repo, git_tree_entry_id(entry)) != 0)
        return fail(ErrorCode::Internal, u"cannot read the symlink blob: %1"_s.arg(lastGitError()), where);
    std::unique_ptr<git_blob, BlobDeleter> blob(raw);
    const QByteArray target(static_cast<const char *>(git_blob_rawcontent(blob.get())),
                            static_cast<qsizetype>(git_blob_rawsize(blob.get())));
    if (target.isEmpty() || target.contains('\0') || target.size() > 4095)
        return fail(ErrorCode::Invalid, u"the symlink has an empty, overlong or binary target"_s, where);
    // The link is written as it is and never followed here; whoever reads the tree later
    // (archiving a build context) must not follow it either.
    if (::symlink(target.constData(), path.constData()) != 0)
        return fail(ErrorCode::Internal, u"cannot create the symlink: %1"_s.arg(errnoText(errno)), where);
    return {};
}

// Records what was just written at path in the index: the blob's id from the tree, the file's
// stat data from the disk, so git sees the checkout as clean without reading it again.
Status indexEntry(git_index *index, const QByteArray &path, qsizetype rootLength, const git_tree_entry *entry,
                  const QString &where)
{
    if (!index)
        return {};
    struct stat st {};
    if (::lstat(path.constData(), &st) != 0)
        return fail(ErrorCode::Internal, u"cannot read back the file: %1"_s.arg(errnoText(errno)), where);
    const QByteArray relative = path.mid(rootLength + 1);
    git_index_entry e{};
    e.ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
    e.ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
    e.mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
    e.mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
    e.dev = static_cast<uint32_t>(st.st_dev);
    e.ino = static_cast<uint32_t>(st.st_ino);
    e.mode = git_tree_entry_filemode(entry);
    e.uid = st.st_uid;
    e.gid = st.st_gid;
    e.file_size = e.mode == GIT_FILEMODE_COMMIT ? 0 : static_cast<uint32_t>(st.st_size);
    e.id = *git_tree_entry_id(entry);
    e.path = relative.constData();
    if (git_index_add(index, &e) != 0)
        return fail(ErrorCode::Internal, u"cannot add the file to the index: %1"_s.arg(lastGitError()), where);
    return {};
}

Status writeDir(git_repository *repo, const git_tree *tree, const QByteArray &dir, const QString &relative,
                const CancelToken &cancel, int depth, git_index *index, qsizetype rootLength)
{
    if (depth > MaxDepth)
        return fail(ErrorCode::Invalid, u"the tree is nested more than %1 levels deep"_s.arg(MaxDepth), relative);
    const size_t count = git_tree_entrycount(tree);
    for (size_t i = 0; i < count; ++i) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, u"the checkout was cancelled"_s);
        const git_tree_entry *entry = git_tree_entry_byindex(tree, i);
        const QByteArray name(git_tree_entry_name(entry));
        const QString where = relative.isEmpty() ? QString::fromUtf8(name) : relative + u'/' + QString::fromUtf8(name);
        if (Status ok = checkName(name, where); !ok)
            return ok;
        const QByteArray path = dir + '/' + name;
        switch (git_tree_entry_filemode(entry)) {
        case GIT_FILEMODE_TREE: {
            if (::mkdir(path.constData(), 0755) != 0)
                return fail(ErrorCode::Internal, u"cannot create the directory: %1"_s.arg(errnoText(errno)), where);
            git_tree *rawSub = nullptr;
            if (git_tree_lookup(&rawSub, repo, git_tree_entry_id(entry)) != 0)
                return fail(ErrorCode::Internal, u"cannot read the tree: %1"_s.arg(lastGitError()), where);
            std::unique_ptr<git_tree, TreeDeleter> sub(rawSub);
            if (Status ok = writeDir(repo, sub.get(), path, where, cancel, depth + 1, index, rootLength); !ok)
                return ok;
            break;
        }
        case GIT_FILEMODE_BLOB:
        case GIT_FILEMODE_BLOB_EXECUTABLE:
            if (Status ok =
                    writeBlob(repo, entry, path, where, git_tree_entry_filemode(entry) == GIT_FILEMODE_BLOB_EXECUTABLE);
                !ok)
                return ok;
            break;
        case GIT_FILEMODE_LINK:
            if (Status ok = writeSymlink(repo, entry, path, where); !ok)
                return ok;
            break;
        case GIT_FILEMODE_COMMIT:
            // A submodule: git leaves an empty directory where it is not initialised.
            if (::mkdir(path.constData(), 0755) != 0)
                return fail(ErrorCode::Internal, u"cannot create the directory: %1"_s.arg(errnoText(errno)), where);
            break;
        default:
            return fail(ErrorCode::Invalid,
                        u"the tree holds an entry of unknown mode %1"_s.arg(git_tree_entry_filemode(entry), 0, 8),
                        where);
        }
        if (git_tree_entry_filemode(entry) != GIT_FILEMODE_TREE)
            if (Status ok = indexEntry(index, path, rootLength, entry, where); !ok)
                return ok;
    }
    return {};
}

} // namespace

QString lastGitError()
{
    const git_error *error = git_error_last();
    if (!error || !error->message)
        return u"unknown libgit2 error"_s;
    return QString::fromUtf8(error->message);
}

Status writeTree(git_repository *repo, const git_tree *tree, const QString &target, const CancelToken &cancel,
                 git_index *index)
{
    const QByteArray root = QFile::encodeName(target);
    return writeDir(repo, tree, root, {}, cancel, 0, index, root.size());
}

} // namespace pando::adapters::git::detail
