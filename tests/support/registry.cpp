#include "tests/support/registry.h"

#include "tests/support/httpbackend.h"

#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QThread>
#include <crypt.h>

using namespace Qt::StringLiterals;

namespace pando::test {

bool ImageRegistry::available(QString *why)
{
    if (!QStandardPaths::findExecutable(u"docker-registry"_s).isEmpty())
        return true;
    if (why)
        *why = u"docker-registry is not installed (Debian package docker-registry)"_s;
    return false;
}

ImageRegistry::~ImageRegistry()
{
    stop();
}

QString ImageRegistry::host() const
{
    return u"127.0.0.1:%1"_s.arg(m_port);
}

bool ImageRegistry::start()
{
    if (!m_dir.isValid()) {
        m_error = u"no temporary directory"_s;
        return false;
    }
    if (m_port == 0)
        m_port = unusedPort();
    QString auth;
    if (!m_user.isEmpty()) {
        // The registry reads bcrypt hashes only; libcrypt makes them.
        crypt_data data{};
        const char *salt = crypt_gensalt_rn("$2b$", 5, nullptr, 0, data.setting, sizeof data.setting);
        const char *hash = salt ? crypt_r(m_password.toUtf8().constData(), salt, &data) : nullptr;
        QFile htpasswd(m_dir.filePath(u"htpasswd"_s));
        if (!hash || hash[0] == '*' || !htpasswd.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            htpasswd.write(m_user.toUtf8() + ':' + QByteArray(hash) + '\n') < 0) {
            m_error = u"cannot write the registry's htpasswd file"_s;
            return false;
        }
        auth = u"auth:\n  htpasswd:\n    realm: pando-test\n    path: %1\n"_s.arg(htpasswd.fileName());
    }
    QFile config(m_dir.filePath(u"config.yml"_s));
    if (!config.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        config.write(u"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %1\n"
                     "  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%2\n%3"_s.arg(m_dir.filePath(u"data"_s))
                         .arg(m_port)
                         .arg(auth)
                         .toUtf8()) < 0) {
        m_error = u"cannot write the registry's configuration: "_s + config.errorString();
        return false;
    }
    config.close();
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->start(u"docker-registry"_s, {u"serve"_s, config.fileName()});
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, quint16(m_port));
        if (socket.waitForConnected(200))
            return true;
        if (timer.elapsed() > 15000 || m_process->state() == QProcess::NotRunning) {
            m_error = u"docker-registry did not start: "_s + QString::fromUtf8(m_process->readAll());
            return false;
        }
        QThread::msleep(50);
    }
}

void ImageRegistry::stop()
{
    if (!m_process || m_process->state() == QProcess::NotRunning)
        return;
    m_process->terminate();
    if (!m_process->waitForFinished(5000)) {
        m_process->kill();
        m_process->waitForFinished(5000);
    }
}

} // namespace pando::test
