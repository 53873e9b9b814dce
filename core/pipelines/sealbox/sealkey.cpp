#include "core/pipelines/sealbox/sealkey.h"

#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::core::pipelines {

namespace {

QString deriveId(const unsigned char *material)
{
    // A label keeps this hash from equalling any other hash of the key someone might publish.
    static const char label[] = "pando-seal-key-id\n";
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
              EVP_DigestUpdate(ctx, label, sizeof label - 1) == 1 &&
              EVP_DigestUpdate(ctx, material, SealKey::kSize) == 1 && EVP_DigestFinal_ex(ctx, digest, &len) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return {};
    return QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(digest), 8).toHex());
}

QString errnoText(int err)
{
    return QString::fromLocal8Bit(std::strerror(err));
}

// Closes the descriptor whatever path the function leaves by.
struct Fd {
    int fd = -1;
    ~Fd()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

} // namespace

SealKey::~SealKey()
{
    OPENSSL_cleanse(m_material.data(), m_material.size());
}

Result<SealKey> SealKey::generate()
{
    SealKey key;
    if (RAND_bytes(key.m_material.data(), kSize) != 1)
        return fail(ErrorCode::Internal, QStringLiteral("OpenSSL's random generator failed to make a sealing key"));
    key.m_id = deriveId(key.m_material.data());
    if (key.m_id.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("could not hash the sealing key to name it"));
    return key;
}

Result<SealKey> SealKey::fromBytes(QByteArrayView material)
{
    if (material.size() != kSize)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("a sealing key is %1 bytes, this one is %2").arg(kSize).arg(material.size()));
    SealKey key;
    std::memcpy(key.m_material.data(), material.data(), kSize);
    key.m_id = deriveId(key.m_material.data());
    if (key.m_id.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("could not hash the sealing key to name it"));
    return key;
}

namespace keyfile {

Result<SealKey> create(const QString &path)
{
    auto key = SealKey::generate();
    if (!key)
        return std::unexpected(key.error());
    const QByteArray native = QFile::encodeName(path);
    Fd file{::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
    if (file.fd < 0) {
        const int err = errno;
        return fail(err == EEXIST ? ErrorCode::Conflict : ErrorCode::Unavailable,
                    QStringLiteral("cannot create the sealing key file: %1").arg(errnoText(err)), path,
                    err == EEXIST ? QStringLiteral("a key file is never overwritten; load it or move it away first")
                                  : QString());
    }
    // The umask can only take permissions away, but be explicit: owner read/write, nothing else.
    auto undo = [&](const QString &what, int err) {
        ::unlink(native.constData());
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("cannot %1 the sealing key file: %2").arg(what, errnoText(err)), path);
    };
    if (::fchmod(file.fd, 0600) != 0)
        return undo(QStringLiteral("restrict"), errno);
    const unsigned char *p = key->material();
    int left = SealKey::kSize;
    while (left > 0) {
        const ssize_t n = ::write(file.fd, p, size_t(left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return undo(QStringLiteral("write"), n < 0 ? errno : EIO);
        p += n;
        left -= int(n);
    }
    if (::fsync(file.fd) != 0)
        return undo(QStringLiteral("sync"), errno);
    // Make the new name durable too, so a crash cannot leave sealed rows with no key file.
    const QByteArray dir = QFile::encodeName(QFileInfo(path).absolutePath());
    Fd dirFd{::open(dir.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (dirFd.fd >= 0)
        ::fsync(dirFd.fd);
    return key;
}

Result<SealKey> load(const QString &path)
{
    const QByteArray native = QFile::encodeName(path);
    Fd file{::open(native.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) {
        const int err = errno;
        if (err == ELOOP)
            return fail(ErrorCode::Forbidden,
                        QStringLiteral("the sealing key file is a symlink; it must be the file itself"), path);
        return fail(err == ENOENT ? ErrorCode::NotFound : ErrorCode::Unavailable,
                    QStringLiteral("cannot open the sealing key file: %1").arg(errnoText(err)), path);
    }
    struct stat st {};
    if (::fstat(file.fd, &st) != 0)
        return fail(ErrorCode::Unavailable,
                    QStringLiteral("cannot stat the sealing key file: %1").arg(errnoText(errno)), path);
    if (!S_ISREG(st.st_mode))
        return fail(ErrorCode::Invalid, QStringLiteral("the sealing key file is not a regular file"), path);
    if ((st.st_mode & 077) != 0)
        return fail(
            ErrorCode::Forbidden,
            QStringLiteral("the sealing key file can be accessed by group or others (mode %1)")
                .arg(QString::number(st.st_mode & 0777, 8)),
            path,
            QStringLiteral("run: chmod 600 '%1' (and consider the key leaked if others could read it)").arg(path));
    if (st.st_size != SealKey::kSize)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("the sealing key file holds %1 bytes; a key is exactly %2")
                        .arg(st.st_size)
                        .arg(SealKey::kSize),
                    path);
    std::array<unsigned char, SealKey::kSize + 1> buffer{};
    int got = 0;
    // Read one byte more than a key: a file that grew after fstat is refused too.
    while (got < int(buffer.size())) {
        const ssize_t n = ::read(file.fd, buffer.data() + got, buffer.size() - size_t(got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            OPENSSL_cleanse(buffer.data(), buffer.size());
            return fail(ErrorCode::Unavailable,
                        QStringLiteral("cannot read the sealing key file: %1").arg(errnoText(errno)), path);
        }
        if (n == 0)
            break;
        got += int(n);
    }
    auto key = got == SealKey::kSize
                   ? SealKey::fromBytes(QByteArrayView(reinterpret_cast<const char *>(buffer.data()), SealKey::kSize))
                   : Result<SealKey>(fail(ErrorCode::Invalid,
                                          QStringLiteral("the sealing key file changed size while being read"), path));
    OPENSSL_cleanse(buffer.data(), buffer.size());
    if (!key && key.error().where.isEmpty())
        key.error().where = path;
    return key;
}

Result<SealKey> loadOrCreate(const QString &path)
{
    auto loaded = load(path);
    if (loaded || loaded.error().code != ErrorCode::NotFound)
        return loaded;
    auto created = create(path);
    // Another process may have created it between the two calls: then use theirs.
    if (!created && created.error().code == ErrorCode::Conflict)
        return load(path);
    return created;
}

} // namespace keyfile

} // namespace pando::core::pipelines
