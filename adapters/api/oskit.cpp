#include "oskit.h"

#include <QFile>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

extern char **environ;

using namespace Qt::StringLiterals;

namespace pando::adapters {

Result<int> bindLoopbackPort(int port, int *boundPort, bool nonBlocking)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonBlocking ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return fail(ErrorCode::Internal,
                    u"cannot create a socket: %1"_s.arg(QString::fromLocal8Bit(std::strerror(errno))));
    // Lets the port be taken again while old connections sit in TIME_WAIT after a restart;
    // Linux still refuses the bind while anyone listens on it.
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<quint16>(port));
    if (::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
        const int err = errno;
        ::close(fd);
        if (err == EADDRINUSE)
            return fail(ErrorCode::Conflict, u"port %1 is already in use"_s.arg(port), u"port"_s,
                        u"pick another port, or stop what listens on 127.0.0.1:%1"_s.arg(port));
        if (err == EACCES)
            return fail(ErrorCode::Forbidden, u"port %1 needs privileges this process does not have"_s.arg(port),
                        u"port"_s, u"use a port above 1023"_s);
        return fail(ErrorCode::Internal,
                    u"cannot bind 127.0.0.1:%1: %2"_s.arg(port).arg(QString::fromLocal8Bit(std::strerror(err))),
                    u"port"_s);
    }
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
    *boundPort = ntohs(address.sin_port);
    return fd;
}

void resetSignalsOnSpawn(posix_spawnattr_t *attr, short extraFlags)
{
    sigset_t mask;
    sigemptyset(&mask);
    posix_spawnattr_setsigmask(attr, &mask);
    // Signals the parent ignores (SIGPIPE, usually) would stay ignored across exec.
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int sig : {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2})
        sigaddset(&defaults, sig);
    posix_spawnattr_setsigdefault(attr, &defaults);
    posix_spawnattr_setflags(attr, short(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | extraFlags));
}

QList<QByteArray> environmentWithout(const QList<QByteArray> &prefixes)
{
    QList<QByteArray> env;
    for (char **e = environ; *e != nullptr; ++e) {
        const QByteArray entry(*e);
        if (std::none_of(prefixes.begin(), prefixes.end(),
                         [&entry](const QByteArray &prefix) { return entry.startsWith(prefix); }))
            env << entry;
    }
    return env;
}

Result<pid_t> spawnLogged(const QList<QByteArray> &argv, const QList<QByteArray> &env, const QString &logFile,
                          const QString &workDir, short extraFlags, const QString &where)
{
    // posix_spawn reads these and writes none of them.
    std::vector<char *> argvPtrs;
    for (const QByteArray &arg : argv)
        argvPtrs.push_back(const_cast<char *>(arg.constData()));
    argvPtrs.push_back(nullptr);
    std::vector<char *> envPtrs;
    for (const QByteArray &entry : env)
        envPtrs.push_back(const_cast<char *>(entry.constData()));
    envPtrs.push_back(nullptr);
    const QByteArray log = QFile::encodeName(logFile);
    const QByteArray dir = QFile::encodeName(workDir);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.constData(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addchdir_np(&actions, dir.constData());
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    resetSignalsOnSpawn(&attr, extraFlags);
    pid_t pid = -1;
    const int spawnError = ::posix_spawn(&pid, argvPtrs[0], &actions, &attr, argvPtrs.data(), envPtrs.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (spawnError != 0)
        return fail(ErrorCode::Unavailable,
                    u"cannot start %1: %2"_s.arg(QFile::decodeName(argv.value(0)),
                                                 QString::fromLocal8Bit(std::strerror(spawnError))),
                    where);
    return pid;
}

} // namespace pando::adapters
