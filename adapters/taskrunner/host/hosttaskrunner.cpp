#include "adapters/taskrunner/host/hosttaskrunner.h"
#include "adapters/api/oskit.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace pando::adapters::host {

using namespace Qt::StringLiterals;

namespace {

// After the command itself ended, how long leftover output may take to arrive before the
// pipes are closed regardless (a process that left the group could hold them open forever).
constexpr int DrainLimitMs = 2000;

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : m_fd(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() { reset(); }
    int get() const { return m_fd; }
    bool isOpen() const { return m_fd >= 0; }
    void reset(int fd = -1)
    {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = fd;
    }

private:
    int m_fd = -1;
};

int pidfdOpen(pid_t pid)
{
#ifdef SYS_pidfd_open
    return int(::syscall(SYS_pidfd_open, pid, 0));
#else
    Q_UNUSED(pid);
    return -1;
#endif
}

void setNonBlocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

QString errnoText(int error)
{
    return QString::fromLocal8Bit(::strerror(error));
}

// The symlinks standing in for mounts; removed when the run ends, whatever happened.
class MountLinks {
public:
    MountLinks() = default;
    MountLinks(const MountLinks &) = delete;
    MountLinks &operator=(const MountLinks &) = delete;
    ~MountLinks()
    {
        for (const QString &link : std::as_const(m_created))
            QFile::remove(link);
    }

    Status create(const TaskSpec &spec)
    {
        const QString root = QDir(spec.workDir).canonicalPath();
        for (qsizetype i = 0; i < spec.mounts.size(); ++i) {
            const Mount &mount = spec.mounts.at(i);
            const QString where = u"mounts[%1]"_s.arg(i);
            const QFileInfo host(mount.hostPath);
            if (!host.exists())
                return fail(ErrorCode::NotFound, u"the mounted path %1 does not exist"_s.arg(mount.hostPath), where);
            if (mount.path.isEmpty())
                return fail(ErrorCode::Invalid, u"a mount needs a path"_s, where);
            const QString link = QDir::cleanPath(QDir(root).absoluteFilePath(mount.path));
            if (link == QDir::cleanPath(host.absoluteFilePath()))
                continue; // already where the task looks for it
            if (link == root || !link.startsWith(root + u'/'))
                return fail(ErrorCode::Invalid,
                            u"the mount path %1 is outside the work directory %2; on the host a mount is a "
                            u"symlink inside the work directory"_s.arg(mount.path, root),
                            where);
            const QFileInfo existing(link);
            if (existing.isSymLink() && existing.symLinkTarget() == host.absoluteFilePath())
                continue;
            if (existing.exists() || existing.isSymLink())
                return fail(ErrorCode::Conflict,
                            u"cannot mount %1 at %2: something is already there"_s.arg(mount.hostPath, mount.path),
                            where);
            if (!QDir().mkpath(existing.absolutePath()))
                return fail(ErrorCode::Internal, u"cannot create the directory"_s, existing.absolutePath());
            if (!QFile::link(host.absoluteFilePath(), link))
                return fail(ErrorCode::Internal, u"cannot create the symlink for a mount"_s, link);
            m_created.append(link);
        }
        return {};
    }

private:
    QStringList m_created;
};

Result<QString> resolveExecutable(const QString &program, const QString &workDir, const QString &path)
{
    if (program.isEmpty())
        return fail(ErrorCode::Invalid, u"the command is empty"_s, u"argv[0]"_s);
    if (program.contains(u'/')) {
        const QString absolute = QDir(workDir).absoluteFilePath(program);
        const QFileInfo info(absolute);
        if (!info.exists())
            return fail(ErrorCode::NotFound, u"the command %1 does not exist"_s.arg(absolute), u"argv[0]"_s);
        if (!info.isExecutable() || info.isDir())
            return fail(ErrorCode::Invalid, u"the command %1 is not executable"_s.arg(absolute), u"argv[0]"_s,
                        u"chmod +x it"_s);
        return absolute;
    }
    const QString found = QStandardPaths::findExecutable(program, path.split(u':', Qt::SkipEmptyParts));
    if (found.isEmpty())
        return fail(ErrorCode::NotFound, u"the command \"%1\" is not on the task's PATH (%2)"_s.arg(program, path),
                    u"argv[0]"_s);
    return found;
}

} // namespace

HostTaskRunner::HostTaskRunner() = default;

QString HostTaskRunner::defaultPath()
{
    return u"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"_s;
}

Result<QString> HostTaskRunner::imageDigest(const QString &image)
{
    Q_UNUSED(image);
    return u"host"_s;
}

Result<TaskResult> HostTaskRunner::run(const TaskSpec &spec, const CancelToken &cancel,
                                       const std::function<void(const OutputChunk &)> &output)
{
    if (spec.argv.isEmpty())
        return fail(ErrorCode::Invalid, u"the task has no command"_s, u"argv"_s);
    if (spec.workDir.isEmpty() || !QFileInfo(spec.workDir).isDir())
        return fail(ErrorCode::Invalid, u"the work directory \"%1\" does not exist"_s.arg(spec.workDir), u"workDir"_s);
    if (cancel.isCancelled())
        return fail(ErrorCode::Cancelled, u"the task was cancelled before it started"_s);

    // A minimal environment: nothing of pandod's own (tokens, keys) reaches the task.
    QMap<QString, QString> env;
    env.insert(u"PATH"_s, defaultPath());
    env.insert(u"HOME"_s, QDir(spec.workDir).absolutePath());
    for (auto it = spec.env.cbegin(); it != spec.env.cend(); ++it) {
        if (it.key().isEmpty() || it.key().contains(u'=') || it.key().contains(QChar(0)))
            return fail(ErrorCode::Invalid, u"\"%1\" is not a valid environment variable name"_s.arg(it.key()),
                        u"env"_s);
        env.insert(it.key(), it.value());
    }
    Result<QString> executable = resolveExecutable(spec.argv.first(), spec.workDir, env.value(u"PATH"_s));
    if (!executable)
        return std::unexpected(executable.error());

    MountLinks links;
    if (Status ok = links.create(spec); !ok)
        return std::unexpected(ok.error());

    std::vector<QByteArray> argStorage;
    for (const QString &arg : spec.argv)
        argStorage.push_back(arg.toLocal8Bit());
    std::vector<char *> argvPtrs;
    argvPtrs.reserve(argStorage.size() + 1);
    for (QByteArray &arg : argStorage)
        argvPtrs.push_back(arg.data());
    argvPtrs.push_back(nullptr);
    std::vector<QByteArray> envStorage;
    for (auto it = env.cbegin(); it != env.cend(); ++it)
        envStorage.push_back((it.key() + u'=' + it.value()).toLocal8Bit());
    std::vector<char *> envPtrs;
    envPtrs.reserve(envStorage.size() + 1);
    for (QByteArray &entry : envStorage)
        envPtrs.push_back(entry.data());
    envPtrs.push_back(nullptr);

    int outPipe[2] = {-1, -1};
    int errPipe[2] = {-1, -1};
    if (::pipe2(outPipe, O_CLOEXEC) != 0)
        return fail(ErrorCode::Internal, u"cannot create a pipe: %1"_s.arg(errnoText(errno)));
    Fd outRead(outPipe[0]), outWrite(outPipe[1]);
    if (::pipe2(errPipe, O_CLOEXEC) != 0)
        return fail(ErrorCode::Internal, u"cannot create a pipe: %1"_s.arg(errnoText(errno)));
    Fd errRead(errPipe[0]), errWrite(errPipe[1]);
    // stdin is a socket pair so writing to a task that closed its end fails with EPIPE instead
    // of raising SIGPIPE in pandod (send() takes MSG_NOSIGNAL, write() on a pipe cannot).
    Fd inWrite, inRead;
    const bool hasStdin = !spec.stdinData.isEmpty();
    if (hasStdin) {
        int pair[2] = {-1, -1};
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
            return fail(ErrorCode::Internal, u"cannot create a socket pair: %1"_s.arg(errnoText(errno)));
        inWrite.reset(pair[0]);
        inRead.reset(pair[1]);
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (hasStdin)
        posix_spawn_file_actions_adddup2(&actions, inRead.get(), 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, outWrite.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, errWrite.get(), 2);
    const QByteArray workDir = QFile::encodeName(spec.workDir);
    posix_spawn_file_actions_addchdir_np(&actions, workDir.constData());
    // Descriptors pandod opened without O_CLOEXEC (sockets, databases) stay out of the task.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group, so a timeout or cancel can end everything the task started.
    posix_spawnattr_setpgroup(&attr, 0);
    resetSignalsOnSpawn(&attr, POSIX_SPAWN_SETPGROUP);

    TaskResult result;
    result.startedMs = QDateTime::currentMSecsSinceEpoch();
    pid_t pid = -1;
    const QByteArray exe = QFile::encodeName(*executable);
    const int spawnError = ::posix_spawn(&pid, exe.constData(), &actions, &attr, argvPtrs.data(), envPtrs.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (spawnError != 0)
        return fail(spawnError == ENOENT ? ErrorCode::NotFound : ErrorCode::Failed,
                    u"cannot start %1: %2"_s.arg(*executable, errnoText(spawnError)), u"argv[0]"_s);
    outWrite.reset();
    errWrite.reset();
    inRead.reset();
    setNonBlocking(outRead.get());
    setNonBlocking(errRead.get());

    Fd pidfd(pidfdOpen(pid));
    QElapsedTimer clock;
    clock.start();
    qint64 termSentAt = -1;
    bool killSent = false;
    bool timedOut = false;
    bool cancelled = false;
    bool exited = false;
    qint64 exitedAt = 0;
    siginfo_t exitInfo{};
    qsizetype stdinOffset = 0;
    QByteArray buffer(64LL * 1024, Qt::Uninitialized);

    auto readFrom = [&](Fd &fd, bool isStderr) {
        for (;;) {
            const ssize_t n = ::read(fd.get(), buffer.data(), size_t(buffer.size()));
            if (n > 0) {
                if (output)
                    output(OutputChunk{isStderr, QByteArray(buffer.constData(), qsizetype(n))});
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            fd.reset(); // EOF or a broken pipe
            return;
        }
    };

    for (;;) {
        const qint64 now = clock.elapsed();
        if (!exited && termSentAt < 0) {
            if (cancel.isCancelled())
                cancelled = true;
            else if (spec.timeoutMs > 0 && now >= spec.timeoutMs)
                timedOut = true;
            if (cancelled || timedOut) {
                ::killpg(pid, SIGTERM);
                termSentAt = now;
            }
        }
        if (!exited && termSentAt >= 0 && !killSent && now - termSentAt >= m_killGraceMs) {
            ::killpg(pid, SIGKILL);
            killSent = true;
        }
        if (!exited) {
            siginfo_t info{};
            // WNOWAIT leaves the leader a zombie, so its group id cannot be reused before the
            // rest of the group is killed below.
            if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
                exited = true;
                exitedAt = now;
                exitInfo = info;
                ::killpg(pid, SIGKILL); // nothing the task started outlives it
                pidfd.reset();
                inWrite.reset();
            }
        }
        if (exited && (!outRead.isOpen() && !errRead.isOpen()))
            break;
        if (exited && now - exitedAt > DrainLimitMs)
            break;

        pollfd fds[4];
        int count = 0;
        int outIndex = -1, errIndex = -1, inIndex = -1;
        if (outRead.isOpen()) {
            outIndex = count;
            fds[count++] = pollfd{outRead.get(), POLLIN, 0};
        }
        if (errRead.isOpen()) {
            errIndex = count;
            fds[count++] = pollfd{errRead.get(), POLLIN, 0};
        }
        if (inWrite.isOpen()) {
            inIndex = count;
            fds[count++] = pollfd{inWrite.get(), POLLOUT, 0};
        }
        if (pidfd.isOpen())
            fds[count++] = pollfd{pidfd.get(), POLLIN, 0};
        // The pidfd wakes us when the command exits; without one (old kernels), poll often.
        const int wait = exited ? 20 : (pidfd.isOpen() ? 50 : 10);
        const int ready = ::poll(fds, nfds_t(count), wait);
        if (ready < 0 && errno != EINTR)
            break;
        if (ready <= 0)
            continue;
        if (outIndex >= 0 && fds[outIndex].revents)
            readFrom(outRead, false);
        if (errIndex >= 0 && fds[errIndex].revents)
            readFrom(errRead, true);
        if (inIndex >= 0 && fds[inIndex].revents) {
            const ssize_t n = ::send(inWrite.get(), spec.stdinData.constData() + stdinOffset,
                                     size_t(spec.stdinData.size() - stdinOffset), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0)
                stdinOffset += n;
            if ((n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ||
                stdinOffset >= spec.stdinData.size()) {
                ::shutdown(inWrite.get(), SHUT_WR);
                inWrite.reset(); // the task reads EOF
            }
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.finishedMs = QDateTime::currentMSecsSinceEpoch();

    if (cancelled)
        return fail(ErrorCode::Cancelled, u"the task %1 was cancelled"_s.arg(spec.argv.first()));
    result.timedOut = timedOut;
    if (timedOut)
        result.exitCode = -1;
    else if (exitInfo.si_code == CLD_EXITED)
        result.exitCode = exitInfo.si_status;
    else
        result.exitCode = 128 + exitInfo.si_status;
    return result;
}

} // namespace pando::adapters::host
