#include "core/pipelines/treedigest/treedigest.h"

#include "core/pipelines/wire/treefs.h"

#include <QCryptographicHash>
#include <QFile>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace pando::core {

namespace {

Result<QByteArray> hashFile(int rootFd, const TreeEntry &entry, const QString &where, const CancelToken &cancel)
{
    UniqueFd fd = detail::openBeneath(rootFd, entry.path, O_RDONLY);
    if (!fd.isValid())
        return fail(ErrorCode::Failed, QStringLiteral("cannot open file: ") + detail::errnoText(errno), where);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    QByteArray buf(256LL * 1024, Qt::Uninitialized);
    for (;;) {
        if (cancel.isCancelled())
            return fail(ErrorCode::Cancelled, QStringLiteral("the tree digest was cancelled"), where);
        const ssize_t n = ::read(fd.get(), buf.data(), size_t(buf.size()));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail(ErrorCode::Failed, QStringLiteral("cannot read file: ") + detail::errnoText(errno), where);
        }
        if (n == 0)
            break;
        hash.addData(QByteArrayView(buf.constData(), n));
    }
    return hash.result().toHex();
}

} // namespace

Result<QByteArray> treeManifest(const QString &dir, const CancelToken &cancel)
{
    auto entries = walkTree(dir);
    if (!entries)
        return std::unexpected(entries.error());
    UniqueFd rootFd(::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!rootFd.isValid())
        return fail(ErrorCode::NotFound, QStringLiteral("cannot open directory: ") + detail::errnoText(errno), dir);

    QByteArray manifest = "treedigest v1\n";
    for (const TreeEntry &entry : *entries) {
        const QString where = dir + u'/' + QFile::decodeName(entry.path);
        // One entry per line: a newline in a name would make two manifests alike.
        if (entry.path.contains('\n'))
            return fail(ErrorCode::Invalid, QStringLiteral("a name contains a newline; the tree digest refuses it"),
                        where);
        const QByteArray mode = QByteArray::number(entry.mode & 0777, 8);
        switch (entry.type) {
        case TreeEntry::Type::Directory:
            manifest += "d " + mode + " - " + entry.path + '\n';
            break;
        case TreeEntry::Type::File: {
            auto hash = hashFile(rootFd.get(), entry, where, cancel);
            if (!hash)
                return std::unexpected(hash.error());
            manifest += "f " + mode + ' ' + *hash + ' ' + entry.path + '\n';
            break;
        }
        case TreeEntry::Type::Symlink:
            if (entry.target.contains('\n'))
                return fail(ErrorCode::Invalid,
                            QStringLiteral("a symlink target contains a newline; the tree digest refuses it"), where);
            manifest += "l 777 " + QCryptographicHash::hash(entry.target, QCryptographicHash::Sha256).toHex() + ' ' +
                        entry.path + '\n';
            break;
        case TreeEntry::Type::Other:
            return fail(ErrorCode::Invalid,
                        QStringLiteral("a device, fifo or socket has no tree digest; only files, directories and "
                                       "symlinks do"),
                        where);
        }
    }
    return manifest;
}

Result<QString> treeDigest(const QString &dir, const CancelToken &cancel)
{
    auto manifest = treeManifest(dir, cancel);
    if (!manifest)
        return std::unexpected(manifest.error());
    return QString::fromLatin1(QCryptographicHash::hash(*manifest, QCryptographicHash::Sha256).toHex());
}

} // namespace pando::core
