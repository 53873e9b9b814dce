#include "app/wiring/install.h"

#include "adapters/edgecert/acme/edgecertifier.h"
#include "adapters/routing/caddy/caddyedge.h"
#include "adapters/routing/cloudflare/cloudflarerouter.h"
#include "adapters/routing/loopback/loopbackrouter.h"
#include "adapters/routing/traefik/traefikrouter.h"
#include "adapters/services/docker/dockerservices.h"
#include "adapters/source/generic/gitsource.h"
#include "app/wiring/accountwiring.h"
#include "app/wiring/auditwiring.h"
#include "app/wiring/pipelinewiring.h"
#include "core/accounts/tokenkey.h"
#include "core/auditstream/auditstream.h"
#include "core/state/datadir.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::wiring {

namespace {

const QString LockFile = u"pandod.lock"_s;
const QString InstallIdFile = u"install-id"_s;
// What installs used before each data directory had its own id.
const QString SharedInstallId = u"default"_s;

bool isInstallId(const QString &id)
{
    static const QRegularExpression pattern(u"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"_s);
    return pattern.match(id).hasMatch();
}

// Error with "what failed: " in front of its message, keeping code, where and hint.
Error prefixed(Error error, const QString &what)
{
    error.message = what + u": "_s + error.message;
    return error;
}

} // namespace

Result<std::unique_ptr<QLockFile>> lockDataDirectory(const QString &dataDir)
{
    // Checked before the lock file is made in it: a directory of another user's is refused.
    QStringList madePrivate;
    if (auto ok = core::makePrivateDirectory(dataDir, &madePrivate); !ok)
        return std::unexpected(ok.error());
    for (const QString &path : std::as_const(madePrivate))
        qWarning("pando: %s was open to other users; it is private now (0700 directories, 0600 files)",
                 qPrintable(path));
    auto lock = std::make_unique<QLockFile>(QDir(dataDir).filePath(LockFile));
    // Never stale while its process lives: an engine runs for weeks without touching the file.
    lock->setStaleLockTime(0);
    if (lock->tryLock(0)) {
        // QLockFile makes it by the umask; the engine's check of the directory would then take
        // Pando's own lock for something another user left open.
        QFile::setPermissions(lock->fileName(), QFile::ReadOwner | QFile::WriteOwner);
        return lock;
    }
    qint64 pid = 0;
    QString host;
    QString app;
    lock->getLockInfo(&pid, &host, &app);
    return fail(ErrorCode::Conflict,
                u"another Pando engine (pid %1 on %2) uses this data directory"_s.arg(pid).arg(host), dataDir,
                u"stop it first (a pando-desktop quits from its tray menu), use its API instead (a desktop's is in "
                u"desktop-api in the data directory), or give this one its own data directory"_s);
}

Result<QString> dataDirectoryInstallId(const QString &dataDir, const core::DatabaseConfig &database)
{
    const QString path = QDir(dataDir).filePath(InstallIdFile);
    QFile file(path);
    if (file.exists()) {
        if (!file.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Unavailable, u"cannot read the install id: %1"_s.arg(file.errorString()), path);
        const QString id = QString::fromUtf8(file.read(256)).trimmed();
        if (!isInstallId(id))
            return fail(ErrorCode::Invalid, u"the install id file holds no install id"_s, path,
                        u"put back the id this install's containers carry (their dev.pando.install label), or "
                        u"remove the file on a data directory that has no apps yet"_s);
        return id;
    }
    // token.key is made by every engine start, whichever database it uses.
    const bool existing =
        QFileInfo::exists(QDir(dataDir).filePath(u"token.key"_s)) ||
        (database.driver == core::DatabaseConfig::Driver::Sqlite && QFileInfo(database.sqlitePath).size() > 0);
    QString id = SharedInstallId;
    if (!existing) {
        const quint64 random = QRandomGenerator::system()->generate64();
        id = u"i%1"_s.arg(random & 0xffffffffffffULL, 12, 16, QLatin1Char('0'));
    }
    if (auto written = core::detail::writePrivateFile(path, id.toUtf8() + '\n'); !written)
        return std::unexpected(prefixed(written.error(), u"cannot keep the install id"_s));
    return id;
}

Install::Install(InstallOptions options) : m_options(std::move(options))
{}

Install::~Install()
{
    close();
}

Status Install::open()
{
    if (m_engine)
        return {};
    core::EngineOptions &engine = m_options.engine;
    if (engine.dataDir.isEmpty())
        return fail(ErrorCode::Invalid, u"no data directory was given"_s, u"dataDir"_s);
    engine.dataDir = QDir(engine.dataDir).absolutePath();
    if (m_options.lockDataDirectory) {
        auto lock = lockDataDirectory(engine.dataDir);
        if (!lock)
            return std::unexpected(lock.error());
        m_lock = std::move(*lock);
    } else if (auto ok = core::makePrivateDirectory(engine.dataDir); !ok) {
        return ok;
    }
    auto opened = openLocked();
    if (!opened)
        close();
    return opened;
}

Status Install::openLocked()
{
    m_runtimeNotes.clear();
    core::EngineOptions &engine = m_options.engine;
    if (engine.database.driver == core::DatabaseConfig::Driver::Sqlite && engine.database.sqlitePath.isEmpty())
        engine.database.sqlitePath = engine.dataDir + u"/pando.db"_s;
    if (engine.installId.isEmpty()) {
        auto id = dataDirectoryInstallId(engine.dataDir, engine.database);
        if (!id)
            return std::unexpected(id.error());
        engine.installId = *id;
    } else if (!isInstallId(engine.installId)) {
        return fail(ErrorCode::Invalid, u"an install id is 1 to 64 letters, digits, '.', '_' or '-'"_s, u"installId"_s);
    }

    if (!engine.forgeApis)
        engine.forgeApis = [](const adapters::ForgeAccount &account) {
            return adapters::makeForgeApi(account);
        };
    if (!engine.forgeAppTokens)
        engine.forgeAppTokens = [](const adapters::ForgeAppInstallation &app) {
            return adapters::mintInstallationToken(app);
        };
    if (!engine.forgeOAuth)
        engine.forgeOAuth = adapters::makeForgeOAuth();
    m_runtime = m_options.runtime;
    if (!m_runtime) {
        RuntimeWiringOptions runtimes = m_options.runtimes;
        if (runtimes.dockerSocket.isEmpty())
            runtimes.dockerSocket = m_options.dockerSocket;
        auto made = makeRuntimes(runtimes, &m_runtimeNotes);
        if (!made) {
            Error error = made.error();
            if (error.hint.isEmpty())
                error.hint =
                    u"start Docker (or name its socket: pandod --docker-socket, the desktop's settings), then retry"_s;
            return std::unexpected(error);
        }
        m_runtime = *made;
    }
    if (auto edge = openEdge(); !edge)
        return std::unexpected(edge.error());
    m_source = m_options.source ? m_options.source
                                : std::make_shared<adapters::git::GitSource>(engine.dataDir + u"/cache/git"_s);
    std::shared_ptr<adapters::ServiceProvisioner> services = m_options.services;
    if (!services)
        services = std::make_shared<adapters::docker::DockerServiceProvisioner>(m_options.dockerSocket,
                                                                                m_options.serviceImages);

    m_engine = std::make_unique<core::Engine>(engine, m_runtime, m_router, m_source,
                                              m_options.clock ? *m_options.clock : core::SystemClock::instance());
    m_engine->setServiceProvisioner(std::move(services));
    if (auto started = m_engine->start(); !started)
        return std::unexpected(prefixed(started.error(), u"cannot start"_s));
    if (m_options.installPipelines) {
        if (auto installed = m_options.installPipelines(*m_engine); !installed)
            return std::unexpected(prefixed(installed.error(), u"cannot start the pipeline runner"_s));
    } else {
        PipelineWiringOptions pipelines;
        pipelines.dockerSocket = m_options.dockerSocket;
        pipelines.service.scheduler.workers = m_options.maxRuns;
        if (auto installed = installPipelines(*m_engine, pipelines); !installed)
            return std::unexpected(prefixed(installed.error(), u"cannot start the pipeline runner"_s));
    }
    if (auto accounts = installAccounts(*m_engine); !accounts)
        return std::unexpected(prefixed(accounts.error(), u"cannot start accounts"_s));
    if (!m_options.auditSinks.isEmpty()) {
        auto stream = startAuditSinks(*m_engine, m_options.auditSinks);
        if (!stream)
            return std::unexpected(prefixed(stream.error(), u"cannot start the audit sinks"_s));
        m_auditStream = *stream;
    }
    return {};
}

namespace {

// Where Pando's own ACME client orders certificates when --acme-ca names no CA: Let's Encrypt's
// production directory (Caddy's own default tries ZeroSSL after it; Pando's client uses one CA).
constexpr auto DefaultAcmeDirectory = "https://acme-v02.api.letsencrypt.org/directory";

} // namespace

Status Install::openEdge()
{
    if (m_options.router) {
        m_router = m_options.router;
        return {};
    }
    const auto inProcess = [this](const QString &why) {
        m_runtimeNotes << u"edge: %1, so apps are served from Pando's own process and stop answering while it is "
                          "stopped (docs/edge.md)"_s.arg(why);
        m_router = std::make_shared<adapters::loopback::LoopbackRouter>();
    };
    if (m_options.edge == EdgeChoice::InProcess) {
        inProcess(u"in-process was chosen"_s);
        return {};
    }
    if (m_options.edge == EdgeChoice::Traefik) {
        adapters::traefik::TraefikRouterOptions options = m_options.traefik;
        options.stateDir = m_options.engine.dataDir + u"/traefik"_s;
        auto traefik = std::make_shared<adapters::traefik::TraefikRouter>(options);
        if (auto started = traefik->start(); !started)
            return std::unexpected(prefixed(started.error(), u"cannot write Traefik's configuration"_s));
        m_runtimeNotes << u"edge: apps are served by Traefik from %1; add the entry points in %2 to Traefik's static "
                          "configuration and restart it when an app is added (docs/edge.md)"_s.arg(
                              traefik->dynamicFile(), traefik->entryPointsFile());
        m_router = std::move(traefik);
        return {};
    }
    if (m_options.edge == EdgeChoice::Cloudflare) {
        adapters::cloudflare::CloudflareRouterOptions options = m_options.cloudflare;
        options.stateDir = m_options.engine.dataDir + u"/cloudflare"_s;
        auto cloudflare = std::make_shared<adapters::cloudflare::CloudflareRouter>(options);
        if (auto started = cloudflare->start(); !started)
            return std::unexpected(prefixed(started.error(), u"cannot start the Cloudflare Tunnel edge"_s));
        m_runtimeNotes
            << (options.cloudflaredBinary.isEmpty()
                    ? u"edge: apps are served through Cloudflare Tunnel %1; run cloudflared with the tunnel's "
                      "token yourself (docs/edge.md)"_s.arg(options.tunnelId)
                    : u"edge: apps are served through Cloudflare Tunnel %1 by the cloudflared Pando runs "
                      "(docs/edge.md)"_s.arg(options.tunnelId));
        m_router = std::move(cloudflare);
        return {};
    }
    if (m_options.edge == EdgeChoice::Auto && adapters::caddy::CaddyEdge::findCaddy().isEmpty()) {
        inProcess(u"Caddy is not installed (Debian's caddy package)"_s);
        return {};
    }
    auto caddy = std::make_shared<adapters::caddy::CaddyEdge>(adapters::caddy::CaddyEdgeOptions{
        .stateDir = m_options.engine.dataDir + u"/edge"_s, .site = m_options.edgeSite});
    if (auto started = caddy->start(); !started) {
        if (m_options.edge == EdgeChoice::Caddy)
            return std::unexpected(prefixed(started.error(), u"cannot start the edge"_s));
        inProcess(u"Caddy did not start (%1)"_s.arg(started.error().text()));
        return {};
    }
    if (m_options.edgeSite.certificates == adapters::caddy::CertificateSource::Pando) {
        // Pando gets the tls: auto names' certificates and hands them to Caddy (docs/edge.md).
        adapters::edgecert::EdgeCertifierOptions certifier;
        certifier.acme.directoryUrl = m_options.edgeSite.acmeDirectory.isEmpty()
                                          ? QString::fromLatin1(DefaultAcmeDirectory)
                                          : m_options.edgeSite.acmeDirectory;
        certifier.acme.caRootFile = m_options.edgeSite.acmeRootFile;
        certifier.acme.contactEmail = m_options.edgeSite.acmeEmail;
        certifier.stateDir = m_options.engine.dataDir + u"/edge/certificates"_s;
        auto certified = std::make_shared<adapters::edgecert::EdgeCertifier>(caddy, certifier);
        if (auto started = certified->start(); !started)
            return std::unexpected(prefixed(started.error(), u"cannot start getting the edge's certificates"_s));
        m_runtimeNotes << u"edge: Pando gets the certificates of tls: auto names from %1 and Caddy serves them "
                          "(docs/edge.md)"_s.arg(certifier.acme.directoryUrl);
        m_router = std::move(certified);
        return {};
    }
    m_router = std::move(caddy);
    return {};
}

adapters::IdentityCheck identityCheckFor(const QHostAddress &address, quint16 port, const QString &certificateFile)
{
    QHostAddress dial = address;
    if (address == QHostAddress::Any || address == QHostAddress::AnyIPv4)
        dial = QHostAddress::LocalHost;
    else if (address == QHostAddress::AnyIPv6)
        dial = QHostAddress::LocalHostIPv6;
    const QString host =
        dial.protocol() == QAbstractSocket::IPv6Protocol ? u"[%1]"_s.arg(dial.toString()) : dial.toString();
    // The self-made certificate names localhost and 127.0.0.1 (server/tlsidentity.h).
    return adapters::IdentityCheck{u"%1:%2"_s.arg(host).arg(port), certificateFile,
                                   certificateFile.isEmpty() ? QString() : u"localhost"_s};
}

Status Install::setIdentityCheck(const adapters::IdentityCheck &check)
{
    if (!m_router)
        return fail(ErrorCode::Unavailable, u"the install is not open"_s);
    return m_router->setIdentityCheck(check);
}

void Install::close()
{
    // The engine stops taking work first, so what it audits while stopping is still cued to the
    // sinks; the stream reads the engine's database, so it stops before the engine goes, and
    // the engine before the adapters it calls.
    if (m_engine)
        m_engine->shutdown();
    if (m_auditStream)
        m_auditStream->stop();
    m_auditStream.reset();
    m_engine.reset();
    m_source.reset();
    m_router.reset();
    m_runtime.reset();
    m_lock.reset();
}

} // namespace pando::wiring
