#include "tests/support/pebble.h"
#include "tests/support/ports.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QThread>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

bool answers(int port)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(port));
    return socket.waitForConnected(200);
}

} // namespace

bool Pebble::available(QString *why)
{
    for (const QString &tool : {u"pebble"_s, u"pebble-challtestsrv"_s, u"openssl"_s, u"curl"_s})
        if (QStandardPaths::findExecutable(tool).isEmpty()) {
            if (why)
                *why = tool + u" is not installed (Debian's pebble, openssl and curl packages)"_s;
            return false;
        }
    return true;
}

Pebble::Pebble(PebbleOptions options) : m_options(std::move(options))
{}

Pebble::~Pebble()
{
    stop();
}

void Pebble::stop()
{
    for (auto *process : {m_pebble.get(), m_dns.get()}) {
        if (process && process->state() != QProcess::NotRunning) {
            process->kill();
            process->waitForFinished(5000);
        }
    }
}

QString Pebble::directoryUrl() const
{
    return u"https://127.0.0.1:%1/dir"_s.arg(m_acmePort);
}

QString Pebble::listenerRootFile() const
{
    return m_dir.filePath(u"listener.pem"_s);
}

bool Pebble::start()
{
    // The ACME directory's own certificate, for 127.0.0.1.
    QProcess openssl;
    openssl.start(u"openssl"_s,
                  {u"req"_s, u"-x509"_s, u"-newkey"_s, u"ec"_s, u"-pkeyopt"_s, u"ec_paramgen_curve:prime256v1"_s,
                   u"-nodes"_s, u"-days"_s, u"2"_s, u"-subj"_s, u"/CN=pebble test listener"_s, u"-addext"_s,
                   u"subjectAltName=IP:127.0.0.1,DNS:localhost"_s, u"-keyout"_s, m_dir.filePath(u"listener-key.pem"_s),
                   u"-out"_s, listenerRootFile()});
    if (!openssl.waitForFinished(30000) || openssl.exitCode() != 0) {
        m_error =
            u"openssl could not make Pebble's certificate: "_s + QString::fromUtf8(openssl.readAllStandardError());
        return false;
    }

    const int dnsPort = unusedPort();
    const int dnsManagement = unusedPort();
    m_dns = std::make_unique<QProcess>();
    m_dns->setProcessChannelMode(QProcess::MergedChannels);
    m_dns->start(u"pebble-challtestsrv"_s,
                 {u"-dns01"_s, u"127.0.0.1:%1"_s.arg(dnsPort), u"-http01"_s, QString(), u"-https01"_s, QString(),
                  u"-tlsalpn01"_s, QString(), u"-management"_s, u"127.0.0.1:%1"_s.arg(dnsManagement), u"-defaultIPv4"_s,
                  u"127.0.0.1"_s, u"-defaultIPv6"_s, QString()});

    m_acmePort = unusedPort();
    m_managementPort = unusedPort();
    QJsonObject pebble{{u"listenAddress"_s, u"127.0.0.1:%1"_s.arg(m_acmePort)},
                       {u"managementListenAddress"_s, u"127.0.0.1:%1"_s.arg(m_managementPort)},
                       {u"certificate"_s, listenerRootFile()},
                       {u"privateKey"_s, m_dir.filePath(u"listener-key.pem"_s)},
                       {u"httpPort"_s, m_options.httpPort},
                       {u"tlsPort"_s, m_options.tlsPort},
                       {u"ocspResponderURL"_s, QString()},
                       {u"externalAccountBindingRequired"_s, false},
                       {u"domainBlocklist"_s, QJsonArray::fromStringList(m_options.refuse)}};
    if (m_options.validitySeconds > 0)
        pebble.insert(u"certificateValidityPeriod"_s, m_options.validitySeconds);
    QFile config(m_dir.filePath(u"pebble.json"_s));
    if (!config.open(QIODevice::WriteOnly) ||
        config.write(QJsonDocument(QJsonObject{{u"pebble"_s, pebble}}).toJson()) < 0) {
        m_error = u"cannot write Pebble's configuration"_s;
        return false;
    }
    config.close();
    m_pebble = std::make_unique<QProcess>();
    m_pebble->setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"PEBBLE_VA_NOSLEEP"_s, u"1"_s); // validate at once
    // Only the nonces a test asks for are refused on purpose.
    env.insert(u"PEBBLE_WFE_NONCEREJECT"_s, QString::number(m_options.nonceRejectPercent));
    m_pebble->setProcessEnvironment(env);
    m_pebble->start(u"pebble"_s, {u"-config"_s, config.fileName(), u"-dnsserver"_s, u"127.0.0.1:%1"_s.arg(dnsPort)});

    QElapsedTimer timer;
    timer.start();
    while (!answers(m_acmePort) || !answers(dnsManagement)) {
        if (timer.elapsed() > 15000 || m_pebble->state() == QProcess::NotRunning ||
            m_dns->state() == QProcess::NotRunning) {
            m_error = u"Pebble did not start: "_s + QString::fromUtf8(m_pebble->readAll() + m_dns->readAll());
            return false;
        }
        QThread::msleep(50);
    }
    return true;
}

QString Pebble::issuingRootFile()
{
    const QString file = m_dir.filePath(u"issuing-root.pem"_s);
    QProcess curl;
    curl.start(u"curl"_s, {u"-sS"_s, u"--max-time"_s, u"10"_s, u"--cacert"_s, listenerRootFile(), u"-o"_s, file,
                           u"https://127.0.0.1:%1/roots/0"_s.arg(m_managementPort)});
    if (!curl.waitForFinished(15000) || curl.exitCode() != 0) {
        m_error = u"Pebble's root could not be fetched: "_s + QString::fromUtf8(curl.readAllStandardError());
        return {};
    }
    return file;
}

} // namespace pando::test
