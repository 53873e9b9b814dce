#pragma once
// A real OpenSSH server on loopback for git-over-ssh tests, run as a child with its own host key,
// client key and configuration in a temporary directory. git-upload-pack is found on the
// session's PATH.

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

namespace pando::test {

class SshServer {
public:
    ~SshServer() { stop(); }

    // Empty on success, else why the server could not be started.
    QString start(quint16 port);
    void stop();

    QString path(const QString &name) const { return m_dir.filePath(name); }
    QString log() { return QString::fromUtf8(m_process.readAll()); }
    quint16 port() const { return m_port; }

    // A known_hosts file listing this server's host key under hostPattern.
    QString writeKnownHosts(const QString &name, const QString &hostPattern, const QString &keyFile);
    // The one listing it as "[127.0.0.1]:port".
    QString knownHosts();
    // A known_hosts line for this server ("[127.0.0.1]:port ssh-ed25519 …"), as ssh-keyscan prints it.
    QByteArray knownHostsLine() const;

private:
    QString keygen(const QString &name);

    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_port = 0;
};

// A port nothing listens on now (the kernel's pick, released).
// sshd, ssh-keygen and git-upload-pack are installed.
bool sshAvailable();

} // namespace pando::test
