#pragma once
// The AppSpec's route section beyond the stable port: the domains and paths an app is reached at
// through the edge, how they are served (TLS) and what happens to an address the app stops using.
// Domain names are kept in their ASCII (punycode) form, so "bücher.example" and
// "xn--bcher-kva.example" are one name; a name written half in each form is refused.

#include "adapters/api/error.h"
#include "adapters/api/routing.h"
#include "core/spec/appspec.h"
#include "core/spec/yamlreader.h"

#include <QJsonObject>
#include <QString>

namespace pando::core {

inline constexpr int MaxRouteDomains = 16;
inline constexpr int MaxRoutePaths = 8;

// A domain as the spec may write it (Unicode or punycode, any case, "*." in front for a
// wildcard) in its ASCII lower-case form; Invalid at where, saying what is wrong with it.
Result<QString> normaliseDomain(const QString &name, const QString &where);
// A path prefix in its kept form ("/api/" → "/api"); Invalid at where.
Result<QString> normaliseRoutePath(const QString &path, const QString &where);
// Names only a local network resolves (.local, .lan, .internal, .home.arpa, .test, .localhost,
// .example, .invalid): no public CA can issue for them, so they default to the install's CA.
bool isLocalOnlyDomain(const QString &host);
// How host is served: route.tls when the spec sets it, else by the name (above).
adapters::TlsMode routeTlsFor(const AppSpec::Route &route, const QString &host);
// "redirect" or "drop".
QString movedName(AppSpec::Route::Moved moved);

namespace detail {

// domains, paths, tls, moved and auth of the route mapping (the port is read beside them).
Status readRouteAddresses(const DocNode &route, AppSpec &spec);
// The same rules for a spec built in code.
Status checkRouteAddresses(const AppSpec::Route &route);
// Adds domains, paths, tls, moved and auth to the route's JSON when they are set.
void insertRouteJson(const AppSpec::Route &route, QJsonObject &json);

} // namespace detail

} // namespace pando::core
