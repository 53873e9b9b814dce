#pragma once
// The runtimes an install deploys to, as one RuntimeSet: the local Docker engine always (it
// builds every image, and its ids stay unprefixed), and Incus when it is there: a local incusd
// whose socket answers and trusts us (auto), one named explicitly, or a remote one over HTTPS.
// Shared by pandod and the desktop's in-process session.

#include "adapters/api/error.h"
#include "adapters/kit/incusapi/incusclient.h"
#include "adapters/runtime/set/runtimeset.h"

#include <QStringList>
#include <memory>

namespace pando::wiring {

struct RuntimeWiringOptions {
    QString dockerSocket; // empty: DOCKER_HOST or /var/run/docker.sock
    enum class Incus {
        Auto, // the local socket when it answers; nothing otherwise
        Off,
        On, // must answer: pandod does not start without it
    };
    Incus incus = Incus::Auto;
    adapters::incusapi::Connection incusConnection; // socket, or url + certificates
    QString defaultRuntime;                         // "docker" (empty) or "incus"
};

// notes gets a line for what was left out and why ("Incus: not used: ...").
Result<std::shared_ptr<adapters::RuntimeSet>> makeRuntimes(const RuntimeWiringOptions &options, QStringList *notes);

} // namespace pando::wiring
