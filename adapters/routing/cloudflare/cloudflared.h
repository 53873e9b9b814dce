#pragma once
// cloudflared as Pando runs it: `cloudflared tunnel --no-autoupdate --metrics 127.0.0.1:PORT run`
// with the tunnel's token in its environment (TUNNEL_TOKEN, which its --token flag reads), never
// on its command line, where every user of the machine could read it. It gets a session of its own,
// so neither a terminal's Ctrl+C nor the end of Pando (a SIGKILL included) stops it, and the tunnel
// keeps serving while Pando is away; the next Pando adopts it through the pid file, checking that
// the process is still that cloudflared before it trusts it. Its output goes to cloudflared.log.
// Whether it holds a connection to Cloudflare is asked of its metrics server's /ready.
//
// Threading: not thread-safe; CloudflareRouter calls it under its mutex.

#include "adapters/api/error.h"

#include <QString>

namespace pando::adapters::cloudflare {

class Cloudflared {
public:
    // binary: the cloudflared executable (a path, or a name looked up on PATH); stateDir: where
    // cloudflared.pid and cloudflared.log go.
    Cloudflared(QString binary, QString stateDir);

    // The executable, or empty when there is none.
    QString executable() const;
    // Adopts the cloudflared the pid file names when it still runs; true when one does.
    bool adopt();
    // Starts it with token in its environment. Unavailable when it cannot be started or exits
    // within graceMs of starting, with its last words.
    Status start(const QString &token, int graceMs = 300);
    // Whether it runs (a child that exited is reaped and its exit recorded).
    bool isRunning();
    // Stops it (SIGTERM, then SIGKILL after timeoutMs). For tests and `pando edge stop`.
    void stop(int timeoutMs = 5000);
    qint64 pid() const { return m_pid; }
    int metricsPort() const { return m_metricsPort; }
    // Asks /ready: 1 connected, 0 running without a connection to Cloudflare, -1 no answer.
    int ready(int timeoutMs = 1000) const;
    // How it ended ("exited with status 1", "killed by signal 9") and its last lines of output.
    QString lastWords() const;
    QString logFile() const;

private:
    bool isOurs(qint64 pid) const;

    QString m_binary;
    QString m_stateDir;
    qint64 m_pid = 0;
    bool m_child = false; // started by this process, so waitpid() reaps it
    int m_metricsPort = 0;
    QString m_ended;
};

} // namespace pando::adapters::cloudflare
