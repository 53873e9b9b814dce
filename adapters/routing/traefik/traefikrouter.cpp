#include "traefikrouter.h"

#include "adapters/api/routetable.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>
#include <QSslCertificate>

using namespace Qt::StringLiterals;

namespace pando::adapters::traefik {

namespace {

constexpr QFile::Permissions PrivateFile = QFile::ReadOwner | QFile::WriteOwner;
constexpr QFile::Permissions PrivateDir = QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner;

const QByteArray DynamicHeader = "# Written by Pando for Traefik v3's file provider; every change replaces it whole.\n"
                                 "# Edits are overwritten: change routes with Pando (docs/edge.md).\n";
const QByteArray EntryPointsHeader =
    "# Traefik's static configuration for Pando's apps: one entry point per app's stable port.\n"
    "# Copy these under entryPoints: in traefik.yml (or pass --entryPoints.NAME.address=...) and\n"
    "# restart Traefik when an app is added; routes and addresses change without a restart.\n";

QByteArray readAll(const QString &path, bool *exists = nullptr)
{
    QFile file(path);
    const bool opened = file.open(QIODevice::ReadOnly);
    if (exists)
        *exists = opened;
    return opened ? file.readAll() : QByteArray();
}

} // namespace

TraefikRouter::TraefikRouter(TraefikRouterOptions options) : m_options(std::move(options))
{}

QString TraefikRouter::dynamicFile() const
{
    return QDir(m_options.configDir).filePath(u"pando.yml"_s);
}

QString TraefikRouter::entryPointsFile() const
{
    return QDir(m_options.stateDir).filePath(u"entrypoints.yml"_s);
}

QString TraefikRouter::routesFile() const
{
    return QDir(m_options.stateDir).filePath(u"routes.json"_s);
}

Status TraefikRouter::start()
{
    const std::lock_guard guard(m_mutex);
    return startLocked();
}

Status TraefikRouter::startLocked()
{
    if (m_options.configDir.isEmpty())
        return fail(ErrorCode::Invalid, u"no directory for Traefik's dynamic configuration was given"_s,
                    u"traefik-dir"_s, u"name the directory Traefik's providers.file.directory watches"_s);
    if (m_options.stateDir.isEmpty())
        return fail(ErrorCode::Invalid, u"the Traefik router has no state directory"_s, u"stateDir"_s);
    // Names that go into Traefik's file as they are.
    static const QRegularExpression name(uR"(^[A-Za-z0-9_-]{1,64}\z)"_s);
    for (const auto &[value, where] : {std::pair{m_options.certResolver, u"traefik-resolver"_s},
                                       std::pair{m_options.webEntryPoint, u"webEntryPoint"_s},
                                       std::pair{m_options.websecureEntryPoint, u"websecureEntryPoint"_s}})
        if (!name.match(value).hasMatch())
            return fail(
                ErrorCode::Invalid,
                u"\"%1\" is not a name Traefik's static configuration can hold (letters, digits, - and _)"_s.arg(value),
                where);
    if (m_options.webPort < 1 || m_options.webPort > 65535 || m_options.websecurePort < 1 ||
        m_options.websecurePort > 65535)
        return fail(ErrorCode::Invalid, u"the web and websecure ports must be in 1-65535"_s, u"webPort"_s);
    m_options.configDir = QDir(m_options.configDir).absolutePath();
    m_options.stateDir = QDir(m_options.stateDir).absolutePath();
    if (QDir::cleanPath(m_options.configDir) == QDir::cleanPath(m_options.stateDir))
        return fail(ErrorCode::Invalid,
                    u"Pando's Traefik state cannot live in Traefik's configuration directory %1: Traefik would read "
                    "entrypoints.yml as dynamic configuration"_s.arg(m_options.configDir),
                    u"traefik-dir"_s);
    for (const QString &dir : {m_options.configDir, m_options.stateDir}) {
        // A directory the user made (for Traefik's user to read) keeps its permissions.
        const bool made = !QFileInfo::exists(dir);
        if (!QDir().mkpath(dir) || (made && !QFile::setPermissions(dir, PrivateDir)))
            return fail(ErrorCode::Internal, u"cannot make the directory %1"_s.arg(dir), u"traefik-dir"_s);
    }
    if (!QFile::setPermissions(m_options.stateDir, PrivateDir))
        return fail(ErrorCode::Internal, u"cannot make %1 private"_s.arg(m_options.stateDir));

    bool exists = false;
    const QByteArray table = readAll(routesFile(), &exists);
    QHash<QString, Route> routes;
    if (exists) {
        auto read = routeTableFromJson(table, [](const Address &address, const QString &where) {
            return detail::checkAddress(address, where + ".host"_L1, where + ".path"_L1);
        });
        if (!read) {
            Error error = read.error();
            error.message = u"cannot adopt the routes in %1: %2"_s.arg(routesFile(), error.message);
            error.hint = u"mend or remove the file (removing it drops every route)"_s;
            return std::unexpected(error);
        }
        routes = *read;
        for (Route &route : routes)
            route.url = detail::routeUrl(route, m_options);
    }
    m_routes = routes;
    m_written = false;
    m_started = true;
    // The files again from the table: options (the resolver's name) may have changed.
    return applyLocked(routes);
}

QByteArray TraefikRouter::dynamicYaml(const QHash<QString, Route> &routes) const
{
    return detail::toYaml(detail::dynamicConfig(routes, m_options), DynamicHeader);
}

Status TraefikRouter::writeFile(const QString &path, const QByteArray &content)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size() ||
        !file.setPermissions(PrivateFile) || !file.commit())
        return fail(ErrorCode::Internal, u"cannot write %1: %2"_s.arg(path, file.errorString()), u"edge"_s,
                    u"check that the directory exists and Pando's user may write it"_s);
    return {};
}

Status TraefikRouter::applyLocked(const QHash<QString, Route> &routes)
{
    struct Change {
        QString path;
        QByteArray content;
        QByteArray before;
        bool existed = false;
    };
    QList<Change> changes{
        {dynamicFile(), dynamicYaml(routes)},
        {entryPointsFile(), detail::toYaml(detail::staticEntryPoints(routes), EntryPointsHeader)},
        {routesFile(), routeTableJson(routes)},
    };
    // Traefik's file first: if the table cannot follow, it is put back.
    for (qsizetype i = 0; i < changes.size(); ++i) {
        Change &change = changes[i];
        change.before = readAll(change.path, &change.existed);
        if (change.existed && change.before == change.content)
            continue;
        if (auto written = writeFile(change.path, change.content); !written) {
            for (qsizetype j = i - 1; j >= 0; --j) {
                const Change &undo = changes[j];
                if (undo.existed && undo.before == undo.content)
                    continue;
                if (undo.existed)
                    discardResult(writeFile(undo.path, undo.before), "the write that failed is the error reported");
                else
                    QFile::remove(undo.path);
            }
            m_problem = written.error().text();
            return written;
        }
    }
    for (const Route &route : routes)
        if (!m_routes.contains(route.app))
            qInfo("traefik: restart Traefik with the entry point %s (127.0.0.1:%d, in %s) so app %s's stable port "
                  "answers",
                  qPrintable(detail::entryPointName(route.app)), route.port, qPrintable(entryPointsFile()),
                  qPrintable(route.app));
    m_routes = routes;
    m_written = true;
    m_problem.clear();
    return {};
}

Result<Route> TraefikRouter::ensure(const QString &app, int requestedPort)
{
    if (auto named = checkAppName(app); !named)
        return std::unexpected(named.error());
    const std::lock_guard guard(m_mutex);
    if (!m_started)
        if (auto started = startLocked(); !started)
            return std::unexpected(started.error());
    // Traefik binds a route's port only once it is restarted with its entry point, so a port
    // nothing listens on yet may still be promised.
    return ensureRoute(
        m_routes, app, requestedPort, [this](int requested) { return unheldPort(requested, m_routes); },
        [this](const QHash<QString, Route> &next) { return applyLocked(next); },
        [this](const Route &route) { return detail::routeUrl(route, m_options); });
}

Status TraefikRouter::setBackend(const QString &app, const QString &host, int port)
{
    // A host that is not one would end up inside a URL in Traefik's file.
    if (host.contains(u'/') || host.contains(u' ') || host.contains(u'`') || host.contains(u'"'))
        return fail(ErrorCode::Invalid, u"backend host \"%1\" is not a host name or address"_s.arg(host), u"host"_s);
    const std::lock_guard guard(m_mutex);
    auto next = withBackend(m_routes, app, host, port);
    if (!next)
        return std::unexpected(next.error());
    const std::optional<QHash<QString, Route>> &changed = *next;
    if (changed.has_value())
        return applyLocked(*changed);
    // Unchanged, but a failed write left the files behind: try again.
    return m_written ? Status{} : applyLocked(m_routes);
}

Status TraefikRouter::remove(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    QHash<QString, Route> next = m_routes;
    return next.remove(app) ? applyLocked(next) : Status{};
}

std::optional<Route> TraefikRouter::route(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    return m_routes.contains(app) ? std::optional(m_routes.value(app)) : std::nullopt;
}

Status TraefikRouter::setAddresses(const QString &app, const AddressChange &change)
{
    // Traefik's forwardAuth cannot cut Pando's session cookie out of what the app gets.
    if (change.signIn)
        return Router::setAddresses(app, change);
    // The spec's domains and paths make the addresses, so errors point at those.
    for (const Address &address : change.addresses)
        if (auto checked = detail::checkAddress(address, u"route.domains"_s, u"route.paths"_s); !checked)
            return checked;
    const std::lock_guard guard(m_mutex);
    auto next = withAddresses(m_routes, app, change,
                              [this](const Address &a) { return a.url(m_options.webPort, m_options.websecurePort); });
    if (!next)
        return std::unexpected(next.error());
    std::optional<QHash<QString, Route>> &changed = *next;
    if (!changed.has_value())
        return {};
    Route &route = (*changed)[app];
    route.url = detail::routeUrl(route, m_options);
    return applyLocked(*changed);
}

QList<CertificateState> TraefikRouter::certificates()
{
    const std::lock_guard guard(m_mutex);
    QStringList hosts;
    for (const Route &route : std::as_const(m_routes)) {
        for (const Address &address : route.addresses)
            if (address.tls == TlsMode::Internal)
                hosts << address.host;
        for (const MovedAddress &moved : route.moved)
            if (moved.from.tls == TlsMode::Internal)
                hosts << moved.from.host;
    }
    hosts.sort();
    hosts.removeDuplicates();
    QList<CertificateState> states;
    for (const QString &host : std::as_const(hosts)) {
        CertificateState state;
        state.host = host;
        if (m_options.certificatesDir.isEmpty()) {
            state.error = u"no certificate directory is configured, so Traefik serves its default certificate"_s;
        } else {
            const auto [certFile, keyFile] = detail::certificateFiles(m_options.certificatesDir, host);
            const QList<QSslCertificate> chain = QSslCertificate::fromPath(certFile, QSsl::Pem);
            if (chain.isEmpty() || !QFileInfo::exists(keyFile)) {
                state.error = u"%1 and %2 are not both there"_s.arg(certFile, keyFile);
            } else {
                state.issuer = chain.first().issuerDisplayName();
                state.notAfter = chain.first().expiryDate();
            }
        }
        states << state;
    }
    return states;
}

Status TraefikRouter::check()
{
    const std::lock_guard guard(m_mutex);
    if (!m_started) {
        if (auto started = startLocked(); !started) {
            m_problem = started.error().text();
            return started;
        }
        return {};
    }
    bool exists = false;
    const QByteArray current = readAll(dynamicFile(), &exists);
    if (exists && current == dynamicYaml(m_routes))
        return {};
    qWarning("traefik: %s is %s; writing it again", qPrintable(dynamicFile()),
             exists ? "not what Pando wrote" : "missing");
    m_written = false;
    return applyLocked(m_routes);
}

RouterStatus TraefikRouter::status()
{
    const std::lock_guard guard(m_mutex);
    RouterStatus status;
    status.kind = u"traefik"_s;
    status.outlivesPando = true;
    status.running = m_written;
    status.routes = int(m_routes.size());
    status.problem = m_problem;
    if (!m_written && m_problem.isEmpty())
        status.problem = u"Pando has not written Traefik's configuration (%1) yet"_s.arg(dynamicFile());
    return status;
}

} // namespace pando::adapters::traefik
