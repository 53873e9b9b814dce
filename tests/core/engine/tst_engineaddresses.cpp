// Where the edge serves apps, below the HTTP layer: the install's domain policy (base domain,
// allowed names, wildcards) decides which names an app may ask for, checked when it is created
// or changed; two apps never hold one name and path (refused naming the other); a loopback-only
// edge refuses names before anything exists; and a deploy hands the deployed spec's addresses
// to the edge. The engine is real (SQLite in a temporary directory); the outside world is faked.

#include "app/wiring/install.h"
#include "enginepeople.h"
#include "tests/app/server/fakes.h"

#include <QElapsedTimer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using adapters::Address;
using adapters::TlsMode;

class TestEngineAddresses : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    test::HealthResponder m_health;
    std::shared_ptr<test::FakeRouter> m_router = std::make_shared<test::FakeRouter>(true);
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;

    QByteArray spec(const QString &name, const QString &route = {}) const
    {
        return u"name: %1\nsource:\n  repo: https://git.example/%1.git\nrun:\n  port: %2\nhealth:\n  path: /\n%3"_s
            .arg(name)
            .arg(m_health.serverPort())
            .arg(route.isEmpty() ? QString() : u"route:\n"_s + route)
            .toUtf8();
    }
    core::Actor admin() const { return m_people.actor(u"root"_s); }
    bool setPolicy(const QString &base, const QStringList &allowed, bool wildcards)
    {
        return bool(m_engine->setDomainPolicy({base, allowed, wildcards}, admin()));
    }
    bool deployAndWait(const QString &app)
    {
        auto deploy = m_engine->deploy(app, {}, admin());
        if (!deploy)
            return false;
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < 15000) {
            auto view = m_engine->deployView(deploy->id);
            if (view && view->record.status == core::DeployStatus::Succeeded)
                return true;
            if (view && view->record.status == core::DeployStatus::Failed) {
                qWarning("deploy failed: %s", qPrintable(view->record.error));
                return false;
            }
            QTest::qWait(20);
        }
        return false;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_health.listen(QHostAddress::LocalHost));
        wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
        options.engine.retireGraceMs = 0;
        options.runtime = std::make_shared<test::FakeRuntime>();
        options.router = m_router;
        options.source = std::make_shared<test::FakeSource>();
        options.services = std::make_shared<test::FakeServiceProvisioner>();
        m_install = std::make_unique<wiring::Install>(std::move(options));
        auto opened = m_install->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_engine = &m_install->engine();
        const QString made = m_people.create(
            *m_engine, {{"root", core::accounts::Role::Admin}, {"alice", core::accounts::Role::Member}});
        QVERIFY2(made.isEmpty(), qPrintable(made));
    }
    void cleanupTestCase()
    {
        m_engine = nullptr;
        m_install.reset();
    }

    void policyDecidesWhichNames()
    {
        QVERIFY(setPolicy(u"apps.example.com"_s, {u"example.org"_s}, false));
        const auto policy = m_engine->domainPolicy();
        QVERIFY(policy);
        QCOMPARE(policy->allowed, QStringList{u"example.org"_s});

        auto outside = m_engine->createApp(spec(u"stray"_s, u"  domains: [stray.example.net]\n"_s), admin());
        QVERIFY(!outside);
        QCOMPARE(outside.error().code, ErrorCode::Invalid);
        QCOMPARE(outside.error().where, u"route.domains[0]"_s);
        QVERIFY2(outside.error().hint.contains(u"apps.example.com, example.org"_s), qPrintable(outside.error().hint));
        QVERIFY(!m_engine->app(u"stray"_s)); // nothing was created

        auto wildcard =
            m_engine->createApp(spec(u"wild"_s, u"  domains: [\"*.shop.example.org\"]\n  tls: internal\n"_s), admin());
        QVERIFY(!wildcard);
        QVERIFY2(wildcard.error().message.contains(u"wildcard"_s), qPrintable(wildcard.error().message));
        QVERIFY(setPolicy(u"apps.example.com"_s, {u"example.org"_s}, true));
        QVERIFY(
            m_engine->createApp(spec(u"wild"_s, u"  domains: [\"*.shop.example.org\"]\n  tls: internal\n"_s), admin()));

        // Under an allowed name, at any depth.
        QVERIFY(m_engine->createApp(spec(u"docs"_s, u"  domains: [help.docs.example.org]\n"_s), admin()));
        // Members are held to the same names; the setting is for administrators only.
        auto changed = m_engine->setDomainPolicy({}, m_people.actor(u"alice"_s));
        QVERIFY(!changed);
        QCOMPARE(changed.error().code, ErrorCode::Forbidden);
    }

    void twoAppsNeverHoldOneAddress()
    {
        QVERIFY(setPolicy({}, {}, false));
        QVERIFY(m_engine->createApp(spec(u"shop"_s, u"  domains: [shop.example.com]\n  paths: [/store]\n"_s), admin()));
        QVERIFY(m_engine->createApp(spec(u"api"_s, u"  domains: [shop.example.com]\n  paths: [/api]\n"_s), admin()));

        const auto refusedWith = [this](const QString &name, const QString &route) {
            auto created = m_engine->createApp(spec(name, route), admin());
            return created ? Error{} : created.error();
        };
        const Error same = refusedWith(u"copy"_s, u"  domains: [shop.example.com]\n  paths: [/store]\n"_s);
        QCOMPARE(same.code, ErrorCode::Conflict);
        QVERIFY2(same.message.contains(u"app shop is already served at shop.example.com/store"_s),
                 qPrintable(same.message));
        const Error under = refusedWith(u"deep"_s, u"  domains: [shop.example.com]\n  paths: [/api/v2]\n"_s);
        QCOMPARE(under.code, ErrorCode::Conflict);
        QVERIFY2(under.message.contains(u"overlaps app api's"_s), qPrintable(under.message));
        const Error whole = refusedWith(u"whole"_s, u"  domains: [SHOP.example.com]\n"_s);
        QCOMPARE(whole.code, ErrorCode::Conflict);
        // Another path on the name is free; so is the same path on another name.
        QVERIFY(m_engine->createApp(spec(u"blog"_s, u"  domains: [shop.example.com]\n  paths: [/blog]\n"_s), admin()));
        QVERIFY(
            m_engine->createApp(spec(u"store2"_s, u"  domains: [store.example.com]\n  paths: [/store]\n"_s), admin()));
        // A change is checked as a creation is: blog may not take the api's prefix.
        auto moved = m_engine->updateApp(u"blog"_s, spec(u"blog"_s, u"  domains: [shop.example.com]\n  paths: [/]\n"_s),
                                         admin());
        QVERIFY(!moved);
        QCOMPARE(moved.error().code, ErrorCode::Conflict);
        QCOMPARE(m_engine->app(u"blog"_s)->spec.route.paths, QStringList{u"/blog"_s}); // unchanged
    }

    void aDeployHandsTheEdgeItsAddresses()
    {
        QVERIFY(setPolicy(u"apps.example.com"_s, {}, false));
        QVERIFY(m_engine->createApp(spec(u"notes"_s), admin()));
        QVERIFY(deployAndWait(u"notes"_s));
        QCOMPARE(m_router->route(u"notes"_s)->addresses,
                 (QList<Address>{Address{u"notes.apps.example.com"_s, u"/"_s, TlsMode::Auto}}));
        const auto view = m_engine->app(u"notes"_s);
        QVERIFY(view);
        QCOMPARE(view->addresses.size(), 1);
        QCOMPARE(view->addresses.first().url, u"https://notes.apps.example.com/"_s);

        // A change of names takes effect with the next deploy, not before.
        QVERIFY(m_engine->updateApp(u"notes"_s, spec(u"notes"_s, u"  domains: [notes.lan]\n"_s), admin()));
        QCOMPARE(m_router->route(u"notes"_s)->addresses.first().host, u"notes.apps.example.com"_s);
        QVERIFY(deployAndWait(u"notes"_s));
        QCOMPARE(m_router->route(u"notes"_s)->addresses,
                 (QList<Address>{Address{u"notes.lan"_s, u"/"_s, TlsMode::Internal}}));
    }

    void aLoopbackEdgeRefusesNamesFirst()
    {
        QTemporaryDir dir;
        wiring::InstallOptions options = test::quietInstallOptions(dir.path());
        options.runtime = std::make_shared<test::FakeRuntime>();
        options.router = std::make_shared<test::FakeRouter>(false);
        options.source = std::make_shared<test::FakeSource>();
        options.services = std::make_shared<test::FakeServiceProvisioner>();
        wiring::Install install(std::move(options));
        QVERIFY(install.open());
        auto refused = install.engine().createApp(spec(u"site"_s, u"  domains: [site.example.com]\n"_s), core::Actor{});
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"route.domains"_s);
        QVERIFY2(refused.error().hint.contains(u"--edge caddy"_s), qPrintable(refused.error().hint));
        QVERIFY(!install.engine().app(u"site"_s));
        // Nor can it ask who is signed in.
        refused = install.engine().createApp(spec(u"site"_s, u"  auth: pando\n"_s), core::Actor{});
        QVERIFY(!refused);
        QCOMPARE(refused.error().where, u"route.auth"_s);
        QVERIFY2(refused.error().hint.contains(u"--edge caddy"_s), qPrintable(refused.error().hint));
        QVERIFY(!install.engine().app(u"site"_s));
        // Without names it is created as ever.
        QVERIFY(install.engine().createApp(spec(u"site"_s), core::Actor{}));
    }

    // route.auth reaches the edge with the deploy, and leaves it with the next one.
    void aDeployTellsTheEdgeWhoMaySeeTheApp()
    {
        QVERIFY(m_engine->createApp(spec(u"ledger"_s, u"  auth: pando\n"_s), admin()));
        QVERIFY(deployAndWait(u"ledger"_s));
        QVERIFY(m_router->route(u"ledger"_s)->signIn);
        QVERIFY(m_engine->updateApp(u"ledger"_s, spec(u"ledger"_s), admin()));
        QVERIFY(m_router->route(u"ledger"_s)->signIn); // until the next deploy
        QVERIFY(deployAndWait(u"ledger"_s));
        QVERIFY(!m_router->route(u"ledger"_s)->signIn);
    }
};

QTEST_GUILESS_MAIN(TestEngineAddresses)
#include "tst_engineaddresses.moc"
