#pragma once
// Whose means an app's source is read with, and which stable ports a member may pick. An app
// whose spec an administrator wrote (or the install's own authority: the desktop's owner, the
// initial token) reads its source with the install's means: file:// repositories on this host,
// the daemon's ssh-agent and credentials, hosts on loopback and link-local addresses. A member's
// app reads only with what the install settings give members, all off by default; an
// administrator changes them (GET/PUT /api/v1/settings, `pando settings set`). docs/security.md,
// "Apps and data", has the threats.
//
// Threading: any thread. checkSource() may block on a DNS lookup (the resolver's own timeouts).

#include "adapters/api/error.h"
#include "adapters/api/source.h"
#include "core/audit/auditlog.h"
#include "core/state/database.h"

#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace pando::core::policy {

// The settings' names in install_settings.
inline constexpr auto LocalRepositoriesSetting = "apps.local_repositories";
inline constexpr auto SshAgentSetting = "apps.ssh_agent";
inline constexpr auto InternalHostsSetting = "apps.internal_hosts";
inline constexpr auto MemberPortsSetting = "apps.member_ports";
inline constexpr auto PreviewForksSetting = "apps.preview_forks";
inline constexpr auto DeployLogDaysSetting = "apps.deploy_log_days";

// Stable ports members may ask for; none: a member's route.port must be left out (one is picked).
struct PortRange {
    int first = 0;
    int last = 0;
    bool isNone() const { return first == 0; }
    bool contains(int port) const { return !isNone() && port >= first && port <= last; }
    QString text() const; // "20000-29999" or "none"
    // "FIRST-LAST" (1024..65535, FIRST <= LAST) or "none"; where names the field in errors.
    static Result<PortRange> parse(const QString &text, const QString &where);
};

struct AppAccess {
    bool localRepositories = false; // members may read file:// repositories
    bool sshAgent = false;          // members' fetches may offer the daemon's ssh-agent and credentials
    bool internalHosts = false;     // members may read from loopback and link-local addresses
    bool previewForks = false;      // pull requests from forks get previews (docs/autodeploy.md)
    PortRange memberPorts{20000, 29999};
    // How many days a deploy's output is kept after the deploy ended (0: for ever); the output of
    // the deploy an app serves is kept as long as it serves (core/engine/enginelogs.cpp).
    int deployLogDays = 90;
    static constexpr int MaxDeployLogDays = 3650;
    // A number of days (0: for ever) or "forever", as JSON or text; where names the field in errors.
    static Result<int> parseDeployLogDays(const QJsonValue &value, const QString &where);
};

Result<AppAccess> readAppAccess(Database &db);
// Stores every field; returns the setting names whose value changed.
Result<QStringList> writeAppAccess(Database &db, const AppAccess &settings, const QString &actor, qint64 nowMs);

// Whether actor acts with the install's authority: no role (the install itself) or an administrator.
bool hasInstallAuthority(const Actor &actor);

// The rules for a repository URL before anything is fetched. Trusted: none. Otherwise only
// https, http, ssh and user@host:path; file:// needs localRepositories; a host that is, or
// resolves to, a loopback, link-local or unspecified address needs internalHosts. The fetch
// resolves the name again and checks each address it connects to (sourceAccess's
// internalHosts), so a name whose answer changes in between is refused there.
Status checkSource(const QString &repo, bool trusted, const AppAccess &settings);
// What a fetch for such an app may offer the remote.
adapters::SourceAccess sourceAccess(bool trusted, const AppAccess &settings);
// The one answer an untrusted app's failed fetch gets, whatever failed (a closed or open port,
// not a repository, credentials asked for, a timeout), so a fetch cannot probe ports; a ref
// that does not exist keeps its own error. No host path, no credential in it.
Error unreadableSource(const QString &repo);
// How long, at least, an untrusted fetch takes to fail, so that a refused connection and an
// answer that is not git look alike.
inline constexpr int UnreadableSourceFloorMs = 750;
// route.port of a spec written without the install's authority: 0 (picked), or in memberPorts.
Status checkMemberPort(int port, bool trusted, const AppAccess &settings);

} // namespace pando::core::policy
