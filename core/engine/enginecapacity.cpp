// Engine: capacity, the edge and disk limits.
#include "core/engine/engineprivate.h"

#include "core/disklimit/diskstates.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Result<QList<capacity::RuntimeCapacity>> Engine::capacity()
{
    return capacity::report(d->db, *d->runtime, d->options.policy);
}

adapters::RouterStatus Engine::edge()
{
    return d->router->status();
}

QList<adapters::CertificateState> Engine::edgeCertificates(const authz::Visibility &visibility)
{
    QSet<QString> hosts;
    auto apps = AppRepository(d->db).list();
    if (apps)
        for (const AppRecord &app : std::as_const(*apps))
            if (visibility.seesApp(app.name))
                if (auto route = d->router->route(app.name))
                    for (const adapters::Address &address : std::as_const(route->addresses))
                        hosts.insert(address.host);
    QList<adapters::CertificateState> seen;
    for (const adapters::CertificateState &certificate : d->router->certificates())
        if (hosts.contains(certificate.host))
            seen.append(certificate);
    return seen;
}

QByteArray Engine::edgeInstallCa()
{
    return d->router->installCa();
}

Result<QStringList> Engine::checkDiskLimits()
{
    auto changes = d->diskLimiter.check();
    d->observer.invalidate();
    return changes;
}

QString Engine::Private::diskStatusReason(const AppRecord &app)
{
    auto state = disklimit::DiskStates(db).find(app.name);
    if (!state)
        return {};
    const auto &held = *state;
    if (!held || held->deployId != app.currentDeploy || app.currentDeploy.isEmpty())
        return {};
    return held->reason();
}

} // namespace pando::core
