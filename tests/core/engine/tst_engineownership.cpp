// The engine's ownership rules, below the HTTP layer: the owner grant made with what a user
// creates (an app, a pipeline) or not at all, grants that outlive a failed teardown and go with a
// successful one, specgate for whoever calls updateApp, audited grant changes and refusals, and
// revoked credentials announced on the bus whoever revokes them. The engine is real (SQLite in a
// temporary directory); only the outside world is faked (tests/app/server/fakes.h's adapters, the
// in-memory pipeline service), and no server runs.

#include "app/wiring/install.h"
#include "core/accounts/accountservice.h"
#include "core/engine/enginewiring.h"
#include "core/policy/policy.h"
#include "enginepeople.h"
#include "tests/app/server/fakes.h"
#include "tests/support/vocabtesting.h"

#include <QSqlQuery>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using core::authz::ObjectKind;

namespace {

// A runtime whose listing can be made to fail, so that a teardown fails as a lost Docker engine
// makes it fail.
class FlakyRuntime : public test::FakeRuntime {
public:
    std::atomic_bool down = false;
    Result<QList<adapters::ContainerInfo>> containers(const adapters::Labels &filter) override
    {
        if (down)
            return fail(ErrorCode::Unavailable, u"the runtime does not answer"_s);
        return FakeRuntime::containers(filter);
    }
};

QByteArray specWithRepo(const QString &name, const QString &repo)
{
    return u"name: %1\nsource:\n  repo: %2\n  ref: main\nrun:\n  port: 8080\n"_s.arg(name, repo).toUtf8();
}

const QByteArray PipelineYaml = "resources:\n- name: repo\n  type: git\njobs:\n- name: unit\n  plan:\n  - get: repo\n";

} // namespace

class TestEngineOwnership : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void creatorOwnsTheApp();
    void appAndOwnerGrantTogether();
    void grantsOutliveAFailedTeardown();
    void specgateForEveryCaller();
    void pipelineOwnership();
    void pipelineWithoutItsOwnerIsNotKept();
    void renamingTakesTheRightToSetAPipeline();
    void grantChangesAreAudited();
    void refusalsAreAudited();
    void revokedCredentialsAreAnnounced();

private:
    QStringList owners(ObjectKind kind, const QString &object);
    QStringList auditActions(const QString &object);
    bool failGrantInserts(bool fail);
    void waitRemoved(const QString &app);

    QTemporaryDir m_dir;
    std::shared_ptr<FlakyRuntime> m_runtime = std::make_shared<FlakyRuntime>();
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::FakePipelineService *m_pipelines = nullptr;
    test::EnginePeople m_people;
};

void TestEngineOwnership::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // The composition root pandod uses, over fakes; the test then calls only the engine.
    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    // Apps named gated-* are under approval; a new source repository is a watched change.
    auto policy = core::policy::parsePolicy(R"({"apps": ["gated-*"], "changes": {"newSourceRepo": true}})");
    QVERIFY(policy);
    options.engine.approvalPolicy = *policy;
    options.runtime = m_runtime;
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    options.installPipelines = [this](core::Engine &engine) -> Status {
        auto pipelines = std::make_unique<test::FakePipelineService>(*engine.events());
        m_pipelines = pipelines.get();
        engine.setPipelines(std::move(pipelines));
        return {};
    };
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();

    // The first user of an install is its administrator.
    const QString made = m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin},
                                                     {"alice", core::accounts::Role::Member},
                                                     {"bob", core::accounts::Role::Member},
                                                     {"olga", core::accounts::Role::Operator}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
}

void TestEngineOwnership::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
}

QStringList TestEngineOwnership::owners(ObjectKind kind, const QString &object)
{
    auto grants = core::authz::GrantRepository(core::wiringParts(*m_engine).database).list(kind, object);
    if (!grants)
        return {u"error: "_s + grants.error().text()};
    QStringList list;
    for (const core::authz::Grant &grant : std::as_const(*grants))
        list.append(m_people.nameOf(grant.userId) + u'/' + grant.role);
    // Grants made in one millisecond are listed in user id order, which is random.
    list.sort();
    return list;
}

QStringList TestEngineOwnership::auditActions(const QString &object)
{
    core::AuditRepository::Filter filter;
    filter.object = object;
    filter.limit = 100;
    auto lines = m_engine->auditLines(filter);
    if (!lines)
        return {u"error: "_s + lines.error().text()};
    QStringList list;
    for (const core::AuditRecord &line : std::as_const(*lines))
        list.prepend(line.action + u' ' + line.outcome); // oldest first
    return list;
}

// A trigger that makes every new grant fail, as a full disk or a lost database would.
bool TestEngineOwnership::failGrantInserts(bool fail)
{
    auto db = core::wiringParts(*m_engine).database.connection();
    if (!db)
        return false;
    QSqlQuery q(*db);
    return fail ? q.exec(
                      u"CREATE TRIGGER no_grants BEFORE INSERT ON grants BEGIN SELECT RAISE(ABORT, 'no grants'); END"_s)
                : q.exec(u"DROP TRIGGER no_grants"_s);
}

void TestEngineOwnership::waitRemoved(const QString &app)
{
    QTRY_VERIFY_WITH_TIMEOUT(
        m_engine->app(app).has_value() == false || m_engine->app(app)->status != core::AppStatus::Removing, 10000);
}

void TestEngineOwnership::creatorOwnsTheApp()
{
    auto app = m_engine->createApp(test::helloSpec(u"alices"_s), m_people.actor(u"alice"_s));
    QVERIFY2(app, qPrintable(app ? QString() : app.error().text()));
    QCOMPARE(owners(ObjectKind::App, u"alices"_s), QStringList{u"alice/owner"_s});
    auto listed = m_engine->grants(ObjectKind::App, u"alices"_s);
    QVERIFY(listed);
    QCOMPARE(listed->size(), 1);
    QCOMPARE(listed->first().username, u"alice"_s);

    // The engine's own components and the desktop's local owner are nobody: no grant.
    QVERIFY(m_engine->createApp(test::helloSpec(u"systems"_s), core::Actor::system(u"test"_s)));
    QCOMPARE(owners(ObjectKind::App, u"systems"_s), QStringList{});
}

void TestEngineOwnership::appAndOwnerGrantTogether()
{
    QVERIFY(failGrantInserts(true));
    auto refused = m_engine->createApp(test::helloSpec(u"orphan"_s), m_people.actor(u"alice"_s));
    QVERIFY(failGrantInserts(false));
    QVERIFY(!refused);
    // Nothing half-created: no app without its owner, and the name and route are free again.
    QCOMPARE(m_engine->app(u"orphan"_s).error().code, ErrorCode::NotFound);
    auto again = m_engine->createApp(test::helloSpec(u"orphan"_s), m_people.actor(u"alice"_s));
    QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
    QCOMPARE(owners(ObjectKind::App, u"orphan"_s), QStringList{u"alice/owner"_s});
}

void TestEngineOwnership::grantsOutliveAFailedTeardown()
{
    QVERIFY(m_engine->createApp(test::helloSpec(u"fragile"_s), m_people.actor(u"alice"_s)));
    QVERIFY(m_engine->addGrant(ObjectKind::App, u"fragile"_s, u"bob"_s, u"deployer"_s, m_people.actor(u"alice"_s)));

    m_runtime->down = true;
    QVERIFY(m_engine->removeApp(u"fragile"_s, m_people.actor(u"alice"_s)));
    waitRemoved(u"fragile"_s);
    m_runtime->down = false;
    // The teardown failed: the app is still there, and so is everyone who may act on it, so
    // that its owner can retry.
    QVERIFY(m_engine->app(u"fragile"_s));
    QCOMPARE(owners(ObjectKind::App, u"fragile"_s), (QStringList{u"alice/owner"_s, u"bob/deployer"_s}));
    QVERIFY(auditActions(u"app/fragile"_s).contains(u"app.remove failure"_s));

    QVERIFY(m_engine->removeApp(u"fragile"_s, m_people.actor(u"alice"_s)));
    QTRY_VERIFY_WITH_TIMEOUT(!m_engine->app(u"fragile"_s).has_value(), 10000);
    QCOMPARE(owners(ObjectKind::App, u"fragile"_s), QStringList{});
    // A new app of that name inherits nobody.
    QVERIFY(m_engine->createApp(test::helloSpec(u"fragile"_s), m_people.actor(u"bob"_s)));
    QCOMPARE(owners(ObjectKind::App, u"fragile"_s), QStringList{u"bob/owner"_s});
}

void TestEngineOwnership::specgateForEveryCaller()
{
    QVERIFY(m_engine->createApp(test::helloSpec(u"gated-web"_s), m_people.actor(u"alice"_s)));
    const QByteArray moved = specWithRepo(u"gated-web"_s, u"https://git.example/elsewhere.git"_s);

    // A member may not point an app under approval at a new repository, whoever calls the engine.
    auto refused = m_engine->updateApp(u"gated-web"_s, moved, m_people.actor(u"alice"_s));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Forbidden);
    QCOMPARE(m_engine->app(u"gated-web"_s)->spec.source.repo, u"https://git.example/hello.git"_s);
    // A change the policy does not watch is the member's to make.
    QVERIFY(m_engine->updateApp(u"gated-web"_s, specWithRepo(u"gated-web"_s, u"https://git.example/hello.git"_s),
                                m_people.actor(u"alice"_s)));
    // An app not under approval is not gated.
    QVERIFY(m_engine->createApp(test::helloSpec(u"free-web"_s), m_people.actor(u"alice"_s)));
    QVERIFY(m_engine->updateApp(u"free-web"_s, specWithRepo(u"free-web"_s, u"https://git.example/elsewhere.git"_s),
                                m_people.actor(u"alice"_s)));
    // Operators may stage it, and so may the install's own authority (no role).
    QVERIFY(m_engine->updateApp(u"gated-web"_s, moved, m_people.actor(u"olga"_s)));
    QVERIFY(m_engine->updateApp(u"gated-web"_s, specWithRepo(u"gated-web"_s, u"https://git.example/third.git"_s),
                                core::Actor::system(u"test"_s)));
}

void TestEngineOwnership::pipelineOwnership()
{
    auto set = m_engine->setPipeline(u"alices-ci"_s, PipelineYaml, {}, false, m_people.actor(u"alice"_s));
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QVERIFY(set->created);
    QCOMPARE(owners(ObjectKind::Pipeline, u"alices-ci"_s), QStringList{u"alice/owner"_s});
    // Setting it again (another user) grants nothing more; a dry run grants nothing at all.
    QVERIFY(m_engine->setPipeline(u"alices-ci"_s, PipelineYaml, {}, false, m_people.actor(u"bob"_s)));
    QVERIFY(m_engine->setPipeline(u"dry-ci"_s, PipelineYaml, {}, true, m_people.actor(u"bob"_s)));
    QCOMPARE(owners(ObjectKind::Pipeline, u"alices-ci"_s), QStringList{u"alice/owner"_s});
    QCOMPARE(owners(ObjectKind::Pipeline, u"dry-ci"_s), QStringList{});

    QVERIFY(
        m_engine->addGrant(ObjectKind::Pipeline, u"alices-ci"_s, u"bob"_s, u"operator"_s, m_people.actor(u"alice"_s)));
    QVERIFY(m_engine->removePipeline(u"alices-ci"_s, m_people.actor(u"alice"_s)));
    QCOMPARE(owners(ObjectKind::Pipeline, u"alices-ci"_s), QStringList{});
}

void TestEngineOwnership::pipelineWithoutItsOwnerIsNotKept()
{
    QVERIFY(failGrantInserts(true));
    auto refused = m_engine->setPipeline(u"orphan-ci"_s, PipelineYaml, {}, false, m_people.actor(u"alice"_s));
    QVERIFY(failGrantInserts(false));
    QVERIFY(!refused);
    QCOMPARE(m_pipelines->pipeline(u"orphan-ci"_s).error().code, ErrorCode::NotFound);
}

// A rename makes a pipeline under a new name: its owner, if a member, may not; an operator may.
// (The grants moving with it is the store's rename, tested with PipelineRepository.)
void TestEngineOwnership::renamingTakesTheRightToSetAPipeline()
{
    QVERIFY(m_engine->setPipeline(u"alices-old"_s, PipelineYaml, {}, false, m_people.actor(u"alice"_s)));
    const auto principal = [this](const QString &name) {
        const core::accounts::User user = m_people.user(name);
        return core::accounts::Principal{user.id, user.username,  user.role,
                                         {},      u"s-"_s + name, core::accounts::Principal::Kind::Session};
    };
    auto refused =
        m_engine->renamePipeline(principal(u"alice"_s), u"alices-old"_s, u"alices-new"_s, m_people.actor(u"alice"_s));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Forbidden);
    QCOMPARE(refused.error().where, u"name"_s);
    QVERIFY(m_pipelines->pipeline(u"alices-old"_s));
    auto renamed =
        m_engine->renamePipeline(principal(u"olga"_s), u"alices-old"_s, u"alices-new"_s, m_people.actor(u"olga"_s));
    QVERIFY2(renamed, qPrintable(renamed ? QString() : renamed.error().text()));
    QCOMPARE(renamed->record.name, u"alices-new"_s);
    QVERIFY(!m_pipelines->pipeline(u"alices-old"_s));
    QVERIFY(m_engine->removePipeline(u"alices-new"_s, m_people.actor(u"olga"_s)));
}

void TestEngineOwnership::grantChangesAreAudited()
{
    QVERIFY(m_engine->createApp(test::helloSpec(u"shared"_s), m_people.actor(u"alice"_s)));
    auto added = m_engine->addGrant(ObjectKind::App, u"shared"_s, u"bob"_s, u"viewer"_s, m_people.actor(u"alice"_s));
    QVERIFY(added);
    QVERIFY(added->created);
    QCOMPARE(added->grant.username, u"bob"_s);
    // The same grant again changes nothing and audits nothing.
    auto same = m_engine->addGrant(ObjectKind::App, u"shared"_s, u"bob"_s, u"viewer"_s, m_people.actor(u"alice"_s));
    QVERIFY(same);
    QVERIFY(!same->created);
    QVERIFY(m_engine->removeGrant(ObjectKind::App, u"shared"_s, u"bob"_s, u"viewer"_s, m_people.actor(u"alice"_s)));
    QCOMPARE(auditActions(u"app/shared"_s),
             (QStringList{u"app.create success"_s, u"grant.add success"_s, u"grant.remove success"_s}));

    // What is named must exist, and the role must be one the kind has.
    QCOMPARE(m_engine->removeGrant(ObjectKind::App, u"shared"_s, u"bob"_s, u"viewer"_s, m_people.actor(u"alice"_s))
                 .error()
                 .code,
             ErrorCode::NotFound);
    auto ghost = m_engine->addGrant(ObjectKind::App, u"shared"_s, u"ghost"_s, u"viewer"_s, m_people.actor(u"alice"_s));
    QCOMPARE(ghost.error().code, ErrorCode::NotFound);
    QCOMPARE(ghost.error().where, u"user"_s);
    QCOMPARE(m_engine->addGrant(ObjectKind::App, u"nosuchapp"_s, u"bob"_s, u"viewer"_s, m_people.actor(u"alice"_s))
                 .error()
                 .code,
             ErrorCode::NotFound);
    auto badRole =
        m_engine->addGrant(ObjectKind::App, u"shared"_s, u"bob"_s, u"operator"_s, m_people.actor(u"alice"_s));
    QCOMPARE(badRole.error().code, ErrorCode::Invalid);
    QVERIFY(badRole.error().hint.contains(u"deployer"_s));
}

void TestEngineOwnership::refusalsAreAudited()
{
    QVERIFY(m_engine->createApp(test::helloSpec(u"guarded"_s), m_people.actor(u"alice"_s)));
    const core::accounts::User bob = m_people.user(u"bob"_s);
    const core::accounts::Principal asBob{bob.id, bob.username, bob.role,
                                          {},     u"s2"_s,      core::accounts::Principal::Kind::Session};
    auto decision = m_engine->authorize(asBob, core::authz::permission::AppsWrite, {ObjectKind::App, u"guarded"_s, {}},
                                        m_people.actor(u"bob"_s), u"DELETE /api/v1/apps/{name}"_s);
    QVERIFY(decision);
    QVERIFY(!*decision);
    QVERIFY(auditActions(u"app/guarded"_s).contains(u"apps.write denied"_s));

    // The app limit is the engine's to keep.
    m_engine->setAuthzOptions(core::authz::AuthzOptions{0});
    auto limited = m_engine->authorize(asBob, core::authz::permission::AppsWrite, {}, m_people.actor(u"bob"_s),
                                       u"POST /api/v1/apps"_s);
    m_engine->setAuthzOptions({});
    QVERIFY(limited);
    QVERIFY(!*limited);
    QVERIFY(limited->reason.contains(u"app limit"_s));
}

void TestEngineOwnership::revokedCredentialsAreAnnounced()
{
    // Kept on this thread through a queued connection: a QSignalSpy would append on whichever
    // thread publishes while this one reads.
    QStringList revoked;
    QObject receiver;
    connect(
        m_engine->events(), &core::EventBus::published, &receiver,
        [&revoked](const core::Event &event) {
            if (event.type == core::EventType::TokenRevoked)
                revoked.append(event.data.value(u"tokenId"_s).toString() + u'|' +
                               event.data.value(u"userId"_s).toString());
        },
        Qt::QueuedConnection);
    auto issued = m_engine->accounts()->createToken(u"bob"_s, u"ci"_s, {u"apps:read"_s}, 0, m_people.actor(u"bob"_s));
    QVERIFY(issued);
    QVERIFY(m_engine->accounts()->revokeToken(issued->token.id, m_people.actor(u"bob"_s)));
    QVERIFY(m_engine->accounts()->setDisabled(u"bob"_s, true, core::Actor::system(u"test"_s)));
    QTRY_COMPARE(revoked, (QStringList{issued->token.id + u'|', u'|' + m_people.user(u"bob"_s).id}));
    QVERIFY(m_engine->accounts()->setDisabled(u"bob"_s, false, core::Actor::system(u"test"_s)));
}

QTEST_GUILESS_MAIN(TestEngineOwnership)
#include "tst_engineownership.moc"
