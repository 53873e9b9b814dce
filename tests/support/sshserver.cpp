#include "tests/support/sshserver.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTest>

using namespace Qt::StringLiterals;

namespace pando::test {

QString SshServer::start(quint16 port)
{
    m_port = port;
    if (!m_dir.isValid())
        return u"no temporary directory"_s;
    if (QString error = keygen(u"host_ed25519"_s); !error.isEmpty())
        return error;
    if (QString error = keygen(u"client_ed25519"_s); !error.isEmpty())
        return error;
    QFile::copy(path(u"client_ed25519.pub"_s), path(u"authorized_keys"_s));
    // sshd refuses to start without its privilege separation directory.
    QDir().mkpath(u"/run/sshd"_s);
    const QString config = u"Port %1\nListenAddress 127.0.0.1\nHostKey %2\nAuthorizedKeysFile %3\n"
                           u"PubkeyAuthentication yes\nPasswordAuthentication no\n"
                           u"KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                           u"StrictModes no\nUsePAM no\nPidFile %4\nLogLevel VERBOSE\n"_s.arg(port)
                               .arg(path(u"host_ed25519"_s), path(u"authorized_keys"_s), path(u"sshd.pid"_s));
    QFile file(path(u"sshd_config"_s));
    if (!file.open(QIODevice::WriteOnly) || file.write(config.toUtf8()) < 0)
        return u"cannot write sshd_config"_s;
    file.close();
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    m_process.start(u"/usr/sbin/sshd"_s, {u"-D"_s, u"-e"_s, u"-f"_s, path(u"sshd_config"_s)});
    if (!m_process.waitForStarted(5000))
        return u"sshd did not start: "_s + m_process.errorString();
    for (int i = 0; i < 100; ++i) {
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, port);
        if (probe.waitForConnected(100))
            return {};
        if (m_process.state() != QProcess::Running)
            break;
        QTest::qWait(100);
    }
    return u"sshd is not accepting on port %1: %2"_s.arg(port).arg(QString::fromUtf8(m_process.readAll()));
}

void SshServer::stop()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.terminate();
        if (!m_process.waitForFinished(3000)) {
            m_process.kill();
            m_process.waitForFinished(3000);
        }
    }
}

QString SshServer::writeKnownHosts(const QString &name, const QString &hostPattern, const QString &keyFile)
{
    QFile pub(path(keyFile));
    if (!pub.open(QIODevice::ReadOnly))
        return {};
    QFile out(path(name));
    if (!out.open(QIODevice::WriteOnly))
        return {};
    out.write("# pinned for the test\n");
    out.write(hostPattern.toUtf8() + ' ' + pub.readAll());
    return out.fileName();
}

QString SshServer::knownHosts()
{
    return writeKnownHosts(u"known_hosts"_s, u"[127.0.0.1]:%1"_s.arg(m_port), u"host_ed25519.pub"_s);
}

QByteArray SshServer::knownHostsLine() const
{
    QFile pub(path(u"host_ed25519.pub"_s));
    if (!pub.open(QIODevice::ReadOnly))
        return {};
    return u"[127.0.0.1]:%1 "_s.arg(m_port).toUtf8() + pub.readAll();
}

QString SshServer::keygen(const QString &name)
{
    QProcess keygen;
    keygen.setProcessChannelMode(QProcess::MergedChannels);
    keygen.start(u"ssh-keygen"_s,
                 {u"-q"_s, u"-t"_s, u"ed25519"_s, u"-N"_s, QString(), u"-C"_s, u"pando-test"_s, u"-f"_s, path(name)});
    if (!keygen.waitForFinished(20000) || keygen.exitStatus() != QProcess::NormalExit || keygen.exitCode() != 0)
        return u"ssh-keygen failed: "_s + QString::fromUtf8(keygen.readAll());
    return {};
}

bool sshAvailable()
{
    return QFileInfo::exists(u"/usr/sbin/sshd"_s) && !QStandardPaths::findExecutable(u"ssh-keygen"_s).isEmpty() &&
           !QStandardPaths::findExecutable(u"git-upload-pack"_s).isEmpty();
}

} // namespace pando::test
