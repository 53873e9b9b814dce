// The desktop session contract: one suite, run against the in-process session (its own engine on a
// worker thread, served on loopback) and the remote session (attached to a running install's
// API). Both engines are real with fake adapters (tests/app/server/fakes.h), so the suite is fast;
// tst_sessionpandod attaches to a real pandod with real Docker.

#include "sessionharness.h"
#include "tests/app/server/fakes.h"

#include "app/client/apiclient.h"
#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "core/policy/policy.h"

#include <QBuffer>
#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using desktop::Session;

namespace {

// Deploys of apps named gated-* from a new repository wait for sign-off.
core::policy::Policy gatedPolicy()
{
    return core::policy::parsePolicy(R"({"apps": ["gated-*"], "changes": {"newSourceRepo": true}})").value();
}

// An install behind one session, and what the tests need to act as someone else on it.
struct Backend {
    virtual ~Backend() = default;
    virtual Session &session() = 0;
    virtual QUrl baseUrl() = 0;
    virtual QString adminToken() = 0;
    virtual quint16 apiPort() = 0;
};

struct RemoteBackend : Backend {
    test::TestInstall install;
    std::unique_ptr<desktop::RemoteSession> remote;

    bool start(QString *why)
    {
        install.withPipelines = true;
        install.approvalPolicy = gatedPolicy();
        if (!install.start()) {
            *why = install.error;
            return false;
        }
        remote = std::make_unique<desktop::RemoteSession>(QUrl(install.baseUrl()), install.token);
        remote->open();
        return true;
    }
    Session &session() override { return *remote; }
    QUrl baseUrl() override { return QUrl(install.baseUrl()); }
    QString adminToken() override { return install.token; }
    quint16 apiPort() override { return install.port; }
};

desktop::InProcessOptions inProcessOptions(const QString &dataDir)
{
    desktop::InProcessOptions options;
    options.engine.dataDir = dataDir;
    options.engine.reconcileIntervalMs = 0;
    options.engine.healthTickMs = 0; // no probes of the containers unless a test asks
    options.engine.workers = 1;
    options.engine.approvalPolicy = gatedPolicy();
    options.userName = u"owner"_s;
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    options.installPipelines = [](core::Engine &engine) -> Status {
        engine.setPipelines(std::make_unique<test::FakePipelineService>(*engine.events()));
        return {};
    };
    return options;
}

struct InProcessBackend : Backend {
    QTemporaryDir dir;
    std::unique_ptr<desktop::InProcessSession> local;

    bool start(QString *)
    {
        local = std::make_unique<desktop::InProcessSession>(inProcessOptions(dir.path()));
        local->open();
        return true;
    }
    Session &session() override { return *local; }
    QUrl baseUrl() override { return local->baseUrl(); }
    QString adminToken() override
    {
        // The desktop keeps its token where the next start finds it.
        QFile file(dir.filePath(u"desktop-token"_s));
        return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).trimmed() : QString();
    }
    quint16 apiPort() override { return local->port(); }
};

Result<client::ApiResponse> api(client::ApiClient &client, const QString &path, const QJsonObject &body)
{
    auto answer = std::make_shared<std::optional<Result<client::ApiResponse>>>();
    client.postJson(path, body, [answer](const Result<client::ApiResponse> &r) { *answer = r; });
    QDeadlineTimer deadline(test::AnswerTimeoutMs);
    while (!answer->has_value() && !deadline.hasExpired())
        QTest::qWait(5);
    if (!answer->has_value())
        return fail(ErrorCode::Timeout, u"no answer"_s);
    return **answer;
}

// An AppSpec whose fake container answers its health probe on this install's own API.
QByteArray appSpec(const QString &name, quint16 port, const QString &repo = {})
{
    return u"name: %1\nsource:\n  repo: %2\n  ref: main\nrun:\n  port: %3\nhealth:\n  path: /api/v1/health\n"_s
        .arg(name, repo.isEmpty() ? u"https://git.example/%1.git"_s.arg(name) : repo)
        .arg(port)
        .toUtf8();
}

bool hasName(const QJsonArray &list, const QString &name)
{
    for (const QJsonValue &v : list)
        if (v.toObject().value(u"name"_s).toString() == name)
            return true;
    return false;
}

} // namespace

#define VERIFY_OK(r) QVERIFY2(r, qPrintable(r ? QString() : test::describe(r.error())))

class TestSessionContract : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void connects_data() { rows(); }
    void connects();
    void appLifecycle_data() { rows(); }
    void appLifecycle();
    void badInput_data() { rows(); }
    void badInput();
    void approvalThroughTheSession_data() { rows(); }
    void approvalThroughTheSession();
    void appSettingsAndHistory_data() { rows(); }
    void appSettingsAndHistory();
    void pipelinesAndRuns_data() { rows(); }
    void pipelinesAndRuns();
    void domainSettingsAndInstallCa_data() { rows(); }
    void domainSettingsAndInstallCa();
    void inProcessRestartKeepsItsUserAndApps();
    void remoteWithABadTokenFails();

private:
    void rows();
    Backend &backend();

    std::map<QString, std::unique_ptr<Backend>> m_backends;
};

void TestSessionContract::rows()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("in-process") << u"in-process"_s;
    QTest::newRow("remote") << u"remote"_s;
}

Backend &TestSessionContract::backend()
{
    QFETCH(QString, kind);
    return *m_backends.at(kind);
}

void TestSessionContract::initTestCase()
{
    QString why;
    auto remote = std::make_unique<RemoteBackend>();
    QVERIFY2(remote->start(&why), qPrintable(why));
    auto local = std::make_unique<InProcessBackend>();
    QVERIFY2(local->start(&why), qPrintable(why));
    m_backends[u"remote"_s] = std::move(remote);
    m_backends[u"in-process"_s] = std::move(local);
}

void TestSessionContract::cleanupTestCase()
{
    m_backends.clear();
}

void TestSessionContract::connects()
{
    Backend &b = backend();
    QString why;
    QVERIFY2(test::awaitConnected(b.session(), &why), qPrintable(why));
    QVERIFY(b.session().failure().message.isEmpty());
    QVERIFY(!b.session().displayName().isEmpty());
    QVERIFY2(b.baseUrl().host() == u"127.0.0.1"_s, qPrintable(b.baseUrl().toString()));
    QVERIFY(!b.adminToken().isEmpty());
}

void TestSessionContract::appLifecycle()
{
    Backend &b = backend();
    Session &s = b.session();
    QString why;
    QVERIFY2(test::awaitConnected(s, &why), qPrintable(why));
    test::EventLog events(s);
    const QString name = u"web"_s;

    auto created = test::awaitObject([&](auto done) { s.createApp(appSpec(name, b.apiPort()), done); });
    VERIFY_OK(created);
    QCOMPARE(created->value(u"name"_s).toString(), name);
    QVERIFY(!events.waitFor(u"app.created"_s).isEmpty());

    auto list = test::awaitList([&](auto done) { s.apps(done); });
    VERIFY_OK(list);
    QVERIFY(hasName(*list, name));
    auto shown = test::awaitObject([&](auto done) { s.app(name, done); });
    VERIFY_OK(shown);
    QCOMPARE(shown->value(u"name"_s).toString(), name);

    // Deploy and follow it through the event stream to its end.
    auto queued = test::awaitObject([&](auto done) { s.deploy(name, {}, done); });
    VERIFY_OK(queued);
    const QString id = queued->value(u"id"_s).toString();
    QVERIFY(!id.isEmpty());
    const QJsonObject succeeded = events.waitFor(u"deploy.succeeded"_s, id);
    QVERIFY2(!succeeded.isEmpty(), qPrintable(events.types(id).join(u", "_s)));
    QVERIFY2(events.types(id).contains(u"deploy.step"_s), qPrintable(events.types(id).join(u", "_s)));

    auto history = test::awaitList([&](auto done) { s.deploys(name, 5, done); });
    VERIFY_OK(history);
    QCOMPARE(history->first().toObject().value(u"id"_s).toString(), id);
    auto detail = test::awaitObject([&](auto done) { s.deployDetail(id, done); });
    VERIFY_OK(detail);
    QCOMPARE(detail->value(u"status"_s).toString(), u"succeeded"_s);
    QStringList steps;
    for (const QJsonValue &step : detail->value(u"steps"_s).toArray()) {
        steps << step.toObject().value(u"name"_s).toString();
        QCOMPARE(step.toObject().value(u"status"_s).toString(), u"succeeded"_s);
    }
    for (const QString &step : {u"fetch"_s, u"build"_s, u"health"_s, u"switch"_s})
        QVERIFY2(steps.contains(step), qPrintable(steps.join(u", "_s)));
    auto app = test::awaitObject([&](auto done) { s.app(name, done); });
    VERIFY_OK(app);
    QCOMPARE(app->value(u"status"_s).toString(), u"running"_s);

    // Logs: the tail, then a live follow cancelled by the view.
    auto tail = test::awaitList([&](auto done) { s.logTail(name, 10, done); });
    VERIFY_OK(tail);
    QVERIFY(!tail->isEmpty());
    QCOMPARE(tail->last().toObject().value(u"text"_s).toString(), u"hello from the fake"_s);
    // The follow starts with the tail's line and goes on with the live one, each once.
    std::unique_ptr<desktop::Subscription> follow(s.followLogs(name, 10, nullptr));
    QSignalSpy opened(follow.get(), &desktop::Subscription::opened);
    QSignalSpy ended(follow.get(), &desktop::Subscription::ended);
    QSignalSpy received(follow.get(), &desktop::Subscription::received);
    QVERIFY(!opened.isEmpty() || opened.wait(10000));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 3, 10000);
    QStringList texts;
    for (const QList<QVariant> &message : std::as_const(received))
        texts.append(message.at(0).toJsonObject().value(u"text"_s).toString());
    QCOMPARE(texts, QStringList({u"hello from the fake"_s, u"hello again from the fake"_s, QString()}));
    QVERIFY(received.last().at(0).toJsonObject().contains(u"ended"_s));
    QVERIFY(follow->isActive());
    follow->cancel();
    QCOMPARE(ended.size(), 1);
    QVERIFY(!follow->isActive());
    QVERIFY(follow->result().has_value());

    // Cancelling a finished deploy is refused with a reason, not ignored.
    auto cancelled = test::awaitDone([&](auto done) { s.cancelDeploy(id, done); });
    QVERIFY(!cancelled);
    QVERIFY2(cancelled.error().code == ErrorCode::Conflict, qPrintable(test::describe(cancelled.error())));

    auto removed = test::awaitDone([&](auto done) { s.removeApp(name, done); });
    VERIFY_OK(removed);
    QVERIFY(!events.waitFor(u"app.removed"_s).isEmpty());
    auto gone = test::awaitObject([&](auto done) { s.app(name, done); });
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::NotFound);
}

void TestSessionContract::badInput()
{
    Backend &b = backend();
    Session &s = b.session();
    QString why;
    QVERIFY2(test::awaitConnected(s, &why), qPrintable(why));

    // A spec with a field of the wrong kind: the error names the field.
    auto wrongPort = test::awaitObject([&](auto done) {
        s.createApp("name: bad\nsource:\n  repo: https://git.example/bad.git\nrun:\n  port: eighty\n", done);
    });
    QVERIFY(!wrongPort);
    QCOMPARE(wrongPort.error().code, ErrorCode::Invalid);
    QVERIFY2(wrongPort.error().where.contains(u"run.port"_s), qPrintable(test::describe(wrongPort.error())));
    auto noSource = test::awaitObject([&](auto done) { s.createApp("name: bad\nrun:\n  port: 80\n", done); });
    QVERIFY(!noSource);
    QVERIFY2(noSource.error().where.contains(u"source"_s), qPrintable(test::describe(noSource.error())));
    auto empty = test::awaitObject([&](auto done) { s.createApp({}, done); });
    QVERIFY(!empty);
    QCOMPARE(empty.error().where, u"body"_s);
    auto apps = test::awaitList([&](auto done) { s.apps(done); });
    VERIFY_OK(apps);
    QVERIFY(!hasName(*apps, u"bad"_s));

    // Unknown objects: NotFound, each saying which.
    auto unknown = test::awaitObject([&](auto done) { s.app(u"nosuchapp"_s, done); });
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, ErrorCode::NotFound);
    QVERIFY2(unknown.error().text().contains(u"nosuchapp"_s), qPrintable(test::describe(unknown.error())));
    auto deploy = test::awaitObject([&](auto done) { s.deploy(u"nosuchapp"_s, {}, done); });
    QVERIFY(!deploy);
    QCOMPARE(deploy.error().code, ErrorCode::NotFound);
    auto update =
        test::awaitObject([&](auto done) { s.updateApp(u"nosuchapp"_s, appSpec(u"nosuchapp"_s, b.apiPort()), done); });
    QVERIFY(!update);
    QCOMPARE(update.error().code, ErrorCode::NotFound);
    auto approval = test::awaitObject([&](auto done) { s.approval(u"a0000000000000000"_s, done); });
    QVERIFY(!approval);
    QCOMPARE(approval.error().code, ErrorCode::NotFound);
    std::unique_ptr<desktop::Subscription> follow(s.followLogs(u"nosuchapp"_s, 0, nullptr));
    QSignalSpy ended(follow.get(), &desktop::Subscription::ended);
    QVERIFY(ended.wait(10000));
    QVERIFY(!follow->result());
    QCOMPARE(follow->result().error().code, ErrorCode::NotFound);
    QVERIFY2(follow->result().error().text().contains(u"nosuchapp"_s), qPrintable(follow->result().error().text()));
    std::unique_ptr<desktop::Subscription> tooLong(s.followLogs(u"nosuchapp"_s, 5001, nullptr));
    QSignalSpy tooLongEnded(tooLong.get(), &desktop::Subscription::ended);
    QVERIFY(tooLongEnded.wait(10000));
    QVERIFY(!tooLong->result());
    QVERIFY2(tooLong->result().error().text().contains(u"query.tail"_s), qPrintable(tooLong->result().error().text()));
}

void TestSessionContract::approvalThroughTheSession()
{
    Backend &b = backend();
    Session &s = b.session();
    QString why;
    QVERIFY2(test::awaitConnected(s, &why), qPrintable(why));
    test::EventLog events(s);

    // A teammate (a member, made through the API like any other) asks for a deploy the policy
    // holds; the desktop's user signs it off. Nobody approves their own request.
    client::ApiClient admin(b.baseUrl(), b.adminToken());
    const QString password = u"teammate's long password"_s;
    auto user = api(admin, u"/api/v1/users"_s,
                    {{u"username"_s, u"teammate"_s}, {u"password"_s, password}, {u"role"_s, u"member"_s}});
    VERIFY_OK(user);
    auto login = api(admin, u"/api/v1/sessions"_s, {{u"username"_s, u"teammate"_s}, {u"password"_s, password}});
    VERIFY_OK(login);
    desktop::RemoteSession teammate(b.baseUrl(), login->json.value(u"token"_s).toString());
    teammate.open();
    QVERIFY2(test::awaitConnected(teammate, &why), qPrintable(why));
    auto created =
        test::awaitObject([&](auto done) { teammate.createApp(appSpec(u"gated-web"_s, b.apiPort()), done); });
    VERIFY_OK(created);
    auto queued = test::awaitObject([&](auto done) { teammate.deploy(u"gated-web"_s, {}, done); });
    VERIFY_OK(queued);
    const QString deployId = queued->value(u"id"_s).toString();

    const QJsonObject requested = events.waitFor(u"approval.requested"_s);
    QVERIFY2(!requested.isEmpty(), qPrintable(events.types(deployId).join(u", "_s)));
    auto pending = test::awaitList([&](auto done) { s.approvals(u"pending"_s, done); });
    VERIFY_OK(pending);
    QCOMPARE(pending->size(), 1);
    const QJsonObject listed = pending->first().toObject();
    const QString id = listed.value(u"id"_s).toString();
    QCOMPARE(listed.value(u"object"_s).toString(), u"deploy/"_s + deployId);
    QVERIFY2(listed.value(u"requester"_s).toString().startsWith(u"user:teammate"_s),
             qPrintable(listed.value(u"requester"_s).toString()));

    auto shown = test::awaitObject([&](auto done) { s.approval(id, done); });
    VERIFY_OK(shown);
    QVERIFY2(shown->contains(u"plan"_s), "an approval shows the plan it signs off");
    auto held = test::awaitObject([&](auto done) { s.deployDetail(deployId, done); });
    VERIFY_OK(held);
    QCOMPARE(held->value(u"status"_s).toString(), u"awaiting-approval"_s);

    // The requester may not approve; the desktop's user may.
    auto own = test::awaitObject([&](auto done) { teammate.decideApproval(id, true, {}, done); });
    QVERIFY(!own);
    QCOMPARE(own.error().code, ErrorCode::Forbidden);
    auto approved = test::awaitObject([&](auto done) { s.decideApproval(id, true, u"checked the plan"_s, done); });
    VERIFY_OK(approved);
    QCOMPARE(approved->value(u"status"_s).toString(), u"approved"_s);
    QCOMPARE(approved->value(u"reason"_s).toString(), u"checked the plan"_s);
    QVERIFY2(!events.waitFor(u"deploy.succeeded"_s, deployId).isEmpty(),
             qPrintable(events.types(deployId).join(u", "_s)));
    auto after = test::awaitList([&](auto done) { s.approvals(u"pending"_s, done); });
    VERIFY_OK(after);
    QVERIFY(after->isEmpty());
    auto again = test::awaitObject([&](auto done) { s.decideApproval(id, false, {}, done); });
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Conflict);
    auto bad = test::awaitList([&](auto done) { s.approvals(u"sideways"_s, done); });
    QVERIFY(!bad);
    QVERIFY2(bad.error().where.contains(u"status"_s), qPrintable(test::describe(bad.error())));

    // What a member's desktop shows: only the apps they hold a grant on. Another's app, its logs
    // and the users of the install are refused with a reason, never shown as empty; the deploy
    // of an app they may not deploy is refused before anything is queued.
    auto others = test::awaitObject([&](auto done) { s.createApp(appSpec(u"admins-only"_s, b.apiPort()), done); });
    VERIFY_OK(others);
    auto visible = test::awaitList([&](auto done) { teammate.apps(done); });
    VERIFY_OK(visible);
    QStringList names;
    for (const QJsonValue &app : std::as_const(*visible))
        names << app.toObject().value(u"name"_s).toString();
    QCOMPARE(names, QStringList{u"gated-web"_s});
    auto hidden = test::awaitObject([&](auto done) { teammate.app(u"admins-only"_s, done); });
    QVERIFY(!hidden);
    QVERIFY2(hidden.error().code == ErrorCode::Forbidden || hidden.error().code == ErrorCode::NotFound,
             qPrintable(test::describe(hidden.error())));
    auto logs = test::awaitList([&](auto done) { teammate.logTail(u"admins-only"_s, 10, done); });
    QVERIFY(!logs);
    QVERIFY2(logs.error().code == ErrorCode::Forbidden || logs.error().code == ErrorCode::NotFound,
             qPrintable(test::describe(logs.error())));
    auto notTheirs = test::awaitObject([&](auto done) { teammate.deploy(u"admins-only"_s, {}, done); });
    QVERIFY(!notTheirs);
    QVERIFY2(notTheirs.error().code == ErrorCode::Forbidden || notTheirs.error().code == ErrorCode::NotFound,
             qPrintable(test::describe(notTheirs.error())));
    auto deploys = test::awaitList([&](auto done) { s.deploys(u"admins-only"_s, 10, done); });
    VERIFY_OK(deploys);
    QVERIFY(deploys->isEmpty());
    auto users = test::awaitList([&](auto done) { teammate.users(done); });
    QVERIFY(!users);
    QCOMPARE(users.error().code, ErrorCode::Forbidden);
    auto removed = test::awaitDone([&](auto done) { s.removeApp(u"admins-only"_s, done); });
    VERIFY_OK(removed);
}

// What the app's Settings and Events tabs show: secrets by name (a value never comes back),
// services with their variables' names and a backup, a disk-stopped app started again, and the
// app's history from the audit log, which a member may not read.
void TestSessionContract::appSettingsAndHistory()
{
    Backend &b = backend();
    Session &s = b.session();
    QString why;
    QVERIFY2(test::awaitConnected(s, &why), qPrintable(why));
    test::EventLog events(s);
    const QString name = u"settings"_s;
    const QByteArray spec = appSpec(name, b.apiPort()) + "services:\n  db:\n    kind: postgres\n";
    VERIFY_OK(test::awaitObject([&](auto done) { s.createApp(spec, done); }));

    const QString value = u"s3cr3t-value-never-shown"_s;
    auto set = test::awaitObject([&](auto done) { s.setAppSecret(name, u"API_KEY"_s, value, done); });
    VERIFY_OK(set);
    QCOMPARE(set->value(u"name"_s).toString(), u"API_KEY"_s);
    auto secrets = test::awaitObject([&](auto done) { s.appSecrets(name, done); });
    VERIFY_OK(secrets);
    const QJsonArray listed = secrets->value(u"secrets"_s).toArray();
    QVERIFY(hasName(listed, u"API_KEY"_s));
    QVERIFY2(!QJsonDocument(*secrets).toJson().contains(value.toUtf8()), "a secret's value came back");
    QCOMPARE(listed.first().toObject().value(u"injected_as"_s).toString(), u"env"_s);
    auto badName = test::awaitObject([&](auto done) { s.setAppSecret(name, u"not a name"_s, value, done); });
    QVERIFY(!badName);
    QCOMPARE(badName.error().code, ErrorCode::Invalid);

    // Services exist once a deploy provisioned them; the answer names variables, never a password.
    auto queued = test::awaitObject([&](auto done) { s.deploy(name, {}, done); });
    VERIFY_OK(queued);
    const QString deployId = queued->value(u"id"_s).toString();
    QVERIFY2(!events.waitFor(u"deploy.succeeded"_s, deployId).isEmpty(),
             qPrintable(events.types(deployId).join(u", "_s)));
    auto services = test::awaitList([&](auto done) { s.appServices(name, done); });
    VERIFY_OK(services);
    QCOMPARE(services->size(), 1);
    const QJsonObject db = services->first().toObject();
    QCOMPARE(db.value(u"slot"_s).toString(), u"db"_s);
    QCOMPARE(db.value(u"kind"_s).toString(), u"postgres"_s);
    QVERIFY2(db.value(u"env"_s).toArray().contains(u"DB_URL"_s), QJsonDocument(db).toJson().constData());
    QVERIFY(!db.contains(u"password"_s));
    QBuffer dump;
    QVERIFY(dump.open(QIODevice::WriteOnly));
    qint64 heard = 0;
    auto backedUp = test::awaitDone([&](auto done) {
        s.backupService(
            name, u"db"_s, &dump, [&heard](qint64 bytes) { heard = bytes; }, done);
    });
    VERIFY_OK(backedUp);
    QVERIFY2(dump.data().startsWith("-- fake dump of settings/db"), dump.data().left(80).constData());
    QCOMPARE(heard, dump.data().size());
    QBuffer nowhere;
    QVERIFY(nowhere.open(QIODevice::WriteOnly));
    auto noSlot = test::awaitDone([&](auto done) { s.backupService(name, u"cache"_s, &nowhere, {}, done); });
    QVERIFY(!noSlot);
    QVERIFY2(noSlot.error().code == ErrorCode::NotFound, qPrintable(test::describe(noSlot.error())));

    // Starting a running app leaves it running.
    auto started = test::awaitObject([&](auto done) { s.appAction(name, Session::AppAction::Start, done); });
    VERIFY_OK(started);
    QCOMPARE(started->value(u"name"_s).toString(), name);

    // The history: the app's own lines (the secret set, by name only) and its deploy's.
    auto appLines = test::awaitList([&](auto done) { s.auditLines(u"app/"_s + name, 50, done); });
    VERIFY_OK(appLines);
    QStringList actions;
    for (const QJsonValue &line : std::as_const(*appLines))
        actions << line.toObject().value(u"action"_s).toString();
    QVERIFY2(actions.contains(u"app.create"_s) && actions.contains(u"app.secret.set"_s),
             qPrintable(actions.join(u", "_s)));
    QCOMPARE(actions.first(), u"app.start"_s); // newest first
    QVERIFY2(!QJsonDocument(*appLines).toJson().contains(value.toUtf8()), "a secret's value is in the audit log");
    auto deployLines = test::awaitList([&](auto done) { s.auditLines(u"deploy/"_s + deployId, 10, done); });
    VERIFY_OK(deployLines);
    QStringList deployActions;
    for (const QJsonValue &line : std::as_const(*deployLines))
        deployActions << line.toObject().value(u"action"_s).toString();
    QCOMPARE(deployActions, QStringList({u"deploy.finish"_s, u"deploy.start"_s}));

    // A member reads no audit log: refused, not shown as empty.
    client::ApiClient admin(b.baseUrl(), b.adminToken());
    const QString password = u"a member's long password"_s;
    VERIFY_OK(api(admin, u"/api/v1/users"_s,
                  {{u"username"_s, u"auditless"_s}, {u"password"_s, password}, {u"role"_s, u"member"_s}}));
    auto login = api(admin, u"/api/v1/sessions"_s, {{u"username"_s, u"auditless"_s}, {u"password"_s, password}});
    VERIFY_OK(login);
    desktop::RemoteSession member(b.baseUrl(), login->json.value(u"token"_s).toString());
    member.open();
    QVERIFY2(test::awaitConnected(member, &why), qPrintable(why));
    auto refused = test::awaitList([&](auto done) { member.auditLines(u"app/"_s + name, 10, done); });
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Forbidden);

    auto removedSecret = test::awaitDone([&](auto done) { s.removeAppSecret(name, u"API_KEY"_s, done); });
    VERIFY_OK(removedSecret);
    auto after = test::awaitObject([&](auto done) { s.appSecrets(name, done); });
    VERIFY_OK(after);
    QVERIFY(!hasName(after->value(u"secrets"_s).toArray(), u"API_KEY"_s));
    auto again = test::awaitDone([&](auto done) { s.removeAppSecret(name, u"API_KEY"_s, done); });
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::NotFound);
}

void TestSessionContract::pipelinesAndRuns()
{
    Backend &b = backend();
    Session &s = b.session();
    QString why;
    QVERIFY2(test::awaitConnected(s, &why), qPrintable(why));
    test::EventLog events(s);

    auto set = test::awaitObject(
        [&](auto done) { s.setPipeline(u"ci"_s, "jobs:\n  - name: test\n  - name: slow\n", {}, done); });
    VERIFY_OK(set);
    QVERIFY(set->value(u"created"_s).toBool());
    QVERIFY(set->value(u"pipeline"_s).toObject().value(u"paused"_s).toBool()); // new pipelines start paused
    auto invalid = test::awaitObject([&](auto done) { s.setPipeline(u"ci2"_s, "resources: []\n", {}, done); });
    QVERIFY(!invalid);
    QCOMPARE(invalid.error().where, u"jobs"_s);
    auto list = test::awaitList([&](auto done) { s.pipelines(false, done); });
    VERIFY_OK(list);
    QVERIFY(hasName(*list, u"ci"_s));
    // Archived: gone from the list unless archived ones are asked for.
    auto shelved =
        test::awaitObject([&](auto done) { s.setPipeline(u"shelved"_s, "jobs:\n  - name: test\n", {}, done); });
    VERIFY_OK(shelved);
    auto archived = test::awaitObject([&](auto done) { s.archivePipeline(u"shelved"_s, done); });
    VERIFY_OK(archived);
    QVERIFY(archived->value(u"archived"_s).toBool());
    list = test::awaitList([&](auto done) { s.pipelines(false, done); });
    VERIFY_OK(list);
    QVERIFY(!hasName(*list, u"shelved"_s));
    list = test::awaitList([&](auto done) { s.pipelines(true, done); });
    VERIFY_OK(list);
    QVERIFY(hasName(*list, u"shelved"_s) && hasName(*list, u"ci"_s));
    QCOMPARE(test::awaitObject([&](auto done) { s.archivePipeline(u"nosuch"_s, done); }).error().code,
             ErrorCode::NotFound);
    auto paused = test::awaitObject([&](auto done) { s.setPipelinePaused(u"ci"_s, true, done); });
    VERIFY_OK(paused);
    auto shown = test::awaitObject([&](auto done) { s.pipeline(u"ci"_s, done); });
    VERIFY_OK(shown);
    QVERIFY(shown->value(u"paused"_s).toBool());
    auto unpaused = test::awaitObject([&](auto done) { s.setPipelinePaused(u"ci"_s, false, done); });
    VERIFY_OK(unpaused);
    // Resources: the list (this fake parses none), and a resource that is not there is NotFound
    // for every resource call, not an empty answer.
    auto resources = test::awaitList([&](auto done) { s.resources(u"ci"_s, done); });
    VERIFY_OK(resources);
    QVERIFY(resources->isEmpty());
    auto noPipeline = test::awaitList([&](auto done) { s.resources(u"nope"_s, done); });
    QVERIFY(!noPipeline);
    QCOMPARE(noPipeline.error().code, ErrorCode::NotFound);
    auto versions = test::awaitList([&](auto done) { s.resourceVersions(u"ci"_s, u"repo"_s, 10, done); });
    QVERIFY(!versions);
    QCOMPARE(versions.error().code, ErrorCode::NotFound);
    auto pinned = test::awaitObject([&](auto done) {
        s.pinResource(u"ci"_s, u"repo"_s, QJsonObject{{u"ref"_s, u"abc"_s}}, done);
    });
    QVERIFY(!pinned);
    QCOMPARE(pinned.error().code, ErrorCode::NotFound);
    auto unpinned = test::awaitDone([&](auto done) { s.unpinResource(u"ci"_s, u"repo"_s, done); });
    QVERIFY(!unpinned);
    QCOMPARE(unpinned.error().code, ErrorCode::NotFound);
    auto checked = test::awaitDone([&](auto done) { s.checkResource(u"ci"_s, u"repo"_s, {}, done); });
    QVERIFY(!checked);
    QCOMPARE(checked.error().code, ErrorCode::NotFound);
    auto unknownJob = test::awaitObject([&](auto done) { s.triggerJob(u"ci"_s, u"nojob"_s, false, done); });
    QVERIFY(!unknownJob);
    QCOMPARE(unknownJob.error().where, u"job"_s);

    // A run to its end: the event stream says so, and its step tree is there.
    auto run = test::awaitObject([&](auto done) { s.triggerJob(u"ci"_s, u"test"_s, false, done); });
    VERIFY_OK(run);
    const QString runId = run->value(u"id"_s).toString();
    std::unique_ptr<desktop::Subscription> follow(s.followRun(runId, 0, nullptr));
    QList<QJsonObject> followed;
    connect(follow.get(), &desktop::Subscription::received, this,
            [&followed](const QJsonObject &message) { followed << message; });
    const QJsonObject finished = events.waitFor(u"run.finished"_s, runId);
    QVERIFY(!finished.isEmpty());
    QCOMPARE(finished.value(u"data"_s).toObject().value(u"status"_s).toString(), u"succeeded"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!follow->isActive(), 10000);
    QVERIFY2(follow->result().has_value(), qPrintable(follow->result() ? QString() : follow->result().error().text()));
    QVERIFY(!followed.isEmpty());
    auto tree = test::awaitObject([&](auto done) { s.run(runId, done); });
    VERIFY_OK(tree);
    QCOMPARE(tree->value(u"status"_s).toString(), u"succeeded"_s);
    QVERIFY(!tree->value(u"steps"_s).toArray().isEmpty());
    auto runs = test::awaitList([&](auto done) { s.runs(u"ci"_s, 10, done); });
    VERIFY_OK(runs);
    QCOMPARE(runs->first().toObject().value(u"id"_s).toString(), runId);

    // A slow run aborted through the session.
    auto slow = test::awaitObject([&](auto done) { s.triggerJob(u"ci"_s, u"slow"_s, false, done); });
    VERIFY_OK(slow);
    const QString slowId = slow->value(u"id"_s).toString();
    auto aborted = test::awaitDone([&](auto done) { s.abortRun(slowId, done); });
    VERIFY_OK(aborted);
    const QJsonObject end = events.waitFor(u"run.finished"_s, slowId);
    QCOMPARE(end.value(u"data"_s).toObject().value(u"status"_s).toString(), u"aborted"_s);

    // Renamed: the answer is the pipeline under its new name, the old one is gone.
    auto renamed = test::awaitObject([&](auto done) { s.renamePipeline(u"ci"_s, u"ci-renamed"_s, done); });
    VERIFY_OK(renamed);
    QCOMPARE(renamed->value(u"name"_s).toString(), u"ci-renamed"_s);
    auto gone = test::awaitObject([&](auto done) { s.pipeline(u"ci"_s, done); });
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::NotFound);
    auto missing = test::awaitObject([&](auto done) { s.renamePipeline(u"ci"_s, u"other"_s, done); });
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
}

// The install's domain policy is changed and read back through the session; a bad name is refused
// naming its setting and changes nothing; the install CA is NotFound until the edge makes one.
void TestSessionContract::domainSettingsAndInstallCa()
{
    Backend &b = backend();
    Session &s = b.session();
    QString why;
    QVERIFY2(test::awaitConnected(s, &why), qPrintable(why));

    auto changed = test::awaitObject([&](auto done) {
        s.updateSettings(QJsonObject{{u"base_domain"_s, u"apps.example.com"_s},
                                     {u"allowed_domains"_s, QJsonArray{u"example.com"_s}},
                                     {u"wildcard_domains"_s, true}},
                         done);
    });
    VERIFY_OK(changed);
    QCOMPARE(changed->value(u"base_domain"_s).toString(), u"apps.example.com"_s);
    auto bad = test::awaitObject([&](auto done) {
        s.updateSettings(QJsonObject{{u"base_domain"_s, u"http://bad name"_s}}, done);
    });
    QVERIFY(!bad);
    QCOMPARE(bad.error().code, ErrorCode::Invalid);
    QCOMPARE(bad.error().where, u"base_domain"_s);
    auto read = test::awaitObject([&](auto done) { s.settings(done); });
    VERIFY_OK(read);
    QCOMPARE(read->value(u"base_domain"_s).toString(), u"apps.example.com"_s);
    QCOMPARE(read->value(u"allowed_domains"_s).toArray(), QJsonArray{u"example.com"_s});
    QCOMPARE(read->value(u"wildcard_domains"_s).toBool(), true);

    auto ca = test::awaitObject([&](auto done) { s.edgeCa(done); });
    QVERIFY(!ca);
    QCOMPARE(ca.error().code, ErrorCode::NotFound);

    // Back to no policy: the fake edge serves no names, and the tests after this one deploy.
    auto reset = test::awaitObject([&](auto done) {
        s.updateSettings(QJsonObject{{u"base_domain"_s, u""_s},
                                     {u"allowed_domains"_s, QJsonArray{}},
                                     {u"wildcard_domains"_s, false}},
                         done);
    });
    VERIFY_OK(reset);
    QCOMPARE(reset->value(u"base_domain"_s).toString(), QString());
}

void TestSessionContract::inProcessRestartKeepsItsUserAndApps()
{
    QTemporaryDir dir;
    QString why;
    {
        desktop::InProcessSession first(inProcessOptions(dir.path()));
        QSignalSpy states(&first, &Session::stateChanged);
        first.open();
        QVERIFY2(test::awaitConnected(first, &why), qPrintable(why));
        QCOMPARE(states.first().first().value<Session::State>(), Session::State::Connecting);
        QCOMPARE(first.userName(), u"owner"_s);
        QVERIFY(!QFile::exists(dir.filePath(u"initial-admin-token"_s)));
        QCOMPARE(QFile(dir.filePath(u"desktop-token"_s)).permissions() & (QFile::ReadGroup | QFile::ReadOther),
                 QFile::Permissions());
        auto created = test::awaitObject([&](auto done) { first.createApp(appSpec(u"kept"_s, 1), done); });
        VERIFY_OK(created);
        // The command line finds the running engine's API (PANDO_SERVER) in desktop-api, owner-only.
        QFile api(dir.filePath(u"desktop-api"_s));
        QVERIFY(api.open(QIODevice::ReadOnly));
        QCOMPARE(QUrl(QString::fromUtf8(api.readAll()).trimmed()), first.baseUrl());
        QCOMPARE(api.permissions() & (QFile::ReadGroup | QFile::ReadOther), QFile::Permissions());
    }
    QVERIFY(!QFile::exists(dir.filePath(u"desktop-api"_s)));
    const QString token = QString::fromUtf8([&] {
        QFile f(dir.filePath(u"desktop-token"_s));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }());
    {
        desktop::InProcessSession second(inProcessOptions(dir.path()));
        second.open();
        QVERIFY2(test::awaitConnected(second, &why), qPrintable(why));
        auto kept = test::awaitObject([&](auto done) { second.app(u"kept"_s, done); });
        VERIFY_OK(kept);
        QFile f(dir.filePath(u"desktop-token"_s));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(f.readAll()), token);

        // While it runs, a second engine on its data directory is refused, naming what to do.
        desktop::InProcessSession rival(inProcessOptions(dir.path()));
        rival.open();
        QVERIFY(!test::awaitConnected(rival, &why));
        QCOMPARE(rival.failure().code, ErrorCode::Conflict);
        QVERIFY2(rival.failure().message.contains(u"uses this data directory"_s),
                 qPrintable(test::describe(rival.failure())));
        QVERIFY2(rival.failure().hint.contains(u"desktop-api"_s), qPrintable(test::describe(rival.failure())));
    }

    // Someone else's install in that directory is refused, saying what to do instead.
    desktop::InProcessOptions other = inProcessOptions(dir.path());
    other.userName = u"somebody"_s;
    desktop::InProcessSession third(std::move(other));
    third.open();
    QVERIFY(!test::awaitConnected(third, &why));
    QCOMPARE(third.state(), Session::State::Failed);
    QCOMPARE(third.failure().code, ErrorCode::Forbidden);
    QVERIFY2(third.failure().hint.contains(u"remote"_s), qPrintable(test::describe(third.failure())));
}

void TestSessionContract::remoteWithABadTokenFails()
{
    auto &remote = static_cast<RemoteBackend &>(*m_backends.at(u"remote"_s));
    desktop::RemoteSession wrong(remote.baseUrl(), u"pando_wrong"_s);
    wrong.open();
    QString why;
    QVERIFY(!test::awaitConnected(wrong, &why));
    QCOMPARE(wrong.state(), Session::State::Failed);
    QCOMPARE(wrong.failure().code, ErrorCode::Unauthorized);
    auto refused = test::awaitList([&](auto done) { wrong.apps(done); });
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unauthorized);

    // Nothing listens there: Failed, naming the address and what to check.
    desktop::RemoteSession nowhere(QUrl(u"http://127.0.0.1:1"_s), u"pando_x"_s);
    nowhere.open();
    QVERIFY(!test::awaitConnected(nowhere, &why));
    QCOMPARE(nowhere.failure().code, ErrorCode::Unavailable);
    QVERIFY2(nowhere.failure().hint.contains(u"127.0.0.1:1"_s), qPrintable(test::describe(nowhere.failure())));
}

QTEST_GUILESS_MAIN(TestSessionContract)
#include "tst_sessioncontract.moc"
