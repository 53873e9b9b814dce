#include "core/pipelines/blobstore/blobstore.h"

#include "core/pipelines/compress/compress.h"
#include "core/pipelines/wire/treefs.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::core {

namespace {

using detail::errnoText;

// Reads a blob and checks, at its end, that it hashes to its id.
class VerifyingReader : public QIODevice {
public:
    VerifyingReader(int fd, QString id) : m_fd(fd), m_id(std::move(id))
    {
        open(QIODevice::ReadOnly | QIODevice::Unbuffered);
    }
    ~VerifyingReader() override { ::close(m_fd); }
    bool isSequential() const override { return true; }

protected:
    qint64 readData(char *data, qint64 maxlen) override
    {
        if (m_failed)
            return -1;
        if (m_done || maxlen <= 0)
            return 0;
        ssize_t n;
        do {
            n = ::read(m_fd, data, size_t(maxlen));
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
            m_failed = true;
            setErrorString(QStringLiteral("cannot read blob %1: %2").arg(m_id, errnoText(errno)));
            return -1;
        }
        if (n == 0) {
            m_done = true;
            const QString actual = QString::fromLatin1(m_hash.result().toHex());
            if (actual != m_id) {
                m_failed = true;
                setErrorString(QStringLiteral("blob %1 is corrupt: its content hashes to %2").arg(m_id, actual));
                return -1;
            }
            return 0;
        }
        m_hash.addData(QByteArrayView(data, n));
        return n;
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    int m_fd;
    QString m_id;
    QCryptographicHash m_hash{QCryptographicHash::Sha256};
    bool m_done = false;
    bool m_failed = false;
};

} // namespace

BlobWriter::BlobWriter(QString storeRoot, int fd, QByteArray tmpPath)
    : m_root(std::move(storeRoot)), m_fd(fd), m_tmpPath(std::move(tmpPath))
{
    QIODevice::open(QIODevice::WriteOnly | QIODevice::Unbuffered);
}

BlobWriter::~BlobWriter()
{
    discard();
}

void BlobWriter::discard()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
        ::unlink(m_tmpPath.constData());
    }
}

qint64 BlobWriter::writeData(const char *data, qint64 len)
{
    if (m_fd < 0) {
        setErrorString(QStringLiteral("the blob was already committed"));
        return -1;
    }
    qint64 done = 0;
    while (done < len) {
        const ssize_t n = ::write(m_fd, data + done, size_t(len - done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            setErrorString(QStringLiteral("cannot write blob: ") + errnoText(errno));
            return -1;
        }
        done += n;
    }
    m_hash.addData(QByteArrayView(data, len));
    m_size += len;
    return len;
}

Result<QString> BlobWriter::commit()
{
    if (m_fd < 0)
        return fail(ErrorCode::Internal, QStringLiteral("the blob was already committed or discarded"), m_root);
    const QString id = QString::fromLatin1(m_hash.result().toHex());
    // Durable before visible: a crash must not leave a short file under a valid id.
    if (::fsync(m_fd) != 0) {
        const int err = errno;
        discard();
        return fail(ErrorCode::Failed, QStringLiteral("cannot sync blob: ") + errnoText(err), m_root);
    }
    ::fchmod(m_fd, 0444);
    ::close(m_fd);
    m_fd = -1;
    const QString dir = m_root + QStringLiteral("/blobs/") + id.left(2);
    if (::mkdir(QFile::encodeName(dir).constData(), 0755) != 0 && errno != EEXIST) {
        const int err = errno;
        ::unlink(m_tmpPath.constData());
        return fail(ErrorCode::Failed, QStringLiteral("cannot create blob directory: ") + errnoText(err), dir);
    }
    const QByteArray target = QFile::encodeName(dir + u'/' + id);
    // The same content already stored is the same blob: keep the one there.
    if (::renameat2(AT_FDCWD, m_tmpPath.constData(), AT_FDCWD, target.constData(), RENAME_NOREPLACE) != 0) {
        const int err = errno;
        ::unlink(m_tmpPath.constData());
        if (err != EEXIST)
            return fail(ErrorCode::Failed, QStringLiteral("cannot move blob into place: ") + errnoText(err),
                        QFile::decodeName(target));
    }
    QIODevice::close();
    return id;
}

BlobStore::BlobStore(QString root) : m_root(std::move(root))
{}

bool BlobStore::isValidId(const QString &id)
{
    if (id.size() != 64)
        return false;
    for (QChar c : id) {
        if (!((c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f')))
            return false;
    }
    return true;
}

QString BlobStore::blobPath(const QString &id) const
{
    return m_root + QStringLiteral("/blobs/") + id.left(2) + u'/' + id;
}

Status BlobStore::ensureDirs() const
{
    for (const QString &sub : {QStringLiteral("/blobs"), QStringLiteral("/tmp")}) {
        if (!QDir().mkpath(m_root + sub))
            return fail(ErrorCode::Failed, QStringLiteral("cannot create the blob store's directory"), m_root + sub);
    }
    return {};
}

Result<std::unique_ptr<BlobWriter>> BlobStore::writer() const
{
    if (auto st = ensureDirs(); !st)
        return std::unexpected(st.error());
    QByteArray tmpl = QFile::encodeName(m_root + QStringLiteral("/tmp/put-XXXXXX"));
    const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0)
        return fail(ErrorCode::Failed, QStringLiteral("cannot create a temp file: ") + errnoText(errno), m_root);
    return std::unique_ptr<BlobWriter>(new BlobWriter(m_root, fd, tmpl));
}

Result<QString> BlobStore::put(QIODevice *in, const CancelToken &cancel) const
{
    auto w = writer();
    if (!w)
        return std::unexpected(w.error());
    QByteArray buf(256LL * 1024, Qt::Uninitialized);
    const WireSource source = deviceSource(in);
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, QStringLiteral("the put was cancelled"), m_root);
        auto n = source(buf.data(), buf.size());
        if (!n)
            return std::unexpected(n.error());
        if (*n == 0)
            break;
        if ((*w)->write(buf.constData(), *n) != *n)
            return fail(ErrorCode::Failed, (*w)->errorString(), m_root);
    }
    return (*w)->commit();
}

Result<QString> BlobStore::put(QByteArrayView data) const
{
    auto w = writer();
    if (!w)
        return std::unexpected(w.error());
    if ((*w)->write(data.data(), data.size()) != data.size())
        return fail(ErrorCode::Failed, (*w)->errorString(), m_root);
    return (*w)->commit();
}

bool BlobStore::has(const QString &id) const
{
    return isValidId(id) && QFileInfo::exists(blobPath(id));
}

Result<QString> BlobStore::path(const QString &id) const
{
    if (!isValidId(id))
        return fail(ErrorCode::Invalid, QStringLiteral("not a blob id (64 lowercase hex digits)"), id);
    const QString p = blobPath(id);
    if (!QFileInfo::exists(p))
        return fail(ErrorCode::NotFound, QStringLiteral("no such blob in %1").arg(m_root), id);
    return p;
}

Result<std::unique_ptr<QIODevice>> BlobStore::open(const QString &id) const
{
    auto p = path(id);
    if (!p)
        return std::unexpected(p.error());
    const int fd = ::open(QFile::encodeName(*p).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return fail(errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Failed,
                    QStringLiteral("cannot open blob: ") + errnoText(errno), id);
    return std::unique_ptr<QIODevice>(new VerifyingReader(fd, id));
}

Result<QByteArray> BlobStore::read(const QString &id) const
{
    auto dev = open(id);
    if (!dev)
        return std::unexpected(dev.error());
    QByteArray all;
    QByteArray buf(256LL * 1024, Qt::Uninitialized);
    for (;;) {
        const qint64 n = (*dev)->read(buf.data(), buf.size());
        if (n < 0)
            return fail(ErrorCode::Failed, (*dev)->errorString(), id);
        if (n == 0)
            return all;
        all.append(buf.constData(), n);
    }
}

Result<qint64> BlobStore::size(const QString &id) const
{
    auto p = path(id);
    if (!p)
        return std::unexpected(p.error());
    return QFileInfo(*p).size();
}

Status BlobStore::remove(const QString &id) const
{
    if (!isValidId(id))
        return fail(ErrorCode::Invalid, QStringLiteral("not a blob id (64 lowercase hex digits)"), id);
    if (::unlink(QFile::encodeName(blobPath(id)).constData()) != 0) {
        if (errno == ENOENT)
            return fail(ErrorCode::NotFound, QStringLiteral("no such blob in %1").arg(m_root), id);
        return fail(ErrorCode::Failed, QStringLiteral("cannot remove blob: ") + errnoText(errno), id);
    }
    return {};
}

Result<qint64> BlobStore::totalSize() const
{
    qint64 total = 0;
    QDirIterator it(m_root + QStringLiteral("/blobs"), QDir::Files | QDir::NoSymLinks | QDir::Hidden,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        total += it.fileInfo().size();
    }
    return total;
}

Result<BlobGcStats> BlobStore::gc(const QSet<QString> &keep, qint64 tmpMaxAgeMs) const
{
    BlobGcStats stats;
    QDirIterator it(m_root + QStringLiteral("/blobs"), QDir::Files | QDir::System | QDir::Hidden,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        const QFileInfo info = it.fileInfo();
        const qint64 size = info.size();
        if (keep.contains(info.fileName())) {
            ++stats.kept;
            stats.keptBytes += size;
            continue;
        }
        if (::unlink(QFile::encodeName(info.filePath()).constData()) != 0 && errno != ENOENT)
            return fail(ErrorCode::Failed, QStringLiteral("cannot remove blob: ") + errnoText(errno), info.filePath());
        ++stats.removed;
        stats.removedBytes += size;
    }
    // A put in progress owns its temp file; only ones a dead process left behind are old.
    const QDateTime cutoff = QDateTime::currentDateTimeUtc().addMSecs(-tmpMaxAgeMs);
    QDirIterator tmp(m_root + QStringLiteral("/tmp"), QDir::Files | QDir::System | QDir::Hidden);
    while (tmp.hasNext()) {
        tmp.next();
        if (tmp.fileInfo().lastModified().toUTC() < cutoff)
            ::unlink(QFile::encodeName(tmp.filePath()).constData());
    }
    return stats;
}

Result<QString> BlobStore::storeTree(const QString &dir, const CancelToken &cancel) const
{
    auto w = writer();
    if (!w)
        return std::unexpected(w.error());
    ZstdCompressDevice zstd(w->get());
    if (auto st = packTree(dir, &zstd, cancel); !st)
        return std::unexpected(st.error());
    if (auto st = zstd.finish(); !st)
        return std::unexpected(st.error());
    return (*w)->commit();
}

Result<UnpackStats> BlobStore::restoreTree(const QString &id, const QString &dest, const WireLimits &limits,
                                           const CancelToken &cancel) const
{
    auto blob = open(id);
    if (!blob)
        return std::unexpected(blob.error());
    // The tar around the content: headers, pax records and padding, a few KiB per entry at most.
    qint64 overhead = 0;
    qint64 maxOutput = 0;
    if (__builtin_mul_overflow(limits.maxEntries, qint64(4096), &overhead) ||
        __builtin_add_overflow(limits.maxTotalBytes, overhead + (1 << 20), &maxOutput))
        maxOutput = std::numeric_limits<qint64>::max();
    ZstdDecompressDevice zstd(blob->get(), maxOutput);
    auto stats = unpackTree(&zstd, dest, limits, cancel);
    if (!stats) {
        Error e = stats.error();
        if (e.where.isEmpty())
            e.where = id;
        return std::unexpected(e);
    }
    return stats;
}

} // namespace pando::core
