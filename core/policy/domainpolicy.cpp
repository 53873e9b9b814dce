#include "domainpolicy.h"

#include "core/spec/specroute.h"
#include "core/state/pipelinerepositories.h"

using namespace Qt::StringLiterals;

namespace pando::core::policy {

namespace {

bool isUnder(const QString &host, const QString &name)
{
    return host == name || host.endsWith(u'.' + name);
}

} // namespace

Status DomainPolicy::permits(const QString &host, const QString &where) const
{
    const bool wildcard = host.startsWith(u"*."_s);
    if (wildcard && !wildcards)
        return fail(ErrorCode::Invalid, u"this install does not serve wildcard names like %1"_s.arg(host), where,
                    u"list the names, or ask an administrator to allow wildcards (pando settings set "
                    "wildcard-domains on)"_s);
    const QString name = wildcard ? host.mid(2) : host;
    if (allowed.isEmpty() || (!baseDomain.isEmpty() && isUnder(name, baseDomain)))
        return {};
    if (std::ranges::any_of(allowed, [&](const QString &a) { return isUnder(name, a); }))
        return {};
    QStringList names = allowed;
    if (!baseDomain.isEmpty())
        names.prepend(baseDomain);
    return fail(ErrorCode::Invalid, u"this install does not serve %1"_s.arg(host), where,
                u"use a name under %1, or ask an administrator to allow it (pando settings set allowed-domains)"_s.arg(
                    names.join(u", "_s)));
}

Result<QString> parseBaseDomain(const QString &text, const QString &where)
{
    if (text.trimmed().isEmpty())
        return QString();
    auto name = normaliseDomain(text, where);
    if (!name)
        return std::unexpected(name.error());
    if (name->startsWith(u"*."_s))
        return fail(ErrorCode::Invalid, u"the base domain is a name, not a wildcard"_s, where,
                    u"write apps.example.com: apps are then NAME.apps.example.com"_s);
    return name;
}

Result<QStringList> parseAllowedDomains(const QStringList &names, const QString &where)
{
    QStringList kept;
    for (qsizetype i = 0; i < names.size(); ++i) {
        if (names[i].trimmed().isEmpty())
            continue;
        auto name = parseBaseDomain(names[i], u"%1[%2]"_s.arg(where).arg(i));
        if (!name)
            return std::unexpected(name.error());
        if (!kept.contains(*name))
            kept << *name;
    }
    return kept;
}

Result<DomainPolicy> readDomainPolicy(Database &db)
{
    InstallSettingRepository repo(db);
    auto base = repo.value(QString::fromLatin1(BaseDomainSetting), {});
    auto allowed = repo.value(QString::fromLatin1(AllowedDomainsSetting), {});
    auto wildcards = repo.value(QString::fromLatin1(WildcardDomainsSetting), u"off"_s);
    for (const auto *value : {&base, &allowed, &wildcards})
        if (!*value)
            return std::unexpected(value->error());
    DomainPolicy policy;
    policy.baseDomain = *base;
    policy.allowed = allowed->split(u',', Qt::SkipEmptyParts);
    policy.wildcards = *wildcards == u"on";
    return policy;
}

Result<QStringList> writeDomainPolicy(Database &db, const DomainPolicy &policy, const QString &actor, qint64 nowMs)
{
    auto before = readDomainPolicy(db);
    if (!before)
        return std::unexpected(before.error());
    const auto flag = [](bool on) {
        return on ? u"on"_s : u"off"_s;
    };
    const QList<std::pair<const char *, std::pair<QString, QString>>> values = {
        {BaseDomainSetting, {before->baseDomain, policy.baseDomain}},
        {AllowedDomainsSetting, {before->allowed.join(u','), policy.allowed.join(u',')}},
        {WildcardDomainsSetting, {flag(before->wildcards), flag(policy.wildcards)}},
    };
    QStringList changed;
    InstallSettingRepository repo(db);
    for (const auto &[name, value] : values) {
        if (value.first == value.second)
            continue;
        if (auto saved = repo.set(QString::fromLatin1(name), value.second, actor, nowMs); !saved)
            return std::unexpected(saved.error());
        changed.append(QString::fromLatin1(name));
    }
    return changed;
}

Result<QList<adapters::Address>> appAddresses(const AppSpec &spec, const DomainPolicy &policy)
{
    QStringList hosts = spec.route.domains;
    if (hosts.isEmpty() && !policy.baseDomain.isEmpty())
        hosts << spec.name + u'.' + policy.baseDomain;
    if (hosts.isEmpty()) {
        if (!spec.route.paths.isEmpty())
            return fail(ErrorCode::Invalid, u"paths need a domain to hold them"_s, u"route.paths"_s,
                        u"add route.domains, or ask an administrator to set the install's base domain"_s);
        return QList<adapters::Address>{};
    }
    for (qsizetype i = 0; i < spec.route.domains.size(); ++i)
        if (auto ok = policy.permits(spec.route.domains[i], u"route.domains[%1]"_s.arg(i)); !ok)
            return std::unexpected(ok.error());
    const QStringList paths = spec.route.paths.isEmpty() ? QStringList{u"/"_s} : spec.route.paths;
    QList<adapters::Address> addresses;
    for (const QString &host : std::as_const(hosts))
        for (const QString &path : paths)
            addresses.append(adapters::Address{host, path, routeTlsFor(spec.route, host)});
    return addresses;
}

Status checkAddressClash(const QString &app, const QList<adapters::Address> &addresses,
                         const QList<std::pair<QString, QList<adapters::Address>>> &others)
{
    for (const auto &[other, held] : others) {
        if (other == app)
            continue;
        for (const adapters::Address &mine : addresses)
            for (const adapters::Address &theirs : held)
                if (mine.overlaps(theirs)) {
                    const QString address = theirs.host + (theirs.path == u"/" ? QString() : theirs.path);
                    return fail(ErrorCode::Conflict,
                                mine.path == theirs.path
                                    ? u"app %1 is already served at %2"_s.arg(other, address)
                                    : u"%1%2 overlaps app %3's address %4"_s.arg(mine.host, mine.path, other, address),
                                u"route.domains"_s, u"pick another name or path, or move %1 first"_s.arg(other));
                }
    }
    return {};
}

} // namespace pando::core::policy
