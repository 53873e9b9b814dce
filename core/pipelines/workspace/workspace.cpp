#include "core/pipelines/workspace/workspace.h"

#include "core/pipelines/wire/treefs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::core {

namespace {

using detail::errnoText;

constexpr int kMaxDepth = 256;

// The mode a copy gets: the source's, or with openToAll, readable and writable by every user
// (directories and executables searchable and runnable by every user too).
mode_t copyMode(mode_t source, bool openToAll)
{
    const mode_t bits = source & 0777;
    if (!openToAll)
        return bits;
    if (S_ISDIR(source) || (bits & 0100))
        return 0777;
    return bits | 0666;
}

Status copyFile(int srcDir, int dstDir, const char *name, mode_t mode, qint64 size, const QString &where,
                CopyStats &stats)
{
    UniqueFd src(::openat(srcDir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!src.isValid())
        return fail(ErrorCode::Failed, QStringLiteral("cannot open file: ") + errnoText(errno), where);
    UniqueFd dst(::openat(dstDir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!dst.isValid())
        return fail(ErrorCode::Failed, QStringLiteral("cannot create copy: ") + errnoText(errno), where);
    bool done = false;
    // Copy-on-write first (btrfs, XFS with reflink, bcachefs): no data moves at all.
    if (size > 0 && ::ioctl(dst.get(), FICLONE, src.get()) == 0) {
        ++stats.cloned;
        done = true;
    }
    if (!done && size > 0) {
        qint64 copied = 0;
        while (copied < size) {
            const ssize_t n = ::copy_file_range(src.get(), nullptr, dst.get(), nullptr, size_t(size - copied), 0);
            if (n <= 0)
                break;
            copied += n;
        }
        if (copied == size) {
            ++stats.ranged;
            done = true;
        } else if (copied > 0) {
            return fail(ErrorCode::Failed, QStringLiteral("copy stopped part way: ") + errnoText(errno), where);
        }
    }
    if (!done) {
        QByteArray buf(256LL * 1024, Qt::Uninitialized);
        for (;;) {
            const ssize_t n = ::read(src.get(), buf.data(), size_t(buf.size()));
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return fail(ErrorCode::Failed, QStringLiteral("cannot read file: ") + errnoText(errno), where);
            if (n == 0)
                break;
            for (ssize_t off = 0; off < n;) {
                const ssize_t w = ::write(dst.get(), buf.constData() + off, size_t(n - off));
                if (w < 0 && errno == EINTR)
                    continue;
                if (w < 0)
                    return fail(ErrorCode::Failed, QStringLiteral("cannot write copy: ") + errnoText(errno), where);
                off += w;
            }
        }
        ++stats.plain;
    }
    if (::fchmod(dst.get(), mode & 0777) != 0)
        return fail(ErrorCode::Failed, QStringLiteral("cannot set mode: ") + errnoText(errno), where);
    ++stats.files;
    stats.bytes += size;
    return {};
}

Status copyDir(int srcFd, int dstFd, const QString &where, CopyStats &stats, int depth, bool openToAll)
{
    if (depth > kMaxDepth)
        return fail(ErrorCode::TooLarge, QStringLiteral("tree is nested deeper than %1 levels").arg(kMaxDepth), where);
    const int dupFd = ::fcntl(srcFd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dupFd >= 0 ? ::fdopendir(dupFd) : nullptr;
    if (!d) {
        if (dupFd >= 0)
            ::close(dupFd);
        return fail(ErrorCode::Failed, QStringLiteral("cannot list directory: ") + errnoText(errno), where);
    }
    QList<QByteArray> names;
    while (const dirent *e = ::readdir(d)) {
        if (qstrcmp(e->d_name, ".") != 0 && qstrcmp(e->d_name, "..") != 0)
            names.append(QByteArray(e->d_name));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const QByteArray &name : names) {
        const QString childWhere = where + u'/' + QFile::decodeName(name);
        struct stat st {};
        if (::fstatat(srcFd, name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return fail(ErrorCode::Failed, QStringLiteral("cannot stat: ") + errnoText(errno), childWhere);
        if (S_ISREG(st.st_mode)) {
            if (auto r = copyFile(srcFd, dstFd, name.constData(), copyMode(st.st_mode, openToAll), st.st_size,
                                  childWhere, stats);
                !r)
                return r;
        } else if (S_ISLNK(st.st_mode)) {
            QByteArray target(qMax<qsizetype>(st.st_size, 255) + 1, Qt::Uninitialized);
            const ssize_t n = ::readlinkat(srcFd, name.constData(), target.data(), size_t(target.size()));
            if (n < 0 || n >= target.size())
                return fail(ErrorCode::Failed, QStringLiteral("cannot read symlink: ") + errnoText(errno), childWhere);
            target.truncate(n);
            if (::symlinkat(target.constData(), dstFd, name.constData()) != 0)
                return fail(ErrorCode::Failed, QStringLiteral("cannot create symlink: ") + errnoText(errno),
                            childWhere);
        } else if (S_ISDIR(st.st_mode)) {
            if (::mkdirat(dstFd, name.constData(), 0700) != 0)
                return fail(ErrorCode::Failed, QStringLiteral("cannot create directory: ") + errnoText(errno),
                            childWhere);
            UniqueFd subSrc = detail::openDirAt(srcFd, name.constData());
            UniqueFd subDst = detail::openDirAt(dstFd, name.constData());
            if (!subSrc.isValid() || !subDst.isValid())
                return fail(ErrorCode::Failed, QStringLiteral("cannot open directory: ") + errnoText(errno),
                            childWhere);
            if (auto r = copyDir(subSrc.get(), subDst.get(), childWhere, stats, depth + 1, openToAll); !r)
                return r;
            // After its entries: a read-only directory still took them.
            ::fchmod(subDst.get(), copyMode(st.st_mode, openToAll));
        } else {
            return fail(ErrorCode::Invalid,
                        QStringLiteral("a device, fifo or socket cannot be copied; only files, directories and "
                                       "symlinks can"),
                        childWhere);
        }
    }
    return {};
}

bool isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$"));
    return re.match(name).hasMatch();
}

Status checkName(const QString &what, const QString &name)
{
    if (!isValidName(name))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("%1 name must be letters, digits, '.', '_' or '-' (at most 128)").arg(what), name);
    return {};
}

// A step-relative path: no absolute path, no '..', no empty or '.' component.
Result<QString> cleanRelative(const QString &path, const QString &where)
{
    if (path.isEmpty() || path.startsWith(u'/'))
        return fail(ErrorCode::Invalid, QStringLiteral("path must be relative to the step's directory"), where);
    QStringList parts;
    for (const QString &part : path.split(u'/')) {
        if (part.isEmpty() || part == u".")
            continue;
        if (part == u".." || part.contains(QChar(0)))
            return fail(ErrorCode::Invalid, QStringLiteral("path must stay inside the step's directory"), where);
        parts << part;
    }
    if (parts.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("path must name a directory inside the step's directory"),
                    where);
    return parts.join(u'/');
}

bool overlaps(const QString &a, const QString &b)
{
    return a == b || a.startsWith(b + u'/') || b.startsWith(a + u'/');
}

Status replaceWith(const QString &from, const QString &to)
{
    if (auto r = removeTree(to); !r)
        return r;
    if (::rename(QFile::encodeName(from).constData(), QFile::encodeName(to).constData()) != 0)
        return fail(ErrorCode::Failed, QStringLiteral("cannot move %1 into place: %2").arg(from, errnoText(errno)), to);
    return {};
}

} // namespace

Result<CopyStats> copyTree(const QString &from, const QString &to, bool openToAll)
{
    UniqueFd src(::open(QFile::encodeName(from).constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!src.isValid())
        return fail(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Invalid,
                    QStringLiteral("cannot open the tree to copy (a directory, not a symlink): ") + errnoText(errno),
                    from);
    const QByteArray dest = QFile::encodeName(to);
    if (::mkdir(dest.constData(), 0700) != 0)
        return fail(errno == EEXIST ? ErrorCode::Conflict : ErrorCode::Failed,
                    QStringLiteral("cannot create the copy's directory: ") + errnoText(errno), to);
    UniqueFd dst(::open(dest.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    CopyStats stats;
    Status st = dst.isValid() ? copyDir(src.get(), dst.get(), from, stats, 0, openToAll)
                              : fail(ErrorCode::Failed, QStringLiteral("cannot open: ") + errnoText(errno), to);
    if (!st) {
        dst = UniqueFd();
        discardResult(removeTree(to), "the copy's own error is the one to report");
        return std::unexpected(st.error());
    }
    struct stat rootSt {};
    if (::fstat(src.get(), &rootSt) == 0)
        ::fchmod(dst.get(), copyMode(rootSt.st_mode, openToAll));
    return stats;
}

Workspace::Workspace(QString root) : m_root(std::move(root))
{}

QString Workspace::runDir(const QString &runId) const
{
    return m_root + u'/' + runId;
}

QString Workspace::artifactDir(const QString &runId, const QString &name) const
{
    return runDir(runId) + QStringLiteral("/artifacts/") + name;
}

QString Workspace::stepDir(const QString &runId, const QString &stepId) const
{
    return runDir(runId) + QStringLiteral("/steps/") + stepId;
}

Result<QString> Workspace::createArtifact(const QString &runId, const QString &name) const
{
    if (auto r = checkName(QStringLiteral("run"), runId); !r)
        return std::unexpected(r.error());
    if (auto r = checkName(QStringLiteral("artifact"), name); !r)
        return std::unexpected(r.error());
    const QString dir = artifactDir(runId, name);
    if (auto r = removeTree(dir); !r)
        return std::unexpected(r.error());
    if (!QDir().mkpath(dir))
        return fail(ErrorCode::Failed, QStringLiteral("cannot create the artifact's directory"), dir);
    return dir;
}

Status Workspace::publishArtifact(const QString &runId, const QString &name, const QString &dir) const
{
    if (auto r = checkName(QStringLiteral("run"), runId); !r)
        return r;
    if (auto r = checkName(QStringLiteral("artifact"), name); !r)
        return r;
    if (!QDir().mkpath(runDir(runId) + QStringLiteral("/artifacts")))
        return fail(ErrorCode::Failed, QStringLiteral("cannot create the run's artifact directory"), runDir(runId));
    return replaceWith(dir, artifactDir(runId, name));
}

bool Workspace::hasArtifact(const QString &runId, const QString &name) const
{
    if (!isValidName(runId) || !isValidName(name))
        return false;
    const QFileInfo info(artifactDir(runId, name));
    return info.isDir() && !info.isSymLink();
}

Result<StepDirs> Workspace::createStep(const QString &runId, const QString &stepId, const StepLayout &layout,
                                       CopyStats *stats) const
{
    if (auto r = checkName(QStringLiteral("run"), runId); !r)
        return std::unexpected(r.error());
    if (auto r = checkName(QStringLiteral("step"), stepId); !r)
        return std::unexpected(r.error());

    // Check everything before touching the disk.
    struct Planned {
        QString name;
        QString rel;
        QString artifact; // inputs only
    };
    QList<Planned> inputs;
    QList<Planned> outputs;
    for (const WorkspaceInput &in : layout.inputs) {
        const QString where = QStringLiteral("inputs.") + in.name;
        if (auto r = checkName(QStringLiteral("input"), in.name); !r)
            return fail(ErrorCode::Invalid, r.error().message, where);
        auto rel = cleanRelative(in.path.isEmpty() ? in.name : in.path, where);
        if (!rel)
            return std::unexpected(rel.error());
        const QString artifact = layout.inputMapping.value(in.name, in.name);
        if (!hasArtifact(runId, artifact)) {
            if (in.optional)
                continue;
            return fail(ErrorCode::NotFound,
                        QStringLiteral("the run has no artifact named '%1' for this input").arg(artifact), where);
        }
        for (const Planned &other : inputs) {
            if (overlaps(other.rel, *rel))
                return fail(ErrorCode::Invalid, QStringLiteral("path %1 overlaps input %2").arg(*rel, other.name),
                            where);
        }
        inputs.append({in.name, *rel, artifact});
    }
    for (const WorkspaceOutput &out : layout.outputs) {
        const QString where = QStringLiteral("outputs.") + out.name;
        if (auto r = checkName(QStringLiteral("output"), out.name); !r)
            return fail(ErrorCode::Invalid, r.error().message, where);
        auto rel = cleanRelative(out.path.isEmpty() ? out.name : out.path, where);
        if (!rel)
            return std::unexpected(rel.error());
        for (const Planned &other : inputs) {
            if (other.rel != *rel && overlaps(other.rel, *rel))
                return fail(ErrorCode::Invalid, QStringLiteral("path %1 overlaps input %2").arg(*rel, other.name),
                            where);
        }
        for (const Planned &other : outputs) {
            if (overlaps(other.rel, *rel))
                return fail(ErrorCode::Invalid, QStringLiteral("path %1 overlaps output %2").arg(*rel, other.name),
                            where);
        }
        outputs.append({out.name, *rel, {}});
    }

    const QString dir = stepDir(runId, stepId);
    if (QFileInfo::exists(dir) || QFileInfo(dir).isSymLink())
        return fail(ErrorCode::Conflict, QStringLiteral("the step's directory already exists"), dir);
    if (!QDir().mkpath(dir))
        return fail(ErrorCode::Failed, QStringLiteral("cannot create the step's directory"), dir);
    auto undo = [&dir](Error e) -> Result<StepDirs> {
        discardResult(removeTree(dir), "the error being returned is the one to report");
        return std::unexpected(std::move(e));
    };
    // The directories from the step's own down to path, all made just now by this call.
    auto openUpTo = [&dir, &layout](const QString &path) {
        if (!layout.openToTaskUser)
            return true;
        for (QString at = path; at.startsWith(dir); at = QFileInfo(at).path()) {
            if (::chmod(QFile::encodeName(at).constData(), 0777) != 0)
                return false;
            if (at == dir)
                break;
        }
        return true;
    };
    if (!openUpTo(dir))
        return undo(
            Error{ErrorCode::Failed, QStringLiteral("cannot open the step's directory to the task's user"), dir});

    StepDirs result;
    result.dir = dir;
    CopyStats total;
    for (const Planned &in : inputs) {
        const QString target = dir + u'/' + in.rel;
        if (!QDir().mkpath(QFileInfo(target).absolutePath()) || !openUpTo(QFileInfo(target).absolutePath()))
            return undo(Error{ErrorCode::Failed, QStringLiteral("cannot create directory"), target});
        auto copied = copyTree(artifactDir(runId, in.artifact), target, layout.openToTaskUser);
        if (!copied)
            return undo(copied.error());
        total.files += copied->files;
        total.bytes += copied->bytes;
        total.cloned += copied->cloned;
        total.ranged += copied->ranged;
        total.plain += copied->plain;
        result.inputs.insert(in.name, target);
    }
    for (const Planned &out : outputs) {
        const QString target = dir + u'/' + out.rel;
        if ((!QFileInfo(target).isDir() && !QDir().mkpath(target)) || !openUpTo(target))
            return undo(Error{ErrorCode::Failed, QStringLiteral("cannot create output directory"), target});
        result.outputs.insert(out.name, target);
    }
    if (stats)
        *stats = total;
    return result;
}

namespace {

Result<QString> walkBeneath(const QString &root, const QString &relative, bool create, const QString &what,
                            bool openToAll = false)
{
    const QStringList parts = relative.split(u'/', Qt::SkipEmptyParts);
    if (parts.contains(QStringLiteral("..")) || QDir::isAbsolutePath(relative))
        return fail(ErrorCode::Invalid, QStringLiteral("%1 %2 must be a relative path without ..").arg(what, relative),
                    relative);
    if (create && !QDir().mkpath(root))
        return fail(ErrorCode::Failed, QStringLiteral("cannot create %1").arg(root), what);
    UniqueFd dir(::open(QFile::encodeName(root).constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.isValid())
        return fail(ErrorCode::Failed, QStringLiteral("cannot open %1: %2").arg(root, errnoText(errno)), what);
    QString walked;
    for (const QString &part : parts) {
        if (part == QLatin1String("."))
            continue;
        walked += (walked.isEmpty() ? QString() : QStringLiteral("/")) + part;
        const QByteArray name = QFile::encodeName(part);
        if (create && ::mkdirat(dir.get(), name.constData(), 0700) != 0 && errno != EEXIST)
            return fail(ErrorCode::Failed,
                        QStringLiteral("cannot create %1 %2: %3").arg(what, walked, errnoText(errno)), what);
        struct stat st {};
        if (::fstatat(dir.get(), name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return fail(ErrorCode::Failed, QStringLiteral("%1 %2 is missing: %3").arg(what, walked, errnoText(errno)),
                        what);
        if (S_ISLNK(st.st_mode)) {
            // The link goes (unlinkat never follows it); what it points at stays untouched.
            const bool removed = create && ::unlinkat(dir.get(), name.constData(), 0) == 0;
            return fail(ErrorCode::Failed,
                        QStringLiteral("%1 %2 is a symbolic link, not a directory: a step replaced it, and it is "
                                       "not followed%3")
                            .arg(what, walked, removed ? QStringLiteral(" (the link was removed)") : QString()),
                        what, QStringLiteral("a task must leave its %1 directories in place").arg(what));
        }
        if (!S_ISDIR(st.st_mode))
            return fail(ErrorCode::Failed, QStringLiteral("%1 %2 is not a directory").arg(what, walked), what);
        UniqueFd next(::openat(dir.get(), name.constData(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next.isValid())
            return fail(ErrorCode::Failed, QStringLiteral("cannot open %1 %2: %3").arg(what, walked, errnoText(errno)),
                        what);
        dir = std::move(next);
    }
    if (openToAll && ::fchmod(dir.get(), 0777) != 0)
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot open %1 %2 to the task's user: %3").arg(what, relative, errnoText(errno)),
                    what);
    return parts.isEmpty() ? root : root + u'/' + parts.join(u'/');
}

} // namespace

Result<QString> makeDirBeneath(const QString &root, const QString &relative, bool openToAll)
{
    return walkBeneath(root, relative, true, QStringLiteral("cache"), openToAll);
}

Status checkDirBeneath(const QString &root, const QString &relative)
{
    auto walked = walkBeneath(root, relative, false, QStringLiteral("output"));
    if (!walked)
        return std::unexpected(walked.error());
    return {};
}

Status Workspace::checkOutputs(const StepDirs &dirs) const
{
    for (auto it = dirs.outputs.cbegin(); it != dirs.outputs.cend(); ++it) {
        if (auto ok = checkDirBeneath(dirs.dir, QDir(dirs.dir).relativeFilePath(it.value())); !ok) {
            Error e = ok.error();
            e.where = QStringLiteral("outputs.") + it.key();
            return std::unexpected(e);
        }
    }
    return {};
}

Status Workspace::collectOutputs(const QString &runId, const StepDirs &dirs, const StepLayout &layout) const
{
    for (auto it = dirs.outputs.cbegin(); it != dirs.outputs.cend(); ++it) {
        const QString artifact = layout.outputMapping.value(it.key(), it.key());
        const QFileInfo info(it.value());
        // The step may have swapped its output for a symlink; that is not a tree it made.
        if (info.isSymLink() || !info.isDir())
            return fail(ErrorCode::Failed, QStringLiteral("the step's output is no longer a directory"),
                        QStringLiteral("outputs.") + it.key());
        if (auto r = publishArtifact(runId, artifact, it.value()); !r)
            return r;
    }
    return {};
}

Status Workspace::removeStep(const QString &runId, const QString &stepId) const
{
    if (!isValidName(runId) || !isValidName(stepId))
        return fail(ErrorCode::Invalid, QStringLiteral("not a valid run or step name"), runId + u'/' + stepId);
    return removeTree(stepDir(runId, stepId));
}

Status Workspace::removeRun(const QString &runId) const
{
    if (auto r = checkName(QStringLiteral("run"), runId); !r)
        return r;
    return removeTree(runDir(runId));
}

QStringList Workspace::runs() const
{
    return QDir(m_root).entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks, QDir::Name);
}

} // namespace pando::core
