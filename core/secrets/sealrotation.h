#pragma once
// The install's seal key and its rotation. One key seals every secret of the install (pipeline
// secrets, app secrets, app services' credentials and source connections' credentials) and
// lives in <data-dir>/seal.key, outside the database.
//
// Rotation re-seals everything with a new key and replaces the key file; it is crash-safe:
//   1. the new key is written to seal.key.next (kept if it is already there: a rotation that was
//      interrupted is finished with the key it started);
//   2. every sealed value is re-sealed with it in ONE database transaction;
//   3. seal.key.next is renamed over seal.key (atomic), and the directory synced.
// Cut off before 2 commits, the database still holds values of the old key; between 2 and 3, of
// the new key while seal.key.next still exists. Either way the engine finishes the rotation
// when it starts (finishInterruptedRotation) before anything opens a secret, and running the
// rotation again does the same.
//
// Rotation is offline: the processes using the database hold the key in memory, so they must be
// stopped (`pandod --rotate-secrets-key` refuses while a pandod holds the data directory).

#include "adapters/api/error.h"
#include "core/pipelines/sealbox/sealkey.h"
#include "core/state/database.h"

#include <QStringList>
#include <optional>

namespace pando::core::secrets {

QString sealKeyPath(const QString &dataDir);     // <dataDir>/seal.key
QString nextSealKeyPath(const QString &dataDir); // <dataDir>/seal.key.next

struct RotationReport {
    QString oldKeyId;
    QString newKeyId;
    int pipelineSecrets = 0;       // re-sealed
    int appSecrets = 0;            // re-sealed
    int serviceCredentials = 0;    // re-sealed (app services' generated passwords)
    int connectionCredentials = 0; // re-sealed (source connections' tokens and keys)
    int hookSecrets = 0;           // re-sealed (apps' webhook secrets)
    // Values neither key opens (sealed by a key this install no longer has): left as they were,
    // "app/NAME/SECRET", "pipeline/SCOPE/SECRET" (scope "-" for install-wide) or "service/APP/SLOT".
    QStringList unopenable;
    bool resumed = false; // finished a rotation that an earlier run started
};

// The engine's key: seal.key, made when missing. Fails when a rotation is unfinished: call
// finishInterruptedRotation() first.
Result<pipelines::SealKey> loadSealKey(const QString &dataDir);

// Rotates as described above. The database must be open (migrated).
Result<RotationReport> rotateSealKey(Database &db, const QString &dataDir);

// When seal.key.next exists, finishes that rotation; otherwise does nothing (nullopt).
Result<std::optional<RotationReport>> finishInterruptedRotation(Database &db, const QString &dataDir);

} // namespace pando::core::secrets
