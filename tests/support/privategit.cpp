#include "tests/support/privategit.h"

#include "tests/support/component.h"
#include "tests/support/ports.h"
#include "tests/support/sshserver.h"

#include <QFile>
#include <QHostAddress>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTest>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

bool waitListening(QProcess &process, quint16 port)
{
    for (int i = 0; i < 100; ++i) {
        QTcpSocket probe;
        probe.connectToHost(QHostAddress::LocalHost, port);
        if (probe.waitForConnected(100))
            return true;
        if (process.state() != QProcess::Running)
            return false;
        QTest::qWait(100);
    }
    return false;
}

void stop(QProcess &process)
{
    if (process.state() == QProcess::NotRunning)
        return;
    process.terminate();
    if (!process.waitForFinished(3000)) {
        process.kill();
        process.waitForFinished(3000);
    }
}

} // namespace

bool privateHttpGitAvailable()
{
    return !QStandardPaths::findExecutable(u"caddy"_s).isEmpty() &&
           !QStandardPaths::findExecutable(u"python3"_s).isEmpty();
}

PrivateHttpGit::~PrivateHttpGit()
{
    stop(m_caddy);
    stop(m_backend);
}

QString PrivateHttpGit::start(const QString &root, const QString &user, const QByteArray &token)
{
    if (!m_dir.isValid())
        return u"no temporary directory"_s;
    const quint16 backendPort = unusedPort();
    m_port = unusedPort();
    m_backend.setProcessChannelMode(QProcess::MergedChannels);
    m_backend.start(u"python3"_s,
                    {sourceDir() + u"/tests/support/git-http-server.py"_s, QString::number(backendPort), root});
    if (!m_backend.waitForStarted(5000) || !waitListening(m_backend, backendPort))
        return u"the git http-backend server did not start: "_s + QString::fromUtf8(m_backend.readAll());

    // Caddy's own state (and nothing of the machine's) in the temporary directory.
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &name : {u"HOME"_s, u"XDG_DATA_HOME"_s, u"XDG_CONFIG_HOME"_s})
        env.insert(name, m_dir.path());
    // The token reaches caddy on standard input, never in its argv.
    QProcess hash;
    hash.setProcessEnvironment(env);
    hash.start(u"caddy"_s, {u"hash-password"_s});
    hash.write(token + '\n');
    hash.closeWriteChannel();
    if (!hash.waitForFinished(60000) || hash.exitCode() != 0)
        return u"caddy hash-password failed: "_s + QString::fromUtf8(hash.readAllStandardError());
    const QByteArray hashed = hash.readAllStandardOutput().trimmed();
    const QString caddyfile = u"{\n\tadmin off\n\tauto_https off\n}\n"
                              u"http://127.0.0.1:%1 {\n\tbasicauth {\n\t\t%2 %3\n\t}\n"
                              u"\treverse_proxy 127.0.0.1:%4\n}\n"_s.arg(m_port)
                                  .arg(user, QString::fromLatin1(hashed))
                                  .arg(backendPort);
    QFile file(m_dir.filePath(u"Caddyfile"_s));
    if (!file.open(QIODevice::WriteOnly) || file.write(caddyfile.toUtf8()) < 0)
        return u"cannot write the Caddyfile"_s;
    file.close();
    m_caddy.setProcessEnvironment(env);
    m_caddy.setProcessChannelMode(QProcess::MergedChannels);
    m_caddy.start(u"caddy"_s, {u"run"_s, u"--config"_s, file.fileName(), u"--adapter"_s, u"caddyfile"_s});
    if (!m_caddy.waitForStarted(5000) || !waitListening(m_caddy, m_port))
        return u"caddy did not start: "_s + QString::fromUtf8(m_caddy.readAll());
    return {};
}

QString PrivateHttpGit::url(const QString &name) const
{
    return u"http://127.0.0.1:%1/%2"_s.arg(m_port).arg(name);
}

QString PrivateHttpGit::log()
{
    return QString::fromUtf8(m_caddy.readAll() + m_backend.readAll());
}

} // namespace pando::test
