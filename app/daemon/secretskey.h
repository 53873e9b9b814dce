#pragma once
// `pandod --rotate-secrets-key`: re-seals every secret
// of the install (pipeline and app secrets) with a new key, offline (core/secrets/sealrotation.h
// says why and how it survives being cut off).

#include "app/daemon/daemonoptions.h"

#include <QTextStream>

namespace pando::daemon {

// Holds the data directory (app/wiring's lockDataDirectory, as a running install does), opens
// the database, rotates, prints what it did; the exit code.
int rotateSecretsKey(const DaemonOptions &options, QTextStream &out, QTextStream &err);

} // namespace pando::daemon
