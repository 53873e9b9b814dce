// The AppSpec's route addresses: domains kept in their ASCII form (Unicode converted, a name
// written half in Unicode and half in punycode refused), wildcards only as the first label and
// never with an ACME certificate, path prefixes normalised, TLS defaulting by the name, and every
// bad value refused with the field and its line; route.auth asks for people signed in to Pando.

#include "core/spec/appspec.h"
#include "core/spec/specroute.h"

#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

QByteArray specWith(const QByteArray &route)
{
    return "name: shop\n"
           "source: { repo: \"https://example.org/shop.git\" }\n"
           "run: { port: 8080 }\n"
           "route:\n" +
           route;
}

} // namespace

class TestAppSpecRoute : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void addressesRead()
    {
        auto spec = parseAppSpec(specWith("  domains: [Shop.Example.COM., \"bücher.example.org\"]\n"
                                          "  paths: [/api/, /static]\n"
                                          "  moved: drop\n"
                                          "  auth: pando\n"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
        QCOMPARE(spec->route.domains, (QStringList{u"shop.example.com"_s, u"xn--bcher-kva.example.org"_s}));
        QCOMPARE(spec->route.paths, (QStringList{u"/api"_s, u"/static"_s}));
        QCOMPARE(spec->route.moved, AppSpec::Route::Moved::Drop);
        QCOMPARE(spec->route.auth, AppSpec::Route::Auth::Pando);
        QVERIFY(!spec->route.tls);
        QCOMPARE(routeTlsFor(spec->route, u"shop.example.com"_s), adapters::TlsMode::Auto);
        QCOMPARE(routeTlsFor(spec->route, u"nas.lan"_s), adapters::TlsMode::Internal);
        QCOMPARE(routeTlsFor(spec->route, u"printer.local"_s), adapters::TlsMode::Internal);

        // The JSON form reads back to the same route.
        auto again = parseAppSpecJson(QJsonDocument(spec->toJson()).toJson());
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->route.domains, spec->route.domains);
        QCOMPARE(again->route.paths, spec->route.paths);
        QCOMPARE(again->route.moved, spec->route.moved);
        QCOMPARE(again->route.auth, AppSpec::Route::Auth::Pando);
        QVERIFY(validateAppSpec(*spec));
    }

    void oneNameForAList()
    {
        auto spec = parseAppSpec(specWith("  domains: shop.example.com\n  tls: internal\n"));
        QVERIFY2(spec, qPrintable(spec ? QString() : spec.error().text()));
        QCOMPARE(spec->route.domains, QStringList{u"shop.example.com"_s});
        QCOMPARE(spec->route.tls, adapters::TlsMode::Internal);
        QCOMPARE(routeTlsFor(spec->route, u"shop.example.com"_s), adapters::TlsMode::Internal);
    }

    void wildcards()
    {
        auto internal = parseAppSpec(specWith("  domains: [\"*.apps.example.com\"]\n  tls: internal\n"));
        QVERIFY2(internal, qPrintable(internal ? QString() : internal.error().text()));
        QCOMPARE(internal->route.domains, QStringList{u"*.apps.example.com"_s});
        auto local = parseAppSpec(specWith("  domains: [\"*.shop.lan\"]\n"));
        QVERIFY2(local, qPrintable(local ? QString() : local.error().text()));
    }

    void refused_data()
    {
        QTest::addColumn<QByteArray>("route");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("mixed IDN and punycode") << QByteArray("  domains: [\"bücher.xn--xample-9ua.com\"]\n")
                                                << u"route.domains[0]"_s << u"mixes Unicode and punycode"_s;
        QTest::newRow("same name in both forms")
            << QByteArray("  domains: [\"bücher.example\", xn--bcher-kva.example]\n") << u"route.domains[1]"_s
            << u"the same name as route.domains[0]"_s;
        QTest::newRow("bad punycode") << QByteArray("  domains: [xn--zz.example.com]\n") << u"route.domains[0]"_s
                                      << u"not valid punycode"_s;
        QTest::newRow("wildcard inside") << QByteArray("  domains: [\"shop.*.example.com\"]\n") << u"route.domains[0]"_s
                                         << u"whole first label"_s;
        QTest::newRow("wildcard on a TLD") << QByteArray("  domains: [\"*.com\"]\n  tls: internal\n")
                                           << u"route.domains[0]"_s << u"must stand under a domain"_s;
        QTest::newRow("wildcard with ACME")
            << QByteArray("  domains: [\"*.example.com\"]\n") << u"route.domains[0]"_s << u"DNS challenge"_s;
        QTest::newRow("a URL") << QByteArray("  domains: [\"https://shop.example.com\"]\n") << u"route.domains[0]"_s
                               << u"not a host name"_s;
        QTest::newRow("an IP address") << QByteArray("  domains: [\"192.168.1.20\"]\n") << u"route.domains[0]"_s
                                       << u"IP address"_s;
        QTest::newRow("underscore") << QByteArray("  domains: [shop_1.example.com]\n") << u"route.domains[0]"_s
                                    << u"not a host name"_s;
        QTest::newRow("top-level") << QByteArray("  domains: [shop]\n") << u"route.domains[0]"_s << u"top-level name"_s;
        QTest::newRow("long label") << QByteArray("  domains: [" + QByteArray(64, 'a') + ".example.com]\n")
                                    << u"route.domains[0]"_s << u"longer than 63"_s;
        QTest::newRow("not a list") << QByteArray("  domains: { a: b }\n") << u"route.domains"_s
                                    << u"expected a list of domain names"_s;
        QTest::newRow("path without slash")
            << QByteArray("  paths: [api]\n") << u"route.paths[0]"_s << u"must start with"_s;
        QTest::newRow("path climbing") << QByteArray("  paths: [/api/../admin]\n") << u"route.paths[0]"_s
                                       << u"\"..\" segment"_s;
        QTest::newRow("path glob") << QByteArray("  paths: [\"/api/*\"]\n") << u"route.paths[0]"_s
                                   << u"wildcard, query or fragment"_s;
        QTest::newRow("path twice") << QByteArray("  paths: [/api, /api/]\n") << u"route.paths[1]"_s
                                    << u"the same path as route.paths[0]"_s;
        QTest::newRow("root and more") << QByteArray("  paths: [/, /api]\n") << u"route.paths"_s
                                       << u"already serves every path"_s;
        QTest::newRow("tls typo") << QByteArray("  tls: on\n") << u"route.tls"_s << u"auto, internal or off"_s;
        QTest::newRow("auth typo") << QByteArray("  auth: oidc\n") << u"route.auth"_s << u"none or pando"_s;
        QTest::newRow("moved typo") << QByteArray("  moved: keep\n") << u"route.moved"_s << u"redirect or drop"_s;
        QTest::newRow("unknown field") << QByteArray("  domain: [shop.example.com]\n") << u"route.domain"_s
                                       << u"did you mean \"domains\"?"_s;
    }

    void refused()
    {
        QFETCH(QByteArray, route);
        QFETCH(QString, where);
        QFETCH(QString, says);
        auto spec = parseAppSpec(specWith(route));
        QVERIFY(!spec);
        QCOMPARE(spec.error().code, ErrorCode::Invalid);
        QCOMPARE(spec.error().where, where);
        QVERIFY2(spec.error().message.contains(says), qPrintable(spec.error().message));
        // Where in the document, for a value (an unknown key is named by its path alone).
        if (!where.endsWith(u"domain"_s))
            QVERIFY2(spec.error().message.contains(u"line "_s), qPrintable(spec.error().message));
    }

    void builtInCode()
    {
        AppSpec spec;
        spec.name = u"shop"_s;
        spec.source.repo = u"https://example.org/shop.git"_s;
        spec.run.port = 8080;
        spec.route.domains = {u"Shop.example.com"_s};
        auto refused = validateAppSpec(spec);
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"route.domains"_s);
        spec.route.domains = {u"shop.example.com"_s};
        spec.route.paths = {u"/api"_s};
        QVERIFY(validateAppSpec(spec));
    }
};

QTEST_GUILESS_MAIN(TestAppSpecRoute)
#include "tst_appspecroute.moc"
