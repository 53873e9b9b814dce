#pragma once
// Package secrets keeps an app's secrets: values sealed at rest in the state database with the
// install's seal key (core/pipelines/sealbox: AES-256-GCM, the key file outside the database),
// each bound to its app and name by the associated data, and handed to the deploy pipeline
// only while it starts the app's container. Values are UTF-8 text without NUL bytes, at most
// MaxSecretBytes; a value with a line break can only be injected as a file.
//
// Nothing here logs, and no error text contains a value.
//
// Threading: an AppSecretStore is a borrowed view over a Database and a SealBox, both safe to
// use from any thread; make one per call.

#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/state/database.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>

namespace pando::core::secrets {

inline constexpr qsizetype MaxSecretNameLength = 128;
inline constexpr qsizetype MaxSecretBytes = 64 * 1024;
inline constexpr int MaxSecretsPerApp = 100;

// A secret's name is an environment variable's name: [A-Za-z_][A-Za-z0-9_]*, 1-128 characters.
Status checkSecretName(const QString &name);
// Text (valid UTF-8), no NUL byte, 1..MaxSecretBytes bytes. Errors name the secret, never show
// the value.
Status checkSecretValue(const QString &name, QByteArrayView value);
// Whether the value can be an environment variable: no line feed and no carriage return (an env
// entry is one line to most tools, and Docker's env files cannot carry one).
Status checkEnvInjectable(const QString &name, QByteArrayView value);

// The associated data a value is sealed under: "app-secret", app, name.
QByteArray sealContext(const QString &app, const QString &name);

struct AppSecretInfo {
    QString app;
    QString name;
    qint64 createdMs = 0;
    qint64 updatedMs = 0;
    bool created = false; // set(): there was no secret of that name before
};

class AppSecretStore {
public:
    AppSecretStore(Database &db, const pipelines::SealBox &seal, Clock &clock) : m_db(db), m_seal(seal), m_clock(clock)
    {}

    // Seals and stores the value (replacing one of that name). The app must exist (NotFound
    // names it); name and value must pass the checks above.
    Result<AppSecretInfo> set(const QString &app, const QString &name, QByteArrayView value);
    // Names and times, by name; never values.
    Result<QList<AppSecretInfo>> list(const QString &app);
    // NotFound names the secret and the app.
    Status remove(const QString &app, const QString &name);
    // Every secret of the app, opened: name → value. The caller wipes the values when done.
    // A value that does not open (another key, a row copied from elsewhere) is an error naming
    // the secret.
    Result<QMap<QString, QByteArray>> open(const QString &app);

private:
    Status requireApp(const QString &app);

    Database &m_db;
    const pipelines::SealBox &m_seal;
    Clock &m_clock;
};

// Overwrites every value's bytes with zeros.
void wipe(QMap<QString, QByteArray> &values);

} // namespace pando::core::secrets
