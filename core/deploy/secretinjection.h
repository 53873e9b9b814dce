#pragma once
// How an app's secrets reach the container a deploy (or the reconciler) starts: each secret of
// the app is an environment variable of its own name, unless the AppSpec's `secrets:` section
// asks for it as a file. Values are opened from the sealed store only here, held only until the
// container is created, and wiped after; what is said about them (plan notes, step details)
// names secrets, never values.

#include "adapters/api/runtime.h"
#include "core/deploy/services.h"
#include "core/spec/appspec.h"

#include <QMap>
#include <QStringList>

namespace pando::core {

class SecretInjection {
public:
    SecretInjection() = default;
    SecretInjection(const SecretInjection &) = delete;
    SecretInjection &operator=(const SecretInjection &) = delete;
    SecretInjection(SecretInjection &&) = default;
    SecretInjection &operator=(SecretInjection &&) = default;
    ~SecretInjection() { wipe(); }

    // Opens app's secrets and checks them against spec: a secret the spec wants as a file must
    // be set, a secret injected as an environment variable may hold no line break and may not
    // also be in run.env. Errors name the secret and what to do, never a value.
    static Result<SecretInjection> prepare(const Services &s, const QString &app, const AppSpec &spec);

    // Adds the env entries and files to the container; scrub() zeroes and removes them again
    // once the runtime has created it.
    void applyTo(adapters::ContainerSpec &container) const;
    void scrub(adapters::ContainerSpec &container) const;
    // "secrets: A, B as env; TLS_KEY as file /run/secrets/tls.key; changed since the serving
    // deploy: A" — empty when the app has none. Secrets set after sinceMs count as changed.
    QString describe(qint64 sinceMs) const;
    bool isEmpty() const { return m_env.isEmpty() && m_files.isEmpty(); }
    void wipe();

private:
    QMap<QString, QByteArray> m_env;
    QMap<QString, adapters::ContainerFile> m_files;
    QMap<QString, qint64> m_updatedMs;
    QMap<QString, QString> m_filePaths; // name → path
};

} // namespace pando::core
