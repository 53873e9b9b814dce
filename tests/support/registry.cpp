#include "tests/support/registry.h"

#include "tests/support/component.h"
#include "tests/support/ports.h"

#include <QElapsedTimer>
#include <QFile>
#include <QHostAddress>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QThread>
#include <crypt.h>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

// Debian's python3, where python3-jwt and python3-cryptography are: a pyenv or venv python3 first
// on PATH may lack them.
const QString Python = u"/usr/bin/python3"_s;
// Who the tokens say issued them; the registry accepts no other.
const QString Issuer = u"pando-test-issuer"_s;

// Waits until process listens on port; false when it ends first or 15 s pass.
bool listening(QProcess &process, int port)
{
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, quint16(port));
        if (socket.waitForConnected(200))
            return true;
        if (timer.elapsed() > 15000 || process.state() == QProcess::NotRunning)
            return false;
        QThread::msleep(50);
    }
}

void end(QProcess *process)
{
    if (!process || process->state() == QProcess::NotRunning)
        return;
    process->terminate();
    if (!process->waitForFinished(5000)) {
        process->kill();
        process->waitForFinished(5000);
    }
}

// What a process that did not start said, or why it could not be run at all.
QString output(QProcess &process)
{
    const QString said = QString::fromUtf8(process.readAll()).trimmed();
    return said.isEmpty() ? process.errorString() : said;
}

} // namespace

bool ImageRegistry::available(QString *why)
{
    if (!QStandardPaths::findExecutable(u"docker-registry"_s).isEmpty())
        return true;
    if (why)
        *why = u"docker-registry is not installed (Debian package docker-registry)"_s;
    return false;
}

bool ImageRegistry::tokenAvailable(QString *why)
{
    if (!available(why))
        return false;
    if (QStandardPaths::findExecutable(u"openssl"_s).isEmpty()) {
        if (why)
            *why = u"openssl is not installed (Debian package openssl)"_s;
        return false;
    }
    QProcess probe;
    probe.start(Python, {u"-c"_s, u"import jwt, cryptography"_s});
    if (probe.waitForFinished(30000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0)
        return true;
    if (why)
        *why = u"%1 cannot import jwt and cryptography (Debian packages python3-jwt and python3-cryptography)"_s.arg(
            Python);
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

QString ImageRegistry::tokenRealm() const
{
    if (m_auth != Auth::Token)
        return {};
    return u"http://127.0.0.1:%1/token"_s.arg(m_tokenPort);
}

QString ImageRegistry::tokenService()
{
    return u"pando-test-registry"_s;
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
    if (m_auth == Auth::Token) {
        // The token server first: the registry names it in its challenges from the first request on.
        if (!startTokenServer())
            return false;
        auth = u"auth:\n  token:\n    realm: %1\n    service: %2\n    issuer: %3\n    rootcertbundle: %4\n"_s.arg(
            tokenRealm(), tokenService(), Issuer, m_dir.filePath(u"token-cert.pem"_s));
    } else if (!m_user.isEmpty()) {
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
    // No access log: it would go to a pipe nobody reads while a test runs, which fills and then
    // blocks the registry after a few hundred requests.
    QFile config(m_dir.filePath(u"config.yml"_s));
    if (!config.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        config.write(u"version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n"
                     "    rootdirectory: %1\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:%2\n%3"_s
                         .arg(m_dir.filePath(u"data"_s))
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
    if (listening(*m_process, m_port))
        return true;
    m_error = u"docker-registry did not start: "_s + output(*m_process);
    return false;
}

bool ImageRegistry::startTokenServer()
{
    const QString key = m_dir.filePath(u"token-key.pem"_s);
    const QString cert = m_dir.filePath(u"token-cert.pem"_s);
    // One signing key for the object's life, so that tokens issued before a restart still hold
    // after it, as with a real registry. The self-signed certificate is both the registry's
    // rootcertbundle and the x5c chain in each token's header, by which the registry finds the key.
    if (!QFile::exists(cert)) {
        QProcess openssl;
        openssl.setProcessChannelMode(QProcess::MergedChannels);
        // P-256 (ES256): made at once, where an RSA key takes a while.
        openssl.start(u"openssl"_s, {u"req"_s, u"-x509"_s, u"-newkey"_s, u"ec"_s, u"-pkeyopt"_s,
                                     u"ec_paramgen_curve:prime256v1"_s, u"-nodes"_s, u"-keyout"_s, key, u"-out"_s, cert,
                                     u"-days"_s, u"2"_s, u"-subj"_s, u"/CN="_s + Issuer});
        if (!openssl.waitForFinished(30000) || openssl.exitStatus() != QProcess::NormalExit ||
            openssl.exitCode() != 0) {
            m_error = u"openssl could not make the token signing key: "_s + output(openssl);
            QFile::remove(cert);
            return false;
        }
    }
    if (m_tokenPort == 0)
        m_tokenPort = unusedPort();
    m_tokenServer = std::make_unique<QProcess>();
    m_tokenServer->setProcessChannelMode(QProcess::MergedChannels);
    m_tokenServer->start(Python, {sourceDir() + u"/tests/support/registrytokenserver.py"_s,
                                  QString::number(m_tokenPort), key, cert, m_user, m_password, Issuer, tokenService()});
    if (listening(*m_tokenServer, m_tokenPort))
        return true;
    m_error = u"the registry's token server did not start: "_s + output(*m_tokenServer);
    return false;
}

int ImageRegistry::tokensIssued() const
{
    if (!m_tokenServer || m_tokenServer->state() == QProcess::NotRunning)
        return -1;
    // Asked over a blocking socket, not read from its output: a test counts without running an
    // event loop, and the count is up to date once the client holds its token.
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(m_tokenPort));
    if (!socket.waitForConnected(5000))
        return -1;
    socket.write("GET /count HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    // HTTP/1.0: the answer ends when the server closes the connection.
    QByteArray answer;
    while (socket.waitForReadyRead(5000))
        answer += socket.readAll();
    answer += socket.readAll();
    const qsizetype body = answer.indexOf("\r\n\r\n");
    if (body < 0)
        return -1;
    const QJsonValue issued = QJsonDocument::fromJson(answer.mid(body + 4)).object().value(u"issued"_s);
    return issued.isDouble() ? issued.toInt() : -1;
}

void ImageRegistry::stop()
{
    end(m_process.get());
    end(m_tokenServer.get());
}

} // namespace pando::test
