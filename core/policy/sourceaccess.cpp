#include "sourceaccess.h"

#include "adapters/api/netaddress.h"
#include "core/accounts/accounts.h"
#include "core/state/pipelinerepositories.h"

#include <QHostAddress>
#include <QHostInfo>
#include <QRegularExpression>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::core::policy {

namespace {

constexpr auto On = "on";
constexpr auto Off = "off";

QString settingName(const char *name)
{
    return QString::fromLatin1(name);
}

Result<bool> readFlag(InstallSettingRepository &repo, const char *name)
{
    auto value = repo.value(settingName(name), QString::fromLatin1(Off));
    if (!value)
        return std::unexpected(value.error());
    return *value == QLatin1String(On);
}

// The URL with any password replaced, for errors.
QString shown(const QString &repo)
{
    if (!repo.contains(u"://"_s))
        return repo;
    QUrl url(repo, QUrl::TolerantMode);
    if (!url.isValid())
        return u"the repository"_s;
    if (!url.password().isEmpty())
        url.setPassword(u"***"_s);
    return url.toString();
}

struct Target {
    QString scheme; // "file", "https", "http", "ssh" or "scp" (user@host:path); empty: not understood
    QString host;
};

Target targetOf(const QString &repo)
{
    static const QRegularExpression schemeRe(u"^([A-Za-z][A-Za-z0-9+.-]*)://"_s);
    if (const auto m = schemeRe.match(repo); m.hasMatch()) {
        const QUrl url(repo, QUrl::StrictMode);
        return Target{m.captured(1).toLower(), url.host()};
    }
    static const QRegularExpression scpRe(u"^[^@/]+@(\\[[^\\]]+\\]|[^:/]+):"_s);
    if (const auto m = scpRe.match(repo); m.hasMatch()) {
        QString host = m.captured(1);
        if (host.startsWith(u'['))
            host = host.mid(1, host.size() - 2);
        return Target{u"scp"_s, host};
    }
    return {};
}

Error internalHost(const QString &repo, const QString &host)
{
    return Error{ErrorCode::Forbidden,
                 u"%1 names a host on this machine or its link (%2); an app whose spec a member writes may not read "
                 "from there"_s.arg(shown(repo), host),
                 u"source.repo"_s,
                 u"use a repository on another host, or ask an administrator (pando settings set internal-hosts on)"_s};
}

} // namespace

QString PortRange::text() const
{
    return isNone() ? u"none"_s : u"%1-%2"_s.arg(first).arg(last);
}

Result<PortRange> PortRange::parse(const QString &text, const QString &where)
{
    if (text == u"none")
        return PortRange{};
    static const QRegularExpression re(u"^(\\d{1,5})-(\\d{1,5})$"_s);
    const auto m = re.match(text);
    const int first = m.hasMatch() ? m.captured(1).toInt() : 0;
    const int last = m.hasMatch() ? m.captured(2).toInt() : 0;
    if (!m.hasMatch() || first < 1024 || last > 65535 || first > last)
        return fail(ErrorCode::Invalid, u"\"%1\" is not a port range"_s.arg(text), where,
                    u"write FIRST-LAST within 1024-65535 (e.g. 20000-29999), or none"_s);
    return PortRange{first, last};
}

Result<int> AppAccess::parseDeployLogDays(const QJsonValue &value, const QString &where)
{
    if (value == QJsonValue(u"forever"_s))
        return 0;
    bool ok = value.isDouble() && value.toDouble() == double(value.toInt());
    int days = value.toInt();
    if (value.isString())
        days = value.toString().toInt(&ok);
    if (!ok || days < 0 || days > MaxDeployLogDays)
        return fail(ErrorCode::Invalid,
                    u"must be a number of days from 1 to %1, or \"forever\" (0)"_s.arg(MaxDeployLogDays), where,
                    u"e.g. 90 keeps each deploy's output for 90 days after it ended"_s);
    return days;
}

Result<AppAccess> readAppAccess(Database &db)
{
    InstallSettingRepository repo(db);
    AppAccess access;
    auto local = readFlag(repo, LocalRepositoriesSetting);
    auto agent = readFlag(repo, SshAgentSetting);
    auto internal = readFlag(repo, InternalHostsSetting);
    auto forks = readFlag(repo, PreviewForksSetting);
    for (const auto *flag : {&local, &agent, &internal, &forks})
        if (!*flag)
            return std::unexpected(flag->error());
    access.localRepositories = *local;
    access.sshAgent = *agent;
    access.internalHosts = *internal;
    access.previewForks = *forks;
    auto ports = repo.value(settingName(MemberPortsSetting), access.memberPorts.text());
    if (!ports)
        return std::unexpected(ports.error());
    auto range = PortRange::parse(*ports, settingName(MemberPortsSetting));
    if (!range)
        return std::unexpected(range.error());
    access.memberPorts = *range;
    auto days = repo.value(settingName(DeployLogDaysSetting), QString::number(access.deployLogDays));
    if (!days)
        return std::unexpected(days.error());
    auto parsed = AppAccess::parseDeployLogDays(QJsonValue(*days), settingName(DeployLogDaysSetting));
    if (!parsed)
        return std::unexpected(parsed.error());
    access.deployLogDays = *parsed;
    return access;
}

Result<QStringList> writeAppAccess(Database &db, const AppAccess &settings, const QString &actor, qint64 nowMs)
{
    auto before = readAppAccess(db);
    if (!before)
        return std::unexpected(before.error());
    const auto flag = [](bool on) {
        return QString::fromLatin1(on ? On : Off);
    };
    const auto daysText = [](int days) {
        return days == 0 ? u"forever"_s : QString::number(days);
    };
    const QList<std::pair<const char *, std::pair<QString, QString>>> values = {
        {LocalRepositoriesSetting, {flag(before->localRepositories), flag(settings.localRepositories)}},
        {SshAgentSetting, {flag(before->sshAgent), flag(settings.sshAgent)}},
        {InternalHostsSetting, {flag(before->internalHosts), flag(settings.internalHosts)}},
        {PreviewForksSetting, {flag(before->previewForks), flag(settings.previewForks)}},
        {MemberPortsSetting, {before->memberPorts.text(), settings.memberPorts.text()}},
        {DeployLogDaysSetting, {daysText(before->deployLogDays), daysText(settings.deployLogDays)}},
    };
    QStringList changed;
    InstallSettingRepository repo(db);
    for (const auto &[name, value] : values) {
        if (value.first == value.second)
            continue;
        if (auto saved = repo.set(settingName(name), value.second, actor, nowMs); !saved)
            return std::unexpected(saved.error());
        changed.append(settingName(name));
    }
    return changed;
}

bool hasInstallAuthority(const Actor &actor)
{
    return !actor.role || *actor.role == accounts::Role::Admin;
}

Status checkSource(const QString &repo, bool trusted, const AppAccess &settings)
{
    if (trusted)
        return {};
    const Target target = targetOf(repo);
    if (target.scheme == u"file") {
        if (settings.localRepositories)
            return {};
        return fail(ErrorCode::Forbidden,
                    u"an app whose spec a member writes may not read repositories on this host (file://)"_s,
                    u"source.repo"_s,
                    u"push the repository to a git server, or ask an administrator (pando settings set "
                    "local-repositories on)"_s);
    }
    static const QStringList remote = {u"https"_s, u"http"_s, u"ssh"_s, u"scp"_s};
    if (!remote.contains(target.scheme) || target.host.isEmpty())
        return fail(ErrorCode::Invalid, u"%1 is not an https, http or ssh repository address"_s.arg(shown(repo)),
                    u"source.repo"_s, u"use https://, http://, ssh:// or user@host:path"_s);
    if (settings.internalHosts)
        return {};
    if (QHostAddress literal; literal.setAddress(target.host)) {
        if (adapters::isInternalAddress(literal))
            return std::unexpected(internalHost(repo, target.host));
        return {};
    }
    // A name that does not resolve is left to the fetch, which fails like any other.
    const QHostInfo info = QHostInfo::fromName(target.host);
    for (const QHostAddress &address : info.addresses())
        if (adapters::isInternalAddress(address))
            return std::unexpected(internalHost(repo, target.host));
    return {};
}

adapters::SourceAccess sourceAccess(bool trusted, const AppAccess &settings)
{
    return adapters::SourceAccess{trusted || settings.sshAgent, trusted || settings.internalHosts};
}

Error unreadableSource(const QString &repo)
{
    return Error{ErrorCode::Invalid,
                 u"cannot read %1: it cannot be reached, is not a git repository, or asks for credentials this app "
                 "may not use"_s.arg(shown(repo)),
                 u"source.repo"_s,
                 u"check the address; a private repository needs an administrator to allow the install's ssh-agent "
                 "(pando settings set ssh-agent on)"_s};
}

Status checkMemberPort(int port, bool trusted, const AppAccess &settings)
{
    if (trusted || port == 0 || settings.memberPorts.contains(port))
        return {};
    if (settings.memberPorts.isNone())
        return fail(ErrorCode::Forbidden, u"members may not pick a stable port on this install"_s, u"route.port"_s,
                    u"leave route.port out: a port is picked for the app"_s);
    return fail(ErrorCode::Forbidden,
                u"members may pick stable ports from %1 only, not %2"_s.arg(settings.memberPorts.text()).arg(port),
                u"route.port"_s, u"pick a port in %1, or leave route.port out"_s.arg(settings.memberPorts.text()));
}

} // namespace pando::core::policy
