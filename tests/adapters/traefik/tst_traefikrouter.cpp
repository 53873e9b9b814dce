// The Traefik router against real files: the dynamic configuration it writes for apps on
// subdomains, on a path, without TLS, on a wildcard, moved and switched to another backend, read
// back as YAML and checked against a JSON Schema of Traefik v3's dynamic configuration and its v3
// rule syntax (check_traefik_config.py); a reader never sees half a file; a restart adopts the
// routes as they were; conflicts and bad addresses are refused with nothing changed. No Traefik
// runs here: what Traefik does with the files is not tested (docs/edge.md).

#include "adapters/routing/traefik/traefikrouter.h"
#include "tests/support/component.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using pando::adapters::traefik::TraefikRouter;
using pando::adapters::traefik::TraefikRouterOptions;

namespace {

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString checker()
{
    return test::sourceDir() + u"/tests/adapters/traefik/check_traefik_config.py"_s;
}

QString schema()
{
    return test::sourceDir() + u"/tests/adapters/traefik/traefik-v3-dynamic.schema.json"_s;
}

bool pythonHasModules()
{
    QProcess python;
    python.start(u"python3"_s, {u"-c"_s, u"import jsonschema, yaml"_s});
    return python.waitForFinished(30000) && python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0;
}

// The YAML file as Python's YAML parser reads it, as JSON.
QJsonObject parsedYaml(const QString &path)
{
    QProcess python;
    python.start(u"python3"_s,
                 {u"-c"_s, u"import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"_s, path});
    if (!python.waitForFinished(30000) || python.exitCode() != 0)
        return {{"error"_L1, QString::fromUtf8(python.readAllStandardError())}};
    return QJsonDocument::fromJson(python.readAllStandardOutput()).object();
}

// check_traefik_config.py's verdict: its exit code and what it printed.
std::pair<int, QString> checkConfig(const QString &dynamicFile, const QString &entryPointsFile)
{
    QProcess python;
    QStringList args{checker(), schema(), dynamicFile};
    if (!entryPointsFile.isEmpty())
        args << entryPointsFile;
    args << u"--entry-point"_s << u"web"_s << u"--entry-point"_s << u"websecure"_s;
    python.start(u"python3"_s, args);
    if (!python.waitForFinished(60000))
        return {-1, u"check_traefik_config.py did not finish"_s};
    return {python.exitCode(),
            QString::fromUtf8(python.readAllStandardOutput() + python.readAllStandardError()).trimmed()};
}

// What Traefik's redirectRegex answers for url: Go's ReplaceAllString with ${n} and $$ (the regex
// syntax Pando writes is common to RE2 and PCRE); empty when it does not match.
QString redirected(const QJsonObject &redirectRegex, const QString &url)
{
    const QRegularExpression regex(redirectRegex.value("regex"_L1).toString());
    const QRegularExpressionMatch match = regex.match(url);
    if (!regex.isValid() || !match.hasMatch())
        return {};
    const QString replacement = redirectRegex.value("replacement"_L1).toString();
    QString out;
    for (qsizetype i = 0; i < replacement.size(); ++i) {
        if (replacement[i] == u'$' && i + 1 < replacement.size() && replacement[i + 1] == u'$') {
            out += u'$';
            ++i;
        } else if (replacement[i] == u'$' && replacement.mid(i, 2) == "${"_L1) {
            const qsizetype close = replacement.indexOf(u'}', i);
            out += match.captured(replacement.mid(i + 2, close - i - 2).toInt());
            i = close;
        } else {
            out += replacement[i];
        }
    }
    return out;
}

Address address(const QString &host, const QString &path = u"/"_s, TlsMode tls = TlsMode::Auto)
{
    return Address{host, path, tls};
}

} // namespace

#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

class TestTraefikRouter : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;

    TraefikRouterOptions options() const
    {
        return TraefikRouterOptions{.configDir = m_dir->filePath(u"traefik/dynamic"_s),
                                    .stateDir = m_dir->filePath(u"state"_s)};
    }
    QString dynamicFile() const { return m_dir->filePath(u"traefik/dynamic/pando.yml"_s); }
    QString entryPointsFile() const { return m_dir->filePath(u"state/entrypoints.yml"_s); }

    // The generated files pass the schema and rule checks.
    void verifyChecked()
    {
        const auto [code, output] = checkConfig(dynamicFile(), entryPointsFile());
        QVERIFY2(code == 0, qPrintable(output));
    }

    // Four apps on subdomains, a path, plain HTTP and a wildcard, each with a backend.
    void addApps(TraefikRouter &router)
    {
        for (const QString &app : {u"shop"_s, u"api"_s, u"plain"_s, u"wild"_s})
            PANDO_VERIFY_OK(router.ensure(app, 0));
        PANDO_VERIFY_OK(router.setBackend(u"shop"_s, u"172.17.0.2"_s, 8080));
        PANDO_VERIFY_OK(router.setBackend(u"api"_s, u"::1"_s, 9000));
        PANDO_VERIFY_OK(router.setBackend(u"plain"_s, u"localhost"_s, 3000));
        PANDO_VERIFY_OK(router.setBackend(u"wild"_s, u"10.0.0.7"_s, 80));
        PANDO_VERIFY_OK(
            router.setAddresses(u"shop"_s, {{address(u"shop.example.com"_s), address(u"www.shop.example.com"_s)}}));
        PANDO_VERIFY_OK(router.setAddresses(u"api"_s, {{address(u"example.com"_s, u"/api"_s)}}));
        PANDO_VERIFY_OK(router.setAddresses(u"plain"_s, {{address(u"plain.example.com"_s, u"/"_s, TlsMode::Off)}}));
        PANDO_VERIFY_OK(router.setAddresses(u"wild"_s, {{address(u"*.apps.example.com"_s)}}));
    }

private Q_SLOTS:
    void init()
    {
        PANDO_REQUIRE_COMPONENT(pythonHasModules(),
                                u"python3 with jsonschema and yaml (python3-jsonschema, python3-yaml)"_s);
        m_dir = std::make_unique<QTemporaryDir>();
    }

    void generatesRoutersForSubdomainsPathsPlainHttpAndWildcards()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        verifyChecked();

        const QJsonObject config = parsedYaml(dynamicFile());
        const QJsonObject routers = config["http"_L1]["routers"_L1].toObject();
        const QJsonObject services = config["http"_L1]["services"_L1].toObject();
        const QJsonObject middlewares = config["http"_L1]["middlewares"_L1].toObject();
        QVERIFY2(!routers.isEmpty(), QJsonDocument(config).toJson().constData());

        // The stable port: its own entry point, everything on it.
        const Route shop = *router.route(u"shop"_s);
        QCOMPARE(routers["pando-shop"_L1]["entryPoints"_L1].toArray(), QJsonArray{u"pando-shop"_s});
        QCOMPARE(routers["pando-shop"_L1]["rule"_L1].toString(), u"PathPrefix(`/`)"_s);
        QCOMPARE(services["pando-shop"_L1]["loadBalancer"_L1]["servers"_L1].toArray(),
                 (QJsonArray{QJsonObject{{"url"_L1, "http://172.17.0.2:8080"_L1}}}));
        QCOMPARE(services["pando-api"_L1]["loadBalancer"_L1]["servers"_L1][0]["url"_L1].toString(),
                 u"http://[::1]:9000"_s);
        const QJsonObject entryPoints = parsedYaml(entryPointsFile())["entryPoints"_L1].toObject();
        QCOMPARE(entryPoints["pando-shop"_L1]["address"_L1].toString(), u"127.0.0.1:%1"_s.arg(shop.port));
        QCOMPARE(entryPoints.size(), 4);

        // A subdomain with ACME: on websecure with the resolver, plain HTTP sent to HTTPS.
        const QJsonObject shopAddr = routers["pando-shop_addr0"_L1].toObject();
        QCOMPARE(shopAddr["rule"_L1].toString(), u"Host(`shop.example.com`)"_s);
        QCOMPARE(shopAddr["entryPoints"_L1].toArray(), QJsonArray{u"websecure"_s});
        QCOMPARE(shopAddr["service"_L1].toString(), u"pando-shop"_s);
        QCOMPARE(shopAddr["tls"_L1].toObject(), (QJsonObject{{"certResolver"_L1, "pando"_L1}}));
        QCOMPARE(routers["pando-shop_addr1"_L1]["rule"_L1].toString(), u"Host(`www.shop.example.com`)"_s);
        const QJsonObject shopHttp = routers["pando-shop_addr0_http"_L1].toObject();
        QCOMPARE(shopHttp["entryPoints"_L1].toArray(), QJsonArray{u"web"_s});
        QCOMPARE(shopHttp["service"_L1].toString(), u"noop@internal"_s);
        const QString toHttps = shopHttp["middlewares"_L1][0].toString();
        QCOMPARE(middlewares[toHttps]["redirectScheme"_L1].toObject(),
                 (QJsonObject{{"scheme"_L1, "https"_L1}, {"permanent"_L1, true}}));
        QCOMPARE(shop.url, QUrl(u"https://shop.example.com/"_s));

        // A path: /api and /api/..., not /apis; it outranks the host's other routes.
        const QJsonObject api = routers["pando-api_addr0"_L1].toObject();
        QCOMPARE(api["rule"_L1].toString(), u"Host(`example.com`) && (Path(`/api`) || PathPrefix(`/api/`))"_s);
        QVERIFY(api["priority"_L1].toInt() > traefik::detail::priorityFor(address(u"example.com"_s)));

        // TLS off: web only, no TLS section, no redirect router.
        const QJsonObject plain = routers["pando-plain_addr0"_L1].toObject();
        QCOMPARE(plain["entryPoints"_L1].toArray(), QJsonArray{u"web"_s});
        QVERIFY(!plain.contains("tls"_L1));
        QVERIFY(!routers.contains("pando-plain_addr0_http"_L1));
        QCOMPARE(router.route(u"plain"_s)->url, QUrl(u"http://plain.example.com/"_s));

        // A wildcard: one label, Traefik v3's HostRegexp, the certificate named for the resolver,
        // and below any exact host.
        const QJsonObject wild = routers["pando-wild_addr0"_L1].toObject();
        QCOMPARE(wild["rule"_L1].toString(), uR"(HostRegexp(`^[a-z0-9-]+\.apps\.example\.com$`))"_s);
        QCOMPARE(wild["tls"_L1]["domains"_L1].toArray(),
                 (QJsonArray{QJsonObject{{"main"_L1, "*.apps.example.com"_L1}}}));
        QVERIFY(wild["priority"_L1].toInt() < shopAddr["priority"_L1].toInt());
        const QRegularExpression wildHost(u"^[a-z0-9-]+\\.apps\\.example\\.com$"_s);
        QVERIFY(wildHost.match(u"one.apps.example.com"_s).hasMatch());
        QVERIFY(!wildHost.match(u"two.one.apps.example.com"_s).hasMatch());
    }

    void appWithoutBackendHasNoRouterButItsEntryPoint()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        const auto route = router.ensure(u"fresh"_s, 0);
        PANDO_VERIFY_OK(route);
        PANDO_VERIFY_OK(router.setAddresses(u"fresh"_s, {{address(u"fresh.example.com"_s)}}));
        verifyChecked();
        const QJsonObject config = parsedYaml(dynamicFile());
        QCOMPARE(config["http"_L1]["routers"_L1].toObject(), QJsonObject());
        QCOMPARE(config["http"_L1]["services"_L1].toObject(), QJsonObject());
        QCOMPARE(parsedYaml(entryPointsFile())["entryPoints"_L1]["pando-fresh"_L1]["address"_L1].toString(),
                 u"127.0.0.1:%1"_s.arg(route->port));
    }

    void backendSwitchChangesOnlyTheServer()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        const QJsonObject before = parsedYaml(dynamicFile());
        PANDO_VERIFY_OK(router.setBackend(u"shop"_s, u"172.17.0.9"_s, 8081));
        verifyChecked();
        QJsonObject after = parsedYaml(dynamicFile());
        QCOMPARE(
            after["http"_L1]["services"_L1]["pando-shop"_L1]["loadBalancer"_L1]["servers"_L1][0]["url"_L1].toString(),
            u"http://172.17.0.9:8081"_s);
        QCOMPARE(router.route(u"shop"_s)->backendPort, 8081);
        // Put the old server back in the tree: nothing else changed.
        QJsonObject http = after["http"_L1].toObject();
        QJsonObject services = http["services"_L1].toObject();
        services["pando-shop"_L1] = before["http"_L1]["services"_L1]["pando-shop"_L1];
        http["services"_L1] = services;
        after["http"_L1] = http;
        QCOMPARE(after, before);
    }

    void movedAddressesRedirectToTheNewOne()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        PANDO_VERIFY_OK(router.ensure(u"shop"_s, 0));
        PANDO_VERIFY_OK(router.setBackend(u"shop"_s, u"127.0.0.1"_s, 8080));
        PANDO_VERIFY_OK(router.setAddresses(
            u"shop"_s, {{address(u"old.example.com"_s), address(u"example.com"_s, u"/shop"_s, TlsMode::Off)}}));
        PANDO_VERIFY_OK(router.setAddresses(u"shop"_s, {{address(u"new.example.com"_s, u"/store"_s)}}));
        verifyChecked();

        const Route route = *router.route(u"shop"_s);
        QCOMPARE(route.addresses, QList<Address>{address(u"new.example.com"_s, u"/store"_s)});
        QCOMPARE(route.moved.size(), 2);
        QCOMPARE(route.moved[0].to, QUrl(u"https://new.example.com/store"_s));
        const QJsonObject config = parsedYaml(dynamicFile());
        const QJsonObject routers = config["http"_L1]["routers"_L1].toObject();
        const QJsonObject middlewares = config["http"_L1]["middlewares"_L1].toObject();

        // The old host: on HTTPS (its certificate still served) and on HTTP, both straight to the
        // new address, keeping the rest of the path and the query.
        const QJsonObject moved = routers["pando-shop_moved0"_L1].toObject();
        QCOMPARE(moved["rule"_L1].toString(), u"Host(`old.example.com`)"_s);
        QCOMPARE(moved["service"_L1].toString(), u"noop@internal"_s);
        QCOMPARE(moved["tls"_L1]["certResolver"_L1].toString(), u"pando"_s);
        const QJsonObject redirect = middlewares[moved["middlewares"_L1][0].toString()]["redirectRegex"_L1].toObject();
        QCOMPARE(redirect["permanent"_L1].toBool(), true);
        QCOMPARE(redirected(redirect, u"https://old.example.com/cart/1?x=2"_s),
                 u"https://new.example.com/store/cart/1?x=2"_s);
        QCOMPARE(redirected(redirect, u"http://OLD.example.com:80/"_s), u"https://new.example.com/store/"_s);
        QCOMPARE(routers["pando-shop_moved0_http"_L1]["middlewares"_L1][0].toString(),
                 moved["middlewares"_L1][0].toString());

        // The old path, plain HTTP: /shop and below, not /shopping.
        const QJsonObject movedPath = routers["pando-shop_moved1"_L1].toObject();
        QCOMPARE(movedPath["entryPoints"_L1].toArray(), QJsonArray{u"web"_s});
        const QJsonObject pathRedirect =
            middlewares[movedPath["middlewares"_L1][0].toString()]["redirectRegex"_L1].toObject();
        QCOMPARE(redirected(pathRedirect, u"http://example.com/shop"_s), u"https://new.example.com/store"_s);
        QCOMPARE(redirected(pathRedirect, u"http://example.com/shop/a?b"_s), u"https://new.example.com/store/a?b"_s);
        QCOMPARE(redirected(pathRedirect, u"http://example.com/shop?b"_s), u"https://new.example.com/store?b"_s);
        QCOMPARE(redirected(pathRedirect, u"http://example.com/shopping"_s), QString());

        // Characters that mean something to a regexp or to Go's replacement are taken as they are.
        const auto [regex, replacement] = traefik::detail::redirectFor(
            {address(u"odd.example.com"_s, u"/a$b(c).d+"_s), QUrl(u"https://new.example.com/x$y"_s)});
        const QJsonObject odd{{"regex"_L1, regex}, {"replacement"_L1, replacement}};
        QCOMPARE(redirected(odd, u"https://odd.example.com/a$b(c).d+/z"_s), u"https://new.example.com/x$y/z"_s);
        QCOMPARE(redirected(odd, u"https://odd.example.com/a$b(c)xd+/z"_s), QString());

        // Taken back: the redirect goes. Dropped without redirectMoved: it vanishes, and so does
        // a redirect from before that led to an address now dropped; one to an address still
        // served stays.
        PANDO_VERIFY_OK(router.setAddresses(
            u"shop"_s, {{address(u"old.example.com"_s), address(u"new.example.com"_s, u"/store"_s)}}));
        QCOMPARE(router.route(u"shop"_s)->moved.size(), 1);
        // (The /shop redirect from before now leads to old.example.com, the first new address.)
        QCOMPARE(router.route(u"shop"_s)->moved[0].to, QUrl(u"https://old.example.com/"_s));
        PANDO_VERIFY_OK(
            router.setAddresses(u"shop"_s, {{address(u"old.example.com"_s), address(u"x.example.com"_s)}, false}));
        Route dropped = *router.route(u"shop"_s);
        QCOMPARE(dropped.moved.size(), 1); // /store went without a redirect; /shop still leads somewhere
        QCOMPARE(dropped.moved[0].from, address(u"example.com"_s, u"/shop"_s, TlsMode::Off));
        PANDO_VERIFY_OK(router.setAddresses(u"shop"_s, {{address(u"x.example.com"_s)}, false}));
        dropped = *router.route(u"shop"_s);
        QVERIFY(dropped.moved.isEmpty());
        verifyChecked();

        // Another app may take a moved address: its live route outranks the redirect.
        PANDO_VERIFY_OK(router.ensure(u"other"_s, 0));
        PANDO_VERIFY_OK(router.setAddresses(u"other"_s, {{address(u"example.com"_s, u"/shop"_s, TlsMode::Off)}}));
        QCOMPARE(router.route(u"shop"_s)->moved.size(), 0);
        verifyChecked();
    }

    void checkerRefusesTyposAndV2Rules_data()
    {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<QString>("complaint");
        QTest::newRow("misspelt router key") << QByteArray("entryPoints:") << QByteArray("entryPoint:") << u"schema"_s;
        QTest::newRow("misspelt tls key") << QByteArray("certResolver:") << QByteArray("certResolvr:") << u"schema"_s;
        QTest::newRow("v2 multi-host") << QByteArray("Host(`shop.example.com`)")
                                       << QByteArray("Host(`shop.example.com`, `www.shop.example.com`)") << u"rule"_s;
        QTest::newRow("v2 HostRegexp") << QByteArray(R"(HostRegexp(`^[a-z0-9-]+\\.apps\\.example\\.com$`))")
                                       << QByteArray("HostRegexp(`{sub:[a-z]+}.apps.example.com`)") << u"rule"_s;
        QTest::newRow("v2 matcher") << QByteArray("Host(`shop.example.com`)")
                                    << QByteArray("HostHeader(`shop.example.com`)") << u"rule"_s;
        QTest::newRow("missing service") << QByteArray("service: \"pando-shop\"")
                                         << QByteArray("service: \"pando-shopp\"") << u"reference"_s;
        QTest::newRow("entry point not in the static configuration")
            << QByteArray("- \"pando-shop\"") << QByteArray("- \"pando-shopp\"") << u"reference"_s;
        QTest::newRow("two kinds in one service")
            << QByteArray("    pando-shop:\n      loadBalancer:")
            << QByteArray("    pando-shop:\n      weighted: {}\n      loadBalancer:") << u"schema"_s;
    }
    void checkerRefusesTyposAndV2Rules()
    {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(QString, complaint);
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        // What Pando wrote passes; the same file with one thing wrong does not.
        verifyChecked();
        QByteArray broken = readFile(dynamicFile());
        QVERIFY2(broken.contains(from), broken.constData());
        broken.replace(from, to);
        const QString copy = m_dir->filePath(u"broken.yml"_s);
        QFile file(copy);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(broken);
        file.close();
        const auto [code, output] = checkConfig(copy, entryPointsFile());
        QCOMPARE(code, 1);
        QVERIFY2(output.startsWith(complaint + u':'), qPrintable(output));
    }

    void readersNeverSeeHalfAFile()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        QSet<QByteArray> written{readFile(dynamicFile())};
        std::atomic<bool> done = false;
        QList<QByteArray> seen;
        std::thread reader([&] {
            while (!done)
                seen << readFile(dynamicFile());
        });
        for (int i = 0; i < 200; ++i) {
            // Backends of growing length, so a torn read would differ from every whole file.
            PANDO_VERIFY_OK(router.setBackend(u"shop"_s, u"backend-%1.internal"_s.arg(QString(i % 7, u'x')), 1000 + i));
            written.insert(readFile(dynamicFile()));
        }
        done = true;
        reader.join();
        QVERIFY(seen.size() > 10);
        for (const QByteArray &content : std::as_const(seen))
            QVERIFY2(written.contains(content), content.right(200).constData());
        // No temporary file left behind for Traefik to read.
        QCOMPARE(QDir(m_dir->filePath(u"traefik/dynamic"_s)).entryList(QDir::Files | QDir::Hidden),
                 QStringList{u"pando.yml"_s});
    }

    void aFailedWriteChangesNothing()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        const QByteArray dynamicBefore = readFile(dynamicFile());
        // The route table cannot be written where a directory stands: Traefik's file, written
        // first, is put back.
        const QString table = m_dir->filePath(u"state/routes.json"_s);
        QVERIFY(QFile::remove(table));
        QVERIFY(QDir().mkpath(table));
        const Status switched = router.setBackend(u"shop"_s, u"172.17.0.99"_s, 1);
        QVERIFY(!switched);
        QCOMPARE(switched.error().code, ErrorCode::Internal);
        QVERIFY2(switched.error().message.contains(u"routes.json"_s), errorText(switched).constData());
        QCOMPARE(readFile(dynamicFile()), dynamicBefore);
        QCOMPARE(router.route(u"shop"_s)->backendHost, u"172.17.0.2"_s);
        QVERIFY(router.status().problem.contains(u"routes.json"_s));
        QVERIFY(router.status().running); // the previous files still hold the routes
        QVERIFY(QDir(table).removeRecursively());
        PANDO_VERIFY_OK(router.setBackend(u"shop"_s, u"172.17.0.99"_s, 1));
        QCOMPARE(router.status().problem, QString());
    }

    void restartAdoptsTheRoutes()
    {
        QList<Route> before;
        {
            TraefikRouter router(options());
            PANDO_VERIFY_OK(router.start());
            addApps(router);
            PANDO_VERIFY_OK(router.setAddresses(u"plain"_s, {{address(u"plain2.example.com"_s)}}));
            for (const QString &app : {u"shop"_s, u"api"_s, u"plain"_s, u"wild"_s})
                before << *router.route(app);
        }
        const QByteArray dynamicBefore = readFile(dynamicFile());
        const QDateTime writtenAt = QFileInfo(dynamicFile()).lastModified();

        TraefikRouter next(options());
        PANDO_VERIFY_OK(next.start());
        for (const Route &route : std::as_const(before)) {
            const auto adopted = next.route(route.app);
            QVERIFY(adopted);
            QCOMPARE(adopted->port, route.port);
            QCOMPARE(adopted->url, route.url);
            QCOMPARE(adopted->backendHost, route.backendHost);
            QCOMPARE(adopted->backendPort, route.backendPort);
            QCOMPARE(adopted->addresses, route.addresses);
            QCOMPARE(adopted->moved, route.moved);
        }
        // Traefik's file is not even rewritten.
        QCOMPARE(readFile(dynamicFile()), dynamicBefore);
        QCOMPARE(QFileInfo(dynamicFile()).lastModified(), writtenAt);
        QCOMPARE(next.status().routes, 4);
        QVERIFY(next.status().running);
        QVERIFY(next.status().outlivesPando);
        QCOMPARE(next.status().kind, u"traefik"_s);

        // A file removed or edited behind Pando's back is written again by the next check.
        QVERIFY(QFile::remove(dynamicFile()));
        PANDO_VERIFY_OK(next.check());
        QCOMPARE(readFile(dynamicFile()), dynamicBefore);
        QFile edited(dynamicFile());
        QVERIFY(edited.open(QIODevice::Append));
        edited.write("tcp: {}\n");
        edited.close();
        PANDO_VERIFY_OK(next.check());
        QCOMPARE(readFile(dynamicFile()), dynamicBefore);
    }

    void aDamagedRouteTableIsNotOverwritten()
    {
        {
            TraefikRouter router(options());
            PANDO_VERIFY_OK(router.start());
            addApps(router);
        }
        const QByteArray dynamicBefore = readFile(dynamicFile());
        QFile table(m_dir->filePath(u"state/routes.json"_s));
        QVERIFY(table.open(QIODevice::WriteOnly | QIODevice::Truncate));
        table.write("{\"routes\": [{\"app\": \"shop\", \"port\": 0}]}");
        table.close();
        TraefikRouter next(options());
        const Status started = next.start();
        QVERIFY(!started);
        QCOMPARE(started.error().code, ErrorCode::Invalid);
        QVERIFY2(started.error().message.contains(u"routes.json"_s), errorText(started).constData());
        QCOMPARE(started.error().where, u"routes[0]"_s);
        QCOMPARE(readFile(dynamicFile()), dynamicBefore);
        QCOMPARE(readFile(table.fileName()), QByteArray("{\"routes\": [{\"app\": \"shop\", \"port\": 0}]}"));
    }

    void conflictsAndBadAddressesChangeNothing()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        const QByteArray dynamicBefore = readFile(dynamicFile());
        const QByteArray tableBefore = readFile(m_dir->filePath(u"state/routes.json"_s));
        const Route apiBefore = *router.route(u"api"_s);

        // Another app's address, whatever its TLS mode.
        const Status taken = router.setAddresses(
            u"api"_s, {{address(u"api2.example.com"_s), address(u"shop.example.com"_s, u"/"_s, TlsMode::Off)}});
        QVERIFY(!taken);
        QCOMPARE(taken.error().code, ErrorCode::Conflict);
        QVERIFY2(taken.error().message.contains(u"app shop"_s), errorText(taken).constData());
        QCOMPARE(taken.error().where, u"route.domains"_s);
        QVERIFY2(taken.error().message.contains(u"shop.example.com/"_s), errorText(taken).constData());

        // Bad addresses, each naming what and where.
        const QList<std::pair<Address, QString>> bad{
            {address(u"Shop.Example.com"_s), u"route.domains"_s},
            {address(u"shop.example.com"_s, u"/api/"_s), u"route.paths"_s},
            {address(u"shop.example.com"_s, u"/a`) || Host(`x"_s), u"route.paths"_s},
            {address(u"*.com"_s), u"route.domains"_s},
            {address(u"a..example.com"_s), u"route.domains"_s},
        };
        for (const auto &[addr, where] : bad) {
            const Status refused = router.setAddresses(u"api"_s, {{addr}});
            QVERIFY2(!refused, qPrintable(addr.host + addr.path));
            QCOMPARE(refused.error().code, ErrorCode::Invalid);
            QCOMPARE(refused.error().where, where);
        }
        const Status twice =
            router.setAddresses(u"api"_s, {{address(u"a.example.com"_s), address(u"a.example.com"_s)}});
        QVERIFY(!twice);
        QCOMPARE(twice.error().where, u"route.domains"_s);

        // A port another route holds, and a second port for one app.
        const auto portTaken = router.ensure(u"new"_s, router.route(u"shop"_s)->port);
        QVERIFY(!portTaken);
        QCOMPARE(portTaken.error().code, ErrorCode::Conflict);
        QCOMPARE(router.setAddresses(u"ghost"_s, {{address(u"g.example.com"_s)}}).error().code, ErrorCode::NotFound);
        QCOMPARE(router.ensure(u"Bad_Name"_s, 0).error().code, ErrorCode::Invalid);
        QCOMPARE(router.setBackend(u"api"_s, u"a`b"_s, 80).error().code, ErrorCode::Invalid);
        QCOMPARE(router.setBackend(u"api"_s, u"127.0.0.1"_s, 0).error().code, ErrorCode::Invalid);

        QCOMPARE(readFile(dynamicFile()), dynamicBefore);
        QCOMPARE(readFile(m_dir->filePath(u"state/routes.json"_s)), tableBefore);
        QCOMPARE(router.route(u"api"_s)->addresses, apiBefore.addresses);
        QVERIFY(!router.route(u"new"_s));
    }

    void removeDropsEverythingOfTheApp()
    {
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        addApps(router);
        PANDO_VERIFY_OK(router.setAddresses(u"shop"_s, {{address(u"store.example.com"_s)}}));
        QCOMPARE(router.route(u"shop"_s)->moved.size(), 2);
        PANDO_VERIFY_OK(router.remove(u"shop"_s));
        PANDO_VERIFY_OK(router.remove(u"shop"_s)); // a missing route is not an error
        verifyChecked();
        QVERIFY(!router.route(u"shop"_s));
        const QByteArray dynamic = readFile(dynamicFile());
        QVERIFY2(!dynamic.contains("pando-shop"), dynamic.constData());
        QVERIFY(dynamic.contains("pando-api"));
        QVERIFY(!readFile(entryPointsFile()).contains("pando-shop"));
        QCOMPARE(router.status().routes, 3);
        // Its addresses are free for another app.
        PANDO_VERIFY_OK(router.setAddresses(u"api"_s, {{address(u"shop.example.com"_s)}}));
    }

    void filesArePrivate()
    {
        // A configuration directory the user made keeps its mode (Traefik's user may need it).
        QVERIFY(QDir().mkpath(m_dir->filePath(u"traefik/dynamic"_s)));
        const QFile::Permissions userMode = QFile::permissions(m_dir->filePath(u"traefik/dynamic"_s));
        TraefikRouter router(options());
        PANDO_VERIFY_OK(router.start());
        PANDO_VERIFY_OK(router.ensure(u"shop"_s, 0));
        constexpr auto ownerRw = QFile::ReadOwner | QFile::WriteOwner;
        constexpr auto ownerRwx = ownerRw | QFile::ExeOwner;
        const auto mode = [](const QString &path) {
            return QFile::permissions(path) & ~(QFile::ReadUser | QFile::WriteUser | QFile::ExeUser);
        };
        QCOMPARE(mode(dynamicFile()), ownerRw);
        QCOMPARE(mode(entryPointsFile()), ownerRw);
        QCOMPARE(mode(m_dir->filePath(u"state/routes.json"_s)), ownerRw);
        QCOMPARE(mode(m_dir->filePath(u"state"_s)), ownerRwx);
        QCOMPARE(QFile::permissions(m_dir->filePath(u"traefik/dynamic"_s)), userMode);
        // Only pando.yml in Traefik's directory: it reads every .yml there.
        QCOMPARE(QDir(m_dir->filePath(u"traefik/dynamic"_s)).entryList(QDir::Files | QDir::Hidden),
                 QStringList{u"pando.yml"_s});

        // A resolver name Traefik's file could not hold as it is.
        TraefikRouterOptions badResolver = options();
        badResolver.certResolver = u"le: prod"_s;
        const Status badName = TraefikRouter(badResolver).start();
        QVERIFY(!badName);
        QCOMPARE(badName.error().where, u"traefik-resolver"_s);

        // One directory for both would have Traefik read the entry points as dynamic configuration.
        TraefikRouterOptions same = options();
        same.stateDir = same.configDir;
        const Status refused = TraefikRouter(same).start();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
    }

    void internalTlsUsesTheInstallCertificates()
    {
        PANDO_REQUIRE_COMPONENT(!QStandardPaths::findExecutable(u"openssl"_s).isEmpty(), u"openssl"_s);
        const QString certs = m_dir->filePath(u"certs"_s);
        QVERIFY(QDir().mkpath(certs));
        QProcess openssl;
        openssl.start(u"openssl"_s,
                      {u"req"_s, u"-x509"_s, u"-newkey"_s, u"ec"_s, u"-pkeyopt"_s, u"ec_paramgen_curve:P-256"_s,
                       u"-nodes"_s, u"-days"_s, u"30"_s, u"-subj"_s, u"/CN=nas.home.arpa"_s, u"-keyout"_s,
                       certs + u"/nas.home.arpa.key"_s, u"-out"_s, certs + u"/nas.home.arpa.crt"_s});
        QVERIFY(openssl.waitForFinished(60000) && openssl.exitCode() == 0);

        TraefikRouterOptions withCerts = options();
        withCerts.certificatesDir = certs;
        TraefikRouter router(withCerts);
        PANDO_VERIFY_OK(router.start());
        PANDO_VERIFY_OK(router.ensure(u"nas"_s, 0));
        PANDO_VERIFY_OK(router.setBackend(u"nas"_s, u"127.0.0.1"_s, 5000));
        PANDO_VERIFY_OK(router.setAddresses(u"nas"_s, {{address(u"nas.home.arpa"_s, u"/"_s, TlsMode::Internal),
                                                        address(u"media.home.arpa"_s, u"/"_s, TlsMode::Internal)}}));
        verifyChecked();
        const QJsonObject config = parsedYaml(dynamicFile());
        QCOMPARE(config["http"_L1]["routers"_L1]["pando-nas_addr0"_L1]["tls"_L1].toObject(), QJsonObject());
        QCOMPARE(config["tls"_L1]["certificates"_L1].toArray(),
                 (QJsonArray{QJsonObject{{"certFile"_L1, QString(certs + u"/nas.home.arpa.crt"_s)},
                                         {"keyFile"_L1, QString(certs + u"/nas.home.arpa.key"_s)}}}));
        const QList<CertificateState> states = router.certificates();
        QCOMPARE(states.size(), 2);
        QCOMPARE(states[0].host, u"media.home.arpa"_s);
        QVERIFY(!states[0].error.isEmpty());
        QCOMPARE(states[1].host, u"nas.home.arpa"_s);
        QCOMPARE(states[1].error, QString());
        QVERIFY(states[1].notAfter > QDateTime::currentDateTimeUtc().addDays(29));
        QVERIFY(states[1].issuer.contains(u"nas.home.arpa"_s));
    }
};

QTEST_GUILESS_MAIN(TestTraefikRouter)
#include "tst_traefikrouter.moc"
