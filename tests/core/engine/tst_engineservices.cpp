// An app with backing services, deployed by the real engine on real Docker: the app connects
// to PostgreSQL, MariaDB and Redis with the variables it is given (a query, a SET/GET), from an
// egress-all and from an egress-none container; a row written survives a redeploy; a backup
// holds it; removal asks about the data, keeps the volumes when told to and leaves nothing when
// told to delete.

#include "adapters/services/docker/dockerexec.h"
#include "adapters/services/docker/dockerservices.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/services/serviceimages.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/vocabtesting.h"

#include <QBuffer>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

namespace {

// The client tools come from the service image itself (one root holds all three servers and
// their clients); busybox serves what the start script found.
GitFiles servicesApp(const QByteArray &version)
{
    GitFiles files;
    files.insert(u"Dockerfile"_s, GitFile{"FROM pando/busybox:latest AS bb\n"
                                          "FROM pando/postgres:15\n"
                                          "COPY --from=bb /bin/busybox /bin/busybox\n"
                                          "COPY start.sh /start.sh\n"
                                          "EXPOSE 8080\n"
                                          "CMD [\"/bin/sh\", \"/start.sh\"]\n"});
    files.insert(u"start.sh"_s,
                 GitFile{"mkdir -p /www\n"
                         "psql \"$DB_URL\" -q -c 'create table if not exists marks (v text)' >/dev/null 2>&1\n"
                         "{\n"
                         "  echo \"version=" +
                         version +
                         "\"\n"
                         "  echo \"pg=$(psql \"$DB_URL\" -tAc 'select 40+2' 2>&1)\"\n"
                         "  echo \"rows=$(psql \"$DB_URL\" -tAc \"select string_agg(v, ',') from marks\" 2>&1)\"\n"
                         "  echo \"my=$(MYSQL_PWD=\"$SQL_PASSWORD\" mysql -h \"$SQL_HOST\" -P \"$SQL_PORT\" "
                         "-u \"$SQL_USER\" -N -e 'select 6*7' \"$SQL_NAME\" 2>&1)\"\n"
                         "  echo \"set=$(redis-cli -u \"$CACHE_URL\" SET greeting hello 2>/dev/null)\"\n"
                         "  echo \"get=$(redis-cli -u \"$CACHE_URL\" GET greeting 2>/dev/null)\"\n"
                         "} >/www/index.html\n"
                         "exec /bin/busybox httpd -f -p 8080 -h /www\n"});
    return files;
}

QString spec(const QString &name, const QString &repo, const QString &egress)
{
    return QString::fromUtf8(helloSpec(name, repo,
                                       u"network: { egress: %1 }\n"
                                       u"services:\n"
                                       u"  db: { kind: postgres, version: \"15\" }\n"
                                       u"  sql: { kind: mysql }\n"
                                       u"  cache: { kind: redis }\n"_s.arg(egress)));
}

} // namespace

class TestEngineServices : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<EngineFixture> m_fx;
    QString m_repo;
    adapters::dockerapi::DockerClient m_client;

    QString deployAndWait(const QString &app, core::DeployView *out = nullptr)
    {
        auto deploy = m_fx->engine().deploy(app, {}, core::Actor{});
        if (!deploy)
            return deploy.error().text();
        const core::DeployView view = m_fx->waitDeploy(deploy->id, 300000);
        if (out)
            *out = view;
        return view.record.status == core::DeployStatus::Succeeded
                   ? QString()
                   : view.record.failedStep + u": "_s + view.record.error;
    }

    QByteArray page(const QString &app)
    {
        auto view = m_fx->engine().app(app);
        return view ? httpGet(QUrl(view->url), 10000).body : QByteArray();
    }

    int countVolumes(const QString &app)
    {
        const QString filters =
            u"{\"label\":[\"dev.pando.install=%1\",\"dev.pando.app=%2\"]}"_s.arg(m_fx->installId(), app);
        auto r = m_client.get(u"/volumes"_s, {{u"filters"_s, filters}});
        return r ? int(r->json().object().value(u"Volumes"_s).toArray().size()) : -1;
    }

    int countContainers(const QString &app)
    {
        auto c = m_fx->docker().containers(m_fx->installLabels(app));
        return c ? int(c->size()) : -1;
    }

    bool waitGone(const QString &app)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 120000) {
            auto found = m_fx->engine().app(app);
            if (!found && found.error().code == ErrorCode::NotFound)
                return true;
            QTest::qWait(200);
        }
        return false;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        QVERIFY2(DockerHarness::available(&why), qPrintable(why));
        const QString images = ensureServiceImages();
        QVERIFY2(images.isEmpty(), qPrintable(images));
        QVERIFY(DockerHarness::ensureBaseImage());
        m_fx = std::make_unique<EngineFixture>();
        QVERIFY(m_fx->start());
        m_repo = m_fx->git().createRepository(u"svcapp"_s);
        QVERIFY(!m_fx->git().commit(u"svcapp"_s, u"main"_s, servicesApp("v1")).isEmpty());
    }

    void cleanupTestCase()
    {
        if (!m_fx)
            return;
        if (auto left = m_fx->engine().services({}))
            for (const core::ServiceView &v : *left)
                discardResult(m_fx->engine().removeService(v.app, v.slot, true, core::Actor{}),
                              "clean-up of the test's own volumes");
        m_fx.reset();
    }

    void appReachesItsServicesAndKeepsTheirData()
    {
        const QString app = u"shop"_s;
        auto created = m_fx->engine().createApp(spec(app, m_repo, u"all"_s).toUtf8(), core::Actor{});
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));

        QElapsedTimer timer;
        timer.start();
        core::DeployView first;
        QString failed = deployAndWait(app, &first);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        qInfo("first deploy with three services: %lld ms", timer.elapsed());
        QStringList steps;
        for (const auto &s : first.steps) {
            steps << s.name;
            if (s.name == u"services") {
                QVERIFY2(s.detail.contains(u"db: postgres 15 at db:5432"_s), qPrintable(s.detail));
                QVERIFY(s.detail.contains(u"cache: redis 7 at cache:6379"_s));
            }
        }
        QCOMPARE(steps.indexOf(u"services"_s), steps.indexOf(u"start"_s) - 1);

        QByteArray body = page(app);
        QVERIFY2(body.contains("pg=42\n"), body.constData());
        QVERIFY2(body.contains("my=42\n"), body.constData());
        QVERIFY2(body.contains("set=OK\n"), body.constData());
        QVERIFY2(body.contains("get=hello\n"), body.constData());
        QVERIFY2(body.contains("rows=\n"), body.constData());

        // A row written from the app's container, over the services network.
        const QString appContainer = first.record.containerId;
        auto wrote = adapters::docker::execIn(
            m_client, appContainer,
            {u"sh"_s, u"-c"_s, u"psql \"$DB_URL\" -q -c \"insert into marks values ('kept-row-42')\""_s}, {}, 60000,
            CancelToken());
        QVERIFY2(wrote && wrote->exitCode == 0, wrote ? wrote->errorTail.constData() : "exec failed");

        auto before = m_fx->engine().services(app);
        QVERIFY2(before, qPrintable(before ? QString() : before.error().text()));
        QCOMPARE(before->size(), 3);

        // A redeploy of a new version: the same services, the row still there.
        QVERIFY(!m_fx->git().commit(u"svcapp"_s, u"main"_s, servicesApp("v2")).isEmpty());
        timer.restart();
        failed = deployAndWait(app);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        qInfo("redeploy with three running services: %lld ms", timer.elapsed());
        body = page(app);
        QVERIFY2(body.contains("version=v2\n"), body.constData());
        QVERIFY2(body.contains("rows=kept-row-42\n"), body.constData());
        auto after = m_fx->engine().services(app);
        QVERIFY(after);
        QCOMPARE(after->size(), 3);
        for (const core::ServiceView &v : *after) {
            QCOMPARE(v.state, u"running"_s);
            QVERIFY(!v.volume.isEmpty());
            QVERIFY(!v.toJson().contains(u"password"_s));
        }

        // The backup holds the row.
        QBuffer dump;
        dump.open(QIODevice::WriteOnly);
        qint64 progressed = 0;
        auto written = m_fx->engine().backupService(
            app, u"db"_s, dump, CancelToken(), [&](qint64 bytes) { progressed = bytes; }, core::Actor{});
        QVERIFY2(written, qPrintable(written ? QString() : written.error().text()));
        QCOMPARE(progressed, *written);
        QVERIFY2(dump.data().contains("kept-row-42"), dump.data().left(400).constData());
        QVERIFY(dump.data().contains("CREATE TABLE public.marks"));

        // Removal asks about the data; told to keep it, the volumes stay.
        auto asked = m_fx->engine().removeApp(app, core::Actor{});
        QVERIFY(!asked);
        QVERIFY2(asked.error().hint.contains(u"--keep-data"_s), qPrintable(asked.error().text()));
        QVERIFY(m_fx->engine().removeApp(app, core::Actor{}, core::Engine::ServiceData::Keep));
        QVERIFY(waitGone(app));
        QCOMPARE(countContainers(app), 0);
        QCOMPARE(countVolumes(app), 3);
        auto kept = m_fx->engine().services(app);
        QVERIFY2(kept, qPrintable(kept ? QString() : kept.error().text()));
        QCOMPARE(kept->size(), 3);
        QCOMPARE(kept->first().state, u"absent"_s);

        // Made again, the app finds its data with the credentials it was made with.
        QVERIFY(m_fx->engine().createApp(spec(app, m_repo, u"all"_s).toUtf8(), core::Actor{}));
        failed = deployAndWait(app);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        body = page(app);
        QVERIFY2(body.contains("rows=kept-row-42\n"), body.constData());

        // Removed with its data: nothing left.
        QVERIFY(m_fx->engine().removeApp(app, core::Actor{}, core::Engine::ServiceData::Delete));
        QVERIFY(waitGone(app));
        QCOMPARE(countContainers(app), 0);
        QCOMPARE(countVolumes(app), 0);
        auto none = m_fx->engine().services({});
        QVERIFY(none);
        QVERIFY(std::none_of(none->cbegin(), none->cend(), [&](const core::ServiceView &v) { return v.app == app; }));
        QVERIFY(!m_client.get(u"/networks/"_s +
                              adapters::docker::DockerServiceProvisioner::networkName(m_fx->installId(), app)));
    }

    void egressNoneAppStillReachesItsServices()
    {
        const QString app = u"sealed"_s;
        QVERIFY(m_fx->engine().createApp(spec(app, m_repo, u"none"_s).toUtf8(), core::Actor{}));
        const QString failed = deployAndWait(app);
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        const QByteArray body = page(app);
        QVERIFY2(body.contains("pg=42\n"), body.constData());
        QVERIFY2(body.contains("my=42\n"), body.constData());
        QVERIFY2(body.contains("get=hello\n"), body.constData());
        QVERIFY(m_fx->engine().removeApp(app, core::Actor{}, core::Engine::ServiceData::Delete));
        QVERIFY(waitGone(app));
        QCOMPARE(countVolumes(app), 0);
    }

    void servicesNeedTheirRuntimeAndOwnTheirVariables()
    {
        // run.env may not set what a slot injects: refused when the spec is written, naming the
        // variable, so no app exists to fail at its deploy.
        const QString app = u"clash"_s;
        QString text = spec(app, m_repo, u"all"_s);
        text.replace(u"  resources:"_s, u"  env: { DB_URL: \"postgres://elsewhere\" }\n  resources:"_s);
        auto created = m_fx->engine().createApp(text.toUtf8(), core::Actor{});
        QVERIFY(!created);
        QCOMPARE(created.error().where, u"run.env.DB_URL"_s);
        QVERIFY(!m_fx->engine().app(app));
        QCOMPARE(countVolumes(app), 0);
    }
};

QTEST_GUILESS_MAIN(TestEngineServices)
#include "tst_engineservices.moc"
