// pandod: the Pando engine and its API, headless. A "Pando install" that the CLI, desktops and
// teammates attach to.

#include "adapters/services/docker/dockerservices.h"
#include "adapters/routing/loopback/loopbackrouter.h"
#include "adapters/source/generic/gitsource.h"
#include "app/daemon/daemonoptions.h"
#include "app/daemon/secretskey.h"
#include "app/daemon/signalwatcher.h"
#include "app/server/apiserver.h"
#include "app/server/tlsidentity.h"
#include "app/wiring/accountwiring.h"
#include "app/wiring/auditwiring.h"
#include "app/wiring/pipelinewiring.h"
#include "app/wiring/runtimewiring.h"
#include "core/engine/engine.h"

#include <QCoreApplication>
#include <QDir>
#include <QTextStream>

using namespace pando;

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("pando"));
    QCoreApplication::setApplicationVersion(QStringLiteral(PANDO_VERSION));
    QTextStream err(stderr);
    QTextStream out(stdout);

    auto options = daemon::parseOptions(QCoreApplication::arguments());
    if (!options) {
        err << "pandod: " << options.error().text() << Qt::endl;
        if (!options.error().hint.isEmpty())
            err << "hint: " << options.error().hint << Qt::endl;
        return 2;
    }

    if (options->rotateSecretsKey)
        return daemon::rotateSecretsKey(*options, out, err);
    // One pandod per data directory (and none while the secrets key is rotated).
    auto dataLock = daemon::lockDataDirectory(options->engine.dataDir);
    if (!dataLock) {
        err << "pandod: " << dataLock.error().text() << Qt::endl << "hint: " << dataLock.error().hint << Qt::endl;
        return 1;
    }

    QStringList runtimeNotes;
    auto runtimes = wiring::makeRuntimes(options->runtimes, &runtimeNotes);
    if (!runtimes) {
        err << "pandod: " << runtimes.error().text() << Qt::endl;
        if (!runtimes.error().hint.isEmpty())
            err << "hint: " << runtimes.error().hint << Qt::endl;
        return 1;
    }
    for (const QString &note : runtimeNotes)
        err << "pandod: " << note << Qt::endl;
    std::shared_ptr<adapters::Runtime> runtime = *runtimes;
    auto router = std::make_shared<adapters::loopback::LoopbackRouter>();
    auto source = std::make_shared<adapters::git::GitSource>(options->engine.dataDir + QStringLiteral("/cache/git"));

    core::Engine engine(options->engine, runtime, router, source);
    engine.setServiceProvisioner(std::make_shared<adapters::docker::DockerServiceProvisioner>(
        options->dockerSocket, options->serviceImages));
    if (auto started = engine.start(); !started) {
        err << "pandod: cannot start: " << started.error().text() << Qt::endl;
        if (!started.error().hint.isEmpty())
            err << "hint: " << started.error().hint << Qt::endl;
        return 1;
    }
    wiring::PipelineWiringOptions pipelineOptions;
    pipelineOptions.dockerSocket = options->dockerSocket;
    pipelineOptions.service.scheduler.workers = options->maxRuns;
    if (auto pipelines = wiring::installPipelines(engine, pipelineOptions); !pipelines) {
        err << "pandod: cannot start the pipeline runner: " << pipelines.error().text() << Qt::endl;
        if (!pipelines.error().hint.isEmpty())
            err << "hint: " << pipelines.error().hint << Qt::endl;
        engine.shutdown();
        return 1;
    }
    if (auto accounts = wiring::installAccounts(engine); !accounts) {
        err << "pandod: cannot start accounts: " << accounts.error().text() << Qt::endl;
        engine.shutdown();
        return 1;
    }
    std::shared_ptr<core::AuditStream> auditStream;
    if (!options->auditSinks.isEmpty()) {
        auto started = wiring::startAuditSinks(engine, options->auditSinks);
        if (!started) {
            err << "pandod: cannot start the audit sinks: " << started.error().text() << Qt::endl;
            engine.shutdown();
            return 1;
        }
        auditStream = *started;
    }
    auto token = engine.bootstrapAdminToken();
    if (!token) {
        err << "pandod: cannot create the initial admin token: " << token.error().text() << Qt::endl;
        return 1;
    }
    if (token->has_value())
        out << "pandod: initial admin token written to "
            << QDir(options->engine.dataDir).filePath(QStringLiteral("initial-admin-token")) << Qt::endl;

    server::ApiServer api(engine);
    api.setAuthzOptions(core::authz::AuthzOptions{options->appLimit});
    std::optional<server::TlsIdentity> tls;
    if (options->tls) {
        // The names teammates reach it by: the listen address unless it is a wildcard, and what
        // --tls-name adds (localhost and 127.0.0.1 are always in).
        QStringList names = options->tlsNames;
        if (options->listenAddress != QHostAddress::Any && options->listenAddress != QHostAddress::AnyIPv6)
            names.append(options->listenAddress.toString());
        auto identity =
            options->tlsCertificate.isEmpty()
                ? server::loadOrCreateTlsIdentity(QDir(options->engine.dataDir).filePath(QStringLiteral("tls")), names)
                : server::loadTlsIdentity(options->tlsCertificate, options->tlsKey);
        if (!identity) {
            err << "pandod: cannot serve HTTPS: " << identity.error().text() << Qt::endl;
            if (!identity.error().hint.isEmpty())
                err << "hint: " << identity.error().hint << Qt::endl;
            engine.shutdown();
            return 1;
        }
        tls = *identity;
    }
    auto port = tls ? api.listenTls(options->listenAddress, options->listenPort, tls->certificate, tls->key)
                    : api.listen(options->listenAddress, options->listenPort);
    if (!port) {
        err << "pandod: cannot listen on " << options->listenAddress.toString() << ':' << options->listenPort << ": "
            << port.error().text() << Qt::endl;
        engine.shutdown();
        return 1;
    }
    out << "pandod: listening on " << (tls ? "https://" : "http://") << options->listenAddress.toString() << ':'
        << *port << "/api/v1" << Qt::endl;
    if (tls)
        out << "pandod: certificate " << tls->certificatePath << ", SHA-256 fingerprint " << tls->fingerprint
            << " (pair a desktop with POST /api/v1/users/NAME/pairings)" << Qt::endl;

    daemon::SignalWatcher signals;
    QObject::connect(&signals, &daemon::SignalWatcher::terminate, &app, [&] {
        out << "pandod: shutting down" << Qt::endl;
        QCoreApplication::quit();
    });
    const int rc = QCoreApplication::exec();
    engine.shutdown();
    return rc;
}
