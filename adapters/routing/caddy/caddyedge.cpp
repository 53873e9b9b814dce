#include "caddyedge.h"

#include "caddycerts.h"
#include "caddyconfig.h"

#include "adapters/api/oskit.h"
#include "adapters/api/routetable.h"
#include "adapters/kit/httpkit/httptransport.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::adapters::caddy {

namespace {

constexpr auto MigrateSysctl = "/proc/sys/net/ipv4/tcp_migrate_req";

// Whether anything listens on 127.0.0.1:port (a Caddy that holds it counts too); a free port
// when port is 0.
Result<int> probePort(int port)
{
    int bound = 0;
    auto fd = bindLoopbackPort(port, &bound);
    if (!fd)
        return std::unexpected(fd.error());
    ::close(*fd);
    return bound;
}

QString tail(const QString &file, int lines)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    if (f.size() > 16384)
        f.seek(f.size() - 16384);
    QStringList all = QString::fromUtf8(f.readAll()).split(u'\n', Qt::SkipEmptyParts);
    return all.mid(qMax<qsizetype>(0, all.size() - lines)).join(u" | "_s);
}

// One app of a Caddy configuration (apps.http, apps.tls).
QJsonObject appOf(const QByteArray &config, QLatin1StringView app)
{
    return QJsonDocument::fromJson(config).object().value("apps"_L1).toObject().value(app).toObject();
}

// The HTTP servers of a Caddy configuration (apps.http.servers).
QJsonObject serversOf(const QByteArray &config)
{
    return appOf(config, "http"_L1).value("servers"_L1).toObject();
}

// The error `caddy run` ends with when it cannot load its configuration ("Error: loading initial
// config: ... address already in use"), written to file after offset from; empty when there is
// none. Caddy writes its pid file only once it loaded, so a start that failed shows this way.
QString startError(const QString &file, qint64 from)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly) || !f.seek(from))
        return {};
    const QList<QByteArray> lines = f.read(qint64(64) * 1024).split('\n');
    for (const QByteArray &line : lines)
        if (line.startsWith("Error: "))
            return QString::fromUtf8(line.mid(7)).trimmed();
    return {};
}

} // namespace

CaddyEdge::CaddyEdge(CaddyEdgeOptions options) : m_options(std::move(options))
{
    // The well-known ports need root (Caddy has no capability of its own in Debian's package).
    const bool root = ::geteuid() == 0;
    if (m_options.site.httpPort == 0)
        m_options.site.httpPort = root ? 80 : 8080;
    if (m_options.site.httpsPort == 0)
        m_options.site.httpsPort = root ? 443 : 8443;
}

CaddyEdge::~CaddyEdge() = default;

QString CaddyEdge::findCaddy(const QString &configured)
{
    if (!configured.isEmpty())
        return QFileInfo(configured).isExecutable() ? configured : QString();
    return QStandardPaths::findExecutable(u"caddy"_s);
}

QString CaddyEdge::path(const char *name) const
{
    return QDir(m_options.stateDir).filePath(QString::fromLatin1(name));
}

Status CaddyEdge::start()
{
    const std::lock_guard guard(m_mutex);
    return startLocked();
}

Status CaddyEdge::startLocked()
{
    if (m_options.stateDir.isEmpty())
        return fail(ErrorCode::Invalid, u"the edge has no state directory"_s, u"stateDir"_s);
    m_options.stateDir = QDir(m_options.stateDir).absolutePath();
    if (!QDir().mkpath(m_options.stateDir) ||
        !QFile::setPermissions(m_options.stateDir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
        return fail(ErrorCode::Internal, u"cannot make the edge's directory %1 private"_s.arg(m_options.stateDir));
    if (QFile::encodeName(path("admin.sock")).size() >= qsizetype(sizeof(sockaddr_un::sun_path)))
        return fail(ErrorCode::Invalid,
                    u"the edge's admin socket %1 is longer than a unix socket path may be"_s.arg(path("admin.sock")),
                    u"dataDir"_s, u"use a shorter data directory"_s);

    // Connections queued on a listener Caddy closes on a load move to its new one, instead of
    // being reset (Linux 5.14+; per network namespace).
    m_problem.clear();
    m_migrateProblem.clear();
    QFile migrate(QString::fromLatin1(MigrateSysctl));
    if (migrate.open(QIODevice::ReadOnly) && migrate.readAll().trimmed() != "1") {
        migrate.close();
        if (migrate.open(QIODevice::WriteOnly) && migrate.write("1\n") == 2)
            qInfo("edge: set net.ipv4.tcp_migrate_req to 1, so route changes drop no waiting connection");
        else
            m_migrateProblem = u"a route change may reset connections that are waiting to be accepted: run `sysctl -w "
                               "net.ipv4.tcp_migrate_req=1` as root (see docs/edge.md)"_s;
    }

    if (!answersLocked()) {
        if (auto spawned = spawnLocked(); !spawned)
            return spawned;
    }
    m_started = true; // adopting may load this Pando's configuration
    if (auto adopted = adoptLocked(); !adopted) {
        m_started = false;
        return adopted;
    }
    return {};
}

httpkit::Exchange CaddyEdge::admin(const QByteArray &method, const QString &where, const QByteArray &body,
                                   int timeoutMs) const
{
    httpkit::Request request;
    request.method = method;
    request.path = where;
    request.body = body;
    // Caddy's admin API on a unix socket accepts only an empty Host.
    request.headers.append({QByteArray("Host"), QByteArray()});
    request.timeoutMs = timeoutMs > 0 ? timeoutMs : m_options.adminTimeoutMs;
    return httpkit::perform({.unixSocket = path("admin.sock"), .baseUrl = "http://caddy"}, request);
}

bool CaddyEdge::answersLocked()
{
    const httpkit::Exchange exchange = admin("GET", u"/config/"_s, {}, 2000);
    return !exchange.transportFailed && exchange.status == 200;
}

Status CaddyEdge::adoptLocked()
{
    const httpkit::Exchange exchange = admin("GET", u"/config/apps/http/servers"_s);
    if (exchange.transportFailed || exchange.status != 200)
        return fail(ErrorCode::Unavailable, u"the edge (Caddy) did not say which routes it serves: %1"_s.arg(
                                                exchange.transportFailed ? exchange.error : caddyError(exchange.body)));
    // Ports and backends as Caddy serves them; addresses as they were written down beside.
    const QJsonObject servers = QJsonDocument::fromJson(exchange.body).object();
    QHash<QString, Route> routes = routesOfServers(servers);
    // Where it asks who is signed in, as it does now: until pandod says again, nothing changes.
    m_identity = identityOfServers(servers);
    if (takesCertificates()) {
        // The certificates Pando handed to it before: they keep serving until it hands others.
        const httpkit::Exchange loaded = admin("GET", u"/config/apps/tls/certificates/load_pem"_s);
        if (!loaded.transportFailed && loaded.status == 200)
            m_certificates = certificatesOfConfig(QJsonDocument::fromJson(loaded.body).array());
    }
    const QHash<QString, Route> written = writtenRoutes();
    for (Route &route : routes)
        if (auto it = written.constFind(route.app); it != written.constEnd()) {
            route.addresses = it->addresses;
            route.moved = it->moved;
            route.signIn = it->signIn;
            // A 503 in place of the app (people must sign in, and nobody can tell who yet) hides
            // the backend Caddy would serve: the table still has it.
            if (route.backendHost.isEmpty()) {
                route.backendHost = it->backendHost;
                route.backendPort = it->backendPort;
            }
        }
    m_routes = routes;
    m_movesPending = !movesSettled(m_routes, certificateCheck());
    // A Pando that serves the same routes in another way (an upgrade that added the sign-out
    // page, say) puts its way in place, as gracefully as any change; the same way loads nothing.
    const QJsonObject mine = serversOf(configJson(m_routes));
    if (mine != servers) {
        qInfo("edge: Caddy serves the routes as an earlier Pando wrote them; loading this one's");
        return applyLocked(m_routes);
    }
    return {};
}

Status CaddyEdge::spawnLocked()
{
    const QString caddy = findCaddy(m_options.caddyBinary);
    if (caddy.isEmpty())
        return fail(ErrorCode::Unavailable, u"Caddy is not installed"_s, u"edge"_s,
                    u"install Debian's caddy package, or run with --edge in-process"_s);
    // The last routes written down, with this directory's paths (it may have moved).
    const QHash<QString, Route> routes = writtenRoutes();
    if (takesCertificates() && m_certificates.isEmpty()) {
        // And the certificates Pando handed the last Caddy: they serve before Pando hands them again.
        if (QFile last(path("caddy.json")); last.open(QIODevice::ReadOnly))
            m_certificates = certificatesOfConfig(
                appOf(last.readAll(), "tls"_L1).value("certificates"_L1).toObject().value("load_pem"_L1).toArray());
    }
    if (auto written = writeConfig(configJson(routes), routes); !written)
        return written;
    QFile::remove(path("admin.sock")); // nothing answers on it

    // setsid --fork: Caddy gets a session of its own (a terminal's Ctrl+C and the end of Pando's
    // process group pass it by) and is not Pando's child, so whoever reaps orphans reaps it and
    // no zombie is left behind in Pando when it stops. It writes its own pid file.
    const QString setsid = QStandardPaths::findExecutable(u"setsid"_s);
    if (setsid.isEmpty())
        return fail(ErrorCode::Unavailable, u"setsid (util-linux) is not installed"_s, u"edge"_s);
    const QByteArray exe = QFile::encodeName(setsid);
    QFile::remove(path("caddy.pid"));
    QList<QByteArray> argv{exe,
                           "--fork",
                           QFile::encodeName(caddy),
                           "run",
                           "--config",
                           QFile::encodeName(path("caddy.json")),
                           "--pidfile",
                           QFile::encodeName(path("caddy.pid"))};
    // Caddy's own files (autosave is off; certificates later) stay in the edge's directory.
    QList<QByteArray> env = environmentWithout({"XDG_DATA_HOME=", "XDG_CONFIG_HOME="});
    env << "XDG_DATA_HOME=" + QFile::encodeName(path("data")) << "XDG_CONFIG_HOME=" + QFile::encodeName(path("config"));
    const qint64 logStart = QFileInfo(path("caddy.log")).size();
    auto starter = spawnLogged(argv, env, path("caddy.log"), m_options.stateDir, 0, u"edge"_s);
    if (!starter)
        return std::unexpected(starter.error());
    int starterStatus = 0;
    ::waitpid(*starter, &starterStatus, 0); // setsid returns as soon as Caddy is forked

    QElapsedTimer timer;
    timer.start();
    // Caddy's admin API answers once its configuration is loaded, and it writes its pid file
    // just after: started means both, so that it can be stopped and adopted by its pid.
    while (!answersLocked() || caddyPid() <= 0) {
        const qint64 pid = caddyPid();
        if (const QString error = startError(path("caddy.log"), logStart); !error.isEmpty()) {
            // Caddy says why as it exits, its admin API still up for a moment: it must not be
            // taken for a running Caddy by whoever asks next.
            while (answersLocked() && timer.elapsed() < m_options.startTimeoutMs)
                QThread::msleep(20);
            QFile::remove(path("admin.sock"));
            return fail(ErrorCode::Unavailable, u"the edge (Caddy) did not start: %1"_s.arg(error), u"edge"_s,
                        u"see %1"_s.arg(path("caddy.log")));
        }
        if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
            return fail(ErrorCode::Unavailable,
                        u"the edge (Caddy) exited as it started: %1"_s.arg(tail(path("caddy.log"), 3)), u"edge"_s,
                        u"see %1"_s.arg(path("caddy.log")));
        if (timer.elapsed() > m_options.startTimeoutMs) {
            if (pid > 0)
                ::kill(pid_t(pid), SIGKILL);
            return fail(
                ErrorCode::Timeout,
                u"the edge (Caddy) did not answer within %1 s of starting"_s.arg(m_options.startTimeoutMs / 1000),
                u"edge"_s, u"see %1"_s.arg(path("caddy.log")));
        }
        QThread::msleep(20);
    }
    qInfo("edge: started Caddy (pid %lld) for %lld route(s)", caddyPid(), qint64(routes.size()));
    return {};
}

qint64 CaddyEdge::caddyPid() const
{
    QFile file(path("caddy.pid"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed().toLongLong() : 0;
}

Status CaddyEdge::writeConfig(const QByteArray &config, const QHash<QString, Route> &routes) const
{
    for (const auto &[name, content] :
         {std::pair{"caddy.json", config}, std::pair{"routes.json", routeTableJson(routes)}}) {
        QSaveFile file(path(name));
        if (!file.open(QIODevice::WriteOnly) || file.write(content) < 0 ||
            !file.setPermissions(QFile::ReadOwner | QFile::WriteOwner) || !file.commit())
            return fail(ErrorCode::Internal, u"cannot write %1: %2"_s.arg(file.fileName(), file.errorString()));
    }
    return {};
}

QHash<QString, Route> CaddyEdge::writtenRoutes() const
{
    if (QFile table(path("routes.json")); table.open(QIODevice::ReadOnly)) {
        auto routes = routeTableFromJson(table.readAll());
        if (!routes) {
            // What Caddy serves still says the ports and backends; only the addresses are lost.
            qWarning("edge: %s cannot be read (%s at %s); its addresses are served again with the next deploy",
                     qPrintable(path("routes.json")), qPrintable(routes.error().message),
                     qPrintable(routes.error().where));
            return {};
        }
        for (Route &route : *routes)
            route.url = QUrl(u"http://127.0.0.1:%1/"_s.arg(route.port));
        return *routes;
    }
    // Written by a Pando that kept no table: the per-app servers of its configuration.
    if (QFile last(path("caddy.json")); last.open(QIODevice::ReadOnly))
        return routesOfServers(serversOf(last.readAll()));
    return {};
}

std::function<bool(const QString &)> CaddyEdge::certificateCheck() const
{
    if (takesCertificates())
        return [certificates = m_certificates](const QString &host) {
            return std::ranges::any_of(certificates, [&host](const ServedCertificate &served) {
                return served.host == host &&
                       certificateStateOf(host, served.chainPem).notAfter > QDateTime::currentDateTimeUtc();
            });
        };
    return [storage = path("data")](const QString &host) {
        return holdsCertificate(storage, host);
    };
}

QByteArray CaddyEdge::configJson(const QHash<QString, Route> &routes) const
{
    return renderConfig({routes, path("admin.sock"), path("data"), m_options.site, certificateCheck(), m_identity,
                         m_challenges, m_certificates});
}

Status CaddyEdge::applyLocked(const QHash<QString, Route> &routes)
{
    if (!m_started)
        if (auto started = startLocked(); !started)
            return started;
    const QByteArray config = configJson(routes);
    httpkit::Exchange exchange = admin("POST", u"/load"_s, config);
    if (exchange.transportFailed && !answersLocked()) {
        // Caddy went away: start it again with the routes it had, then make the change.
        qWarning("edge: Caddy does not answer (%s); starting it again", qPrintable(exchange.error));
        if (auto spawned = spawnLocked(); !spawned)
            return spawned;
        exchange = admin("POST", u"/load"_s, config);
    }
    if (exchange.transportFailed)
        return fail(exchange.timedOut ? ErrorCode::Timeout : ErrorCode::Unavailable,
                    u"the edge (Caddy) did not take the change: %1"_s.arg(exchange.error), u"edge"_s,
                    u"see %1"_s.arg(path("caddy.log")));
    if (exchange.status != 200) {
        const QString why = caddyError(exchange.body);
        if (why.contains("address already in use"_L1))
            return fail(ErrorCode::Conflict, u"the edge cannot listen: %1"_s.arg(why), u"port"_s,
                        u"pick another port, or stop what listens on it"_s);
        return fail(ErrorCode::Failed, u"the edge (Caddy) refused the change and kept its routes: %1"_s.arg(why),
                    u"edge"_s);
    }
    m_routes = routes;
    m_movesPending = !movesSettled(m_routes, certificateCheck());
    if (auto written = writeConfig(config, routes); !written)
        qWarning("edge: the routes serve, but writing them down failed: %s", qPrintable(written.error().text()));
    return {};
}

Result<Route> CaddyEdge::ensure(const QString &app, int requestedPort)
{
    const std::lock_guard guard(m_mutex);
    if (!m_started)
        if (auto started = startLocked(); !started)
            return std::unexpected(started.error());
    return ensureRoute(
        m_routes, app, requestedPort, probePort,
        [this](const QHash<QString, Route> &next) { return applyLocked(next); },
        [](const Route &route) { return QUrl(u"http://127.0.0.1:%1/"_s.arg(route.port)); });
}

Status CaddyEdge::setBackend(const QString &app, const QString &host, int port)
{
    const std::lock_guard guard(m_mutex);
    auto next = withBackend(m_routes, app, host, port);
    if (!next)
        return std::unexpected(next.error());
    const std::optional<QHash<QString, Route>> &changed = *next;
    if (!changed.has_value())
        return {};
    return applyLocked(*changed);
}

Status CaddyEdge::remove(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    if (!m_routes.contains(app))
        return {};
    QHash<QString, Route> next = m_routes;
    next.remove(app);
    return applyLocked(next);
}

std::optional<Route> CaddyEdge::route(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    if (auto it = m_routes.constFind(app); it != m_routes.constEnd())
        return *it;
    return std::nullopt;
}

Status CaddyEdge::check()
{
    const std::lock_guard guard(m_mutex);
    if (!m_started)
        return {};
    if (answersLocked()) {
        // A moved address redirects once where it moved to serves (its certificate came).
        if (m_movesPending && movesSettled(m_routes, certificateCheck()))
            return applyLocked(m_routes);
        return {};
    }
    m_restarts.ended();
    if (!m_restarts.due())
        return fail(ErrorCode::Unavailable, m_problem, u"edge"_s, m_restarts.waitText());
    qWarning("edge: Caddy stopped answering; starting it again with its %lld route(s)", qint64(m_routes.size()));
    auto spawned = spawnLocked();
    m_restarts.tried(bool(spawned));
    if (!spawned) {
        m_problem = spawned.error().text();
        return spawned;
    }
    m_problem.clear(); // a failed restart's words no longer hold
    return adoptLocked();
}

Status CaddyEdge::stop()
{
    const std::lock_guard guard(m_mutex);
    const httpkit::Exchange exchange = admin("POST", u"/stop"_s);
    m_started = false;
    if (exchange.transportFailed && !QFile::exists(path("admin.sock")))
        return {}; // not running
    if (exchange.transportFailed || exchange.status != 200)
        return fail(ErrorCode::Unavailable, u"the edge (Caddy) did not stop: %1"_s.arg(
                                                exchange.transportFailed ? exchange.error : caddyError(exchange.body)));
    // Gone once its process is (whoever reaps orphans reaps it), and with it what it listened
    // on: a Caddy started next on the same ports (the next Pando's) must not find them taken.
    const qint64 pid = caddyPid();
    QElapsedTimer timer;
    timer.start();
    while (pid > 0 && timer.elapsed() < m_options.startTimeoutMs && !(::kill(pid_t(pid), 0) != 0 && errno == ESRCH))
        QThread::msleep(10);
    const bool listened =
        std::ranges::any_of(m_routes, [](const Route &r) { return !r.addresses.isEmpty() || !r.moved.isEmpty(); });
    while (listened && timer.elapsed() < m_options.startTimeoutMs && !sitePortsFree())
        QThread::msleep(10);
    QFile::remove(path("caddy.pid"));
    return {};
}

bool CaddyEdge::sitePortsFree() const
{
    const QHostAddress host =
        m_options.site.listenHost.isEmpty() ? QHostAddress(QHostAddress::Any) : QHostAddress(m_options.site.listenHost);
    for (const int port : {m_options.site.httpPort, m_options.site.httpsPort}) {
        QTcpServer probe;
        if (port > 0 && !host.isNull() && !probe.listen(host, quint16(port)))
            return false;
    }
    return true;
}

RouterStatus CaddyEdge::status()
{
    const std::lock_guard guard(m_mutex);
    RouterStatus status;
    status.kind = u"caddy"_s;
    status.outlivesPando = true;
    status.running = answersLocked();
    status.routes = int(m_routes.size());
    if (std::ranges::any_of(m_routes, [](const Route &r) { return !r.addresses.isEmpty() || !r.moved.isEmpty(); })) {
        status.httpPort = m_options.site.httpPort;
        status.httpsPort = m_options.site.httpsPort;
    }
    status.pid = caddyPid();
    QStringList problems{m_problem, m_migrateProblem};
    problems.removeAll(QString());
    status.problem = problems.join(u"; "_s);
    if (!status.running)
        status.problem = u"Caddy does not answer on its admin socket, so apps are not reachable; %1. Its last "
                         "words: %2"_s.arg(m_restarts.due() ? u"Pando starts it again within a reconcile interval"_s
                                                            : m_restarts.waitText(),
                                           tail(path("caddy.log"), 3));
    return status;
}

} // namespace pando::adapters::caddy

namespace pando::adapters::caddy {

Status CaddyEdge::setAddresses(const QString &app, const AddressChange &change)
{
    const std::lock_guard guard(m_mutex);
    const auto next = withAddresses(m_routes, app, change, [this](const Address &a) {
        return a.url(m_options.site.httpPort, m_options.site.httpsPort);
    });
    if (!next)
        return std::unexpected(next.error());
    const std::optional<QHash<QString, Route>> &changed = *next;
    if (!changed.has_value())
        return {};
    return applyLocked(*changed);
}

Status CaddyEdge::setIdentityCheck(const IdentityCheck &check)
{
    const std::lock_guard guard(m_mutex);
    if (check == m_identity)
        return {};
    const IdentityCheck before = m_identity;
    m_identity = check;
    // Only apps that want people signed in are served differently: nothing to load without one.
    if (std::ranges::none_of(m_routes, &Route::signIn))
        return {};
    if (auto applied = applyLocked(m_routes); !applied) {
        m_identity = before;
        return applied;
    }
    return {};
}

QList<CertificateState> CaddyEdge::certificates()
{
    QStringList hosts;
    QStringList autoHosts;
    QList<ServedCertificate> handed;
    {
        const std::lock_guard guard(m_mutex);
        for (const Route &route : std::as_const(m_routes)) {
            for (const Address &address : route.addresses) {
                if (address.tls != TlsMode::Off && !hosts.contains(address.host))
                    hosts.append(address.host);
                if (address.tls == TlsMode::Auto && !autoHosts.contains(address.host))
                    autoHosts.append(address.host);
            }
        }
        handed = m_certificates;
    }
    hosts.sort();
    QList<CertificateState> states = certificateStates(path("data"), path("caddy.log"), hosts);
    if (takesCertificates()) {
        // Caddy gets none of these: what it serves is what Pando handed it.
        for (CertificateState &state : states) {
            if (!autoHosts.contains(state.host))
                continue;
            const auto served = std::ranges::find(handed, state.host, &ServedCertificate::host);
            state = served == handed.end() ? CertificateState{state.host, {}, {}, {}}
                                           : certificateStateOf(state.host, served->chainPem);
        }
    }
    return states;
}

QStringList CaddyEdge::autoTlsHosts()
{
    const std::lock_guard guard(m_mutex);
    QStringList hosts;
    for (const Route &route : std::as_const(m_routes)) {
        for (const Address &address : route.addresses)
            if (address.tls == TlsMode::Auto && !hosts.contains(address.host))
                hosts.append(address.host);
        for (const MovedAddress &moved : route.moved)
            if (moved.from.tls == TlsMode::Auto && !hosts.contains(moved.from.host))
                hosts.append(moved.from.host);
    }
    hosts.sort();
    return hosts;
}

Status CaddyEdge::setChallengeAnswers(const QList<ChallengeAnswer> &answers)
{
    if (!takesCertificates())
        return Router::setChallengeAnswers(answers);
    const std::lock_guard guard(m_mutex);
    return applyWithLocked(m_challenges, answers);
}

Status CaddyEdge::setCertificates(const QList<ServedCertificate> &certificates)
{
    if (!takesCertificates())
        return Router::setCertificates(certificates);
    const std::lock_guard guard(m_mutex);
    return applyWithLocked(m_certificates, certificates);
}

template<class T> Status CaddyEdge::applyWithLocked(T &member, const T &value)
{
    if (member == value)
        return {};
    T before = std::exchange(member, value);
    if (auto applied = applyLocked(m_routes); !applied) {
        member = std::move(before);
        return applied;
    }
    return {};
}

QByteArray CaddyEdge::installCa()
{
    return installCaRoot(path("data"));
}

} // namespace pando::adapters::caddy
