#pragma once
// pandod's hold on its data directory, and `pandod --rotate-secrets-key`: re-seals every secret
// of the install (pipeline and app secrets) with a new key, offline (core/secrets/sealrotation.h
// says why and how it survives being cut off).

#include "app/daemon/daemonoptions.h"

#include <QLockFile>
#include <QTextStream>
#include <memory>

namespace pando::daemon {

// <data-dir>/pandod.lock, held while pandod runs; a lock left by a process that died is taken
// over. Fails naming the holder when another pandod runs on the directory.
Result<std::unique_ptr<QLockFile>> lockDataDirectory(const QString &dataDir);

// Opens the database, rotates, prints what it did; the exit code.
int rotateSecretsKey(const DaemonOptions &options, QTextStream &out, QTextStream &err);

} // namespace pando::daemon
