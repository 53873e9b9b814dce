// Rules the HTTP handlers used to hold, now the engine's and the account service's, tested below
// the HTTP layer: a service slot the spec declares is not removed, a backup needs its service
// running, a token never gets more scope than its maker's, the initial token makes none and its
// file goes once it is spent. And what an action tells when its audit line cannot be written:
// undone and refused when it can be taken back, "done, but not audited" when it cannot — never a
// success nobody audited, never a failure that in fact happened. The engine is real (SQLite in a
// temporary directory), the outside world faked (tests/app/server/fakes.h), and no server runs.

#include "app/wiring/install.h"
#include "core/accounts/accountservice.h"
#include "core/engine/enginewiring.h"
#include "core/pipelines/service/pipelineservice.h"
#include "enginepeople.h"
#include "tests/app/server/fakes.h"

#include <QBuffer>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSqlQuery>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using core::accounts::Principal;
using core::authz::ObjectKind;

namespace {

QByteArray servicesSpec(const QString &name, int port, bool withDb)
{
    return u"name: %1\nsource:\n  repo: https://git.example/%1.git\n  ref: main\nrun:\n  port: %2\n"
           "health:\n  path: /\n%3"_s.arg(name)
               .arg(port)
               .arg(withDb ? u"services:\n  db: { kind: postgres, version: \"15\" }\n"_s : QString())
               .toUtf8();
}

bool isUnaudited(const Error &e)
{
    return e.where == u"audit"_s && e.message.contains(u"audit line could not be written"_s);
}

} // namespace

class TestEngineRules : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void declaredSlotIsNotRemoved();
    void backupNeedsItsServiceRunning();
    void tokenScopeNarrows();
    void tokensSeenByWhom();
    void logoutNeedsASession();
    void bootstrapRemovesTheTokenFile();
    void auditFailureUndoesWhatCanBeUndone();
    void auditFailureSaysWhatWasDone();
    void auditFailureRefusesBeforeStarting();
    void pipelineAuditFailures();

private:
    bool failAudit(bool fail);
    bool deployAndWait(const QString &app);

    QTemporaryDir m_dir;
    test::HealthResponder m_health;
    std::shared_ptr<test::FakeRuntime> m_runtime = std::make_shared<test::FakeRuntime>();
    std::shared_ptr<test::FakeServiceProvisioner> m_services = std::make_shared<test::FakeServiceProvisioner>();
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestEngineRules::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(m_health.listen(QHostAddress::LocalHost));
    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.engine.retireGraceMs = 0;
    options.runtime = m_runtime;
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.services = m_services;
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();

    // The first user of an install is its administrator.
    const QString made =
        m_people.create(*m_engine, {{"root", core::accounts::Role::Admin}, {"alice", core::accounts::Role::Member}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
}

void TestEngineRules::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
}

// A trigger that makes every audit line fail, as a full disk or a lost database would.
bool TestEngineRules::failAudit(bool fail)
{
    auto db = core::wiringParts(*m_engine).database.connection();
    if (!db)
        return false;
    QSqlQuery q(*db);
    return fail ? q.exec(u"CREATE TRIGGER no_audit BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'disk "
                         "full'); END"_s)
                : q.exec(u"DROP TRIGGER no_audit"_s);
}

bool TestEngineRules::deployAndWait(const QString &app)
{
    auto deploy = m_engine->deploy(app, {}, m_people.actor(u"alice"_s));
    if (!deploy) {
        qWarning("deploy: %s", qPrintable(deploy.error().text()));
        return false;
    }
    const QString id = deploy->id;
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < 15000) {
        auto view = m_engine->deployView(id);
        if (view && (view->record.status == core::DeployStatus::Succeeded ||
                     view->record.status == core::DeployStatus::Failed)) {
            if (view->record.status != core::DeployStatus::Succeeded)
                qWarning("deploy failed: %s", qPrintable(view->record.error));
            return view->record.status == core::DeployStatus::Succeeded;
        }
        QTest::qWait(20);
    }
    return false;
}

void TestEngineRules::declaredSlotIsNotRemoved()
{
    QVERIFY(m_engine->createApp(servicesSpec(u"shop"_s, m_health.serverPort(), true), m_people.actor(u"alice"_s)));
    QVERIFY(deployAndWait(u"shop"_s));

    auto refused = m_engine->removeService(u"shop"_s, u"db"_s, false, m_people.actor(u"alice"_s));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Conflict);
    QCOMPARE(refused.error().where, u"services.db"_s);
    QVERIFY2(refused.error().message.contains(u"still declares"_s), qPrintable(refused.error().text()));
    QCOMPARE(m_engine->services(u"shop"_s)->first().status(), u"running"_s);

    // Once the spec no longer declares it, the slot may go; an unknown one is NotFound.
    QVERIFY(m_engine->updateApp(u"shop"_s, servicesSpec(u"shop"_s, m_health.serverPort(), false),
                                m_people.actor(u"alice"_s)));
    QCOMPARE(m_engine->removeService(u"shop"_s, u"nosuch"_s, false, m_people.actor(u"alice"_s)).error().code,
             ErrorCode::NotFound);
    auto removed = m_engine->removeService(u"shop"_s, u"db"_s, false, m_people.actor(u"alice"_s));
    QVERIFY2(removed, qPrintable(removed ? QString() : removed.error().text()));
    // Restored for the tests after this one.
    QVERIFY(m_engine->updateApp(u"shop"_s, servicesSpec(u"shop"_s, m_health.serverPort(), true),
                                m_people.actor(u"alice"_s)));
    QVERIFY(deployAndWait(u"shop"_s));
}

void TestEngineRules::backupNeedsItsServiceRunning()
{
    QBuffer out;
    QVERIFY(out.open(QIODevice::WriteOnly));
    auto unknown = m_engine->backupService(u"shop"_s, u"nosuch"_s, out, CancelToken(), {}, m_people.actor(u"alice"_s));
    QCOMPARE(unknown.error().code, ErrorCode::NotFound);

    m_services->stop(u"shop"_s, u"db"_s);
    const int before = m_services->backups;
    auto stopped = m_engine->backupService(u"shop"_s, u"db"_s, out, CancelToken(), {}, m_people.actor(u"alice"_s));
    QVERIFY(!stopped);
    QCOMPARE(stopped.error().code, ErrorCode::Conflict);
    QVERIFY2(stopped.error().message.contains(u"a backup needs it running"_s), qPrintable(stopped.error().text()));
    QCOMPARE(int(m_services->backups), before); // refused before the adapter was asked
    auto noFile = m_engine->backupServiceToFile(u"shop"_s, u"db"_s, CancelToken(), m_people.actor(u"alice"_s));
    QCOMPARE(noFile.error().code, ErrorCode::Conflict);

    // Running again: the dump goes to a private file in the data directory.
    QVERIFY(deployAndWait(u"shop"_s));
    auto file = m_engine->backupServiceToFile(u"shop"_s, u"db"_s, CancelToken(), m_people.actor(u"alice"_s));
    QVERIFY2(file, qPrintable(file ? QString() : file.error().text()));
    QCOMPARE(QFileInfo(file->path).absolutePath(), QDir(m_dir.path()).absolutePath());
    QVERIFY(!(QFile::permissions(file->path) & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteOther)));
    QCOMPARE(QFileInfo(file->path).size(), file->bytes);
    QVERIFY2(file->fileName.startsWith(u"shop-db-"_s) && file->fileName.endsWith(u".sql"_s),
             qPrintable(file->fileName));
    QVERIFY(QFile::remove(file->path));
}

void TestEngineRules::tokenScopeNarrows()
{
    core::accounts::AccountService *accounts = m_engine->accounts();
    const Principal reader = m_people.principal(u"alice"_s, Principal::Kind::Token, {u"apps:read"_s});
    auto broader =
        accounts->issueToken(reader, u"ci"_s, {u"apps:read"_s, u"apps:write"_s}, 0, m_people.actor(u"alice"_s));
    QVERIFY(!broader);
    QCOMPARE(broader.error().code, ErrorCode::Forbidden);
    QCOMPARE(broader.error().where, u"scopes"_s);
    QVERIFY2(broader.error().message.contains(u"apps:write"_s), qPrintable(broader.error().text()));

    auto narrower = accounts->issueToken(reader, u"ci"_s, {u"apps:read"_s}, 0, m_people.actor(u"alice"_s));
    QVERIFY2(narrower, qPrintable(narrower ? QString() : narrower.error().text()));
    QCOMPARE(narrower->token.userId, m_people.user(u"alice"_s).id);
    // A login session holds every scope its role allows.
    const Principal session = m_people.principal(u"alice"_s, Principal::Kind::Session);
    QVERIFY(accounts->issueToken(session, u"deployer"_s, {u"apps:write"_s}, 0, m_people.actor(u"alice"_s)));

    // The initial token belongs to nobody: it makes no tokens.
    const Principal initial{{}, {}, core::accounts::Role::Admin, {}, u"t0"_s, Principal::Kind::Initial};
    auto fromInitial = accounts->issueToken(initial, u"x"_s, {u"apps:read"_s}, 0, core::Actor::system(u"test"_s));
    QVERIFY(!fromInitial);
    QCOMPARE(fromInitial.error().code, ErrorCode::Invalid);
    QVERIFY(fromInitial.error().message.contains(u"initial token"_s));
}

void TestEngineRules::tokensSeenByWhom()
{
    core::accounts::AccountService *accounts = m_engine->accounts();
    QVERIFY(accounts->issueToken(m_people.principal(u"root"_s, Principal::Kind::Session), u"roots"_s, {u"apps:read"_s},
                                 0, m_people.actor(u"root"_s)));
    auto alices = accounts->tokensVisibleTo(m_people.principal(u"alice"_s, Principal::Kind::Session));
    QVERIFY(alices);
    QVERIFY(!alices->isEmpty());
    for (const core::accounts::ApiToken &token : std::as_const(*alices))
        QCOMPARE(token.userId, m_people.user(u"alice"_s).id);
    auto all = accounts->tokensVisibleTo(m_people.principal(u"root"_s, Principal::Kind::Session));
    QVERIFY(all);
    QVERIFY(all->size() > alices->size());
}

void TestEngineRules::logoutNeedsASession()
{
    auto refused =
        m_engine->accounts()->logout(m_people.principal(u"alice"_s, Principal::Kind::Token, {u"apps:read"_s}),
                                     u"pando_x"_s, m_people.actor(u"alice"_s));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
    QCOMPARE(refused.error().where, u"Authorization"_s);
}

void TestEngineRules::bootstrapRemovesTheTokenFile()
{
    QTemporaryDir dir;
    wiring::InstallOptions options = test::quietInstallOptions(dir.path());
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    wiring::Install install(std::move(options));
    QVERIFY(install.open());
    auto secret = install.engine().bootstrapAdminToken();
    QVERIFY(secret && secret->has_value());
    const QString file = QDir(dir.path()).filePath(core::InitialTokenFileName);
    QVERIFY(QFile::exists(file));
    auto admin = install.engine().accounts()->createFirstAdmin(**secret, u"first"_s, u"correct horse battery"_s,
                                                               core::Actor::system(u"test"_s));
    QVERIFY2(admin, qPrintable(admin ? QString() : admin.error().text()));
    QVERIFY2(!QFile::exists(file), "the spent initial token's file is still there");
    install.close();
}

void TestEngineRules::auditFailureUndoesWhatCanBeUndone()
{
    QVERIFY(m_engine->createApp(test::helloSpec(u"shared"_s), m_people.actor(u"alice"_s)));
    QVERIFY(m_engine->addGrant(ObjectKind::App, u"shared"_s, u"root"_s, u"viewer"_s, m_people.actor(u"alice"_s)));
    QVERIFY(failAudit(true));
    // Grants: not audited, not changed.
    auto added = m_engine->addGrant(ObjectKind::App, u"shared"_s, u"root"_s, u"deployer"_s, m_people.actor(u"alice"_s));
    auto removed =
        m_engine->removeGrant(ObjectKind::App, u"shared"_s, u"root"_s, u"viewer"_s, m_people.actor(u"alice"_s));
    // A user: not made.
    auto user = m_engine->accounts()->createUser(
        core::accounts::NewUser{u"ghost"_s, {}, core::accounts::Role::Member, u"correct horse battery"_s},
        m_people.actor(u"root"_s));
    // An approval request: not asked; a decision: taken back.
    auto asked = m_engine->approvals().request(QString(core::approval::KindPipelineStep), u"run/r1/step/ship"_s,
                                               core::Actor::system(u"test"_s), u"ship it"_s, u"{}"_s, 0);
    QVERIFY(failAudit(false));
    auto pending = m_engine->approvals().request(QString(core::approval::KindPipelineStep), u"run/r2/step/ship"_s,
                                                 core::Actor::system(u"test"_s), u"ship it"_s, u"{}"_s, 0);
    QVERIFY(pending);
    QVERIFY(failAudit(true));
    auto decided = m_engine->decideApproval(
        pending->id, core::Approver{m_people.actor(u"root"_s), core::accounts::Role::Admin}, true, u"looks fine"_s);
    QVERIFY(failAudit(false));

    QVERIFY(!added);
    QVERIFY(!removed);
    QVERIFY(!user);
    QVERIFY(!asked);
    QVERIFY(!decided);
    for (const Error &e : {added.error(), removed.error(), user.error(), asked.error(), decided.error()})
        QVERIFY2(e.text().contains(u"disk full"_s) && !isUnaudited(e), qPrintable(e.text()));
    auto grants = m_engine->grants(ObjectKind::App, u"shared"_s);
    QVERIFY(grants);
    QStringList roles;
    for (const core::authz::GrantView &g : std::as_const(*grants))
        roles << g.username + u'/' + g.grant.role;
    roles.sort();
    QCOMPARE(roles, (QStringList{u"alice/owner"_s, u"root/viewer"_s}));
    QCOMPARE(m_engine->accounts()->user(u"ghost"_s).error().code, ErrorCode::NotFound);
    auto requests = m_engine->approvals().list({}, 100);
    QVERIFY(requests);
    for (const core::ApprovalRecord &r : std::as_const(*requests))
        QVERIFY2(r.object != u"run/r1/step/ship"_s, "a request nobody audited was kept");
    QCOMPARE(m_engine->approvals().find(pending->id)->value().status, QString(core::approval::Pending));
    // With the log back, the same actions go through.
    QVERIFY(m_engine->addGrant(ObjectKind::App, u"shared"_s, u"root"_s, u"deployer"_s, m_people.actor(u"alice"_s)));
    QVERIFY(m_engine->decideApproval(
        pending->id, core::Approver{m_people.actor(u"root"_s), core::accounts::Role::Admin}, true, u"looks fine"_s));
}

void TestEngineRules::auditFailureSaysWhatWasDone()
{
    core::accounts::AccountService *accounts = m_engine->accounts();
    auto token = accounts->issueToken(m_people.principal(u"alice"_s, Principal::Kind::Session), u"doomed"_s,
                                      {u"apps:read"_s}, 0, m_people.actor(u"alice"_s));
    QVERIFY(token);
    QVERIFY(m_engine->updateApp(u"shop"_s, servicesSpec(u"shop"_s, m_health.serverPort(), false),
                                m_people.actor(u"alice"_s)));
    // Kept on this thread through a queued connection: a QSignalSpy would append on whichever
    // thread publishes while this one reads.
    QStringList revokedTokens;
    QObject receiver;
    connect(
        m_engine->events(), &core::EventBus::published, &receiver,
        [&revokedTokens](const core::Event &event) {
            if (event.type == core::EventType::TokenRevoked)
                revokedTokens.append(event.data.value(u"tokenId"_s).toString());
        },
        Qt::QueuedConnection);

    QVERIFY(failAudit(true));
    auto revoked = accounts->revokeToken(token->token.id, m_people.actor(u"alice"_s));
    auto secret = m_engine->setAppSecret(u"shop"_s, u"API_KEY"_s, "s3cret", m_people.actor(u"alice"_s));
    auto service = m_engine->removeService(u"shop"_s, u"db"_s, true, m_people.actor(u"alice"_s));
    QVERIFY(failAudit(false));

    // Each was done and cannot be taken back: the caller hears so, not "failed" and not "ok".
    QVERIFY(!revoked);
    QVERIFY2(isUnaudited(revoked.error()), qPrintable(revoked.error().text()));
    QVERIFY(revoked.error().message.contains(u"was revoked"_s));
    QVERIFY(!secret);
    QVERIFY2(isUnaudited(secret.error()) && secret.error().message.contains(u"was set"_s),
             qPrintable(secret.error().text()));
    QVERIFY(!service);
    QVERIFY2(isUnaudited(service.error()) && service.error().message.contains(u"were removed"_s),
             qPrintable(service.error().text()));
    // And it is true: the token no longer works (its sockets were told to close), the secret is
    // set, the service is gone.
    QCOMPARE(accounts->authenticate(token->secret).error().code, ErrorCode::Unauthorized);
    QTRY_VERIFY2(revokedTokens.contains(token->token.id),
                 "a revocation whose line failed was not announced: its sockets stay open");
    auto secrets = m_engine->appSecrets(u"shop"_s);
    QVERIFY(secrets && secrets->size() == 1 && secrets->first().name == u"API_KEY"_s);
    QVERIFY(m_engine->services(u"shop"_s)->isEmpty());
}

void TestEngineRules::auditFailureRefusesBeforeStarting()
{
    QVERIFY(m_engine->createApp(test::helloSpec(u"keep"_s), m_people.actor(u"alice"_s)));
    QVERIFY(failAudit(true));
    auto refused = m_engine->removeApp(u"keep"_s, m_people.actor(u"alice"_s));
    QVERIFY(failAudit(false));
    // A removal nobody audited never starts: the app is there, not "removing".
    QVERIFY(!refused);
    QVERIFY2(refused.error().text().contains(u"disk full"_s), qPrintable(refused.error().text()));
    QTest::qWait(200);
    auto app = m_engine->app(u"keep"_s);
    QVERIFY(app);
    QVERIFY(app->status != core::AppStatus::Removing);
    QVERIFY(m_engine->removeApp(u"keep"_s, m_people.actor(u"alice"_s)));
    QTRY_VERIFY_WITH_TIMEOUT(!m_engine->app(u"keep"_s).has_value(), 10000);
}

void TestEngineRules::pipelineAuditFailures()
{
    core::pipelines::PipelineService *pipelines = m_engine->pipelines();
    QVERIFY(pipelines);
    const QByteArray config = "jobs:\n- name: build\n  plan:\n  - task: t\n    config:\n      platform: linux\n"
                              "      image_resource: {type: registry-image, source: {repository: pando/busybox}}\n"
                              "      run: {path: 'true'}\n";
    QVERIFY(pipelines->setPipeline(u"ledger"_s, config, {}, false, m_people.actor(u"root"_s)));
    QVERIFY(pipelines->pause(u"ledger"_s, m_people.actor(u"root"_s)));
    QVERIFY(pipelines->setSecret({}, u"kept"_s, u"old"_s, m_people.actor(u"root"_s)));
    QVERIFY(pipelines->setSecretAccess(u"kept"_s, core::SecretAccess{false, {u"ledger"_s}}, m_people.actor(u"root"_s)));

    QVERIFY(failAudit(true));
    // Taken back: unpausing, turning host execution on, allowing it to the pipeline, a trigger,
    // setting a new secret, changing one, removing one (with its access list).
    auto unpaused = pipelines->unpause(u"ledger"_s, m_people.actor(u"root"_s));
    auto hostOn = pipelines->setHostExecution(true, m_people.actor(u"root"_s));
    auto allowed = pipelines->setPipelineHostExecution(u"ledger"_s, true, m_people.actor(u"root"_s));
    auto secret = pipelines->setSecret({}, u"deploy_key"_s, u"k3y"_s, m_people.actor(u"root"_s));
    auto changed = pipelines->setSecret({}, u"kept"_s, u"new"_s, m_people.actor(u"root"_s));
    auto secretGone = pipelines->removeSecret({}, u"kept"_s, m_people.actor(u"root"_s));
    // Done and said so: a new version of the pipeline.
    auto set = pipelines->setPipeline(u"ledger"_s, config + "  serial: true\n", {}, false, m_people.actor(u"root"_s));
    QVERIFY(failAudit(false));

    QVERIFY(pipelines->pipeline(u"ledger"_s)->record.paused);
    for (const Status &undone : {unpaused, hostOn, allowed, secret, changed, secretGone})
        QVERIFY2(!undone && undone.error().text().contains(u"disk full"_s) && !isUnaudited(undone.error()),
                 qPrintable(undone ? u"done"_s : undone.error().text()));
    QCOMPARE(pipelines->hostExecution().value_or(true), false);
    QCOMPARE(pipelines->pipeline(u"ledger"_s)->record.hostExecution, false);
    QVERIFY(!set);
    QVERIFY2(isUnaudited(set.error()) && set.error().message.contains(u"config version 2"_s),
             qPrintable(set.error().text()));
    QCOMPARE(pipelines->pipeline(u"ledger"_s)->record.configVersion, 2);
    QCOMPARE(pipelines->secretNames({}).value_or(QStringList{}), QStringList{u"kept"_s});
    const auto access = pipelines->secretAccess(u"kept"_s);
    QVERIFY(access && !access->all);
    QCOMPARE(access->pipelines, QStringList{u"ledger"_s});

    // A trigger nobody audited does not run: its run is aborted at once.
    QVERIFY(pipelines->unpause(u"ledger"_s, m_people.actor(u"root"_s)));
    QVERIFY(failAudit(true));
    auto triggered = pipelines->triggerJob(u"ledger"_s, u"build"_s, m_people.actor(u"root"_s));
    auto paused = pipelines->pause(u"ledger"_s, m_people.actor(u"root"_s));
    QVERIFY(failAudit(false));
    QVERIFY(!triggered);
    QVERIFY2(triggered.error().text().contains(u"disk full"_s) && !isUnaudited(triggered.error()),
             qPrintable(triggered.error().text()));
    const auto allAborted = [&] {
        auto runs = pipelines->runs(u"ledger"_s, u"build"_s, 10);
        return runs && !runs->isEmpty() && std::all_of(runs->cbegin(), runs->cend(), [](const core::RunRecord &run) {
                   return run.status == core::RunStatus::Aborted;
               });
    };
    QTRY_VERIFY_WITH_TIMEOUT(allAborted(), 10000);
    // Pausing is taken back too: the pipeline stays as it was, unpaused.
    QVERIFY(!paused && !isUnaudited(paused.error()));
    QCOMPARE(pipelines->pipeline(u"ledger"_s)->record.paused, false);
    QVERIFY(pipelines->removePipeline(u"ledger"_s, m_people.actor(u"root"_s)));
    QVERIFY(pipelines->removeSecret({}, u"kept"_s, m_people.actor(u"root"_s)));
}

QTEST_GUILESS_MAIN(TestEngineRules)
#include "tst_enginerules.moc"
