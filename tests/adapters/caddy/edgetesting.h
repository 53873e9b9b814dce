#pragma once
// What the Caddy edge's tests share: a check that a result worked (printing its error when not),
// an app routed to a backend at an address in one call, a name's certificate state, and the site
// the ACME tests run on (the edge's ports, with Pebble validating against them).

#include "adapters/routing/caddy/caddyedge.h"
#include "tests/support/httpbackend.h"
#include "tests/support/pebble.h"

#include <QByteArray>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

namespace pando::test {

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}

// ensure, setBackend (127.0.0.1:backendPort) and setAddresses; the first failure's error.
inline Status serveApp(adapters::Router &edge, const QString &app, quint16 backendPort,
                       const adapters::Address &address)
{
    if (auto route = edge.ensure(app, 0); !route)
        return std::unexpected(route.error());
    if (auto backend = edge.setBackend(app, QStringLiteral("127.0.0.1"), backendPort); !backend)
        return backend;
    return edge.setAddresses(app, {{address}});
}

inline std::optional<adapters::CertificateState> certificateOf(adapters::Router &edge, const QString &host)
{
    for (const adapters::CertificateState &state : edge.certificates())
        if (state.host == host)
            return state;
    return std::nullopt;
}

// A temporary directory, the edge's HTTP and HTTPS ports on 127.0.0.1, and Pebble validating
// challenges against them.
struct PebbleSite {
    std::unique_ptr<QTemporaryDir> dir = std::make_unique<QTemporaryDir>();
    std::unique_ptr<Pebble> pebble;
    int http = unusedPort();
    int https = unusedPort();

    bool startPebble(PebbleOptions options = {})
    {
        options.httpPort = http;
        options.tlsPort = https;
        pebble = std::make_unique<Pebble>(options);
        return pebble->start();
    }
    // The Caddy edge in dir/edge on the site's ports.
    adapters::caddy::CaddyEdgeOptions edgeOptions() const
    {
        adapters::caddy::CaddyEdgeOptions o{.stateDir = dir->filePath(QStringLiteral("edge"))};
        o.site.listenHost = QStringLiteral("127.0.0.1");
        o.site.httpPort = http;
        o.site.httpsPort = https;
        return o;
    }
    QString url(const QString &host, const QString &path = QStringLiteral("/")) const
    {
        return QStringLiteral("https://%1:%2%3").arg(host).arg(https).arg(path);
    }
};

} // namespace pando::test

#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), pando::test::errorText(result).constData())
