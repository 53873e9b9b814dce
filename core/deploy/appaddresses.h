#pragma once
// Where an app is reached on the edge: the addresses its spec asks for under the install's domain
// policy (core/policy/domainpolicy.h), checked against what the edge can serve and what other apps
// hold. Creating or changing an app checks them, so a refused name is an error before anything
// exists; the deploy's plan step checks them again (the policy or another app may have changed)
// and its switch hands them to the edge.
//
// Threading: any thread; reads the database and asks the router.

#include "adapters/api/error.h"
#include "adapters/api/routing.h"
#include "core/spec/appspec.h"
#include "core/state/database.h"

#include <QList>

namespace pando::core {

Result<QList<adapters::Address>> planAddresses(Database &db, adapters::Router &router, const QString &app,
                                               const AppSpec &spec);

// What the edge is told when the spec's addresses are served.
adapters::AddressChange addressChange(const AppSpec &spec, const QList<adapters::Address> &addresses);

} // namespace pando::core
