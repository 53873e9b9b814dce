#include "caddycerts.h"

#include "caddyconfig.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSslCertificate>

using namespace Qt::StringLiterals;

namespace pando::adapters::caddy {

namespace {

constexpr qint64 LogTailBytes = qint64(256) * 1024;

struct Stored {
    QSslCertificate certificate;
    QDateTime written;
};

QString storageName(const QString &host)
{
    QString name = host;
    name.replace(u'*', u"wildcard_"_s);
    return name;
}

// The newest certificate for host among every issuer's.
std::optional<Stored> stored(const QString &storageDir, const QString &host)
{
    const QString name = storageName(host);
    std::optional<Stored> best;
    const QDir issuers(storageDir + u"/certificates"_s);
    for (const QString &issuer : issuers.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString file = issuers.filePath(u"%1/%2/%2.crt"_s.arg(issuer, name));
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QList<QSslCertificate> chain = QSslCertificate::fromData(f.readAll(), QSsl::Pem);
        if (chain.isEmpty())
            continue;
        if (!best || chain.first().expiryDate() > best->certificate.expiryDate())
            best = Stored{chain.first(), QFileInfo(file).lastModified()};
    }
    return best;
}

struct LoggedError {
    QDateTime at;
    QString text;
};

// The last error logged for each name, from the log's tail.
QHash<QString, LoggedError> loggedErrors(const QString &logFile)
{
    QHash<QString, LoggedError> errors;
    QFile f(logFile);
    if (!f.open(QIODevice::ReadOnly))
        return errors;
    if (f.size() > LogTailBytes)
        f.seek(f.size() - LogTailBytes);
    const QList<QByteArray> lines = f.readAll().split('\n');
    for (const QByteArray &line : lines) {
        if (!line.contains("\"identifier\"") || !line.contains("\"error\""))
            continue;
        const QJsonObject entry = QJsonDocument::fromJson(line).object();
        if (entry.value("level"_L1).toString() != u"error")
            continue;
        const QString host = entry.value("identifier"_L1).toString();
        if (host.isEmpty())
            continue;
        const auto at = QDateTime::fromMSecsSinceEpoch(qint64(entry.value("ts"_L1).toDouble() * 1000));
        QString text = entry.value("error"_L1).toString();
        if (text.isEmpty())
            text = entry.value("msg"_L1).toString();
        errors.insert(host, {at, text});
    }
    return errors;
}

} // namespace

QList<CertificateState> certificateStates(const QString &storageDir, const QString &logFile, const QStringList &hosts)
{
    const QHash<QString, LoggedError> errors = loggedErrors(logFile);
    QList<CertificateState> states;
    for (const QString &host : hosts) {
        CertificateState state;
        state.host = host;
        const std::optional<Stored> found = stored(storageDir, host);
        if (found) {
            const QStringList issuer = found->certificate.issuerInfo(QSslCertificate::CommonName);
            state.issuer = issuer.isEmpty() ? found->certificate.issuerDisplayName() : issuer.first();
            state.notAfter = found->certificate.expiryDate();
        }
        if (auto it = errors.constFind(host); it != errors.constEnd() && (!found || it->at > found->written))
            state.error = it->text;
        states.append(state);
    }
    return states;
}

bool holdsCertificate(const QString &storageDir, const QString &host)
{
    const std::optional<Stored> found = stored(storageDir, host);
    return found && found->certificate.expiryDate() > QDateTime::currentDateTimeUtc();
}

QByteArray installCaRoot(const QString &storageDir)
{
    QFile f(u"%1/pki/authorities/%2/root.crt"_s.arg(storageDir, QLatin1String(InstallCaId)));
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace pando::adapters::caddy
