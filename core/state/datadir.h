#pragma once
// The data directory holds password hashes, the audit log, sealed secrets' key files and the
// values of apps' run.env: nobody but the install's own user may read it. makePrivateDirectory()
// is the check every engine start (pandod, the desktop's in-process engine, the offline
// commands) makes before anything is read or written there.
//
// Threading: any thread; it only touches the file system.

#include "adapters/api/error.h"

#include <QString>
#include <QStringList>

namespace pando::core {

// Creates dir (0700, its missing parents too) or checks the one there. A directory owned by
// another user is refused (Forbidden, naming its owner's uid): Pando would otherwise keep its
// secrets where that user can read or replace them. A directory, or an entry directly in it,
// that its group or others may use is made private (directories 0700, files 0600); each one
// fixed is added to *fixed, so that the caller can log it. Entries deeper down need no check:
// nobody else can reach them through a 0700 directory. Links are neither followed nor changed.
Status makePrivateDirectory(const QString &dir, QStringList *fixed = nullptr);

// Makes a file private (0600) if its group or others may read or write it; true when it was
// changed. A missing file is no error (false).
Result<bool> makePrivateFile(const QString &path);

} // namespace pando::core
