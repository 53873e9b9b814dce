#pragma once
// Small POSIX steps more than one adapter takes, kept in one place so they stay the same: a
// 127.0.0.1 port bound as the routers need it, spawn attributes that give a child process the
// signal dispositions of a fresh process, and the start of a process that outlives Pando.
//
// Threading: pure functions of their arguments; any thread.

#include "error.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <spawn.h>

namespace pando::adapters {

// Binds 127.0.0.1:port (0: a free one) with SO_REUSEADDR but not SO_REUSEPORT, so anything that
// listens there (a Caddy too) makes it a Conflict; EACCES is Forbidden. Returns the socket
// (close-on-exec; non-blocking when asked) with *boundPort set; the caller listens or closes it.
Result<int> bindLoopbackPort(int port, int *boundPort, bool nonBlocking = false);

// An empty signal mask and default handling of the signals a daemon ignores or handles (SIGPIPE,
// SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGUSR1, SIGUSR2), which would otherwise be kept
// across exec; extraFlags (POSIX_SPAWN_SETPGROUP, ...) are set with them.
void resetSignalsOnSpawn(posix_spawnattr_t *attr, short extraFlags = 0);

// This process's environment without the entries whose text starts with one of prefixes
// ("TUNNEL_TOKEN="), for a child that must not see them.
QList<QByteArray> environmentWithout(const QList<QByteArray> &prefixes);

// A process that outlives Pando (an edge, a tunnel): argv[0], a path, started with env (KEY=value
// entries, used in place), stdin from /dev/null, stdout and stderr appended to logFile (made 0600),
// in workDir, with no other descriptor and fresh signal dispositions (extraFlags as above). Its
// pid, or Unavailable with the reason at where.
Result<pid_t> spawnLogged(const QList<QByteArray> &argv, const QList<QByteArray> &env, const QString &logFile,
                          const QString &workDir, short extraFlags, const QString &where);

} // namespace pando::adapters
