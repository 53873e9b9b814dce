#pragma once
// Private repositories over git's smart HTTP, served the way a self-hosted forge serves them: git
// http-backend (tests/support/git-http-server.py) behind Debian's Caddy, whose basicauth lets
// through only one user with one token and answers everyone else 401. Caddy runs with its admin
// API off and its state in a temporary directory, so nothing of the machine's own is touched.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>

namespace pando::test {

class PrivateHttpGit {
public:
    ~PrivateHttpGit();

    // Serves the bare repositories below root. Empty on success, else why not.
    QString start(const QString &root, const QString &user, const QByteArray &token);
    quint16 port() const { return m_port; }
    // http://127.0.0.1:PORT/NAME for the bare repository NAME below root.
    QString url(const QString &name) const;
    QString log();

private:
    QTemporaryDir m_dir;
    QProcess m_backend;
    QProcess m_caddy;
    quint16 m_port = 0;
};

// Caddy and python3 are installed.
bool privateHttpGitAvailable();

} // namespace pando::test
