// App secrets end to end on real parts (git, Docker, SQLite): an app gets its secrets as an
// environment variable and as a file, sees a change on its next deploy, gets them back when the
// reconciler recreates its container, and a value that cannot be a variable stops the plan. The
// values appear nowhere Pando writes: events, audit lines, the app's and deploy's views, the
// deploy's steps, or the container's labels (env secrets are in the container's environment,
// which whoever can inspect the container on the engine sees: docs/user-guide.md says so).

#include "adapters/kit/dockerapi/dockerclient.h"
#include "enginefixture.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMutex>
#include <QRandomGenerator>
#include <QTest>

using namespace pando;
using namespace pando::test;
using namespace Qt::StringLiterals;

namespace {

// The app writes what it was given where httpd serves it, then serves.
GitFiles secretApp()
{
    GitFiles files;
    files.insert(u"Dockerfile"_s, GitFile{"FROM pando/busybox:latest\nCOPY www /www\nEXPOSE 8080\n"
                                          "CMD [\"/bin/sh\", \"-c\", \"printf '%s' \\\"$API_KEY\\\" > /www/env.txt; "
                                          "cat /run/secrets/tls.key > /www/file.txt; "
                                          "env | grep -c BEGIN > /www/fileinenv.txt; "
                                          "ls -ln /run/secrets/tls.key | awk '{print $1, $3, $4}' > /www/mode.txt; "
                                          "exec /bin/httpd -f -p 8080 -h /www\"]\n"});
    files.insert(u"www/index.html"_s, GitFile{"ok\n"});
    return files;
}

QString randomWord()
{
    return QString::number(QRandomGenerator::global()->generate64(), 36);
}

} // namespace

class TestAppSecretsDocker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void secretsReachTheAppAndNothingElse();
    void aLineBreakStopsThePlanWithoutShowingTheValue();

private:
    core::DeployView deployAndWait(const QString &app);
    QString everythingSaid(const QString &app, const QString &deployId);

    // Declared before the engine: its threads publish into them until the engine is gone.
    QMutex m_eventsMutex;
    QStringList m_events;
    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
};

void TestAppSecretsDocker::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), u"Docker Engine: "_s + why);
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git"_s);
    auto base = DockerHarness::ensureBaseImage();
    QVERIFY2(base, qPrintable(base ? QString() : base.error().text()));
    m_fx = std::make_unique<EngineFixture>();
    QVERIFY(m_fx->git().isValid());
    m_repo = m_fx->git().createRepository(u"secret"_s);
    QVERIFY(!m_repo.isEmpty());
    QVERIFY(!m_fx->git().commit(u"secret"_s, u"main"_s, secretApp()).isEmpty());
    QVERIFY(m_fx->start());
    connect(
        m_fx->engine().events(), &core::EventBus::published, this,
        [this](const core::Event &event) {
            QMutexLocker lock(&m_eventsMutex);
            m_events << QString::fromUtf8(QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact));
        },
        Qt::DirectConnection);
}

void TestAppSecretsDocker::cleanupTestCase()
{
    m_fx.reset();
}

core::DeployView TestAppSecretsDocker::deployAndWait(const QString &app)
{
    auto deploy = m_fx->engine().deploy(app, {}, core::Actor{u"user:alice"_s, {}, {}});
    if (!deploy) {
        qWarning("deploy refused: %s", qPrintable(deploy.error().text()));
        return {};
    }
    return m_fx->waitDeploy(deploy->id);
}

// Everything Pando says about the app and the deploy: events, audit lines, the views the API
// answers with, and the labels of every container of the app.
QString TestAppSecretsDocker::everythingSaid(const QString &app, const QString &deployId)
{
    QStringList said;
    {
        QMutexLocker lock(&m_eventsMutex);
        said << m_events;
    }
    core::AuditRepository::Filter filter;
    filter.limit = 1000;
    if (auto lines = m_fx->engine().auditLines(filter))
        for (const core::AuditRecord &line : *lines)
            said << QString::fromUtf8(QJsonDocument(core::toJson(line)).toJson());
    if (auto view = m_fx->engine().app(app))
        said << QString::fromUtf8(QJsonDocument(view->toJson()).toJson());
    if (auto view = m_fx->engine().deployView(deployId))
        said << QString::fromUtf8(QJsonDocument(view->toJson()).toJson());
    if (auto deploys = m_fx->engine().deploys(app, 100))
        for (const core::DeployRecord &d : *deploys)
            said << QString::fromUtf8(QJsonDocument(core::toJson(d)).toJson());
    if (auto secrets = m_fx->engine().appSecrets(app))
        for (const auto &s : *secrets)
            said << s.name;
    adapters::dockerapi::DockerClient docker;
    if (auto containers = m_fx->docker().containers(m_fx->installLabels(app))) {
        for (const adapters::ContainerInfo &c : *containers) {
            auto inspected = docker.get(u"/containers/%1/json"_s.arg(c.id));
            if (inspected)
                said << QString::fromUtf8(
                    QJsonDocument(
                        inspected->json().object().value(u"Config"_s).toObject().value(u"Labels"_s).toObject())
                        .toJson());
        }
    }
    return said.join(u'\n');
}

void TestAppSecretsDocker::secretsReachTheAppAndNothingElse()
{
    const QString app = u"secret"_s;
    auto created = m_fx->engine().createApp(
        helloSpec(app, m_repo, u"secrets:\n  TLS_KEY: { file: /run/secrets/tls.key }\n"_s), core::Actor{});
    QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));

    const QString apiKey = u"apikey-"_s + randomWord();
    const QString tlsKey = u"-----BEGIN KEY-----\n"_s + randomWord() + u"\n-----END KEY-----\n"_s;
    const core::Actor alice{u"user:alice"_s, {}, {}};
    auto set = m_fx->engine().setAppSecret(app, u"API_KEY"_s, apiKey.toUtf8(), alice);
    QVERIFY2(set, qPrintable(set ? QString() : set.error().text()));
    QVERIFY(m_fx->engine().setAppSecret(app, u"TLS_KEY"_s, tlsKey.toUtf8(), alice));

    core::DeployView first = deployAndWait(app);
    QVERIFY2(first.record.status == core::DeployStatus::Succeeded, qPrintable(first.record.error));
    const QUrl url(m_fx->engine().app(app)->url);
    auto get = [&](const QString &path) {
        return httpGet(url.resolved(QUrl(path)));
    };
    QCOMPARE(get(u"/env.txt"_s).body, apiKey.toUtf8());
    QCOMPARE(get(u"/file.txt"_s).body, tlsKey.toUtf8());
    QCOMPARE(get(u"/fileinenv.txt"_s).body.trimmed(), QByteArray("0")); // the file secret is no variable

    // The plan names the secrets and how they are injected, never a value.
    QString planDetail;
    for (const core::StepRecord &step : first.steps)
        if (step.name == u"plan"_s)
            planDetail = step.detail;
    QVERIFY2(planDetail.contains(u"API_KEY as env"_s) && planDetail.contains(u"TLS_KEY as file /run/secrets/tls.key"_s),
             qPrintable(planDetail));

    // The file is root's alone.
    QCOMPARE(get(u"/mode.txt"_s).body.trimmed(), QByteArray("-r-------- 0 0"));
    adapters::dockerapi::DockerClient docker;

    // Audit lines say who set which secret.
    core::AuditRepository::Filter filter;
    filter.action = u"app.secret.set"_s;
    auto lines = m_fx->engine().auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 2);
    QCOMPARE(lines->first().actor, u"user:alice"_s);
    QCOMPARE(lines->first().object, u"app/secret"_s);

    QString said = everythingSaid(app, first.record.id);
    QVERIFY(said.contains(u"TLS_KEY"_s)); // names are fine
    QVERIFY2(!said.contains(apiKey), "the env secret's value leaked");
    QVERIFY2(!said.contains(tlsKey.section(u'\n', 1, 1)), "the file secret's value leaked");

    // Env secrets are in the container's environment (documented); file secrets are not.
    auto inspected = docker.get(u"/containers/%1/json"_s.arg(first.record.containerId));
    QVERIFY(inspected);
    const QJsonArray env = inspected->json().object().value(u"Config"_s).toObject().value(u"Env"_s).toArray();
    QVERIFY(env.contains(QJsonValue(u"API_KEY="_s + apiKey)));
    QVERIFY(!QString::fromUtf8(QJsonDocument(env).toJson()).contains(tlsKey.section(u'\n', 1, 1)));

    // A changed secret reaches the app on the next deploy, and the plan says it changed.
    const QString newKey = u"apikey-"_s + randomWord();
    QVERIFY(m_fx->engine().setAppSecret(app, u"API_KEY"_s, newKey.toUtf8(), alice));
    QCOMPARE(get(u"/env.txt"_s).body, apiKey.toUtf8()); // not before
    core::DeployView second = deployAndWait(app);
    QVERIFY2(second.record.status == core::DeployStatus::Succeeded, qPrintable(second.record.error));
    QCOMPARE(get(u"/env.txt"_s).body, newKey.toUtf8());
    for (const core::StepRecord &step : second.steps)
        if (step.name == u"plan"_s)
            QVERIFY2(step.detail.contains(u"secrets changed since the serving deploy: API_KEY"_s),
                     qPrintable(step.detail));

    // The reconciler recreates a vanished container with its secrets.
    QVERIFY(m_fx->docker().remove(second.record.containerId));
    auto changes = m_fx->engine().reconcileOnce();
    QVERIFY(changes);
    QTRY_COMPARE_WITH_TIMEOUT(get(u"/file.txt"_s).body, tlsKey.toUtf8(), 10000);
    QCOMPARE(get(u"/env.txt"_s).body, newKey.toUtf8());

    said = everythingSaid(app, second.record.id);
    for (const QString &value : {apiKey, newKey, tlsKey.section(u'\n', 1, 1)})
        QVERIFY2(!said.contains(value), "a secret's value leaked");

    // Removing is audited by name; the app keeps the value until its next deploy.
    QVERIFY(m_fx->engine().removeAppSecret(app, u"API_KEY"_s, alice));
    filter.action = u"app.secret.remove"_s;
    QCOMPARE(m_fx->engine().auditLines(filter)->size(), 1);
    QCOMPARE(m_fx->engine().removeAppSecret(app, u"API_KEY"_s, alice).error().code, ErrorCode::NotFound);
    QCOMPARE(m_fx->engine().setAppSecret(u"nope"_s, u"A"_s, "x", alice).error().code, ErrorCode::NotFound);
}

void TestAppSecretsDocker::aLineBreakStopsThePlanWithoutShowingTheValue()
{
    const QString app = u"multiline"_s;
    QVERIFY(m_fx->engine().createApp(helloSpec(app, m_repo), core::Actor{}));
    const QString word = randomWord();
    const QByteArray pem = (u"line one "_s + word + u"\nline two"_s).toUtf8();
    // A value the spec would inject as a variable is refused when it is set, without the value.
    auto refused = m_fx->engine().setAppSecret(app, u"PEM"_s, pem, core::Actor{});
    QVERIFY(!refused);
    QVERIFY2(refused.error().text().contains(u"line break"_s) && !refused.error().text().contains(word),
             qPrintable(refused.error().text()));
    // Set while the spec takes it as a file, then the spec changes to a variable: the plan stops.
    QVERIFY(m_fx->engine().updateApp(app, helloSpec(app, m_repo, u"secrets:\n  PEM: { file: /run/secrets/pem }\n"_s),
                                     core::Actor{}));
    QVERIFY(m_fx->engine().setAppSecret(app, u"PEM"_s, pem, core::Actor{}));
    QVERIFY(m_fx->engine().updateApp(app, helloSpec(app, m_repo), core::Actor{}));
    core::DeployView view = deployAndWait(app);
    QCOMPARE(view.record.status, core::DeployStatus::Failed);
    QCOMPARE(view.record.failedStep, u"plan"_s);
    QVERIFY2(view.record.error.contains(u"PEM"_s) && view.record.error.contains(u"line break"_s) &&
                 view.record.error.contains(u"file"_s),
             qPrintable(view.record.error));
    QVERIFY(!everythingSaid(app, view.record.id).contains(word));
    QCOMPARE(m_fx->docker().containers(m_fx->installLabels(app))->size(), 0);
}

QTEST_GUILESS_MAIN(TestAppSecretsDocker)
#include "tst_appsecretsdocker.moc"
