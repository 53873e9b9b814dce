// The Cloudflare Tunnel router against a local stand-in for Cloudflare's API
// (cloudflare_api_standin.py), which answers the documented requests with the documented
// envelope, checks the Bearer token and the request bodies as the API reference and cloudflared's
// ingress rules describe them, and can be told to fail. No Cloudflare account can be reached from
// here and Debian has no cloudflared: what the real API and a real cloudflared do with what Pando
// sends is not tested (docs/edge.md says what is). cloudflared's supervision is tested with a
// stand-in (fake_cloudflared.py) that records its argv and environment and answers /ready.

#include "adapters/kit/httpkit/httptransport.h"
#include "adapters/routing/cloudflare/cloudflarerouter.h"
#include "tests/support/component.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using pando::adapters::cloudflare::CloudflareRouter;
using pando::adapters::cloudflare::CloudflareRouterOptions;

namespace {

const QString ApiToken = u"cf-api-token-Zq8xW3rT"_s;
const QString TunnelToken = u"cf-tunnel-token-Kp2vN7yL"_s;
const QString Account = u"0123456789abcdef0123456789abcdef"_s;
const QString Tunnel = u"f70ff985-a4ef-4643-bbbc-4a0ed4fc8415"_s;
const QString Zone = u"fedcba9876543210fedcba9876543210"_s;
const QString Target = u"f70ff985-a4ef-4643-bbbc-4a0ed4fc8415.cfargotunnel.com"_s;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}

// Neither token in any text Pando produced.
bool holdsNoToken(const QString &text)
{
    return !text.contains(ApiToken) && !text.contains(TunnelToken);
}

Address at(const QString &host, const QString &path = u"/"_s, TlsMode tls = TlsMode::Auto)
{
    return Address{host, path, tls};
}

QJsonObject rule(const QString &host, const QString &service, const QString &path = {})
{
    QJsonObject object{{"hostname"_L1, host}, {"service"_L1, service}};
    if (!path.isEmpty())
        object.insert("path"_L1, path);
    return object;
}

const QJsonObject CatchAll{{"service"_L1, "http_status:404"_L1}};

// The stand-in API, one per test.
class StandIn {
public:
    ~StandIn() { stop(); }

    bool start()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"CF_STANDIN_TOKEN"_s, ApiToken);
        env.insert(u"CF_STANDIN_TUNNEL_TOKEN"_s, TunnelToken);
        m_process.setProcessEnvironment(env);
        m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_process.start(u"python3"_s, {test::sourceDir() + u"/tests/adapters/cloudflare/cloudflare_api_standin.py"_s,
                                       Account, Tunnel, Zone, u"example.com"_s});
        if (!m_process.waitForStarted(10000))
            return false;
        while (!m_process.canReadLine())
            if (!m_process.waitForReadyRead(10000))
                return false;
        const QByteArray line = m_process.readLine().trimmed();
        m_port = line.startsWith("port ") ? line.mid(5).toInt() : 0;
        return m_port > 0;
    }

    void stop()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    QString base() const { return u"http://127.0.0.1:%1"_s.arg(m_port); }

    QJsonObject state() const { return QJsonDocument::fromJson(control("GET", u"/__control/state"_s).body).object(); }
    QJsonArray ingress() const { return state().value("config"_L1).toObject().value("ingress"_L1).toArray(); }
    QJsonArray dns() const { return state().value("dns"_L1).toArray(); }
    QJsonArray requests() const { return state().value("requests"_L1).toArray(); }
    int count(const QString &method, const QString &pathPart) const
    {
        int n = 0;
        for (const QJsonValue r : requests())
            n += r["method"_L1].toString() == method && r["path"_L1].toString().contains(pathPart);
        return n;
    }
    void set(const QJsonObject &state) const { control("POST", u"/__control/state"_s, state); }
    void failNext(const QString &method, const QString &pathPart, const QString &kind, int status = 500,
                  int times = 1) const
    {
        control("POST", u"/__control/fail"_s,
                {{"method"_L1, method},
                 {"path_contains"_L1, pathPart},
                 {"kind"_L1, kind},
                 {"status"_L1, status},
                 {"times"_L1, times}});
    }
    void clear() const { control("POST", u"/__control/clear"_s, {}); }

private:
    httpkit::Exchange control(const QByteArray &method, const QString &path, const QJsonObject &body = {}) const
    {
        httpkit::Request request;
        request.method = method;
        request.path = path;
        if (method != "GET")
            request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
        request.timeoutMs = 10000;
        return httpkit::perform({.baseUrl = base().toUtf8()}, request);
    }

    QProcess m_process;
    int m_port = 0;
};

QJsonObject dnsRecordOf(const QJsonArray &records, const QString &name)
{
    for (const QJsonValue r : records)
        if (r["name"_L1].toString() == name)
            return r.toObject();
    return {};
}

} // namespace

class TestCloudflareRouter : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<StandIn> m_api;
    std::unique_ptr<QTemporaryDir> m_dir;

    CloudflareRouterOptions options() const
    {
        CloudflareRouterOptions o;
        o.accountId = Account;
        o.tunnelId = Tunnel;
        o.zoneId = Zone;
        o.apiToken = ApiToken;
        o.apiBase = m_api->base();
        o.stateDir = m_dir->filePath(u"cloudflare"_s);
        o.requestTimeoutMs = 2000;
        return o;
    }

    // Three apps: shop on its own host, web and api on one host under /site and /api (one app's
    // path may not lie under another's: docs/edge.md, "Who holds what").
    void routeThree(CloudflareRouter &router)
    {
        for (const auto &[app, backend] : {std::pair{u"web"_s, u"10.0.0.2"_s}, std::pair{u"shop"_s, u"10.0.0.3"_s},
                                           std::pair{u"api"_s, u"fd00::4"_s}}) {
            auto route = router.ensure(app, 0);
            QVERIFY2(route, errorText(route));
            QVERIFY(route->port > 0);
            QVERIFY2(router.setBackend(app, backend, 8080), "setBackend");
        }
        auto web = router.setAddresses(u"web"_s, {{at(u"web.example.com"_s, u"/site"_s)}});
        QVERIFY2(web, errorText(web));
        auto shop = router.setAddresses(u"shop"_s, {{at(u"shop.example.com"_s)}});
        QVERIFY2(shop, errorText(shop));
        auto api = router.setAddresses(u"api"_s, {{at(u"web.example.com"_s, u"/api"_s)}});
        QVERIFY2(api, errorText(api));
    }

private Q_SLOTS:
    void init()
    {
        PANDO_REQUIRE_COMPONENT(!QStandardPaths::findExecutable(u"python3"_s).isEmpty(),
                                u"python3 (runs the stand-in for Cloudflare's API)"_s);
        m_dir = std::make_unique<QTemporaryDir>();
        m_api = std::make_unique<StandIn>();
        QVERIFY2(m_api->start(), "the stand-in for Cloudflare's API did not start");
    }

    void cleanup()
    {
        // A fake cloudflared a failed test left behind runs in a session of its own.
        if (QFile record(m_dir->filePath(u"cloudflared.record"_s)); record.open(QIODevice::ReadOnly))
            for (const QByteArray &line : record.readAll().trimmed().split('\n'))
                if (const qint64 pid = QJsonDocument::fromJson(line).object()["pid"_L1].toInteger(); pid > 0)
                    ::kill(pid_t(pid), SIGKILL);
        qunsetenv("FAKE_CLOUDFLARED_EXIT");
        qunsetenv("PANDO_CLOUDFLARE_TOKEN");
        m_api.reset();
        m_dir.reset();
    }

    void twoHostsAndAPathMakeTheDocumentedIngress()
    {
        CloudflareRouter router(options());
        QVERIFY2(router.start(), "start");
        routeThree(router);
        if (QTest::currentTestFailed())
            return;
        // Exact hosts, the longer path of a host first, the catch-all last; IPv6 in brackets.
        const QJsonArray expected{
            rule(u"shop.example.com"_s, u"http://10.0.0.3:8080"_s),
            rule(u"web.example.com"_s, u"http://10.0.0.2:8080"_s, u"^/site(/.*)?$"_s),
            rule(u"web.example.com"_s, u"http://[fd00::4]:8080"_s, u"^/api(/.*)?$"_s),
            CatchAll,
        };
        QCOMPARE(m_api->ingress(), expected);
        // One proxied CNAME per host name, to the tunnel, made by Pando.
        const QJsonArray records = m_api->dns();
        QCOMPARE(records.size(), 2);
        for (const QString &host : {u"web.example.com"_s, u"shop.example.com"_s}) {
            const QJsonObject record = dnsRecordOf(records, host);
            QCOMPARE(record["type"_L1].toString(), u"CNAME"_s);
            QCOMPARE(record["content"_L1].toString(), Target);
            QCOMPARE(record["proxied"_L1].toBool(), true);
            QCOMPARE(record["ttl"_L1].toInt(), 1);
        }
        QCOMPARE(router.route(u"api"_s)->url, QUrl(u"https://web.example.com/api"_s));
        // Every request carried the token as a Bearer header and nowhere else.
        for (const QJsonValue r : m_api->requests()) {
            QCOMPARE(r["authorization"_L1].toString(), u"Bearer "_s + ApiToken);
            QVERIFY(!r["path"_L1].toString().contains(ApiToken) && !r["query"_L1].toString().contains(ApiToken));
        }
        // The table Pando keeps is private and holds no token.
        QFile table(router.routesFile());
        QVERIFY(table.open(QIODevice::ReadOnly));
        QVERIFY(holdsNoToken(QString::fromUtf8(table.readAll())));
        QCOMPARE(QFileInfo(table).permissions() & (QFile::ReadGroup | QFile::ReadOther), QFile::Permissions());

        // A new backend changes the service, nothing else.
        QVERIFY2(router.setBackend(u"shop"_s, u"10.0.0.9"_s, 9090), "setBackend");
        QCOMPARE(m_api->ingress()[0].toObject()["service"_L1].toString(), u"http://10.0.0.9:9090"_s);
        QCOMPARE(m_api->dns().size(), 2);
    }

    void anAppWithoutBackendAnswers503()
    {
        CloudflareRouter router(options());
        QVERIFY2(router.ensure(u"new"_s, 0), "ensure");
        QVERIFY2(router.setAddresses(u"new"_s, {{at(u"new.example.com"_s)}}), "setAddresses");
        QCOMPARE(m_api->ingress(), (QJsonArray{rule(u"new.example.com"_s, u"http_status:503"_s), CatchAll}));
    }

    void droppedNamesLoseTheRecordsPandoMade()
    {
        CloudflareRouter router(options());
        routeThree(router);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(router.setAddresses(u"shop"_s, {}), "drop shop's address");
        QVERIFY(dnsRecordOf(m_api->dns(), u"shop.example.com"_s).isEmpty());
        QCOMPARE(m_api->ingress().size(), 3);
        // web.example.com still serves api: its record stays until no app uses the name.
        QVERIFY2(router.remove(u"web"_s), "remove web");
        QVERIFY(!dnsRecordOf(m_api->dns(), u"web.example.com"_s).isEmpty());
        QVERIFY2(router.remove(u"api"_s), "remove api");
        QCOMPARE(m_api->dns(), QJsonArray());
        QCOMPARE(m_api->ingress(), QJsonArray{CatchAll});
    }

    void whatPandoDidNotMakeIsKeptAndNotTaken()
    {
        // The user's own rule and catch-all, and DNS records Pando did not make.
        const QJsonObject theirs = rule(u"wiki.example.com"_s, u"http://192.168.1.5:80"_s);
        const QJsonObject theirCatchAll{{"service"_L1, "http_status:418"_L1}};
        m_api->set({{"config"_L1, QJsonObject{{"ingress"_L1, QJsonArray{theirs, theirCatchAll}},
                                              {"originRequest"_L1, QJsonObject{{"connectTimeout"_L1, 30}}}}},
                    {"dns"_L1, QJsonArray{QJsonObject{{"id"_L1, "a1"_L1},
                                                      {"type"_L1, "A"_L1},
                                                      {"name"_L1, "mail.example.com"_L1},
                                                      {"content"_L1, "192.0.2.1"_L1}},
                                          QJsonObject{{"id"_L1, "c1"_L1},
                                                      {"type"_L1, "CNAME"_L1},
                                                      {"name"_L1, "blog.example.com"_L1},
                                                      {"content"_L1, Target}}}}});
        CloudflareRouter router(options());
        QVERIFY2(router.ensure(u"app"_s, 0), "ensure");
        QVERIFY2(router.setBackend(u"app"_s, u"10.0.0.2"_s, 80), "setBackend");

        const int putsBefore = m_api->count(u"PUT"_s, u"/configurations"_s);
        auto served = router.setAddresses(u"app"_s, {{at(u"wiki.example.com"_s)}});
        QVERIFY(!served);
        QCOMPARE(served.error().code, ErrorCode::Conflict);
        QVERIFY2(served.error().message.contains(u"did not make"_s), errorText(served));
        auto mail = router.setAddresses(u"app"_s, {{at(u"mail.example.com"_s)}});
        QVERIFY(!mail);
        QCOMPARE(mail.error().code, ErrorCode::Conflict);
        QVERIFY2(mail.error().message.contains(u"A 192.0.2.1"_s), errorText(mail));
        QCOMPARE(m_api->count(u"PUT"_s, u"/configurations"_s), putsBefore);

        // A CNAME to this tunnel someone else made is used as it is and kept.
        auto blog = router.setAddresses(u"app"_s, {{at(u"blog.example.com"_s), at(u"app.example.com"_s)}});
        QVERIFY2(blog, errorText(blog));
        const QJsonObject config = m_api->state()["config"_L1].toObject();
        QCOMPARE(config["ingress"_L1].toArray(),
                 (QJsonArray{rule(u"app.example.com"_s, u"http://10.0.0.2:80"_s),
                             rule(u"blog.example.com"_s, u"http://10.0.0.2:80"_s), theirs, theirCatchAll}));
        QCOMPARE(config["originRequest"_L1].toObject()["connectTimeout"_L1].toInt(), 30);
        QCOMPARE(m_api->dns().size(), 3);
        QVERIFY2(router.remove(u"app"_s), "remove");
        QCOMPARE(m_api->dns().size(), 2); // the A record and their CNAME
        QCOMPARE(m_api->ingress(), (QJsonArray{theirs, theirCatchAll}));
    }

    void anotherAppsAddressIsAConflictNamingIt()
    {
        CloudflareRouter router(options());
        routeThree(router);
        if (QTest::currentTestFailed())
            return;
        const QJsonArray before = m_api->ingress();
        auto taken = router.setAddresses(u"shop"_s, {{at(u"web.example.com"_s, u"/api"_s)}});
        QVERIFY(!taken);
        QCOMPARE(taken.error().code, ErrorCode::Conflict);
        QVERIFY2(taken.error().message.contains(u"app api"_s), errorText(taken));
        QCOMPARE(m_api->ingress(), before);
        QCOMPARE(router.route(u"shop"_s)->addresses, QList<Address>{at(u"shop.example.com"_s)});
    }

    void whatCloudflareCannotDoIsRefused_data()
    {
        QTest::addColumn<Address>("address");
        QTest::addColumn<QString>("says");
        QTest::newRow("tls internal") << at(u"a.example.com"_s, u"/"_s, TlsMode::Internal) << u"Cloudflare ends TLS"_s;
        QTest::newRow("tls off") << at(u"a.example.com"_s, u"/"_s, TlsMode::Off) << u"Cloudflare ends TLS"_s;
        QTest::newRow("other zone") << at(u"a.example.org"_s) << u"not in the Cloudflare zone example.com"_s;
        QTest::newRow("suffix only") << at(u"notexample.com"_s) << u"not in the Cloudflare zone"_s;
        QTest::newRow("upper case") << at(u"A.example.com"_s) << u"lower-case host name"_s;
        QTest::newRow("trailing slash") << at(u"a.example.com"_s, u"/api/"_s) << u"without a trailing slash"_s;
    }

    void whatCloudflareCannotDoIsRefused()
    {
        QFETCH(Address, address);
        QFETCH(QString, says);
        CloudflareRouter router(options());
        QVERIFY2(router.ensure(u"app"_s, 0), "ensure");
        auto refused = router.setAddresses(u"app"_s, {{address}});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
        QVERIFY2(refused.error().text().contains(says), errorText(refused));
        QCOMPARE(m_api->count(u"PUT"_s, u""_s) + m_api->count(u"POST"_s, u""_s), 0);
    }

    void aWildcardTheZoneRefusesLeavesNothing()
    {
        CloudflareRouter router(options());
        QVERIFY2(router.ensure(u"app"_s, 0), "ensure");
        QVERIFY2(router.setBackend(u"app"_s, u"10.0.0.2"_s, 80), "setBackend");
        m_api->set({{"wildcards_allowed"_L1, false}});
        auto refused = router.setAddresses(u"app"_s, {{at(u"*.apps.example.com"_s)}});
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(u"Wildcard"_s), errorText(refused));
        QVERIFY2(refused.error().hint.contains(u"wildcard"_s), qPrintable(refused.error().hint));
        QCOMPARE(m_api->ingress(), QJsonArray{CatchAll});
        QCOMPARE(m_api->dns(), QJsonArray());
        m_api->set({{"wildcards_allowed"_L1, true}});
        QVERIFY2(router.setAddresses(u"app"_s, {{at(u"*.apps.example.com"_s)}}), "allowed");
        QCOMPARE(m_api->ingress()[0].toObject()["hostname"_L1].toString(), u"*.apps.example.com"_s);
        QCOMPARE(dnsRecordOf(m_api->dns(), u"*.apps.example.com"_s)["content"_L1].toString(), Target);
    }

    void anApiErrorKeepsThePreviousConfiguration_data()
    {
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("says");
        QTest::newRow("GET 500") << u"GET"_s << u"/configurations"_s << u"status"_s << int(ErrorCode::Unavailable)
                                 << u"HTTP 500"_s;
        QTest::newRow("PUT 503") << u"PUT"_s << u"/configurations"_s << u"status"_s << int(ErrorCode::Unavailable)
                                 << u"code 10001: Internal error"_s;
        QTest::newRow("token refused") << u"PUT"_s << u"/configurations"_s << u"refuse-token"_s
                                       << int(ErrorCode::Forbidden) << u"refused the API token"_s;
        QTest::newRow("not the envelope") << u"GET"_s << u"/configurations"_s << u"malformed"_s
                                          << int(ErrorCode::Unavailable) << u"not Cloudflare's"_s;
        QTest::newRow("no answer in time") << u"PUT"_s << u"/configurations"_s << u"hang"_s << int(ErrorCode::Timeout)
                                           << u"did not answer within 2000 ms"_s;
        QTest::newRow("DNS record refused") << u"POST"_s << u"/dns_records"_s << u"status"_s
                                            << int(ErrorCode::Unavailable) << u"cannot make the DNS record"_s;
    }

    void anApiErrorKeepsThePreviousConfiguration()
    {
        QFETCH(QString, method);
        QFETCH(QString, path);
        QFETCH(QString, kind);
        QFETCH(int, code);
        QFETCH(QString, says);
        CloudflareRouter router(options());
        routeThree(router);
        if (QTest::currentTestFailed())
            return;
        const QJsonArray ingress = m_api->ingress();
        const QJsonArray records = m_api->dns();
        m_api->failNext(method, path, kind, method == "PUT"_L1 ? 503 : 500);

        // A new host: the ingress PUT and a DNS record; one of them fails.
        auto failed = router.setAddresses(u"shop"_s, {{at(u"shop.example.com"_s), at(u"store.example.com"_s)}});
        QVERIFY(!failed);
        QCOMPARE(int(failed.error().code), code);
        QVERIFY2(failed.error().text().contains(says), errorText(failed));
        QVERIFY2(holdsNoToken(failed.error().text() + failed.error().hint), errorText(failed));
        // Cloudflare serves what it served, and Pando's table says so.
        QCOMPARE(m_api->ingress(), ingress);
        QCOMPARE(m_api->dns(), records);
        QCOMPARE(router.route(u"shop"_s)->addresses, QList<Address>{at(u"shop.example.com"_s)});
        const RouterStatus status = router.status();
        QVERIFY2(holdsNoToken(status.problem), qPrintable(status.problem));
        if (failed.error().code != ErrorCode::Invalid)
            QVERIFY2(status.problem.contains(says), qPrintable(status.problem));

        // Once the API answers again, the change goes through and the problem is gone.
        auto retried = router.setAddresses(u"shop"_s, {{at(u"shop.example.com"_s), at(u"store.example.com"_s)}});
        QVERIFY2(retried, errorText(retried));
        QCOMPARE(m_api->ingress().size(), ingress.size() + 1);
        QVERIFY(!dnsRecordOf(m_api->dns(), u"store.example.com"_s).isEmpty());
        QCOMPARE(router.status().problem, QString());
    }

    void aRecordThatCannotBeDeletedIsDeletedLater()
    {
        auto o = options();
        o.apiCheckIntervalMs = 0;
        CloudflareRouter router(o);
        routeThree(router);
        if (QTest::currentTestFailed())
            return;
        m_api->failNext(u"DELETE"_s, u"/dns_records/"_s, u"status"_s, 500);
        // The name is no longer served whatever becomes of its record.
        QVERIFY2(router.setAddresses(u"shop"_s, {}), "drop shop's address");
        QCOMPARE(m_api->ingress().size(), 3);
        QVERIFY(!dnsRecordOf(m_api->dns(), u"shop.example.com"_s).isEmpty());
        QVERIFY2(router.status().problem.contains(u"shop.example.com are left to delete"_s),
                 qPrintable(router.status().problem));
        QVERIFY2(router.check(), "check");
        QVERIFY(dnsRecordOf(m_api->dns(), u"shop.example.com"_s).isEmpty());
        QCOMPARE(router.status().problem, QString());
    }

    void aRestartAdoptsTheRoutesAndChangesNothing()
    {
        {
            CloudflareRouter router(options());
            routeThree(router);
            if (QTest::currentTestFailed())
                return;
        }
        m_api->clear();
        CloudflareRouter again(options());
        QVERIFY2(again.start(), "start");
        QCOMPARE(again.route(u"api"_s)->addresses, QList<Address>{at(u"web.example.com"_s, u"/api"_s)});
        QCOMPARE(again.route(u"shop"_s)->backendHost, u"10.0.0.3"_s);
        QCOMPARE(m_api->count(u"PUT"_s, u""_s) + m_api->count(u"POST"_s, u""_s) + m_api->count(u"DELETE"_s, u""_s), 0);
        // Someone removed Pando's rules in the dashboard: the next check puts them back.
        const QJsonArray ingress = m_api->ingress();
        m_api->set({{"config"_L1, QJsonObject{{"ingress"_L1, QJsonArray{CatchAll}}}}});
        auto o = options();
        o.apiCheckIntervalMs = 0;
        CloudflareRouter third(o);
        QVERIFY2(third.start(), "start");
        QCOMPARE(m_api->ingress(), ingress);
        // Someone deleted a record Pando made: the next check makes it again.
        QJsonArray records = m_api->dns();
        const QString shopId = dnsRecordOf(records, u"shop.example.com"_s)["id"_L1].toString();
        for (qsizetype i = records.size() - 1; i >= 0; --i)
            if (records[i].toObject()["name"_L1].toString() == "shop.example.com"_L1)
                records.removeAt(i);
        m_api->set({{"dns"_L1, records}});
        QVERIFY2(third.check(), "check");
        const QJsonObject remade = dnsRecordOf(m_api->dns(), u"shop.example.com"_s);
        QCOMPARE(remade["content"_L1].toString(), Target);
        QVERIFY(remade["id"_L1].toString() != shopId);
        QCOMPARE(m_api->dns().size(), 2);
    }

    void theTokenComesFromAPrivateFileAndStaysSecret()
    {
        auto o = options();
        o.apiToken.clear();
        o.apiTokenFile = m_dir->filePath(u"token"_s);
        {
            QFile file(o.apiTokenFile);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(ApiToken.toLatin1() + '\n');
        }
        QVERIFY(QFile::setPermissions(o.apiTokenFile, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadOther));
        CloudflareRouter open(o);
        auto refused = open.start();
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
        QVERIFY2(refused.error().text().contains(u"may be read by others"_s), errorText(refused));
        QVERIFY(holdsNoToken(refused.error().text() + refused.error().hint));

        QVERIFY(QFile::setPermissions(o.apiTokenFile, QFile::ReadOwner | QFile::WriteOwner));
        CloudflareRouter router(o);
        QVERIFY2(router.start(), "start with the token file");
        QCOMPARE(m_api->requests().last()["authorization"_L1].toString(), u"Bearer "_s + ApiToken);

        // A token Cloudflare refuses stops the start with an error that does not quote it.
        auto wrong = options();
        wrong.apiToken = u"not-"_s + ApiToken;
        CloudflareRouter refusedRouter(wrong);
        auto forbidden = refusedRouter.start();
        QVERIFY(!forbidden);
        QCOMPARE(forbidden.error().code, ErrorCode::Forbidden);
        QVERIFY2(forbidden.error().message.contains(u"code 10000: Authentication error"_s), errorText(forbidden));
        QVERIFY(holdsNoToken(forbidden.error().text() + forbidden.error().hint));
        QVERIFY(!forbidden.error().text().contains(wrong.apiToken));
    }

    void badOptionsAreNamed_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("where");
        QTest::newRow("account") << u"account"_s << u"12345"_s << u"cloudflare-account"_s;
        QTest::newRow("tunnel") << u"tunnel"_s << u"not-a-uuid"_s << u"cloudflare-tunnel"_s;
        QTest::newRow("zone") << u"zone"_s << u"EXAMPLE"_s << u"cloudflare-zone"_s;
        QTest::newRow("api") << u"api"_s << u"ftp://x"_s << u"cloudflare-api"_s;
        QTest::newRow("api in the clear") << u"api"_s << u"http://api.example.com/client/v4"_s << u"cloudflare-api"_s;
        QTest::newRow("no token") << u"token"_s << QString() << u"cloudflare-token-file"_s;
        QTest::newRow("no cloudflared") << u"cloudflared"_s << u"/nonexistent/cloudflared"_s << u"cloudflared"_s;
    }

    void badOptionsAreNamed()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, where);
        auto o = options();
        if (field == "account"_L1)
            o.accountId = value;
        else if (field == "tunnel"_L1)
            o.tunnelId = value;
        else if (field == "zone"_L1)
            o.zoneId = value;
        else if (field == "api"_L1)
            o.apiBase = value;
        else if (field == "token"_L1)
            o.apiToken = value;
        else
            o.cloudflaredBinary = value;
        CloudflareRouter router(o);
        auto started = router.start();
        QVERIFY(!started);
        QCOMPARE(started.error().code, ErrorCode::Invalid);
        QCOMPARE(started.error().where, where);
        QCOMPARE(m_api->requests().size(), 0);
    }

    void statusSaysWhatIsWrong()
    {
        auto o = options();
        o.apiCheckIntervalMs = 0;
        m_api->set({{"tunnel_status"_L1, "inactive"_L1}});
        CloudflareRouter router(o);
        QVERIFY2(router.start(), "start");
        // No cloudflared of Pando's: the tunnel's status as the API gives it.
        RouterStatus status = router.status();
        QCOMPARE(status.kind, u"cloudflare"_s);
        QVERIFY(status.outlivesPando);
        QVERIFY(!status.running);
        QVERIFY2(status.problem.contains(u"as inactive"_s), qPrintable(status.problem));
        m_api->set({{"tunnel_status"_L1, "healthy"_L1}});
        QVERIFY2(router.check(), "check");
        status = router.status();
        QVERIFY(status.running);
        QCOMPARE(status.problem, QString());

        // The token refused, then the API gone: said, and the tunnel serves on.
        m_api->failNext(u"GET"_s, u"/configurations"_s, u"refuse-token"_s);
        QVERIFY(!router.check());
        QVERIFY2(router.status().problem.contains(u"refused the API token"_s), qPrintable(router.status().problem));
        m_api->stop();
        auto down = router.check();
        QVERIFY(!down);
        QCOMPARE(down.error().code, ErrorCode::Unavailable);
        status = router.status();
        QVERIFY2(status.problem.contains(u"did not answer"_s), qPrintable(status.problem));
        QVERIFY2(status.problem.contains(u"serves the last configuration"_s), qPrintable(status.problem));
        QVERIFY(holdsNoToken(status.problem));
    }

    void cloudflaredIsRunWithTheTokenInItsEnvironment()
    {
        const QString record = m_dir->filePath(u"cloudflared.record"_s);
        qputenv("FAKE_CLOUDFLARED_RECORD", QFile::encodeName(record));
        // As pandod has it when the API token came from the environment.
        qputenv("PANDO_CLOUDFLARE_TOKEN", ApiToken.toLatin1());
        auto o = options();
        o.cloudflaredBinary = test::sourceDir() + u"/tests/adapters/cloudflare/fake_cloudflared.py"_s;
        o.apiCheckIntervalMs = 0;
        auto router = std::make_unique<CloudflareRouter>(o);
        QVERIFY2(router->start(), "start");
        const qint64 pid = router->cloudflaredPid();
        QVERIFY(pid > 0);
        QTRY_VERIFY_WITH_TIMEOUT(router->status().running, 10000);
        QCOMPARE(router->status().pid, pid);

        QFile file(record);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> starts = file.readAll().trimmed().split('\n');
        QCOMPARE(starts.size(), 1);
        const QJsonObject seen = QJsonDocument::fromJson(starts.first()).object();
        qunsetenv("PANDO_CLOUDFLARE_TOKEN");
        QCOMPARE(seen["token"_L1].toString(), TunnelToken);
        // Pando's API token stays with Pando.
        const QStringList environment = seen["environ"_L1].toVariant().toStringList();
        QVERIFY(environment.contains(u"TUNNEL_TOKEN"_s));
        QVERIFY2(!environment.contains(u"PANDO_CLOUDFLARE_TOKEN"_s), qPrintable(environment.join(u' ')));
        const QStringList argv = seen["argv"_L1].toVariant().toStringList();
        QCOMPARE(argv.first(), u"tunnel"_s);
        QCOMPARE(argv.last(), u"run"_s);
        QVERIFY2(holdsNoToken(argv.join(u' ')), qPrintable(argv.join(u' ')));
        QFile cmdline(u"/proc/%1/cmdline"_s.arg(pid));
        QVERIFY(cmdline.open(QIODevice::ReadOnly));
        QVERIFY(holdsNoToken(QString::fromUtf8(cmdline.readAll())));

        // Without a connection to Cloudflare it is not serving, and status() says so.
        QFile notReady(record + u".notready"_s);
        QVERIFY(notReady.open(QIODevice::WriteOnly));
        notReady.close();
        QVERIFY2(router->status().problem.contains(u"holds no connection"_s), qPrintable(router->status().problem));
        QVERIFY(!router->status().running);
        QVERIFY(QFile::remove(notReady.fileName()));

        // A new Pando adopts the cloudflared the last one left running.
        router.reset();
        QCOMPARE(::kill(pid_t(pid), 0), 0);
        router = std::make_unique<CloudflareRouter>(o);
        QVERIFY2(router->start(), "start again");
        QCOMPARE(router->cloudflaredPid(), pid);

        // Killed: said, then started again by check().
        QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!router->status().running, 10000);
        QVERIFY2(router->status().problem.contains(u"cloudflared"_s), qPrintable(router->status().problem));
        QVERIFY2(router->check(), "check");
        QVERIFY(router->cloudflaredPid() > 0);
        QVERIFY(router->cloudflaredPid() != pid);
        QTRY_VERIFY_WITH_TIMEOUT(router->status().running, 10000);
        router->stopCloudflared();
        QCOMPARE(router->cloudflaredPid(), 0);
    }

    void aCloudflaredThatExitsIsReportedWithItsLastWords()
    {
        const QString record = m_dir->filePath(u"cloudflared.record"_s);
        qputenv("FAKE_CLOUDFLARED_RECORD", QFile::encodeName(record));
        qputenv("FAKE_CLOUDFLARED_EXIT", "1");
        auto o = options();
        o.cloudflaredBinary = test::sourceDir() + u"/tests/adapters/cloudflare/fake_cloudflared.py"_s;
        CloudflareRouter router(o);
        QVERIFY2(router.start(), "start: the API works, cloudflared is a problem of its own");
        qunsetenv("FAKE_CLOUDFLARED_EXIT");
        // A loaded machine may take longer than start()'s grace to run the script to its end.
        QTRY_VERIFY_WITH_TIMEOUT(router.status().problem.contains(u"exited with status 1"_s), 10000);
        const RouterStatus status = router.status();
        QVERIFY(!status.running);
        QVERIFY2(status.problem.contains(u"exited with status 1"_s), qPrintable(status.problem));
        QVERIFY2(status.problem.contains(u"Invalid tunnel secret"_s), qPrintable(status.problem));
        QVERIFY(holdsNoToken(status.problem));
    }

    // One that keeps exiting is started again at once, then after a second, two, ...: not on
    // every pass of the reconciler, and the status says when.
    void aCloudflaredThatKeepsExitingIsStartedLessAndLessOften()
    {
        const QString record = m_dir->filePath(u"cloudflared.record"_s);
        qputenv("FAKE_CLOUDFLARED_RECORD", QFile::encodeName(record));
        qputenv("FAKE_CLOUDFLARED_EXIT", "1");
        auto cleanup = qScopeGuard([] { qunsetenv("FAKE_CLOUDFLARED_EXIT"); });
        auto o = options();
        o.cloudflaredBinary = test::sourceDir() + u"/tests/adapters/cloudflare/fake_cloudflared.py"_s;
        CloudflareRouter router(o);
        QVERIFY2(router.start(), "start: the API works, cloudflared is a problem of its own");
        const auto starts = [&record] {
            QFile file(record);
            return file.open(QIODevice::ReadOnly) ? file.readAll().count('\n') : 0;
        };
        // Checked as often as a busy reconciler would, until the second start waits.
        QTRY_VERIFY_WITH_TIMEOUT((discardResult(router.check(), "the status says why"),
                                  router.status().problem.contains(u"starts it again in 1 s"_s)),
                                 10000);
        QCOMPARE(starts(), 2);
        QVERIFY2(router.status().problem.contains(u"Invalid tunnel secret"_s), qPrintable(router.status().problem));
        QVERIFY(holdsNoToken(router.status().problem));
        for (int i = 0; i < 5; ++i)
            QVERIFY(!router.check());
        QCOMPARE(starts(), 2);

        // Its time come, it is tried again, and the next wait is longer.
        QTRY_VERIFY_WITH_TIMEOUT((discardResult(router.check(), "the status says why"), starts() == 3), 5000);
        QTRY_VERIFY_WITH_TIMEOUT((discardResult(router.check(), "the status says why"),
                                  router.status().problem.contains(u"(after 3 failures in a row)"_s)),
                                 10000);
        QCOMPARE(starts(), 3);
    }
};

QTEST_GUILESS_MAIN(TestCloudflareRouter)
#include "tst_cloudflarerouter.moc"
