// pandod: the Pando engine and its API, headless. A "Pando install" that the CLI, desktops and
// teammates attach to.

#include "adapters/kit/gitkit/gitstream.h"
#include "app/daemon/daemonoptions.h"
#include "app/daemon/resetadmin.h"
#include "app/daemon/secretskey.h"
#include "app/daemon/signalwatcher.h"
#include "app/server/apiserver.h"
#include "app/server/tlsidentity.h"
#include "app/wiring/install.h"

#include <QCoreApplication>
#include <QDir>
#include <QTextStream>
#include <sys/stat.h>

using namespace pando;

int main(int argc, char *argv[])
{
    // The data directory holds password hashes, the audit log and run.env values: whatever pandod
    // (or SQLite, libgit2, the blob store) creates is its user's alone. Explicit modes say so too.
    ::umask(077);
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
    if (!options->resetAdmin.isEmpty())
        return daemon::resetAdmin(*options, out, err);

    // Before anything fetches: no git host holds a request for longer than this without a byte.
    adapters::git::setNetworkDeadlines({std::min(options->gitTimeoutMs, 15'000), options->gitTimeoutMs, 0});

    wiring::InstallOptions installOptions;
    installOptions.engine = options->engine;
    installOptions.runtimes = options->runtimes;
    installOptions.dockerSocket = options->dockerSocket;
    installOptions.serviceImages = options->serviceImages;
    installOptions.maxRuns = options->maxRuns;
    installOptions.auditSinks = options->auditSinks;
    installOptions.appLimit = options->appLimit;
    installOptions.edge = options->edge;
    installOptions.edgeSite = options->edgeSite;
    installOptions.traefik.configDir = options->traefikDir;
    installOptions.traefik.certResolver = options->traefikResolver;
    installOptions.traefik.certificatesDir = options->traefikCertificates;
    installOptions.cloudflare = options->cloudflare;
    wiring::Install install(std::move(installOptions));
    const Status opened = install.open();
    for (const QString &note : install.runtimeNotes())
        err << "pandod: " << note << Qt::endl;
    if (!opened) {
        err << "pandod: " << opened.error().text() << Qt::endl;
        if (!opened.error().hint.isEmpty())
            err << "hint: " << opened.error().hint << Qt::endl;
        return 1;
    }
    core::Engine &engine = install.engine();
    auto token = engine.bootstrapAdminToken();
    if (!token) {
        err << "pandod: cannot create the initial admin token: " << token.error().text() << Qt::endl;
        return 1;
    }
    if (token->has_value())
        out << "pandod: initial admin token written to "
            << QDir(options->engine.dataDir).filePath(QStringLiteral("initial-admin-token")) << Qt::endl;

    server::ApiServer api(engine);
    api.setAuthzOptions(install.authzOptions());
    api.setConnectionLimits(options->connections);
    for (const QString &host : std::as_const(options->allowedHosts))
        api.addAllowedHost(host);
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
            return 1;
        }
        tls = *identity;
    }
    auto port = tls ? api.listenTls(options->listenAddress, options->listenPort, tls->certificate, tls->key)
                    : api.listen(options->listenAddress, options->listenPort);
    if (!port) {
        err << "pandod: cannot listen on " << options->listenAddress.toString() << ':' << options->listenPort << ": "
            << port.error().text() << Qt::endl;
        return 1;
    }
    // Apps that want people signed in (route.auth: pando) are checked by the edge against this API.
    if (auto checked = install.setIdentityCheck(
            wiring::identityCheckFor(options->listenAddress, *port, tls ? tls->certificatePath : QString()));
        !checked)
        err << "pandod: warning: apps for people signed in answer 503 until the edge can ask this API: "
            << checked.error().text() << Qt::endl;
    if (!tls && options->insecureHttp && !options->listenAddress.isLoopback())
        err << "pandod: warning: serving plain HTTP on " << options->listenAddress.toString()
            << " (--insecure-http): tokens and passwords cross the network in the clear" << Qt::endl;
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
    // Leaving, the API server goes before the install (it was made after it): its sockets hold
    // subscriptions into the engine.
    return rc;
}
