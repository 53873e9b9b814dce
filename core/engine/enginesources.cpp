// The engine's side of core/policy/sourceaccess: the install settings for members' apps, and
// reading a spec's source with the means of whoever wrote it.

#include "core/engine/engineprivate.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QThread>

using namespace Qt::StringLiterals;

namespace pando::core {

Result<policy::AppAccess> Engine::appAccess()
{
    return policy::readAppAccess(d->db);
}

Status Engine::setAppAccess(const policy::AppAccess &settings, const Actor &actor)
{
    if (!policy::hasInstallAuthority(actor))
        return fail(ErrorCode::Forbidden, u"only administrators change the install's settings"_s, u"settings"_s);
    auto changed = policy::writeAppAccess(d->db, settings, actor.name, d->clock.nowMs());
    if (!changed)
        return std::unexpected(changed.error());
    if (changed->isEmpty())
        return {};
    const QJsonObject detail{{u"changed"_s, QJsonArray::fromStringList(*changed)},
                             {u"local_repositories"_s, settings.localRepositories},
                             {u"ssh_agent"_s, settings.sshAgent},
                             {u"internal_hosts"_s, settings.internalHosts},
                             {u"preview_forks"_s, settings.previewForks},
                             {u"member_ports"_s, settings.memberPorts.text()},
                             {u"deploy_log_days"_s, settings.deployLogDays}};
    if (auto audited = d->audit.record(actor, u"settings.apps"_s, u"install"_s, u"success"_s, detail); !audited)
        return std::unexpected(unaudited(u"the settings were changed"_s, audited.error()));
    return {};
}

Result<policy::DomainPolicy> Engine::domainPolicy()
{
    return policy::readDomainPolicy(d->db);
}

Status Engine::setDomainPolicy(const policy::DomainPolicy &domains, const Actor &actor)
{
    if (!policy::hasInstallAuthority(actor))
        return fail(ErrorCode::Forbidden, u"only administrators change the install's settings"_s, u"settings"_s);
    auto changed = policy::writeDomainPolicy(d->db, domains, actor.name, d->clock.nowMs());
    if (!changed)
        return std::unexpected(changed.error());
    if (changed->isEmpty())
        return {};
    const QJsonObject detail{{u"changed"_s, QJsonArray::fromStringList(*changed)},
                             {u"base_domain"_s, domains.baseDomain},
                             {u"allowed_domains"_s, QJsonArray::fromStringList(domains.allowed)},
                             {u"wildcard_domains"_s, domains.wildcards}};
    if (auto audited = d->audit.record(actor, u"settings.domains"_s, u"install"_s, u"success"_s, detail); !audited)
        return std::unexpected(unaudited(u"the settings were changed"_s, audited.error()));
    return {};
}

Status Engine::Private::checkSourceUrl(const AppSpec &spec) const
{
    if (spec.source.isImage())
        return {}; // its registry is asked at deploy
    if (auto url = source->checkUrl(spec.source.repo); !url) {
        Error e = url.error();
        e.where = u"source.repo"_s;
        return std::unexpected(e);
    }
    return {};
}

Result<QString> Engine::Private::resolveSource(const AppSpec &spec, bool trusted, const QString &connection,
                                               const QString &refWhere)
{
    if (spec.source.isImage())
        return QString(); // no commit: the image is asked of its registry when the deploy builds
    auto settings = policy::readAppAccess(db);
    if (!settings)
        return std::unexpected(settings.error());
    QElapsedTimer clock;
    clock.start();
    // Every failure of an untrusted read looks alike, in its text and in how long it took.
    const auto unreadable = [&](const QString &repo) -> Result<QString> {
        if (const qint64 left = policy::UnreadableSourceFloorMs - clock.elapsed(); left > 0)
            QThread::msleep(static_cast<unsigned long>(left));
        return std::unexpected(policy::unreadableSource(repo));
    };
    if (auto allowed = policy::checkSource(spec.source.repo, trusted, *settings); !allowed)
        return std::unexpected(allowed.error());
    auto access = fetchAccess(services, trusted, *settings, connection);
    if (!access)
        return std::unexpected(access.error());
    auto commit = source->resolve(spec.source.repo, spec.source.ref, *access);
    if (std::optional<adapters::SourceCredential> &credential = access->credential)
        credential->wipe();
    if (commit)
        return commit;
    noteRefusal(services, connection, commit.error());
    Error e = commit.error();
    if (e.code == ErrorCode::NotFound) {
        e.where = refWhere;
        return std::unexpected(e);
    }
    if (!trusted && e.code != ErrorCode::Cancelled)
        return unreadable(spec.source.repo);
    e.where = u"source.repo"_s;
    if (connection.isEmpty() && e.code == ErrorCode::Unauthorized)
        e.hint = u"add a source connection that covers it (pando connections add, or the desktop's Sources "
                 u"view); apps read through it from their next create or update"_s;
    else if (e.code == ErrorCode::Unauthorized)
        e.hint = u"it was read through connection %1: check that its token or key may read this repository "
                 u"(pando connections test %1 %2)"_s.arg(connection, spec.source.repo);
    return std::unexpected(e);
}

} // namespace pando::core
