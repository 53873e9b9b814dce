// A backup of a real PostgreSQL service through the API and the `pando` CLI: an engine on real
// Docker (EngineFixture) served by the API server in this process, an app with a postgres slot,
// a row written into the service, and `pando services backup` writing a dump that holds it.

#include "adapters/kit/dockerapi/dockerclient.h"
#include "adapters/services/docker/dockerexec.h"
#include "app/server/apiserver.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/services/serviceimages.h"
#include "tests/core/engine/enginefixture.h"
#include "tests/support/clirun.h"
#include "tests/support/vocabtesting.h"

#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::test;

class TestServicesBackup : public QObject {
    Q_OBJECT

    std::unique_ptr<EngineFixture> m_fx;
    std::unique_ptr<server::ApiServer> m_server;
    adapters::dockerapi::DockerClient m_client;
    QString m_token;
    quint16 m_port = 0;
    QTemporaryDir m_out;
    QTemporaryDir m_config;

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
        auto token = m_fx->engine().bootstrapAdminToken();
        QVERIFY2(token && *token, "no initial token");
        m_token = **token;
        m_server = std::make_unique<server::ApiServer>(m_fx->engine());
        auto port = m_server->listen(QHostAddress::LocalHost, 0);
        QVERIFY2(port, qPrintable(port ? QString() : port.error().text()));
        m_port = *port;
    }

    void cleanupTestCase()
    {
        m_server.reset();
        if (!m_fx)
            return;
        // A test that failed midway left its app: removed with its services' network and volumes,
        // which removing the services alone leaves.
        if (m_fx->engine().app(u"dumped"_s)) {
            discardResult(m_fx->engine().removeApp(u"dumped"_s, core::Actor{}, core::Engine::ServiceData::Delete),
                          "clean-up of the test's own app; a leftover carries this test's install label");
            QTRY_VERIFY_WITH_TIMEOUT(!m_fx->engine().app(u"dumped"_s), 60000);
        }
        if (auto left = m_fx->engine().services({}))
            for (const core::ServiceView &v : *left)
                discardResult(m_fx->engine().removeService(v.app, v.slot, true, core::Actor{}),
                              "clean-up of the test's own volumes");
        m_fx->cleanDocker();
        m_fx.reset();
    }

    void backupOfARealPostgresHoldsTheRow()
    {
        const QString app = u"dumped"_s;
        const QString repo = m_fx->git().createRepository(app);
        QVERIFY(!m_fx->git().commit(app, u"main"_s, helloApp("hello\n")).isEmpty());
        auto created = m_fx->engine().createApp(
            helloSpec(app, repo, u"services:\n  db: { kind: postgres, version: \"15\" }\n"_s), core::Actor{});
        QVERIFY2(created, qPrintable(created ? QString() : created.error().text()));
        auto deploy = m_fx->engine().deploy(app, {}, core::Actor{});
        QVERIFY2(deploy, qPrintable(deploy ? QString() : deploy.error().text()));
        const core::DeployView view = m_fx->waitDeploy(deploy->id, 300000);
        QVERIFY2(view.record.status == core::DeployStatus::Succeeded,
                 qPrintable(view.record.failedStep + u": "_s + view.record.error));

        // A row, written inside the service's container (its unix socket trusts local users).
        adapters::Labels labels = m_fx->installLabels(app);
        labels.insert(QString::fromLatin1(adapters::LabelService), u"db"_s);
        auto containers = m_fx->docker().containers(labels);
        QVERIFY(containers);
        QCOMPARE(containers->size(), 1);
        auto wrote = adapters::docker::execIn(
            m_client, containers->first().id,
            {u"psql"_s, u"-U"_s, u"app"_s, u"-d"_s, u"db"_s, u"-q"_s, u"-c"_s,
             u"create table marks (v text); insert into marks values ('row-through-the-cli-7')"_s},
            {}, 60000, CancelToken());
        QVERIFY2(wrote && wrote->exitCode == 0, wrote ? wrote->errorTail.constData() : "exec failed");

        const QString file = m_out.filePath(u"dumped-db.sql"_s);
        const CliRun run =
            runCli({u"services"_s, u"backup"_s, app, u"db"_s, u"--out"_s, file},
                   cliEnvironment(u"http://127.0.0.1:%1"_s.arg(m_port), m_token, m_config.path()), {}, 120000);
        QVERIFY2(run.code == 0, qPrintable(run.all()));
        QFile dump(file);
        QVERIFY(dump.open(QIODevice::ReadOnly));
        const QByteArray text = dump.readAll();
        QVERIFY2(text.contains("CREATE TABLE public.marks"), text.left(400).constData());
        QVERIFY2(text.contains("row-through-the-cli-7"), text.left(400).constData());
        QVERIFY(!QFile::exists(file + u".partial"_s));

        // Audited under the token that asked.
        core::AuditRepository::Filter filter;
        filter.action = u"service.backup"_s;
        filter.object = u"app/dumped/service/db"_s;
        auto lines = m_fx->engine().auditLines(filter);
        QVERIFY(lines);
        QCOMPARE(lines->size(), 1);
        QCOMPARE(lines->first().outcome, u"success"_s);

        QVERIFY(m_fx->engine().removeApp(app, core::Actor{}, core::Engine::ServiceData::Delete));
    }
};

QTEST_GUILESS_MAIN(TestServicesBackup)
#include "tst_servicesbackup.moc"
