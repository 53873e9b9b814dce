#pragma once
// Reads an archive through before a runtime unpacks it into a volume (a restore), so that one
// which would land outside its tree, or is not an archive at all, is refused before anything is
// touched.

#include "adapters/api/error.h"

#include <QString>

namespace pando::adapters::dockerapi {

// Checks that every entry of the archive at path (a tar, plain or gzip-, bzip2-, xz- or
// zstd-compressed) lies below one top directory: named top, or when top is empty any one name,
// which is returned. Refused (Invalid, where "archive entry NAME"): an absolute name, a ".." part,
// an entry below a symlink the archive made, a hard link to a name outside the top directory,
// device nodes, and a file that is no archive or is cut short.
Result<QString> checkArchiveTree(const QString &path, const QString &top = {});

} // namespace pando::adapters::dockerapi
