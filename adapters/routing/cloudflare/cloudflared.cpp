#include "cloudflared.h"

#include "adapters/api/oskit.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <QThread>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::cloudflare {

namespace {

QString howItEnded(int status)
{
    if (WIFEXITED(status))
        return u"exited with status %1"_s.arg(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return u"was killed by signal %1"_s.arg(WTERMSIG(status));
    return u"stopped"_s;
}

} // namespace

Cloudflared::Cloudflared(QString binary, QString stateDir)
    : m_binary(std::move(binary)), m_stateDir(std::move(stateDir))
{}

QString Cloudflared::executable() const
{
    if (m_binary.contains(u'/'))
        return QFileInfo(m_binary).isExecutable() && QFileInfo(m_binary).isFile()
                   ? QFileInfo(m_binary).absoluteFilePath()
                   : QString();
    return QStandardPaths::findExecutable(m_binary);
}

QString Cloudflared::logFile() const
{
    return QDir(m_stateDir).filePath(u"cloudflared.log"_s);
}

bool Cloudflared::isOurs(qint64 pid) const
{
    // A pid is reused once its process is gone: only a cloudflared running the tunnel with this
    // metrics address is the one the pid file meant.
    QFile cmdline(u"/proc/%1/cmdline"_s.arg(pid));
    if (!cmdline.open(QIODevice::ReadOnly))
        return false;
    const QList<QByteArray> argv = cmdline.readAll().split('\0');
    const QByteArray metrics = "127.0.0.1:" + QByteArray::number(m_metricsPort);
    return argv.contains("tunnel") && argv.contains("run") && argv.contains(metrics);
}

bool Cloudflared::adopt()
{
    QFile file(QDir(m_stateDir).filePath(u"cloudflared.pid"_s));
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const QList<QByteArray> fields = file.readAll().simplified().split(' ');
    if (fields.size() != 2)
        return false;
    const qint64 pid = fields[0].toLongLong();
    m_metricsPort = fields[1].toInt();
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0 || !isOurs(pid)) {
        m_metricsPort = 0;
        return false;
    }
    m_pid = pid;
    m_child = false;
    return true;
}

Status Cloudflared::start(const QString &token, int graceMs)
{
    const QString exe = executable();
    if (exe.isEmpty())
        return fail(
            ErrorCode::Unavailable, u"cloudflared (%1) is not there or not executable"_s.arg(m_binary),
            u"cloudflared"_s,
            u"install cloudflared from Cloudflare (Debian does not package it) and name it with --cloudflared"_s);
    int port = 0;
    auto fd = bindLoopbackPort(0, &port);
    if (!fd)
        return std::unexpected(fd.error());
    ::close(*fd);

    QList<QByteArray> argv{QFile::encodeName(exe),
                           "tunnel",
                           "--no-autoupdate",
                           "--metrics",
                           "127.0.0.1:" + QByteArray::number(port),
                           "run"};
    // Pando's own API token (when it came from the environment) is not cloudflared's business.
    QList<QByteArray> env = environmentWithout({"TUNNEL_TOKEN=", "PANDO_CLOUDFLARE_TOKEN"});
    env << "TUNNEL_TOKEN=" + token.toLatin1();
    // A session of its own: the tunnel outlives Pando and its terminal.
    auto spawned = spawnLogged(argv, env, logFile(), m_stateDir, POSIX_SPAWN_SETSID, u"cloudflared"_s);
    // The environment held the token: it goes with the copy.
    env.last().fill('\0');
    if (!spawned)
        return std::unexpected(spawned.error());
    const pid_t pid = *spawned;
    m_pid = pid;
    m_child = true;
    m_metricsPort = port;
    m_ended.clear();
    QSaveFile pidFile(QDir(m_stateDir).filePath(u"cloudflared.pid"_s));
    if (!pidFile.open(QIODevice::WriteOnly) ||
        pidFile.write(QByteArray::number(pid) + ' ' + QByteArray::number(port) + '\n') < 0 ||
        !pidFile.setPermissions(QFile::ReadOwner | QFile::WriteOwner) || !pidFile.commit())
        qWarning("cloudflare: cannot write %s: the next Pando will not adopt cloudflared (pid %d)",
                 qPrintable(pidFile.fileName()), int(pid));

    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < graceMs) {
        if (!isRunning())
            return fail(ErrorCode::Unavailable, u"cloudflared %1"_s.arg(lastWords()), u"cloudflared"_s,
                        u"see %1"_s.arg(logFile()));
        QThread::msleep(20);
    }
    qInfo("cloudflare: started cloudflared (pid %d, metrics on 127.0.0.1:%d)", int(pid), port);
    return {};
}

bool Cloudflared::isRunning()
{
    if (m_pid <= 0)
        return false;
    if (m_child) {
        int status = 0;
        const pid_t reaped = ::waitpid(pid_t(m_pid), &status, WNOHANG);
        if (reaped == pid_t(m_pid)) {
            m_ended = howItEnded(status);
            m_pid = 0;
            QFile::remove(QDir(m_stateDir).filePath(u"cloudflared.pid"_s));
            return false;
        }
        if (reaped == 0)
            return true;
    }
    if (::kill(pid_t(m_pid), 0) == 0 && isOurs(m_pid))
        return true;
    m_ended = u"is gone"_s;
    m_pid = 0;
    return false;
}

void Cloudflared::stop(int timeoutMs)
{
    if (!isRunning())
        return;
    ::kill(pid_t(m_pid), SIGTERM);
    QElapsedTimer timer;
    timer.start();
    while (isRunning() && timer.elapsed() < timeoutMs)
        QThread::msleep(20);
    if (isRunning()) {
        ::kill(pid_t(m_pid), SIGKILL);
        while (isRunning() && timer.elapsed() < timeoutMs + 2000)
            QThread::msleep(20);
    }
    QFile::remove(QDir(m_stateDir).filePath(u"cloudflared.pid"_s));
}

int Cloudflared::ready(int timeoutMs) const
{
    if (m_metricsPort <= 0)
        return -1;
    httpkit::Request request;
    request.path = u"/ready"_s;
    request.timeoutMs = timeoutMs;
    const httpkit::Exchange exchange =
        httpkit::perform({.baseUrl = "http://127.0.0.1:" + QByteArray::number(m_metricsPort)}, request);
    if (exchange.transportFailed)
        return -1;
    return exchange.status == 200 ? 1 : 0;
}

QString Cloudflared::lastWords() const
{
    QFile f(logFile());
    QString tail;
    if (f.open(QIODevice::ReadOnly)) {
        if (f.size() > 8192)
            f.seek(f.size() - 8192);
        const QStringList lines = QString::fromUtf8(f.readAll()).split(u'\n', Qt::SkipEmptyParts);
        tail = lines.mid(qMax<qsizetype>(0, lines.size() - 3)).join(u" | "_s);
    }
    const QString ended = m_ended.isEmpty() ? u"is not running"_s : m_ended;
    return tail.isEmpty() ? ended : u"%1; its last output: %2"_s.arg(ended, tail);
}

} // namespace pando::adapters::cloudflare
