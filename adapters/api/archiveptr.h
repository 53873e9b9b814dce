#pragma once
// libarchive handles owned by std::unique_ptr, and an archive's last error as text: what every
// adapter that reads or writes archives (image layers, restores, conversions, S3 unpacking)
// needs. Header-only; whoever includes it links libarchive.

#include <QString>
#include <archive.h>
#include <archive_entry.h>
#include <memory>

namespace pando::adapters {

struct ArchiveReadFree {
    void operator()(archive *a) const { archive_read_free(a); }
};
struct ArchiveWriteFree {
    void operator()(archive *a) const { archive_write_free(a); }
};
struct ArchiveEntryFree {
    void operator()(archive_entry *e) const { archive_entry_free(e); }
};
using ArchiveReader = std::unique_ptr<archive, ArchiveReadFree>;
using ArchiveWriter = std::unique_ptr<archive, ArchiveWriteFree>;
using ArchiveEntry = std::unique_ptr<archive_entry, ArchiveEntryFree>;

// What libarchive last said went wrong with a.
inline QString archiveError(archive *a)
{
    const char *message = archive_error_string(a);
    return message ? QString::fromUtf8(message) : QStringLiteral("unknown error");
}

} // namespace pando::adapters
