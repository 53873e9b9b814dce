#include "core/state/datadir.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

QString systemError()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

std::unexpected<Error> notOurs(const QString &path, uid_t owner)
{
    return fail(
        ErrorCode::Forbidden,
        u"%1 belongs to another user (uid %2), not to the user Pando runs as (uid %3)"_s.arg(path).arg(owner).arg(
            ::geteuid()),
        path, u"give Pando a data directory of its own (--data-dir), or chown it to the user Pando runs as"_s);
}

// Takes group and other bits away from path (lstat'ed as st) when it has any: true when changed.
Result<bool> privatise(const QString &path, const struct stat &st, mode_t wanted)
{
    if ((st.st_mode & 077) == 0)
        return false;
    if (st.st_uid != ::geteuid())
        return notOurs(path, st.st_uid);
    if (::chmod(QFile::encodeName(path).constData(), wanted) != 0)
        return fail(ErrorCode::Unavailable, u"cannot make %1 private: %2"_s.arg(path, systemError()), path);
    return true;
}

Status makeDirectory(const QString &dir)
{
    const QFileInfo info(dir);
    if (!QDir().mkpath(info.absolutePath()))
        return fail(ErrorCode::Unavailable, u"cannot create the data directory's parent"_s, info.absolutePath(),
                    u"choose a data directory this user may write to"_s);
    if (::mkdir(QFile::encodeName(dir).constData(), 0700) != 0 && errno != EEXIST)
        return fail(ErrorCode::Unavailable, u"cannot create the data directory: %1"_s.arg(systemError()), dir,
                    u"choose a data directory this user may write to"_s);
    return {};
}

} // namespace

Result<bool> makePrivateFile(const QString &path)
{
    struct stat st {};
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return false;
    if (!S_ISREG(st.st_mode))
        return false;
    return privatise(path, st, 0600);
}

Status makePrivateDirectory(const QString &dir, QStringList *fixed)
{
    if (dir.isEmpty())
        return fail(ErrorCode::Invalid, u"no data directory was given"_s, u"dataDir"_s);
    if (auto made = makeDirectory(dir); !made)
        return made;
    const QByteArray native = QFile::encodeName(dir);
    struct stat st {};
    if (::lstat(native.constData(), &st) != 0)
        return fail(ErrorCode::Unavailable, u"cannot read the data directory: %1"_s.arg(systemError()), dir);
    if (S_ISLNK(st.st_mode) && ::stat(native.constData(), &st) != 0)
        return fail(ErrorCode::Unavailable, u"the data directory is a link to nothing"_s, dir);
    if (!S_ISDIR(st.st_mode))
        return fail(ErrorCode::Invalid, u"the data directory is not a directory"_s, dir);
    // Refused even when its mode is private: whoever owns it may read and replace what is in it.
    if (st.st_uid != ::geteuid())
        return notOurs(dir, st.st_uid);
    auto changed = privatise(dir, st, 0700);
    if (!changed)
        return std::unexpected(changed.error());
    if (*changed && fixed)
        fixed->append(dir);

    DIR *entries = ::opendir(native.constData());
    if (!entries)
        return fail(ErrorCode::Unavailable, u"cannot list the data directory: %1"_s.arg(systemError()), dir);
    Status result;
    while (const dirent *entry = ::readdir(entries)) {
        const QByteArray name(entry->d_name);
        if (name == "." || name == "..")
            continue;
        const QString path = dir + u'/' + QFile::decodeName(name);
        struct stat es {};
        if (::lstat(QFile::encodeName(path).constData(), &es) != 0 || S_ISLNK(es.st_mode))
            continue;
        if (!S_ISREG(es.st_mode) && !S_ISDIR(es.st_mode))
            continue;
        auto done = privatise(path, es, S_ISDIR(es.st_mode) ? 0700 : 0600);
        if (!done) {
            result = std::unexpected(done.error());
            break;
        }
        if (*done && fixed)
            fixed->append(path);
    }
    ::closedir(entries);
    return result;
}

} // namespace pando::core
