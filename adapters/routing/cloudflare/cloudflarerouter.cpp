#include "cloudflarerouter.h"

#include "adapters/api/routetable.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSet>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::adapters::cloudflare {

namespace {

constexpr QFile::Permissions PrivateFile = QFile::ReadOwner | QFile::WriteOwner;
constexpr QFile::Permissions PrivateDir = QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner;

QSet<QString> hostsOf(const QHash<QString, Route> &routes)
{
    QSet<QString> hosts;
    for (const Route &route : routes)
        for (const Address &address : route.addresses)
            hosts.insert(address.host);
    return hosts;
}

QString appServing(const QString &host, const QHash<QString, Route> &routes)
{
    for (const Route &route : routes)
        for (const Address &address : route.addresses)
            if (address.host == host)
                return route.app;
    return {};
}

// Errors that say the API or the token is the trouble, not the request.
bool aboutTheApi(const Error &error)
{
    return error.code == ErrorCode::Forbidden || error.code == ErrorCode::Unavailable ||
           error.code == ErrorCode::Timeout;
}

} // namespace

CloudflareRouter::CloudflareRouter(CloudflareRouterOptions options) : m_options(std::move(options))
{}

CloudflareRouter::~CloudflareRouter() = default;

QString CloudflareRouter::routesFile() const
{
    return QDir(m_options.stateDir).filePath(u"routes.json"_s);
}

qint64 CloudflareRouter::cloudflaredPid()
{
    const std::lock_guard guard(m_mutex);
    return m_cloudflared && m_cloudflared->isRunning() ? m_cloudflared->pid() : 0;
}

Error CloudflareRouter::noted(Error error)
{
    if (aboutTheApi(error))
        m_apiProblem = error.text();
    return error;
}

Status CloudflareRouter::start()
{
    const std::lock_guard guard(m_mutex);
    return startLocked();
}

Status CloudflareRouter::startLocked()
{
    if (auto checked = detail::checkOptions(m_options); !checked)
        return checked;
    if (!m_api) {
        QString token = m_options.apiToken;
        if (token.isEmpty()) {
            if (m_options.apiTokenFile.isEmpty())
                return fail(ErrorCode::Invalid, u"no Cloudflare API token was given"_s, u"cloudflare-token-file"_s,
                            u"give --cloudflare-token-file FILE (mode 0600) or $PANDO_CLOUDFLARE_TOKEN"_s);
            auto read = detail::readApiToken(m_options.apiTokenFile);
            if (!read)
                return std::unexpected(read.error());
            token = *read;
        }
        m_api = std::make_unique<CloudflareApi>(m_options.apiBase, token, m_options.requestTimeoutMs);
        // The client alone holds the token from here on: options get copied, printed in a debugger.
        m_options.apiToken.fill(u'\0');
        m_options.apiToken.clear();
    }
    m_options.stateDir = QDir(m_options.stateDir).absolutePath();
    if (!QDir().mkpath(m_options.stateDir) || !QFile::setPermissions(m_options.stateDir, PrivateDir))
        return fail(ErrorCode::Internal, u"cannot make the directory %1 private"_s.arg(m_options.stateDir),
                    u"stateDir"_s);
    if (QFile table(routesFile()); table.exists()) {
        if (!table.open(QIODevice::ReadOnly))
            return fail(ErrorCode::Internal, u"cannot read %1: %2"_s.arg(routesFile(), table.errorString()));
        auto read = detail::stateFromJson(table.readAll());
        if (!read) {
            Error error = read.error();
            error.message = u"cannot adopt the routes in %1: %2"_s.arg(routesFile(), error.message);
            error.hint = u"mend or remove the file (removing it forgets every route and the DNS records Pando made)"_s;
            return std::unexpected(error);
        }
        m_state = *read;
    }
    if (!m_options.cloudflaredBinary.isEmpty() && !m_cloudflared) {
        m_cloudflared = std::make_unique<Cloudflared>(m_options.cloudflaredBinary, m_options.stateDir);
        if (m_cloudflared->executable().isEmpty())
            return fail(ErrorCode::Invalid,
                        u"cloudflared (%1) is not there or not executable"_s.arg(m_options.cloudflaredBinary),
                        u"cloudflared"_s,
                        u"install cloudflared from Cloudflare (Debian does not package it), or leave --cloudflared out "
                        "and run it yourself"_s);
    }
    m_started = true;

    // A token or zone Cloudflare does not know is a mistake to fix now; an API that does not
    // answer is not: the tunnel serves what it was given, and check() tries again.
    auto synced = syncLocked();
    if (!synced) {
        if (!aboutTheApi(synced.error()) || synced.error().code == ErrorCode::Forbidden) {
            m_started = false;
            return synced;
        }
        qWarning("cloudflare: %s; the tunnel serves what it was given, and Pando tries again",
                 qPrintable(synced.error().text()));
    }
    if (m_cloudflared && !m_cloudflared->adopt())
        if (auto started = cloudflaredLocked(); !started)
            qWarning("cloudflare: %s", qPrintable(started.error().text()));
    if (m_cloudflared && m_cloudflared->isRunning())
        qInfo("cloudflare: cloudflared runs (pid %lld)", m_cloudflared->pid());
    return {};
}

Status CloudflareRouter::zoneLocked()
{
    if (!m_zone.isEmpty())
        return {};
    auto name = m_api->zoneName(m_options.zoneId);
    if (!name)
        return std::unexpected(noted(name.error()));
    m_zone = name->toLower();
    return {};
}

Status CloudflareRouter::saveLocked(const detail::State &state) const
{
    const QByteArray content = detail::stateToJson(state);
    QSaveFile file(routesFile());
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size() ||
        !file.setPermissions(PrivateFile) || !file.commit())
        return fail(ErrorCode::Internal, u"cannot write %1: %2"_s.arg(routesFile(), file.errorString()), u"edge"_s);
    return {};
}

void CloudflareRouter::deleteStaleLocked(detail::State &state)
{
    if (state.staleRecords.isEmpty())
        return;
    bool changed = false;
    const QHash<QString, QString> stale = state.staleRecords;
    for (auto it = stale.constBegin(); it != stale.constEnd(); ++it) {
        if (auto deleted = m_api->deleteDnsRecord(m_options.zoneId, it.value()); !deleted) {
            qWarning("cloudflare: the DNS record of %s (which no app uses) stays until a later try: %s",
                     qPrintable(it.key()), qPrintable(noted(deleted.error()).text()));
            continue;
        }
        state.staleRecords.remove(it.key());
        changed = true;
    }
    if (changed)
        discardResult(saveLocked(state), "a table that still lists a deleted record only makes a later delete a no-op");
}

Status CloudflareRouter::recordsLocked()
{
    const QString target = detail::tunnelTarget(m_options.tunnelId);
    bool changed = false;
    for (auto it = m_state.dnsRecords.begin(); it != m_state.dnsRecords.end(); ++it) {
        auto records = m_api->dnsRecords(m_options.zoneId, it.key());
        if (!records)
            return std::unexpected(noted(records.error()));
        if (std::ranges::any_of(*records, [&](const detail::DnsRecord &r) { return r.id == it.value(); }))
            continue;
        if (!records->isEmpty()) {
            qWarning("cloudflare: the DNS record Pando made for %s was replaced by one it did not make; leaving that",
                     qPrintable(it.key()));
            continue;
        }
        auto id = m_api->createCname(m_options.zoneId, it.key(), target,
                                     u"Made by Pando for app %1"_s.arg(appServing(it.key(), m_state.routes)));
        if (!id)
            return std::unexpected(noted(id.error()));
        qWarning("cloudflare: the DNS record of %s was deleted elsewhere; made it again", qPrintable(it.key()));
        it.value() = *id;
        changed = true;
    }
    if (changed)
        if (auto saved = saveLocked(m_state); !saved)
            return saved;
    return {};
}

Result<QJsonObject> CloudflareRouter::tunnelConfigLocked()
{
    if (auto zone = zoneLocked(); !zone)
        return std::unexpected(zone.error());
    auto current = m_api->tunnelConfig(m_options.accountId, m_options.tunnelId);
    if (!current)
        return std::unexpected(noted(current.error()));
    return current;
}

Status CloudflareRouter::syncLocked()
{
    auto current = tunnelConfigLocked();
    if (!current)
        return std::unexpected(current.error());
    const QSet<QString> pandoKeys = detail::ruleKeys(m_state.routes);
    const QJsonObject config = detail::configWith(*current, detail::ingressRules(m_state.routes), pandoKeys);
    if (detail::comparable(config) != detail::comparable(*current)) {
        qWarning("cloudflare: tunnel %s does not serve Pando's ingress rules (changed elsewhere, or a change was not "
                 "finished); putting them back",
                 qPrintable(m_options.tunnelId));
        if (auto put = m_api->putTunnelConfig(m_options.accountId, m_options.tunnelId, config); !put)
            return std::unexpected(noted(put.error()));
    }
    if (auto records = recordsLocked(); !records)
        return records;
    if (!m_cloudflared) {
        auto tunnel = m_api->tunnelStatus(m_options.accountId, m_options.tunnelId);
        if (!tunnel)
            return std::unexpected(noted(tunnel.error()));
        m_tunnelStatus = *tunnel;
    }
    m_inSync = true;
    m_apiProblem.clear();
    m_lastSync.start();
    deleteStaleLocked(m_state);
    return {};
}

Status CloudflareRouter::applyLocked(const QHash<QString, Route> &routes)
{
    if (!m_started)
        if (auto started = startLocked(); !started)
            return started;
    const QSet<QString> wanted = hostsOf(routes);
    detail::State state = m_state;
    state.routes = routes;
    // Nothing Cloudflare serves changes (a new app without addresses, a backend of an app that
    // has none): the table alone.
    if (detail::ingressRules(routes) == detail::ingressRules(m_state.routes) && wanted == hostsOf(m_state.routes)) {
        if (auto saved = saveLocked(state); !saved)
            return saved;
        m_state = state;
        return {};
    }

    auto current = tunnelConfigLocked();
    if (!current)
        return std::unexpected(current.error());
    const QSet<QString> pandoKeys = detail::ruleKeys(m_state.routes);
    // A name a rule Pando did not make serves is not Pando's to take.
    const QJsonArray before = current->value("ingress"_L1).toArray();
    for (const QJsonValue value : before) {
        const QJsonObject rule = value.toObject();
        const QString host = rule.value("hostname"_L1).toString();
        if (host.isEmpty() || pandoKeys.contains(detail::ruleKey(rule)) || !wanted.contains(host))
            continue;
        return fail(ErrorCode::Conflict,
                    u"%1 is served by a rule of tunnel %2's configuration that Pando did not make (to %3)"_s.arg(
                        host, m_options.tunnelId, rule.value("service"_L1).toString()),
                    u"route.domains"_s,
                    u"remove that public hostname from the tunnel in Cloudflare's dashboard, or pick another host"_s);
    }

    // The DNS records: each name an app is served at has a CNAME to the tunnel; one that holds
    // anything else is not Pando's to change.
    const QString target = detail::tunnelTarget(m_options.tunnelId);
    QStringList toCreate;
    QStringList hosts = wanted.values();
    hosts.sort();
    for (const QString &host : std::as_const(hosts)) {
        if (state.dnsRecords.contains(host))
            continue;
        if (state.staleRecords.contains(host)) {
            state.dnsRecords.insert(host, state.staleRecords.take(host));
            continue;
        }
        auto records = m_api->dnsRecords(m_options.zoneId, host);
        if (!records)
            return std::unexpected(noted(records.error()));
        bool pointsHere = false;
        for (const detail::DnsRecord &record : std::as_const(*records)) {
            if (record.type == "CNAME"_L1 && record.content.compare(target, Qt::CaseInsensitive) == 0) {
                pointsHere = true;
                continue;
            }
            return fail(
                ErrorCode::Conflict,
                u"%1 already has a DNS record that Pando did not make (%2 %3)"_s.arg(host, record.type, record.content),
                u"route.domains"_s, u"delete it in the zone's DNS settings, or pick another host"_s);
        }
        // A CNAME to this tunnel someone else made serves as it is, and stays when Pando is done.
        if (!pointsHere)
            toCreate << host;
    }
    for (const QString &host : state.dnsRecords.keys())
        if (!wanted.contains(host))
            state.staleRecords.insert(host, state.dnsRecords.take(host));

    const QJsonObject config = detail::configWith(*current, detail::ingressRules(routes), pandoKeys);
    const bool changed = detail::comparable(config) != detail::comparable(*current);
    if (changed)
        if (auto put = m_api->putTunnelConfig(m_options.accountId, m_options.tunnelId, config); !put)
            return std::unexpected(noted(put.error()));

    // From here an error puts back what was.
    QStringList created;
    const auto undo = [&] {
        for (const QString &id : std::as_const(created))
            if (auto deleted = m_api->deleteDnsRecord(m_options.zoneId, id); !deleted)
                qWarning("cloudflare: cannot delete the DNS record %s this failed change made: %s", qPrintable(id),
                         qPrintable(deleted.error().text()));
        if (!changed)
            return;
        if (auto back = m_api->putTunnelConfig(m_options.accountId, m_options.tunnelId, *current); !back) {
            // check() puts the table's rules back once the API takes them.
            m_inSync = false;
            qWarning("cloudflare: cannot put tunnel %s's previous ingress back: %s", qPrintable(m_options.tunnelId),
                     qPrintable(back.error().text()));
        }
    };
    for (const QString &host : std::as_const(toCreate)) {
        auto id = m_api->createCname(m_options.zoneId, host, target,
                                     u"Made by Pando for app %1"_s.arg(appServing(host, routes)));
        if (!id) {
            Error error = id.error();
            error.message = u"cannot make the DNS record of %1: %2"_s.arg(host, error.message);
            if (host.startsWith("*."_L1) && error.code == ErrorCode::Invalid)
                error.hint = u"the zone may not allow a proxied wildcard record; name each host instead"_s;
            undo();
            return std::unexpected(noted(error));
        }
        created << *id;
        state.dnsRecords.insert(host, *id);
    }
    if (auto saved = saveLocked(state); !saved) {
        undo();
        return saved;
    }
    m_state = state;
    m_inSync = true;
    m_apiProblem.clear();
    m_lastSync.start();
    deleteStaleLocked(m_state);
    return {};
}

Status CloudflareRouter::cloudflaredLocked()
{
    if (!m_cloudflared || m_cloudflared->isRunning())
        return {};
    m_restarts.ended();
    if (!m_restarts.due())
        return fail(ErrorCode::Unavailable, cloudflaredProblemLocked(), u"cloudflared"_s);
    auto token = m_api->tunnelToken(m_options.accountId, m_options.tunnelId);
    if (!token) {
        m_restarts.tried(false);
        Error error = noted(token.error());
        m_cloudflaredProblem =
            u"cloudflared does not run, and Pando cannot get the tunnel's token: %1"_s.arg(error.text());
        return std::unexpected(error);
    }
    auto started = m_cloudflared->start(*token);
    const QString secret = *token;
    token->fill(u'\0');
    m_restarts.tried(bool(started));
    if (!started) {
        Error error = started.error();
        error.message = detail::scrubbed(error.message, secret);
        m_cloudflaredProblem = error.text();
        return std::unexpected(error);
    }
    m_cloudflaredProblem.clear();
    return {};
}

QString CloudflareRouter::cloudflaredProblemLocked()
{
    const QString problem = m_cloudflaredProblem.isEmpty()
                                ? u"cloudflared %1 (see %2)"_s.arg(m_cloudflared->lastWords(), m_cloudflared->logFile())
                                : m_cloudflaredProblem;
    return m_restarts.due() ? problem : u"%1; %2"_s.arg(problem, m_restarts.waitText());
}

void CloudflareRouter::stopCloudflared()
{
    const std::lock_guard guard(m_mutex);
    if (m_cloudflared)
        m_cloudflared->stop();
}

Result<Route> CloudflareRouter::ensure(const QString &app, int requestedPort)
{
    if (auto named = checkAppName(app); !named)
        return std::unexpected(named.error());
    const std::lock_guard guard(m_mutex);
    if (!m_started)
        if (auto started = startLocked(); !started)
            return std::unexpected(started.error());
    // Nothing listens on its port with this router, but the app keeps it if the install moves to
    // an edge that does.
    return ensureRoute(
        m_state.routes, app, requestedPort, [this](int requested) { return unheldPort(requested, m_state.routes); },
        [this](const QHash<QString, Route> &next) { return applyLocked(next); });
}

Status CloudflareRouter::setBackend(const QString &app, const QString &host, int port)
{
    // The host ends up inside the service URL Cloudflare hands cloudflared.
    static const QRegularExpression hostName(u"^[A-Za-z0-9._:-]{1,253}\\z"_s);
    if (!hostName.match(host).hasMatch())
        return fail(ErrorCode::Invalid, u"backend host \"%1\" is not a host name or address"_s.arg(host), u"host"_s);
    const std::lock_guard guard(m_mutex);
    auto next = withBackend(m_state.routes, app, host, port);
    if (!next)
        return std::unexpected(next.error());
    const std::optional<QHash<QString, Route>> &changed = *next;
    return changed.has_value() ? applyLocked(*changed) : Status{};
}

Status CloudflareRouter::remove(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    QHash<QString, Route> next = m_state.routes;
    return next.remove(app) ? applyLocked(next) : Status{};
}

std::optional<Route> CloudflareRouter::route(const QString &app)
{
    const std::lock_guard guard(m_mutex);
    return m_state.routes.contains(app) ? std::optional(m_state.routes.value(app)) : std::nullopt;
}

Status CloudflareRouter::setAddresses(const QString &app, const AddressChange &change)
{
    // Cloudflare checks nobody: the app would be open to anyone on the internet.
    if (change.signIn)
        return Router::setAddresses(app, change);
    const std::lock_guard guard(m_mutex);
    if (!m_started)
        if (auto started = startLocked(); !started)
            return started;
    // Whether a host is in the zone takes the zone's name.
    if (!change.addresses.isEmpty())
        if (auto zone = zoneLocked(); !zone)
            return zone;
    for (const Address &address : change.addresses)
        if (auto checked = detail::checkAddress(address, m_zone, u"route.domains"_s, u"route.paths"_s); !checked)
            return checked;
    // A tunnel's ingress cannot answer with a redirect: an address the app leaves is dropped.
    AddressChange dropping = change;
    dropping.redirectMoved = false;
    auto next = withAddresses(m_state.routes, app, dropping, [](const Address &a) { return a.url(); });
    if (!next)
        return std::unexpected(next.error());
    std::optional<QHash<QString, Route>> &changed = *next;
    if (!changed.has_value())
        return {};
    Route &route = (*changed)[app];
    if (change.redirectMoved)
        for (const Address &old : m_state.routes.value(app).addresses)
            if (!change.addresses.contains(old))
                qInfo("cloudflare: %s%s is dropped, not redirected: a tunnel's ingress cannot answer with a redirect",
                      qPrintable(old.host), qPrintable(old.path));
    route.url = detail::routeUrl(route);
    return applyLocked(*changed);
}

Status CloudflareRouter::check()
{
    const std::lock_guard guard(m_mutex);
    if (!m_started)
        return startLocked();
    Status result;
    if (auto started = cloudflaredLocked(); !started)
        result = started;
    if (!m_inSync || !m_lastSync.isValid() || m_lastSync.elapsed() >= m_options.apiCheckIntervalMs)
        if (auto synced = syncLocked(); !synced && result)
            result = synced;
    return result;
}

RouterStatus CloudflareRouter::status()
{
    const std::lock_guard guard(m_mutex);
    RouterStatus status;
    status.kind = u"cloudflare"_s;
    status.outlivesPando = true;
    status.routes = int(m_state.routes.size());
    status.httpPort = 80;
    status.httpsPort = 443;
    QStringList problems;
    if (!m_started)
        problems << u"the Cloudflare router has not started"_s;
    if (m_cloudflared) {
        if (m_cloudflared->isRunning()) {
            status.pid = m_cloudflared->pid();
            const int ready = m_cloudflared->ready();
            if (ready == 0) {
                status.running = false;
                problems << u"cloudflared (pid %1) runs but holds no connection to Cloudflare (see %2)"_s
                                .arg(status.pid)
                                .arg(m_cloudflared->logFile());
            } else if (ready < 0) {
                status.running = false;
                problems << u"cloudflared (pid %1) does not answer on its metrics address 127.0.0.1:%2 (see %3)"_s
                                .arg(status.pid)
                                .arg(m_cloudflared->metricsPort())
                                .arg(m_cloudflared->logFile());
            }
        } else {
            status.running = false;
            problems << cloudflaredProblemLocked();
        }
    } else if (m_tunnelStatus == "degraded"_L1) {
        problems << u"Cloudflare reports tunnel %1 as degraded"_s.arg(m_options.tunnelId);
    } else if (!m_tunnelStatus.isEmpty() && m_tunnelStatus != "healthy"_L1) {
        status.running = false;
        problems << u"Cloudflare reports tunnel %1 as %2: no cloudflared serves it (run it with the tunnel's token, or "
                    "give Pando --cloudflared)"_s.arg(m_options.tunnelId, m_tunnelStatus);
    }
    if (!m_apiProblem.isEmpty())
        problems << m_apiProblem + u" (the tunnel serves the last configuration it was given)"_s;
    else if (m_started && !m_inSync)
        problems << u"the tunnel's ingress has not been brought in line with Pando's routes yet"_s;
    if (!m_state.staleRecords.isEmpty()) {
        QStringList hosts = m_state.staleRecords.keys();
        hosts.sort();
        problems << u"the DNS records Pando made for %1 are left to delete (tried again every %2 s)"_s
                        .arg(hosts.join(u", "_s))
                        .arg(m_options.apiCheckIntervalMs / 1000);
    }
    status.problem = problems.join(u"; "_s);
    return status;
}

} // namespace pando::adapters::cloudflare
