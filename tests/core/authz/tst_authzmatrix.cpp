// The decisions of core/authz on their own: the role matrix, grants per object, the app limit,
// and token scopes narrowing every role. The API's route walk (tests/app/server/tst_authz.cpp)
// checks that the server asks these questions; this checks the answers.

#include "core/authz/authz.h"
#include "core/state/repositories.h"

#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace pando;
using namespace pando::core;
using namespace pando::core::authz;
using accounts::Principal;
using accounts::Role;

class TestAuthzMatrix : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void decide_data();
    void decide();
    void appLimit();
    void listsShowWhatIsGranted();
    void grantRolesAreChecked();

private:
    static Principal principal(Role role, const QString &userId, QStringList scopes = {})
    {
        return Principal{userId,
                         userId,
                         role,
                         scopes,
                         QStringLiteral("t1"),
                         scopes.isEmpty() ? Principal::Kind::Session : Principal::Kind::Token};
    }

    QTemporaryDir m_dir;
    std::unique_ptr<Database> m_db;
};

void TestAuthzMatrix::initTestCase()
{
    DatabaseConfig config;
    config.sqlitePath = m_dir.path() + QStringLiteral("/pando.db");
    m_db = std::make_unique<Database>(config);
    QVERIFY(m_db->open());
    auto connection = m_db->connection();
    QVERIFY(connection);
    for (const char *user : {"alice", "bob"}) {
        QSqlQuery q(*connection);
        QVERIFY(q.exec(QStringLiteral("INSERT INTO users (id, username, role) VALUES ('%1', '%1', 'member')")
                           .arg(QLatin1String(user))));
    }
    // alice made web (the app limit counts what a member made).
    AppRecord web;
    web.name = QStringLiteral("web");
    web.specYaml = QStringLiteral("name: web\n");
    web.creatorId = QStringLiteral("alice");
    QVERIFY(AppRepository(*m_db).create(web));
    GrantRepository grants(*m_db);
    QVERIFY(grants.add({ObjectKind::App, QStringLiteral("web"), QStringLiteral("alice"), QStringLiteral("owner"), 1}));
    QVERIFY(grants.add({ObjectKind::App, QStringLiteral("web"), QStringLiteral("bob"), QStringLiteral("viewer"), 1}));
    QVERIFY(grants.add({ObjectKind::App, QStringLiteral("api"), QStringLiteral("bob"), QStringLiteral("deployer"), 1}));
    QVERIFY(
        grants.add({ObjectKind::Pipeline, QStringLiteral("ci"), QStringLiteral("bob"), QStringLiteral("operator"), 1}));
    // Adding the same grant again keeps one.
    QVERIFY(grants.add({ObjectKind::App, QStringLiteral("web"), QStringLiteral("alice"), QStringLiteral("owner"), 2}));
    QCOMPARE(grants.roles(ObjectKind::App, QStringLiteral("web"), QStringLiteral("alice")).value(),
             QStringList{QStringLiteral("owner")});
}

void TestAuthzMatrix::decide_data()
{
    QTest::addColumn<int>("role");
    QTest::addColumn<QString>("user");
    QTest::addColumn<QStringList>("scopes");
    QTest::addColumn<QString>("permission");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("object");
    QTest::addColumn<bool>("allowed");
    const int None = int(ObjectKind::None), App = int(ObjectKind::App), Pipeline = int(ObjectKind::Pipeline);
    const QString alice = QStringLiteral("alice"), bob = QStringLiteral("bob");
    const QStringList session;
    auto row = [&](const char *name, Role role, const QString &user, const QStringList &scopes, const char *permission,
                   int kind, const char *object, bool allowed) {
        QTest::newRow(name) << int(role) << user << scopes << QString::fromLatin1(permission) << kind
                            << QString::fromLatin1(object) << allowed;
    };
    row("viewer reads apps", Role::Viewer, bob, session, "apps.read", App, "web", true);
    row("viewer reads logs", Role::Viewer, bob, session, "logs.read", App, "web", true);
    row("viewer reads pipelines", Role::Viewer, bob, session, "pipelines.read", Pipeline, "ci", true);
    // Reading follows the grants: without one, a member or viewer reads no app's logs, secret
    // names or spec, and no pipeline's vars or runs; lists (no object) answer only what is granted.
    row("viewer without a grant cannot read an app", Role::Viewer, bob, session, "apps.read", App, "other", false);
    row("viewer without a grant cannot read an app's logs", Role::Viewer, alice, session, "logs.read", App, "api",
        false);
    row("viewer without a grant cannot read a pipeline", Role::Viewer, alice, session, "pipelines.read", Pipeline, "ci",
        false);
    row("member without a grant cannot read an app's logs", Role::Member, alice, session, "logs.read", App, "api",
        false);
    row("member without a grant cannot read a pipeline", Role::Member, alice, session, "pipelines.read", Pipeline, "ci",
        false);
    row("member owner reads its app's logs", Role::Member, alice, session, "logs.read", App, "web", true);
    row("member app viewer reads the app", Role::Member, bob, session, "apps.read", App, "web", true);
    row("member pipeline operator reads the pipeline", Role::Member, bob, session, "pipelines.read", Pipeline, "ci",
        true);
    row("member lists apps (filtered)", Role::Member, alice, session, "apps.read", None, "", true);
    row("viewer lists pipelines (filtered)", Role::Viewer, alice, session, "pipelines.read", None, "", true);
    row("member cannot read what does not exist", Role::Member, alice, session, "apps.read", App, "", false);
    row("operator reads any app's logs", Role::Operator, alice, session, "logs.read", App, "anything", true);
    row("operator reads any pipeline", Role::Operator, alice, session, "pipelines.read", Pipeline, "anything", true);
    row("viewer cannot create apps", Role::Viewer, bob, session, "apps.write", None, "", false);
    row("viewer with a deployer grant still cannot deploy", Role::Viewer, bob, session, "deploys.write", App, "api",
        false);
    row("viewer cannot read the audit log", Role::Viewer, bob, session, "audit.read", None, "", false);
    row("member creates apps", Role::Member, bob, session, "apps.write", None, "", true);
    row("member owner removes its app", Role::Member, alice, session, "apps.write", App, "web", true);
    row("member owner deploys its app", Role::Member, alice, session, "deploys.write", App, "web", true);
    row("member deployer deploys", Role::Member, bob, session, "deploys.write", App, "api", true);
    row("member deployer cannot remove", Role::Member, bob, session, "apps.write", App, "api", false);
    row("member app viewer cannot deploy", Role::Member, bob, session, "deploys.write", App, "web", false);
    row("member without grant cannot deploy", Role::Member, alice, session, "deploys.write", App, "api", false);
    row("member pipeline operator triggers", Role::Member, bob, session, "runs.write", Pipeline, "ci", true);
    row("member pipeline operator cannot set it", Role::Member, bob, session, "pipelines.write", Pipeline, "ci", false);
    row("member without grant cannot trigger", Role::Member, alice, session, "runs.write", Pipeline, "ci", false);
    row("member cannot write secrets", Role::Member, alice, session, "pipelines.write", None, "", false);
    row("member cannot deploy something that does not exist", Role::Member, alice, session, "deploys.write", App, "",
        false);
    row("member cannot list users", Role::Member, alice, session, "users.read", None, "", false);
    row("member manages its own session", Role::Member, alice, session, "self", None, "", true);
    row("operator writes any app", Role::Operator, bob, session, "apps.write", App, "web", true);
    row("operator deploys any app", Role::Operator, bob, session, "deploys.write", App, "web", true);
    row("operator writes pipelines and secrets", Role::Operator, bob, session, "pipelines.write", None, "", true);
    row("operator triggers any run", Role::Operator, bob, session, "runs.write", Pipeline, "x", true);
    row("operator cannot manage users", Role::Operator, bob, session, "users.write", None, "", false);
    row("operator cannot read the audit log", Role::Operator, bob, session, "audit.read", None, "", false);
    row("admin manages users", Role::Admin, bob, session, "users.write", None, "", true);
    row("operator cannot change install settings", Role::Operator, bob, session, "settings.write", None, "", false);
    row("operator cannot let a pipeline run on the host", Role::Operator, bob, session, "settings.write", Pipeline, "x",
        false);
    row("pipeline owner cannot let its pipeline run on the host", Role::Member, alice, session, "settings.write",
        Pipeline, "x", false);
    row("admin changes install settings", Role::Admin, bob, session, "settings.write", None, "", true);
    row("admin token without admin scope cannot change settings", Role::Admin, bob, {QStringLiteral("pipelines:write")},
        "settings.write", Pipeline, "x", false);
    row("admin reads the audit log", Role::Admin, bob, session, "audit.read", None, "", true);
    row("unknown permission is denied even to admin", Role::Admin, bob, session, "apps.everything", None, "", false);
    row("token with the scope", Role::Operator, bob, {QStringLiteral("deploys:write")}, "deploys.write", App, "web",
        true);
    row("token without the scope", Role::Operator, bob, {QStringLiteral("apps:read")}, "deploys.write", App, "web",
        false);
    row("logs need apps:read", Role::Viewer, bob, {QStringLiteral("apps:read")}, "logs.read", App, "web", true);
    row("admin token without admin scope cannot manage users", Role::Admin, bob, {QStringLiteral("apps:write")},
        "users.write", None, "", false);
    row("admin token with admin scope manages users", Role::Admin, bob, {QStringLiteral("admin")}, "users.write", None,
        "", true);
    row("a scope does not lift a role", Role::Viewer, bob, {QStringLiteral("apps:write")}, "apps.write", None, "",
        false);
    row("public needs nothing", Role::Viewer, QString(), {QStringLiteral("apps:read")}, "public", None, "", true);
}

void TestAuthzMatrix::decide()
{
    QFETCH(int, role);
    QFETCH(QString, user);
    QFETCH(QStringList, scopes);
    QFETCH(QString, permission);
    QFETCH(int, kind);
    QFETCH(QString, object);
    QFETCH(bool, allowed);
    Authorizer authz(*m_db);
    const QByteArray name = permission.toLatin1();
    auto decision = authz.decide(principal(Role(role), user, scopes), std::string_view(name.constData(), name.size()),
                                 ObjectRef{ObjectKind(kind), object, {}});
    QVERIFY(decision);
    QVERIFY2(decision->allowed == allowed, qPrintable(decision->reason));
    if (!allowed)
        QVERIFY(!decision->reason.isEmpty());
}

void TestAuthzMatrix::appLimit()
{
    Authorizer authz(*m_db, AuthzOptions{1});
    // alice owns one app: the limit of one is reached.
    auto decision = authz.decide(principal(Role::Member, QStringLiteral("alice")), permission::AppsWrite, {});
    QVERIFY(decision);
    QVERIFY(!decision->allowed);
    QVERIFY(decision->reason.contains(QLatin1String("app limit")));
    // bob owns none; operators are not limited.
    QVERIFY(authz.decide(principal(Role::Member, QStringLiteral("bob")), permission::AppsWrite, {})->allowed);
    QVERIFY(authz.decide(principal(Role::Operator, QStringLiteral("alice")), permission::AppsWrite, {})->allowed);
}

void TestAuthzMatrix::listsShowWhatIsGranted()
{
    Authorizer authz(*m_db);
    auto alice = authz.visibility(principal(Role::Member, QStringLiteral("alice")));
    QVERIFY(alice);
    QVERIFY(!alice->allApps && !alice->allPipelines);
    QVERIFY(alice->seesApp(QStringLiteral("web")));
    QVERIFY(!alice->seesApp(QStringLiteral("api")));
    QVERIFY(!alice->seesPipeline(QStringLiteral("ci")));
    QVERIFY(!alice->sees(ObjectRef{})); // an event about neither (a token revoked)
    auto bob = authz.visibility(principal(Role::Viewer, QStringLiteral("bob")));
    QVERIFY(bob);
    QCOMPARE(bob->apps, (QSet<QString>{QStringLiteral("web"), QStringLiteral("api")}));
    QVERIFY(bob->seesPipeline(QStringLiteral("ci")));
    auto op = authz.visibility(principal(Role::Operator, QStringLiteral("alice")));
    QVERIFY(op && op->allApps && op->allPipelines && op->sees(ObjectRef{}));
    // A token reads only the kinds its scopes name.
    auto narrow = authz.visibility(principal(Role::Admin, QStringLiteral("bob"), {QStringLiteral("apps:read")}));
    QVERIFY(narrow && narrow->allApps && !narrow->allPipelines);
    QVERIFY(!narrow->seesPipeline(QStringLiteral("ci")));
}

void TestAuthzMatrix::grantRolesAreChecked()
{
    GrantRepository grants(*m_db);
    QVERIFY(
        !grants.add({ObjectKind::App, QStringLiteral("web"), QStringLiteral("bob"), QStringLiteral("operator"), 1}));
    QVERIFY(!grants.add(
        {ObjectKind::Pipeline, QStringLiteral("ci"), QStringLiteral("bob"), QStringLiteral("deployer"), 1}));
    QVERIFY(grants.removeAll(ObjectKind::App, QStringLiteral("web")));
    QVERIFY(grants.roles(ObjectKind::App, QStringLiteral("web"), QStringLiteral("alice")).value().isEmpty());
}

QTEST_GUILESS_MAIN(TestAuthzMatrix)
#include "tst_authzmatrix.moc"
