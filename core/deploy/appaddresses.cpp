#include "core/deploy/appaddresses.h"

#include "core/policy/domainpolicy.h"
#include "core/state/repositories.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Result<QList<adapters::Address>> planAddresses(Database &db, adapters::Router &router, const QString &app,
                                               const AppSpec &spec)
{
    auto policy = policy::readDomainPolicy(db);
    if (!policy)
        return std::unexpected(policy.error());
    if (spec.route.auth == AppSpec::Route::Auth::Pando && !router.assertsIdentity())
        return fail(ErrorCode::Invalid,
                    u"app %1 is for people signed in to Pando, but this install's edge cannot ask Pando who they are"_s
                        .arg(app),
                    u"route.auth"_s,
                    u"run Pando with the Caddy edge (--edge caddy, docs/edge.md), or leave route.auth out"_s);
    auto addresses = policy::appAddresses(spec, *policy);
    if (!addresses || addresses->isEmpty())
        return addresses;
    if (!router.servesAddresses())
        return fail(ErrorCode::Invalid,
                    u"app %1 would be served at %2, but this install's edge serves apps on loopback ports only"_s.arg(
                        app, addresses->first().host),
                    spec.route.domains.isEmpty() ? u"route"_s : u"route.domains"_s,
                    u"run Pando with the Caddy edge (--edge caddy, docs/edge.md), or leave route.domains out"_s);
    // What every other app asks for, and what the edge serves for it (a deploy may not have
    // caught up with its spec yet): either one holds the address.
    auto apps = AppRepository(db).list();
    if (!apps)
        return std::unexpected(apps.error());
    QList<std::pair<QString, QList<adapters::Address>>> others;
    for (const AppRecord &other : std::as_const(*apps)) {
        if (other.name == app)
            continue;
        if (auto otherSpec = parseAppSpec(other.specYaml.toUtf8()))
            if (auto held = policy::appAddresses(*otherSpec, *policy))
                others.append({other.name, *held});
        if (auto route = router.route(other.name))
            others.append({other.name, route->addresses});
    }
    if (auto clash = policy::checkAddressClash(app, *addresses, others); !clash)
        return std::unexpected(clash.error());
    return addresses;
}

adapters::AddressChange addressChange(const AppSpec &spec, const QList<adapters::Address> &addresses)
{
    return adapters::AddressChange{addresses, spec.route.moved == AppSpec::Route::Moved::Redirect,
                                   spec.route.auth == AppSpec::Route::Auth::Pando};
}

} // namespace pando::core
