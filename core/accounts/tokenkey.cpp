#include "tokenkey.h"

#include <QFile>
#include <QFileInfo>
#include <QMessageAuthenticationCode>
#include <QRandomGenerator>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::core::detail {

namespace {
QByteArray randomBytes(int n)
{
    QByteArray bytes(n, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), n / 4);
    return bytes;
}
} // namespace

Status writePrivateFile(const QString &path, const QByteArray &data)
{
    const QByteArray native = QFile::encodeName(path);
    const int fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return fail(ErrorCode::Internal,
                    QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(strerror(errno))));
    ::fchmod(fd, 0600);
    qsizetype written = 0;
    while (written < data.size()) {
        const ssize_t n = ::write(fd, data.constData() + written, size_t(data.size() - written));
        if (n < 0) {
            ::close(fd);
            return fail(ErrorCode::Internal, QStringLiteral("cannot write %1").arg(path));
        }
        written += n;
    }
    ::fsync(fd);
    ::close(fd);
    return {};
}

Result<QByteArray> loadOrCreateKey(const QString &path)
{
    QFile file(path);
    if (file.exists()) {
        if (!file.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Internal, QStringLiteral("cannot read the token key %1").arg(path));
        const QByteArray key = file.readAll();
        if (key.size() < 32)
            return fail(ErrorCode::Internal, QStringLiteral("the token key %1 is too short").arg(path), {},
                        QStringLiteral("restore it from a backup; every API token depends on it"));
        return key;
    }
    const QByteArray key = randomBytes(32);
    if (auto written = writePrivateFile(path, key); !written)
        return std::unexpected(written.error());
    return key;
}

QString tokenDigest(const QByteArray &key, const QString &secret)
{
    return QString::fromLatin1(
        QMessageAuthenticationCode::hash(secret.toUtf8(), key, QCryptographicHash::Sha256).toHex());
}

QString newTokenSecret()
{
    return QStringLiteral("pando_") + QString::fromLatin1(randomBytes(32).toBase64(QByteArray::Base64UrlEncoding |
                                                                                   QByteArray::OmitTrailingEquals));
}

} // namespace pando::core::detail
