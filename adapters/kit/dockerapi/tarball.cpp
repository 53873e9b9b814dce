#include "adapters/kit/dockerapi/tarball.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <archive.h>
#include <archive_entry.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace pando::adapters::dockerapi {

namespace {

struct ArchiveDeleter {
    void operator()(archive *a) const { archive_write_free(a); }
};
struct EntryDeleter {
    void operator()(archive_entry *e) const { archive_entry_free(e); }
};

la_ssize_t writeToDevice(archive *, void *clientData, const void *buffer, size_t length)
{
    auto *device = static_cast<QIODevice *>(clientData);
    const qint64 written = device->write(static_cast<const char *>(buffer), qint64(length));
    return written < 0 ? -1 : la_ssize_t(written);
}

class TarWriter {
public:
    TarWriter(archive *a, QString root, const TarOptions &options)
        : m_archive(a), m_root(std::move(root)), m_options(options)
    {}

    Status addTree(const QString &relativeDir)
    {
        const QDir dir(relativeDir.isEmpty() ? m_root : m_root + u'/' + relativeDir);
        const QStringList names =
            dir.entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QString &name : names) {
            if (relativeDir.isEmpty() && m_options.skipTopLevelGit && name == QLatin1String(".git"))
                continue;
            const QString relative = relativeDir.isEmpty() ? name : relativeDir + u'/' + name;
            if (m_options.ignore.excludes(relative)) {
                // Entered without its own entry only for an exception below it.
                if (!isDirectory(relative) || !m_options.ignore.mayKeepBelow(relative))
                    continue;
                if (auto status = addTree(relative); !status)
                    return status;
                continue;
            }
            if (auto status = addEntry(relative); !status)
                return status;
        }
        return {};
    }

private:
    // A directory itself, not a symlink to one.
    bool isDirectory(const QString &relative) const
    {
        struct stat st {};
        return ::lstat(QFile::encodeName(m_root + u'/' + relative).constData(), &st) == 0 && S_ISDIR(st.st_mode);
    }

    Status addEntry(const QString &relative)
    {
        const QString path = m_root + u'/' + relative;
        const QByteArray localPath = QFile::encodeName(path);
        struct stat st {};
        if (::lstat(localPath.constData(), &st) != 0)
            return fail(ErrorCode::Failed,
                        QStringLiteral("cannot stat: %1").arg(QString::fromLocal8Bit(strerror(errno))), path);
        const bool isDir = S_ISDIR(st.st_mode);
        const bool isFile = S_ISREG(st.st_mode);
        const bool isLink = S_ISLNK(st.st_mode);
        if (!isDir && !isFile && !isLink)
            return {}; // sockets, fifos and devices have no place in a context

        std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
        archive_entry_copy_stat(entry.get(), &st);
        archive_entry_set_uid(entry.get(), 0);
        archive_entry_set_gid(entry.get(), 0);
        archive_entry_set_nlink(entry.get(), isDir ? 2 : 1);
        const QByteArray name = relative.toUtf8();
        archive_entry_copy_pathname(entry.get(), name.constData());
        if (isLink) {
            QByteArray target(4096, Qt::Uninitialized);
            const ssize_t n = ::readlink(localPath.constData(), target.data(), size_t(target.size()));
            if (n < 0)
                return fail(ErrorCode::Failed,
                            QStringLiteral("cannot read symlink: %1").arg(QString::fromLocal8Bit(strerror(errno))),
                            path);
            target.truncate(n);
            archive_entry_copy_symlink(entry.get(), target.constData());
            archive_entry_set_size(entry.get(), 0);
        } else if (isDir) {
            archive_entry_set_size(entry.get(), 0);
        }

        const auto replaced = isFile ? m_options.replace.constFind(relative) : m_options.replace.cend();
        if (replaced != m_options.replace.cend()) {
            archive_entry_set_size(entry.get(), replaced->size());
            if (archive_write_header(m_archive, entry.get()) < ARCHIVE_WARN ||
                archive_write_data(m_archive, replaced->constData(), size_t(replaced->size())) < 0)
                return archiveError(path);
            return {};
        }
        QFile file(path);
        if (isFile && !file.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Failed, QStringLiteral("cannot read: %1").arg(file.errorString()), path);
        if (archive_write_header(m_archive, entry.get()) < ARCHIVE_WARN)
            return archiveError(path);
        if (isFile) {
            qint64 remaining = st.st_size;
            char buffer[64 * 1024];
            // Write exactly the size in the header, even if the file changes under us.
            while (remaining > 0) {
                const qint64 n = file.read(buffer, qMin<qint64>(sizeof buffer, remaining));
                if (n <= 0)
                    return fail(ErrorCode::Failed, QStringLiteral("file shrank while it was archived"), path);
                if (archive_write_data(m_archive, buffer, size_t(n)) < 0)
                    return archiveError(path);
                remaining -= n;
            }
        }
        if (isDir)
            return addTree(relative);
        return {};
    }

    std::unexpected<Error> archiveError(const QString &path)
    {
        return fail(ErrorCode::Failed,
                    QStringLiteral("cannot archive: %1").arg(QString::fromUtf8(archive_error_string(m_archive))), path);
    }

    archive *m_archive;
    QString m_root;
    const TarOptions &m_options; // writeTar's, which outlives the writer
};

} // namespace

Status writeTar(const QString &rootDir, QIODevice *out, const TarOptions &options)
{
    if (!QFileInfo(rootDir).isDir())
        return fail(ErrorCode::NotFound, QStringLiteral("not a directory"), rootDir);
    std::unique_ptr<archive, ArchiveDeleter> a(archive_write_new());
    archive_write_set_format_pax_restricted(a.get());
    archive_write_set_bytes_in_last_block(a.get(), 1);
    if (archive_write_open2(a.get(), out, nullptr, writeToDevice, nullptr, nullptr) != ARCHIVE_OK)
        return fail(
            ErrorCode::Internal,
            QStringLiteral("cannot start a tar stream: %1").arg(QString::fromUtf8(archive_error_string(a.get()))),
            rootDir);
    TarWriter writer(a.get(), QDir(rootDir).absolutePath(), options);
    if (auto status = writer.addTree({}); !status)
        return status;
    if (archive_write_close(a.get()) != ARCHIVE_OK)
        return fail(
            ErrorCode::Failed,
            QStringLiteral("cannot finish the tar stream: %1").arg(QString::fromUtf8(archive_error_string(a.get()))),
            rootDir);
    return {};
}

Result<QByteArray> tarOfFiles(const QMap<QString, ContainerFile> &files)
{
    QByteArray out;
    QBuffer buffer(&out);
    buffer.open(QIODevice::WriteOnly);
    std::unique_ptr<archive, ArchiveDeleter> a(archive_write_new());
    archive_write_set_format_pax_restricted(a.get());
    archive_write_set_bytes_in_last_block(a.get(), 1);
    if (archive_write_open2(a.get(), &buffer, nullptr, writeToDevice, nullptr, nullptr) != ARCHIVE_OK)
        return fail(
            ErrorCode::Internal,
            QStringLiteral("cannot start a tar stream: %1").arg(QString::fromUtf8(archive_error_string(a.get()))));
    for (auto it = files.cbegin(); it != files.cend(); ++it) {
        if (!it.key().startsWith(u'/') || it.key().size() < 2)
            return fail(ErrorCode::Invalid, QStringLiteral("a container file's path must be absolute"), it.key());
        std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
        const QByteArray name = it.key().mid(1).toUtf8();
        archive_entry_copy_pathname(entry.get(), name.constData());
        archive_entry_set_filetype(entry.get(), AE_IFREG);
        archive_entry_set_perm(entry.get(), mode_t(it->mode & 07777));
        archive_entry_set_uid(entry.get(), la_int64_t(it->uid));
        archive_entry_set_gid(entry.get(), la_int64_t(it->gid));
        archive_entry_set_size(entry.get(), la_int64_t(it->content.size()));
        archive_entry_set_mtime(entry.get(), 0, 0);
        if (archive_write_header(a.get(), entry.get()) < ARCHIVE_WARN ||
            archive_write_data(a.get(), it->content.constData(), size_t(it->content.size())) < 0)
            return fail(ErrorCode::Failed,
                        QStringLiteral("cannot archive: %1").arg(QString::fromUtf8(archive_error_string(a.get()))),
                        it.key());
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK)
        return fail(
            ErrorCode::Failed,
            QStringLiteral("cannot finish the tar stream: %1").arg(QString::fromUtf8(archive_error_string(a.get()))));
    return out;
}

Result<std::unique_ptr<QTemporaryFile>> tarToTempFile(const QString &dir, const TarOptions &options)
{
    auto file = std::make_unique<QTemporaryFile>();
    if (!file->open())
        return fail(ErrorCode::Internal, QStringLiteral("cannot create a temporary file: %1").arg(file->errorString()),
                    file->fileTemplate());
    if (auto status = writeTar(dir, file.get(), options); !status)
        return std::unexpected(status.error());
    if (!file->flush() || !file->seek(0))
        return fail(ErrorCode::Internal,
                    QStringLiteral("cannot rewind the context archive: %1").arg(file->errorString()), file->fileName());
    return file;
}

} // namespace pando::adapters::dockerapi
