#include "testpki.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

QString run(const QString &openssl, const QStringList &args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(openssl, args);
    if (!p.waitForFinished(60'000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return u"openssl "_s + args.first() + u" failed: "_s + QString::fromUtf8(p.readAll());
    return {};
}

} // namespace

TestPki makeTestPki(const QString &dirPath)
{
    TestPki pki;
    const QString openssl = QStandardPaths::findExecutable(u"openssl"_s);
    if (openssl.isEmpty()) {
        pki.error = u"the openssl command is not installed"_s;
        return pki;
    }
    const QDir dir(dirPath);
    pki.caCert = dir.filePath(u"ca.pem"_s);
    pki.serverCert = dir.filePath(u"server.pem"_s);
    pki.serverKey = dir.filePath(u"server.key"_s);
    const QString caKey = dir.filePath(u"ca.key"_s), csr = dir.filePath(u"server.csr"_s),
                  ext = dir.filePath(u"server.ext"_s);
    QFile extFile(ext);
    if (!extFile.open(QIODevice::WriteOnly)) {
        pki.error = u"cannot write "_s + ext;
        return pki;
    }
    extFile.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
                  "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n");
    extFile.close();
    const QList<QStringList> steps = {
        {u"req"_s, u"-x509"_s, u"-newkey"_s, u"rsa:2048"_s, u"-nodes"_s, u"-keyout"_s, caKey, u"-out"_s, pki.caCert,
         u"-days"_s, u"2"_s, u"-subj"_s, u"/CN=Pando Test CA"_s},
        {u"req"_s, u"-newkey"_s, u"rsa:2048"_s, u"-nodes"_s, u"-keyout"_s, pki.serverKey, u"-out"_s, csr, u"-subj"_s,
         u"/CN=localhost"_s},
        {u"x509"_s, u"-req"_s, u"-in"_s, csr, u"-CA"_s, pki.caCert, u"-CAkey"_s, caKey, u"-CAcreateserial"_s, u"-out"_s,
         pki.serverCert, u"-days"_s, u"2"_s, u"-extfile"_s, ext},
    };
    for (const QStringList &args : steps) {
        pki.error = run(openssl, args);
        if (!pki.error.isEmpty())
            return pki;
    }
    return pki;
}

} // namespace pando::test
