#include "adapters/edgecert/acme/certstore.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSslCertificate>
#include <QSslKey>

using namespace Qt::StringLiterals;

namespace pando::adapters::edgecert {

namespace {

constexpr auto Private = QFile::ReadOwner | QFile::WriteOwner;

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

Status checkStorableHost(const QString &host)
{
    static const QRegularExpression name(u"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$"_s);
    if (host.size() > 253 || !name.match(host).hasMatch())
        return fail(ErrorCode::Invalid, u"%1 is not a DNS name an ACME CA certifies by HTTP-01"_s.arg(host), u"host"_s);
    return {};
}

CertStore::CertStore(const QString &dir) : m_dir(QDir(dir).absolutePath())
{}

Status CertStore::prepare() const
{
    if (!QDir().mkpath(m_dir) || !QFile::setPermissions(m_dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
        return fail(ErrorCode::Internal, u"cannot make the certificates' directory %1 private"_s.arg(m_dir));
    return {};
}

QString CertStore::file(const QString &host, const char *suffix) const
{
    return QDir(m_dir).filePath(host + QLatin1String(suffix));
}

Status CertStore::write(const QString &path, const QByteArray &content) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(Private) || file.write(content) != content.size() ||
        !file.commit())
        return fail(ErrorCode::Internal, u"cannot write %1: %2"_s.arg(path, file.errorString()));
    return {};
}

Result<jose::EcKey> CertStore::accountKey() const
{
    const QString path = QDir(m_dir).filePath(u"account.key"_s);
    if (QFile::exists(path)) {
        auto key = jose::EcKey::fromPem(readAll(path));
        if (!key)
            return fail(ErrorCode::Internal, u"the ACME account key %1 %2"_s.arg(path, key.error().message), QString(),
                        u"move the file away to make a new account"_s);
        return key;
    }
    auto key = jose::EcKey::generate();
    if (!key)
        return key;
    if (auto written = write(path, key->privatePem()); !written)
        return std::unexpected(written.error());
    return key;
}

QString CertStore::accountUrl(const QString &directory) const
{
    const QJsonObject account = QJsonDocument::fromJson(readAll(QDir(m_dir).filePath(u"account.json"_s))).object();
    return account.value("directory"_L1).toString() == directory ? account.value("url"_L1).toString() : QString();
}

Status CertStore::setAccountUrl(const QString &directory, const QString &url) const
{
    return write(QDir(m_dir).filePath(u"account.json"_s),
                 QJsonDocument(QJsonObject{{"directory"_L1, directory}, {"url"_L1, url}}).toJson());
}

std::optional<HeldCertificate> CertStore::held(const QString &host) const
{
    if (!checkStorableHost(host))
        return std::nullopt;
    HeldCertificate held;
    held.chainPem = readAll(file(host, ".crt"));
    held.keyPem = readAll(file(host, ".key"));
    const QList<QSslCertificate> chain = QSslCertificate::fromData(held.chainPem, QSsl::Pem);
    if (chain.isEmpty() || QSslKey(held.keyPem, QSsl::Ec).isNull())
        return std::nullopt;
    held.notBefore = chain.first().effectiveDate();
    held.notAfter = chain.first().expiryDate();
    held.issuer = certificateStateOf(host, held.chainPem).issuer;
    return held;
}

Status CertStore::keep(const QString &host, const QByteArray &chainPem, const QByteArray &keyPem) const
{
    if (auto ok = checkStorableHost(host); !ok)
        return ok;
    // The key first: a chain is only ever read beside the key it was issued for, or not at all.
    QFile::remove(file(host, ".crt"));
    if (auto written = write(file(host, ".key"), keyPem); !written)
        return written;
    if (auto written = write(file(host, ".crt"), chainPem); !written)
        return written;
    QFile::remove(file(host, ".json"));
    return {};
}

std::optional<LastError> CertStore::lastError(const QString &host) const
{
    if (!checkStorableHost(host))
        return std::nullopt;
    const QJsonObject entry = QJsonDocument::fromJson(readAll(file(host, ".json"))).object();
    if (entry.value("error"_L1).toString().isEmpty())
        return std::nullopt;
    return LastError{entry.value("error"_L1).toString(),
                     QDateTime::fromString(entry.value("at"_L1).toString(), Qt::ISODateWithMs)};
}

Status CertStore::recordError(const QString &host, const QString &error, const QDateTime &at) const
{
    if (auto ok = checkStorableHost(host); !ok)
        return ok;
    return write(
        file(host, ".json"),
        QJsonDocument(QJsonObject{{"error"_L1, error}, {"at"_L1, at.toUTC().toString(Qt::ISODateWithMs)}}).toJson());
}

} // namespace pando::adapters::edgecert
