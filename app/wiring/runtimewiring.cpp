#include "app/wiring/runtimewiring.h"

#include "adapters/runtime/docker/dockerruntime.h"
#include "adapters/runtime/incus/incusruntime.h"

#include <QFileInfo>

namespace pando::wiring {

Result<std::shared_ptr<adapters::RuntimeSet>> makeRuntimes(const RuntimeWiringOptions &options, QStringList *notes)
{
    auto set = std::make_shared<adapters::RuntimeSet>();
    auto docker = std::make_shared<adapters::docker::DockerRuntime>(options.dockerSocket);
    if (auto ping = docker->ping(); !ping) {
        Error error = ping.error();
        error.message = QStringLiteral("Docker does not answer: ") + error.message;
        return std::unexpected(error);
    }
    set->add(QStringLiteral("docker"), docker);

    using Incus = RuntimeWiringOptions::Incus;
    const bool wantIncus = options.incus == Incus::On || options.defaultRuntime == QLatin1String("incus");
    if (options.incus != Incus::Off) {
        adapters::incus::IncusOptions incusOptions;
        incusOptions.connection = options.incusConnection;
        incusOptions.dockerSocket = options.dockerSocket;
        const QString socket =
            incusOptions.connection.url.isEmpty()
                ? (incusOptions.connection.socket.isEmpty() ? adapters::incusapi::Connection::defaultSocket()
                                                            : incusOptions.connection.socket)
                : QString();
        if (!wantIncus && !socket.isEmpty() && !QFileInfo::exists(socket)) {
            if (notes)
                *notes << QStringLiteral("Incus: not used (no incusd socket at %1)").arg(socket);
        } else {
            auto incus = std::make_shared<adapters::incus::IncusRuntime>(incusOptions);
            if (auto ping = incus->ping(); !ping) {
                if (wantIncus) {
                    Error error = ping.error();
                    error.message = QStringLiteral("Incus does not answer: ") + error.message;
                    return std::unexpected(error);
                }
                if (notes)
                    *notes << QStringLiteral("Incus: not used (%1)").arg(ping.error().text());
            } else {
                set->add(QStringLiteral("incus"), incus);
            }
        }
    }
    if (!options.defaultRuntime.isEmpty())
        if (auto chosen = set->setDefaultKind(options.defaultRuntime); !chosen)
            return std::unexpected(chosen.error());
    return set;
}

} // namespace pando::wiring
