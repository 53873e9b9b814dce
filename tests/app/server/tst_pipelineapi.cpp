// The pipeline routes of the API over a real engine with an in-memory pipeline service: who gets
// in (bearer tokens, and the webhook's own token), the answers and their statuses, 503 without a
// pipeline runner, and the run follow stream (backlog, live events, no duplicates, close).

#include "fakes.h"
#include "tests/app/server/apicall.h"
#include "tests/support/component.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>

using namespace pando;

namespace {

using Answer = test::ApiAnswer;

QString errorCode(const Answer &a)
{
    return a.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString();
}

QString errorWhere(const Answer &a)
{
    return a.json.value(QStringLiteral("error")).toObject().value(QStringLiteral("where")).toString();
}

bool isPipelineRoute(const QString &path)
{
    return path.startsWith(QLatin1String("/api/v1/pipelines")) || path.startsWith(QLatin1String("/api/v1/runs")) ||
           path.startsWith(QLatin1String("/api/v1/secrets"));
}

QString concrete(QString path)
{
    path.replace(QStringLiteral("{name}"), QStringLiteral("nosuch"));
    path.replace(QStringLiteral("{job}"), QStringLiteral("nojob"));
    path.replace(QStringLiteral("{resource}"), QStringLiteral("nores"));
    path.replace(QStringLiteral("{id}"), QStringLiteral("r000000000000"));
    return path;
}

const QByteArray PipelineYaml = "resources:\n- name: repo\n  type: git\njobs:\n- name: unit\n  plan:\n  - get: repo\n";

QByteArray setBody(const QByteArray &config, bool dryRun, const QByteArray &vars = {})
{
    QJsonObject body{{QStringLiteral("config"), QString::fromUtf8(config)}, {QStringLiteral("dry_run"), dryRun}};
    if (!vars.isEmpty())
        body.insert(QStringLiteral("vars"), QString::fromUtf8(vars));
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

// As `pando pipelines set --unpaused`: a new pipeline that starts running.
QByteArray runningBody(const QByteArray &config)
{
    return QJsonDocument(
               QJsonObject{{QStringLiteral("config"), QString::fromUtf8(config)}, {QStringLiteral("paused"), false}})
        .toJson(QJsonDocument::Compact);
}

// A WebSocket client that records what it got.
struct Follower {
    QWebSocket socket;
    QList<QJsonObject> messages;
    bool closed = false;

    Follower()
    {
        QObject::connect(&socket, &QWebSocket::textMessageReceived,
                         [this](const QString &text) { messages << QJsonDocument::fromJson(text.toUtf8()).object(); });
        QObject::connect(&socket, &QWebSocket::disconnected, [this] { closed = true; });
    }
    void open(quint16 port, const QString &path, const QString &token)
    {
        QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1%2").arg(port).arg(path)));
        if (!token.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + token.toUtf8());
        socket.open(request);
    }
    QList<qint64> seqs() const
    {
        QList<qint64> list;
        for (const QJsonObject &m : messages)
            if (m.contains(QStringLiteral("seq")))
                list << qint64(m.value(QStringLiteral("seq")).toDouble());
        return list;
    }
};

} // namespace

class TestPipelineApi : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();

    void unauthorized_data();
    void unauthorized();
    void serviceMissing_data();
    void serviceMissing();
    void serviceMissingFollow();
    void setPipeline();
    void setPipelineErrors_data();
    void setPipelineErrors();
    void showPauseRemove();
    void triggerAndRuns();
    void runEventsAndAbort();
    void webhook();
    void resourcesAndCheckNow();
    void secrets();
    void followBacklogLiveAndFinish();
    void followFinishedRun();
    void followUnknownRun();
    void clientGoneWhileAnswering();

private:
    Answer call(const QByteArray &method, const QString &path, const QByteArray &body = {},
                const QByteArray &authorization = "default", test::TestInstall *install = nullptr);
    QString trigger(const QString &pipeline, const QString &job);

    test::TestInstall m_install;
    QNetworkAccessManager m_network;
};

void TestPipelineApi::initTestCase()
{
    m_install.withPipelines = true;
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    m_install.pipelines->setAutoPlay(false);
}

Answer TestPipelineApi::call(const QByteArray &method, const QString &path, const QByteArray &body,
                             const QByteArray &authorization, test::TestInstall *install)
{
    test::TestInstall &target = install ? *install : m_install;
    return test::callApi(m_network, target.baseUrl(), method, path, body, {},
                         authorization == "default" ? "Bearer " + target.token.toUtf8() : authorization);
}

QString TestPipelineApi::trigger(const QString &pipeline, const QString &job)
{
    const Answer a = call("POST", QStringLiteral("/api/v1/pipelines/%1/jobs/%2/runs").arg(pipeline, job));
    return a.status == 201 ? a.json.value(QStringLiteral("id")).toString() : QString();
}

void TestPipelineApi::unauthorized_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("authorization");
    int routes = 0;
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        if (!isPipelineRoute(route.path) || route.permission == QLatin1String("public"))
            continue;
        ++routes;
        const QByteArray name = (route.method + QLatin1Char(' ') + route.path).toUtf8();
        QTest::newRow(QByteArray(name + " no token").constData())
            << route.method.toUtf8() << concrete(route.path) << QByteArray();
        QTest::newRow(QByteArray(name + " wrong token").constData())
            << route.method.toUtf8() << concrete(route.path) << QByteArray("Bearer pando_wrongwrongwrong");
    }
    QVERIFY(routes >= 16);
}

void TestPipelineApi::unauthorized()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, authorization);
    const Answer answer = call(method, path, {}, authorization);
    QCOMPARE(answer.status, 401);
    QCOMPARE(errorCode(answer), QStringLiteral("unauthorized"));
}

void TestPipelineApi::serviceMissing_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("authorization");
    for (const server::RouteInfo &route : server::ApiServer::routeTable()) {
        if (!isPipelineRoute(route.path) || route.webSocket)
            continue;
        const bool isPublic = route.permission == QLatin1String("public");
        QString path = concrete(route.path);
        if (isPublic)
            path += QStringLiteral("?webhook_token=abc");
        QTest::newRow(qPrintable(route.method + QLatin1Char(' ') + route.path))
            << route.method.toUtf8() << path << (isPublic ? QByteArray() : QByteArray("default"));
    }
}

void TestPipelineApi::serviceMissing()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, authorization);
    static test::TestInstall bare; // no pipeline service
    if (bare.port == 0)
        QVERIFY2(bare.start(), qPrintable(bare.error));
    const Answer answer = call(method, path, {}, authorization, &bare);
    QCOMPARE(answer.status, 503);
    QCOMPARE(errorCode(answer), QStringLiteral("unavailable"));
    QVERIFY2(answer.json.value(QStringLiteral("error"))
                 .toObject()
                 .value(QStringLiteral("message"))
                 .toString()
                 .contains(QStringLiteral("the pipeline runner is not enabled")),
             answer.body.constData());
}

void TestPipelineApi::serviceMissingFollow()
{
    test::TestInstall bare;
    QVERIFY2(bare.start(), qPrintable(bare.error));
    Follower follower;
    follower.open(bare.port, QStringLiteral("/api/v1/runs/r000000000000/follow"), bare.token);
    QTRY_VERIFY_WITH_TIMEOUT(follower.closed, 5000);
    QCOMPARE(int(follower.socket.closeCode()), 4503);
    QVERIFY(follower.messages.isEmpty());
}

void TestPipelineApi::setPipeline()
{
    // A dry run of a new pipeline shows the whole file as added and stores nothing.
    Answer a = call("PUT", QStringLiteral("/api/v1/pipelines/ci"), setBody(PipelineYaml, true));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("created")).toBool(), true);
    QCOMPARE(a.json.value(QStringLiteral("changed")).toBool(), true);
    QVERIFY(!a.json.value(QStringLiteral("diff")).toArray().isEmpty());
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/ci")).status, 404);

    a = call("PUT", QStringLiteral("/api/v1/pipelines/ci"), setBody(PipelineYaml, false, "branch: main\n"));
    QCOMPARE(a.status, 201);
    const QJsonObject pipeline = a.json.value(QStringLiteral("pipeline")).toObject();
    QCOMPARE(pipeline.value(QStringLiteral("name")).toString(), QStringLiteral("ci"));
    QCOMPARE(pipeline.value(QStringLiteral("jobs")).toArray().first().toString(), QStringLiteral("unit"));
    // New pipelines start paused, as fly's set-pipeline makes them, saying why.
    QCOMPARE(pipeline.value(QStringLiteral("paused")).toBool(), true);
    QVERIFY2(pipeline.value(QStringLiteral("paused_reason")).toString().contains(QStringLiteral("new pipelines")),
             a.body.constData());
    a = call("POST", QStringLiteral("/api/v1/pipelines/ci/jobs/unit/runs"));
    QCOMPARE(a.status, 409);
    // "paused": false starts a new one running.
    a = call("PUT", QStringLiteral("/api/v1/pipelines/running"), runningBody(PipelineYaml));
    QCOMPARE(a.status, 201);
    QCOMPARE(a.json[QStringLiteral("pipeline")][QStringLiteral("paused")].toBool(), false);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/running/jobs/unit/runs")).status, 201);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/pipelines/running")).status, 204);

    // The same text again: no change, no diff.
    a = call("PUT", QStringLiteral("/api/v1/pipelines/ci"), setBody(PipelineYaml, true));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("changed")).toBool(), false);
    QVERIFY(a.json.value(QStringLiteral("diff")).toArray().isEmpty());

    a = call("PUT", QStringLiteral("/api/v1/pipelines/ci"), setBody(PipelineYaml + "- name: lint\n", false));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("changed")).toBool(), true);
    QVERIFY(a.json.value(QStringLiteral("diff")).toArray().contains(QStringLiteral("+- name: lint")));

    a = call("GET", QStringLiteral("/api/v1/pipelines"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("pipelines")).toArray().size(), 1);
}

void TestPipelineApi::setPipelineErrors_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("where");
    QTest::newRow("malformed") << QByteArray("{\"config\":") << QStringLiteral("body, offset");
    QTest::newRow("not an object") << QByteArray("[]") << QStringLiteral("body");
    QTest::newRow("no config") << QByteArray("{\"dry_run\":true}") << QStringLiteral("config");
    QTest::newRow("config not a string") << QByteArray("{\"config\":1}") << QStringLiteral("config");
    QTest::newRow("empty config") << QByteArray("{\"config\":\"  \"}") << QStringLiteral("config");
    QTest::newRow("unknown field") << QByteArray("{\"config\":\"jobs: []\",\"colour\":1}") << QStringLiteral("colour");
    QTest::newRow("dry_run not a bool") << QByteArray("{\"config\":\"jobs: []\",\"dry_run\":\"yes\"}")
                                        << QStringLiteral("dry_run");
    QTest::newRow("paused not a bool") << QByteArray("{\"config\":\"jobs: []\",\"paused\":0}")
                                       << QStringLiteral("paused");
    QTest::newRow("vars not a string") << QByteArray("{\"config\":\"jobs: []\",\"vars\":{}}") << QStringLiteral("vars");
    QTest::newRow("invalid pipeline") << QByteArray("{\"config\":\"resources: []\"}") << QStringLiteral("jobs");
}

void TestPipelineApi::setPipelineErrors()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, where);
    const Answer a = call("PUT", QStringLiteral("/api/v1/pipelines/broken"), body);
    QCOMPARE(a.status, 400);
    QCOMPARE(errorCode(a), QStringLiteral("invalid"));
    QVERIFY2(errorWhere(a).startsWith(where), a.body.constData());
}

void TestPipelineApi::showPauseRemove()
{
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/gone"), setBody(PipelineYaml, false)).status, 201);
    Answer a = call("POST", QStringLiteral("/api/v1/pipelines/gone/pause"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("paused")).toBool(), true);
    QVERIFY(a.json.value(QStringLiteral("paused_reason")).toString().contains(QStringLiteral("token:")));
    a = call("POST", QStringLiteral("/api/v1/pipelines/gone/unpause"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("paused")).toBool(), false);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/nosuch/pause")).status, 404);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/nosuch/unpause")).status, 404);

    // Renamed and back: the answer is the pipeline under its new name; what is wrong is said.
    a = call("POST", QStringLiteral("/api/v1/pipelines/gone/rename"), "{\"name\": \"went\"}");
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("name")).toString(), QStringLiteral("went"));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/gone")).status, 404);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/went")).status, 200);
    a = call("POST", QStringLiteral("/api/v1/pipelines/went/rename"), "{}");
    QCOMPARE(a.status, 400);
    QCOMPARE(errorWhere(a), QStringLiteral("name"));
    a = call("POST", QStringLiteral("/api/v1/pipelines/went/rename"), "{\"name\": 7}");
    QCOMPARE(a.status, 400);
    QCOMPARE(errorWhere(a), QStringLiteral("name"));
    a = call("POST", QStringLiteral("/api/v1/pipelines/went/rename"), "{\"to\": \"x\"}");
    QCOMPARE(a.status, 400);
    QCOMPARE(errorWhere(a), QStringLiteral("to"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/nosuch/rename"), "{\"name\": \"x\"}").status, 404);
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/other"), setBody(PipelineYaml, false)).status, 201);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/went/rename"), "{\"name\": \"other\"}").status, 409);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/went/rename"), "{\"name\": \"gone\"}").status, 200);

    // Archived: the answer is the pipeline as it is now; lists leave it out unless asked.
    a = call("POST", QStringLiteral("/api/v1/pipelines/other/archive"));
    QCOMPARE(a.status, 200);
    QVERIFY(a.json.value(QStringLiteral("archived")).toBool());
    QCOMPARE(a.json.value(QStringLiteral("paused_reason")).toString().left(12), QStringLiteral("archived by "));
    const auto listed = [this](const QString &query) {
        QStringList names;
        for (const QJsonValue p :
             call("GET", QStringLiteral("/api/v1/pipelines") + query).json.value(QStringLiteral("pipelines")).toArray())
            names << p.toObject().value(QStringLiteral("name")).toString();
        return names;
    };
    QVERIFY(!listed({}).contains(QStringLiteral("other")));
    QVERIFY(!listed(QStringLiteral("?include_archived=false")).contains(QStringLiteral("other")));
    QVERIFY(listed(QStringLiteral("?include_archived=true")).contains(QStringLiteral("other")));
    a = call("GET", QStringLiteral("/api/v1/pipelines?include_archived=yes"));
    QCOMPARE(a.status, 400);
    QCOMPARE(errorWhere(a), QStringLiteral("query.include_archived"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/nosuch/archive")).status, 404);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/pipelines/other")).status, 204);

    a = call("DELETE", QStringLiteral("/api/v1/pipelines/gone"));
    QCOMPARE(a.status, 204);
    QVERIFY(a.body.isEmpty());
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/gone")).status, 404);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/pipelines/gone")).status, 404);
}

void TestPipelineApi::triggerAndRuns()
{
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/runs"), runningBody(PipelineYaml)).status, 201);
    Answer a = call("POST", QStringLiteral("/api/v1/pipelines/runs/jobs/unit/runs"));
    QCOMPARE(a.status, 201);
    const QString first = a.json.value(QStringLiteral("id")).toString();
    QVERIFY(first.startsWith(QLatin1Char('r')));
    QCOMPARE(a.json.value(QStringLiteral("status")).toString(), QStringLiteral("queued"));
    QCOMPARE(a.json.value(QStringLiteral("number")).toInt(), 1);
    const QString second = trigger(QStringLiteral("runs"), QStringLiteral("unit"));
    QVERIFY(!second.isEmpty());

    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/runs/jobs/nojob/runs")).status, 404);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/nosuch/jobs/unit/runs")).status, 404);

    a = call("GET", QStringLiteral("/api/v1/pipelines/runs/runs?job=unit&limit=10"));
    QCOMPARE(a.status, 200);
    QJsonArray runs = a.json.value(QStringLiteral("runs")).toArray();
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs.first().toObject().value(QStringLiteral("id")).toString(), second); // newest first
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/runs/runs?job=other"))
                 .json.value(QStringLiteral("runs"))
                 .toArray()
                 .size(),
             0);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/nosuch/runs")).status, 404);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/runs/runs?limit=0")).status, 400);

    a = call("GET", QStringLiteral("/api/v1/runs?limit=1"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("runs")).toArray().size(), 1);
    QCOMPARE(errorWhere(call("GET", QStringLiteral("/api/v1/runs?limit=many"))), QStringLiteral("query.limit"));

    // The tree of a run with steps.
    test::FakePipelineService &fake = *m_install.pipelines;
    fake.setRunning(first);
    fake.step(first, QStringLiteral("p0"), {}, QStringLiteral("repo"), QStringLiteral("get"),
              core::RunStepStatus::Succeeded);
    fake.step(first, QStringLiteral("p1"), {}, {}, QStringLiteral("in_parallel"), core::RunStepStatus::Running);
    fake.step(first, QStringLiteral("p1.0"), QStringLiteral("p1"), QStringLiteral("lint"), QStringLiteral("task"),
              core::RunStepStatus::Cached);
    a = call("GET", QStringLiteral("/api/v1/runs/") + first);
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("status")).toString(), QStringLiteral("running"));
    const QJsonArray steps = a.json.value(QStringLiteral("steps")).toArray();
    QCOMPARE(steps.size(), 2);
    const QJsonObject child = steps[1].toObject().value(QStringLiteral("children")).toArray().first().toObject();
    QCOMPARE(child.value(QStringLiteral("name")).toString(), QStringLiteral("lint"));
    QCOMPARE(child.value(QStringLiteral("cached")).toBool(), true);
    QCOMPARE(a.json.value(QStringLiteral("cached_count")).toInt(), 1);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/runs/r000000000000")).status, 404);
}

void TestPipelineApi::runEventsAndAbort()
{
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/ev"), runningBody(PipelineYaml)).status, 201);
    const QString id = trigger(QStringLiteral("ev"), QStringLiteral("unit"));
    test::FakePipelineService &fake = *m_install.pipelines;
    fake.setRunning(id);
    fake.step(id, QStringLiteral("t"), {}, QStringLiteral("unit"), QStringLiteral("task"),
              core::RunStepStatus::Running);
    fake.output(id, QStringLiteral("t"), QStringLiteral("line one"));
    fake.output(id, QStringLiteral("t"), QStringLiteral("line two"));

    Answer a = call("GET", QStringLiteral("/api/v1/runs/%1/events").arg(id));
    QCOMPARE(a.status, 200);
    QJsonArray events = a.json.value(QStringLiteral("events")).toArray();
    QCOMPARE(events.size(), 3);
    const QJsonObject second = events[1].toObject();
    QCOMPARE(second.value(QStringLiteral("seq")).toInt(), 2);
    QCOMPARE(second.value(QStringLiteral("step")).toString(), QStringLiteral("t"));
    QCOMPARE(second.value(QStringLiteral("type")).toString(), QStringLiteral("output"));
    QCOMPARE(second.value(QStringLiteral("data")).toObject().value(QStringLiteral("text")).toString(),
             QStringLiteral("line one"));
    QVERIFY(second.value(QStringLiteral("time_ms")).toDouble() > 0);

    a = call("GET", QStringLiteral("/api/v1/runs/%1/events?after=1&limit=1").arg(id));
    events = a.json.value(QStringLiteral("events")).toArray();
    QCOMPARE(events.size(), 1);
    QCOMPARE(events[0].toObject().value(QStringLiteral("seq")).toInt(), 2);
    QCOMPARE(errorWhere(call("GET", QStringLiteral("/api/v1/runs/%1/events?after=-1").arg(id))),
             QStringLiteral("query.after"));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/runs/r000000000000/events")).status, 404);

    a = call("POST", QStringLiteral("/api/v1/runs/%1/abort").arg(id));
    QCOMPARE(a.status, 202);
    QCOMPARE(a.json.value(QStringLiteral("status")).toString(), QStringLiteral("aborting"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/runs/%1/abort").arg(id)).status, 409);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/runs/r000000000000/abort")).status, 404);
}

void TestPipelineApi::webhook()
{
    m_install.pipelines->setWebhookToken(QStringLiteral("ci"), QStringLiteral("repo"), QStringLiteral("s3cret-hook"));
    const int before = m_install.pipelines->webhookChecks();
    const QString path = QStringLiteral("/api/v1/pipelines/ci/resources/repo/check");
    // No bearer token needed: the webhook token is the authorization.
    Answer a = call("POST", path + QStringLiteral("?webhook_token=s3cret-hook"), {}, {});
    QCOMPARE(a.status, 202);
    QCOMPARE(a.json.value(QStringLiteral("status")).toString(), QStringLiteral("checking"));
    QCOMPARE(m_install.pipelines->webhookChecks(), before + 1);

    a = call("POST", path + QStringLiteral("?webhook_token=guessed-hook"), {}, {});
    QCOMPARE(a.status, 401);
    QVERIFY(!a.body.contains("s3cret-hook"));
    QVERIFY(!a.body.contains("guessed-hook"));
    // A valid bearer token does not stand in for the webhook token.
    QCOMPARE(call("POST", path + QStringLiteral("?webhook_token=wrong")).status, 401);
    a = call("POST", path, {}, {});
    QCOMPARE(a.status, 401);
    QCOMPARE(errorWhere(a), QStringLiteral("query.webhook_token"));
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/ci/resources/nores/check?webhook_token=x"), {}, {}).status,
             404);
    QCOMPARE(m_install.pipelines->webhookChecks(), before + 1);
    // Only POST is public there.
    QCOMPARE(call("GET", path + QStringLiteral("?webhook_token=s3cret-hook"), {}, {}).status, 401);
}

// A person's Check now needs no webhook token, only the right to run the pipeline; a pin says
// what was wrong with its body before anything is pinned.
void TestPipelineApi::resourcesAndCheckNow()
{
    m_install.pipelines->setWebhookToken(QStringLiteral("ci"), QStringLiteral("repo"), QStringLiteral("s3cret-hook"));
    Answer a = call("GET", QStringLiteral("/api/v1/pipelines/ci/resources"));
    QCOMPARE(a.status, 200);
    const QJsonArray resources = a.json.value(QStringLiteral("resources")).toArray();
    QCOMPARE(resources.size(), 1);
    QCOMPARE(resources.first().toObject().value(QStringLiteral("name")).toString(), QStringLiteral("repo"));
    QVERIFY(!a.body.contains("s3cret-hook"));
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/nope/resources")).status, 404);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/ci/resources/repo/versions?limit=0")).status, 400);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/pipelines/ci/resources/nores/versions")).status, 404);

    const int before = m_install.pipelines->webhookChecks();
    a = call("POST", QStringLiteral("/api/v1/pipelines/ci/resources/repo/check-now"));
    QCOMPARE(a.status, 202);
    QCOMPARE(a.json.value(QStringLiteral("status")).toString(), QStringLiteral("checking"));
    QCOMPARE(m_install.pipelines->webhookChecks(), before + 1);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/ci/resources/repo/check-now"), {}, {}).status, 401);
    QCOMPARE(call("POST", QStringLiteral("/api/v1/pipelines/ci/resources/nores/check-now")).status, 404);
    QVERIFY(m_install.pipelines->checkedFrom().isEmpty());
    // From a version (fly check-resource --from): it reaches the service, and the reply says it.
    const QString checkNow = QStringLiteral("/api/v1/pipelines/ci/resources/repo/check-now");
    a = call("POST", checkNow, "{\"from\": {\"ref\": \"abc\"}}");
    QCOMPARE(a.status, 202);
    QCOMPARE(a.json.value(QStringLiteral("from")).toObject(),
             (QJsonObject{{QStringLiteral("ref"), QStringLiteral("abc")}}));
    QCOMPARE(m_install.pipelines->checkedFrom(), (QJsonObject{{QStringLiteral("ref"), QStringLiteral("abc")}}));
    QCOMPARE(m_install.pipelines->webhookChecks(), before + 2);
    // What is no version is refused, saying where, and nothing is checked.
    for (const QByteArray &body : {QByteArray("{\"from\": \"ref:abc\"}"), QByteArray("{\"from\": {\"ref\": 1}}"),
                                   QByteArray("{\"since\": {}}"), QByteArray("{\"from\": ")}) {
        a = call("POST", checkNow, body);
        QVERIFY2(a.status == 400, body.constData());
        QVERIFY2(!errorWhere(a).isEmpty(), a.body.constData());
    }
    QCOMPARE(m_install.pipelines->webhookChecks(), before + 2);

    const QString pin = QStringLiteral("/api/v1/pipelines/ci/resources/repo/pin");
    a = call("PUT", pin, "{\"version\": \"abc\"}");
    QCOMPARE(a.status, 400);
    QCOMPARE(errorWhere(a), QStringLiteral("version"));
    a = call("PUT", pin, "{\"version\": {\"ref\": \"abc\"}, \"comment\": \"x\"}");
    QCOMPARE(a.status, 400);
    QCOMPARE(call("PUT", pin, "{\"version\": {\"ref\": \"abc\"}}").status, 404); // no check found it
}

void TestPipelineApi::secrets()
{
    const QByteArray value = "hunter2-very-secret";
    Answer a =
        call("PUT", QStringLiteral("/api/v1/secrets/db_password"), "{\"value\":\"" + value + "\",\"scope\":\"ci\"}");
    QCOMPARE(a.status, 204);
    QVERIFY(a.body.isEmpty());
    QCOMPARE(m_install.pipelines->secretValue(QStringLiteral("ci"), QStringLiteral("db_password")),
             QString::fromUtf8(value));
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/secrets/token"), "{\"value\":\"" + value + "\"}").status, 204);

    a = call("GET", QStringLiteral("/api/v1/secrets?scope=ci"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.json.value(QStringLiteral("secrets")).toArray(), QJsonArray{QStringLiteral("db_password")});
    QVERIFY(!a.body.contains(value));
    a = call("GET", QStringLiteral("/api/v1/secrets"));
    QCOMPARE(a.json.value(QStringLiteral("secrets")).toArray(), QJsonArray{QStringLiteral("token")});

    a = call("PUT", QStringLiteral("/api/v1/secrets/x"), "{\"scope\":\"ci\"}");
    QCOMPARE(a.status, 400);
    QCOMPARE(errorWhere(a), QStringLiteral("value"));
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/secrets/x"), "{\"value\":\"\"}").status, 400);
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/secrets/x"), "{\"value\":\"v\",\"echo\":1}").status, 400);
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/secrets/x"), "{\"value\":\"v\",\"scope\":\"nosuch\"}").status, 404);

    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/secrets/db_password?scope=ci")).status, 204);
    QCOMPARE(call("DELETE", QStringLiteral("/api/v1/secrets/db_password?scope=ci")).status, 404);
    QCOMPARE(call("GET", QStringLiteral("/api/v1/secrets?scope=ci")).json.value(QStringLiteral("secrets")).toArray(),
             QJsonArray{});
}

void TestPipelineApi::followBacklogLiveAndFinish()
{
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/fol"), runningBody(PipelineYaml)).status, 201);
    const QString id = trigger(QStringLiteral("fol"), QStringLiteral("unit"));
    test::FakePipelineService &fake = *m_install.pipelines;
    fake.setRunning(id);
    const QString t = QStringLiteral("plan[0].task:unit");
    fake.step(id, t, {}, QStringLiteral("unit"), QStringLiteral("task"), core::RunStepStatus::Running); // 1
    fake.output(id, t, QStringLiteral("one"));                                                          // 2
    fake.output(id, t, QStringLiteral("two"));                                                          // 3

    Follower follower;
    follower.open(m_install.port, QStringLiteral("/api/v1/runs/%1/follow?after=1").arg(id), m_install.token);
    QTRY_COMPARE_WITH_TIMEOUT(follower.seqs(), (QList<qint64>{2, 3}), 5000);
    QCOMPARE(follower.messages[0].value(QStringLiteral("data")).toObject().value(QStringLiteral("text")).toString(),
             QStringLiteral("one"));

    fake.output(id, t, QStringLiteral("three")); // 4, live
    QTRY_COMPARE_WITH_TIMEOUT(follower.seqs(), (QList<qint64>{2, 3, 4}), 5000);
    const QJsonObject live = follower.messages.last();
    QCOMPARE(live.value(QStringLiteral("type")).toString(), QStringLiteral("output"));
    QCOMPARE(live.value(QStringLiteral("step")).toString(), t);
    QCOMPARE(live.value(QStringLiteral("data")).toObject().value(QStringLiteral("text")).toString(),
             QStringLiteral("three"));

    // A duplicate on the bus is dropped; an event stored but never published is read from the
    // store when the next one shows the gap.
    m_install.engine->events()->publish(core::Event{core::EventType::RunEvent,
                                                    {},
                                                    {},
                                                    QJsonObject{{QStringLiteral("run"), id},
                                                                {QStringLiteral("seq"), 4},
                                                                {QStringLiteral("type"), QStringLiteral("output")}},
                                                    1});
    fake.output(id, t, QStringLiteral("five, stored only"), false);                                          // 5
    fake.step(id, t, {}, QStringLiteral("unit"), QStringLiteral("task"), core::RunStepStatus::Succeeded, 0); // 6
    // Another run's events are not this follower's.
    fake.output(trigger(QStringLiteral("fol"), QStringLiteral("unit")), t, QStringLiteral("elsewhere"));
    QTRY_COMPARE_WITH_TIMEOUT(follower.seqs(), (QList<qint64>{2, 3, 4, 5, 6}), 5000);

    fake.finish(id, core::RunStatus::Succeeded);
    QTRY_VERIFY_WITH_TIMEOUT(follower.closed, 5000);
    QCOMPARE(follower.socket.closeCode(), QWebSocketProtocol::CloseCodeNormal);
    QCOMPARE(follower.messages.last(), (QJsonObject{{QStringLiteral("finished"), QStringLiteral("succeeded")}}));
    QCOMPARE(follower.seqs(), (QList<qint64>{2, 3, 4, 5, 6}));
    QTRY_COMPARE(m_install.server->webSocketCount(), 0);
}

void TestPipelineApi::followFinishedRun()
{
    const QString id = trigger(QStringLiteral("fol"), QStringLiteral("unit"));
    test::FakePipelineService &fake = *m_install.pipelines;
    fake.step(id, QStringLiteral("t"), {}, QStringLiteral("unit"), QStringLiteral("task"), core::RunStepStatus::Failed,
              1);
    fake.finish(id, core::RunStatus::Failed);
    Follower follower;
    follower.open(m_install.port, QStringLiteral("/api/v1/runs/%1/follow").arg(id), m_install.token);
    QTRY_VERIFY_WITH_TIMEOUT(follower.closed, 5000);
    QCOMPARE(follower.seqs(), QList<qint64>{1});
    QCOMPARE(follower.messages.last(), (QJsonObject{{QStringLiteral("finished"), QStringLiteral("failed")}}));
}

void TestPipelineApi::followUnknownRun()
{
    Follower follower;
    follower.open(m_install.port, QStringLiteral("/api/v1/runs/r000000000000/follow"), m_install.token);
    QTRY_VERIFY_WITH_TIMEOUT(follower.closed, 5000);
    QCOMPARE(int(follower.socket.closeCode()), 4404);

    Follower anonymous;
    anonymous.open(m_install.port, QStringLiteral("/api/v1/runs/r000000000000/follow"), {});
    QTRY_VERIFY_WITH_TIMEOUT(anonymous.closed, 5000);
    QCOMPARE(anonymous.socket.closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);

    const Answer plain = call("GET", QStringLiteral("/api/v1/runs/r000000000000/follow"));
    QCOMPARE(plain.status, 400);
    QCOMPARE(errorWhere(plain), QStringLiteral("Upgrade"));
}

// A client that goes away while its answer is being prepared (a slow store) takes nothing down:
// neither a run follow closed during its first load nor a request whose socket closed.
void TestPipelineApi::clientGoneWhileAnswering()
{
    QCOMPARE(call("PUT", QStringLiteral("/api/v1/pipelines/gone"), runningBody(PipelineYaml)).status, 201);
    const QString id = trigger(QStringLiteral("gone"), QStringLiteral("unit"));
    test::FakePipelineService &fake = *m_install.pipelines;
    fake.runTreeDelayMs = 300;
    auto restore = qScopeGuard([&fake] { fake.runTreeDelayMs = 0; });

    Follower follower;
    QObject::connect(&follower.socket, &QWebSocket::connected, &follower.socket,
                     [&follower] { follower.socket.abort(); });
    follower.open(m_install.port, QStringLiteral("/api/v1/runs/%1/follow").arg(id), m_install.token);
    QTRY_VERIFY(follower.closed);

    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, m_install.port);
    QVERIFY(raw.waitForConnected(5000));
    raw.write("GET /api/v1/runs/" + id.toUtf8() + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
              m_install.token.toUtf8() + "\r\n\r\n");
    QVERIFY(raw.waitForBytesWritten(5000));
    QTest::qWait(50);
    raw.abort();

    QTest::qWait(600); // both answers are ready by now, for clients that are gone
    fake.runTreeDelayMs = 0;
    QCOMPARE(call("GET", QStringLiteral("/api/v1/runs/%1").arg(id)).status, 200);
}

QTEST_GUILESS_MAIN(TestPipelineApi)
#include "tst_pipelineapi.moc"
