#pragma once
// What the Caddy edge's tests share: a check that a result worked (printing its error when not),
// and an app routed to a backend at an address in one call.

#include "adapters/routing/caddy/caddyedge.h"

#include <QByteArray>
#include <QTest>

namespace pando::test {

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}

// ensure, setBackend (127.0.0.1:backendPort) and setAddresses; the first failure's error.
inline Status serveApp(adapters::caddy::CaddyEdge &edge, const QString &app, quint16 backendPort,
                       const adapters::Address &address)
{
    if (auto route = edge.ensure(app, 0); !route)
        return std::unexpected(route.error());
    if (auto backend = edge.setBackend(app, QStringLiteral("127.0.0.1"), backendPort); !backend)
        return backend;
    return edge.setAddresses(app, {{address}});
}

} // namespace pando::test

#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), pando::test::errorText(result).constData())
