// The Docker services adapter against a real Docker Engine: each kind provisioned, ready and
// reachable with the credentials it was made with; provisioning again reuses the container and
// the data; a backup holds what was written; removal keeps or deletes the volume as asked; a
// server that exits fails with the slot named and leaves nothing behind.

#include "adapters/services/docker/dockerexec.h"
#include "adapters/services/docker/dockerservices.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/adapters/services/serviceimages.h"

#include <QBuffer>
#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using namespace pando::adapters::docker;

namespace {

QString randomId()
{
    return QString::number(QRandomGenerator::system()->generate64() & 0xffffffffULL, 16);
}

// A statement writing a marker row, and one reading it, through the service's own client.
struct Probe {
    QStringList write;
    QStringList read;
    QMap<QString, QString> env;
};

Probe probeFor(const QString &kind, const ServiceCredentials &c)
{
    if (kind == u"postgres")
        return {{u"psql"_s, u"-h"_s, u"127.0.0.1"_s, u"-U"_s, c.user, u"-d"_s, c.database, u"-q"_s, u"-v"_s,
                 u"ON_ERROR_STOP=1"_s, u"-c"_s,
                 u"create table if not exists marks (v text); insert into marks values ('kept-row-42')"_s},
                {u"psql"_s, u"-h"_s, u"127.0.0.1"_s, u"-U"_s, c.user, u"-d"_s, c.database, u"-tAc"_s,
                 u"select v from marks"_s},
                {{u"PGPASSWORD"_s, c.password}}};
    if (kind == u"redis")
        return {{u"redis-cli"_s, u"-h"_s, u"127.0.0.1"_s, u"SET"_s, u"mark"_s, u"kept-row-42"_s},
                {u"redis-cli"_s, u"-h"_s, u"127.0.0.1"_s, u"GET"_s, u"mark"_s},
                {{u"REDISCLI_AUTH"_s, c.password}}};
    return {{u"mysql"_s, u"-h127.0.0.1"_s, u"-u"_s + c.user, c.database, u"-e"_s,
             u"create table if not exists marks (v text); insert into marks values ('kept-row-42')"_s},
            {u"mysql"_s, u"-h127.0.0.1"_s, u"-u"_s + c.user, c.database, u"-N"_s, u"-e"_s, u"select v from marks"_s},
            {{u"MYSQL_PWD"_s, c.password}}};
}

} // namespace

class TestDockerServices : public QObject {
    Q_OBJECT

private:
    dockerapi::DockerClient m_client;
    DockerServiceProvisioner m_services;
    QString m_install = u"svc-test-"_s + randomId();

    ServiceRequest request(const QString &app, const QString &slot, const QString &kind, const QString &version)
    {
        ServiceRequest r;
        r.installId = m_install;
        r.app = app;
        r.slot = slot;
        r.kind = kind;
        r.version = version;
        r.credentials = {u"app"_s, u"pw-"_s + randomId() + randomId(), kind == u"redis" ? QString() : slot};
        r.readyTimeoutMs = 120000;
        return r;
    }

    QString execText(const QString &container, const QStringList &cmd, const QMap<QString, QString> &env)
    {
        auto ran = execIn(m_client, container, cmd, env, 60000, CancelToken());
        if (!ran)
            return u"exec failed: "_s + ran.error().text();
        if (ran->exitCode != 0)
            return u"exit %1: %2"_s.arg(ran->exitCode).arg(QString::fromUtf8(ran->errorTail));
        return QString::fromUtf8(ran->output).trimmed();
    }

    bool exists(const QString &path) { return bool(m_client.get(path)); }

private Q_SLOTS:
    void initTestCase()
    {
        QString why;
        QVERIFY2(test::DockerHarness::available(&why), qPrintable(why));
        const QString images = test::ensureServiceImages();
        QVERIFY2(images.isEmpty(), qPrintable(images));
        QVERIFY(test::DockerHarness::ensureBaseImage());
    }

    void cleanupTestCase()
    {
        // Whatever a failed test left.
        if (auto left = m_services.list(m_install, {}))
            for (const ServiceInfo &s : *left)
                discardResult(m_services.remove(m_install, s.app, s.slot, true), "clean-up of the test's own services");
    }

    void lifecycle_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("version");
        QTest::addColumn<QByteArray>("inDump");
        QTest::newRow("postgres") << u"postgres"_s << u"15"_s << QByteArray("kept-row-42");
        QTest::newRow("mysql") << u"mysql"_s << u"10.11"_s << QByteArray("kept-row-42");
        QTest::newRow("redis") << u"redis"_s << u"7"_s << QByteArray("REDIS");
    }

    void lifecycle()
    {
        QFETCH(QString, kind);
        QFETCH(QString, version);
        QFETCH(QByteArray, inDump);
        const QString app = u"shop"_s + randomId();
        const ServiceRequest r = request(app, u"db"_s, kind, version);

        QElapsedTimer timer;
        timer.start();
        QStringList lines;
        auto endpoint = m_services.provision(r, CancelToken(), [&](const QString &l) { lines << l; });
        QVERIFY2(endpoint, qPrintable(endpoint ? QString() : endpoint.error().text()));
        qInfo("%s ready after %lld ms", qPrintable(kind), timer.elapsed());
        QCOMPARE(endpoint->host, u"db"_s);
        QCOMPARE(endpoint->network, DockerServiceProvisioner::networkName(m_install, app));
        QCOMPARE(endpoint->image, DockerServiceProvisioner::pandoImage(kind, version));
        QVERIFY(!lines.isEmpty());

        // The credentials it was made with let a client in; a wrong password does not.
        const Probe probe = probeFor(kind, r.credentials);
        QCOMPARE(execText(endpoint->containerId, probe.write, probe.env), kind == u"redis" ? u"OK"_s : QString());
        QCOMPARE(execText(endpoint->containerId, probe.read, probe.env), u"kept-row-42"_s);
        QMap<QString, QString> wrong = probe.env;
        wrong.first() = u"not-the-password"_s;
        const QString refused = execText(endpoint->containerId, probe.read, wrong);
        QVERIFY2(refused != u"kept-row-42"_s, qPrintable(refused));

        // Again (a redeploy): the same container and the data it holds.
        auto again = m_services.provision(r, CancelToken(), {});
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->containerId, endpoint->containerId);

        auto listed = m_services.list(m_install, app);
        QVERIFY2(listed, qPrintable(listed ? QString() : listed.error().text()));
        QCOMPARE(listed->size(), 1);
        QCOMPARE(listed->first().slot, u"db"_s);
        QCOMPARE(listed->first().kind, kind);
        QCOMPARE(listed->first().state, u"running"_s);
        QCOMPARE(listed->first().volume, DockerServiceProvisioner::volumeName(m_install, app, u"db"_s));

        // The backup holds what was written.
        QBuffer dump;
        dump.open(QIODevice::WriteOnly);
        qint64 reported = 0;
        auto written = m_services.backup(r, dump, CancelToken(), [&](const BackupProgress &p) { reported = p.bytes; });
        QVERIFY2(written, qPrintable(written ? QString() : written.error().text()));
        QCOMPARE(*written, dump.data().size());
        QCOMPARE(reported, *written);
        QVERIFY2(dump.data().contains(inDump), dump.data().left(300).constData());
        if (kind == u"redis")
            QVERIFY(dump.data().contains("kept-row-42"));

        // Removed keeping the data: the volume stays, and a new container finds the row.
        QVERIFY(m_services.remove(m_install, app, u"db"_s, false));
        QVERIFY(
            !exists(u"/containers/"_s + DockerServiceProvisioner::containerName(m_install, app, u"db"_s) + u"/json"_s));
        QVERIFY(exists(u"/volumes/"_s + endpoint->volume));
        auto back = m_services.provision(r, CancelToken(), {});
        QVERIFY2(back, qPrintable(back ? QString() : back.error().text()));
        QVERIFY(back->containerId != endpoint->containerId);
        QCOMPARE(execText(back->containerId, probe.read, probe.env), u"kept-row-42"_s);

        // Removed with its data: nothing is left, the network neither.
        QVERIFY(m_services.remove(m_install, app, u"db"_s, true));
        QVERIFY(!exists(u"/volumes/"_s + endpoint->volume));
        QVERIFY(!exists(u"/networks/"_s + endpoint->network));
        auto none = m_services.list(m_install, app);
        QVERIFY(none && none->isEmpty());
    }

    // A seed is loaded into a service whose volume was just made, as its user into its database;
    // the file does not stay behind. PostgreSQL's is one transaction: a failing seed leaves nothing.
    void seedsAFreshService_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("version");
        QTest::newRow("postgres") << u"postgres"_s << u"15"_s;
        QTest::newRow("mysql") << u"mysql"_s << u"10.11"_s;
    }

    void seedsAFreshService()
    {
        QFETCH(QString, kind);
        QFETCH(QString, version);
        const QString app = u"seeded"_s + randomId();
        const ServiceRequest r = request(app, u"db"_s, kind, version);
        auto endpoint = m_services.provision(r, CancelToken(), {});
        QVERIFY2(endpoint, qPrintable(endpoint ? QString() : endpoint.error().text()));
        QVERIFY2(endpoint->fresh, "a service whose volume was made now is fresh");

        const QByteArray seed =
            "-- fixtures\ncreate table marks (v text);\ninsert into marks values ('kept-row-42');\n";
        auto seeded = m_services.seed(r, seed, CancelToken());
        QVERIFY2(seeded, qPrintable(seeded ? QString() : seeded.error().text()));
        const Probe probe = probeFor(kind, r.credentials);
        QCOMPARE(execText(endpoint->containerId, probe.read, probe.env), u"kept-row-42"_s);
        QCOMPARE(execText(endpoint->containerId, {u"test"_s, u"-e"_s, u"/tmp/pando-seed.sql"_s}, {}), u"exit 1: "_s);

        auto again = m_services.provision(r, CancelToken(), {});
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QVERIFY2(!again->fresh, "a service that holds data is not fresh");

        // A seed that fails says where and why; PostgreSQL's leaves none of it.
        auto broken =
            m_services.seed(r, "create table half (v text);\ninsert into missing_table values (1);\n", CancelToken());
        QVERIFY(!broken);
        QCOMPARE(broken.error().where, u"services.db.seed"_s);
        QVERIFY2(broken.error().message.contains(u"missing_table"_s), qPrintable(broken.error().text()));
        QVERIFY2(!broken.error().text().contains(r.credentials.password), "the password is never in an error");
        if (kind == u"postgres")
            QCOMPARE(execText(endpoint->containerId,
                              {u"psql"_s, u"-h"_s, u"127.0.0.1"_s, u"-U"_s, r.credentials.user, u"-d"_s,
                               r.credentials.database, u"-tAc"_s, u"select to_regclass('half') is null"_s},
                              probe.env),
                     u"t"_s);
        QVERIFY(m_services.remove(m_install, app, u"db"_s, true));
    }

    void redisTakesNoSeed()
    {
        const ServiceRequest r = request(u"cache"_s + randomId(), u"cache"_s, u"redis"_s, u"7"_s);
        auto refused = m_services.seed(r, "SET a b\n", CancelToken());
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Invalid);
    }

    void serverThatExits()
    {
        const QString app = u"broken"_s + randomId();
        ServiceRequest r = request(app, u"cache"_s, u"redis"_s, u"7"_s);
        r.image = test::DockerHarness::baseImage(); // busybox: no redis-server, the command exits
        r.readyTimeoutMs = 60000;
        QElapsedTimer timer;
        timer.start();
        auto endpoint = m_services.provision(r, CancelToken(), {});
        QVERIFY(!endpoint);
        QVERIFY2(timer.elapsed() < 30000, "an exiting server is seen at once, not after the timeout");
        QCOMPARE(endpoint.error().where, u"services.cache"_s);
        QVERIFY2(endpoint.error().message.contains(u"slot cache"_s), qPrintable(endpoint.error().message));
        QVERIFY2(endpoint.error().message.contains(u"exited"_s), qPrintable(endpoint.error().message));
        QVERIFY(!endpoint.error().text().contains(r.credentials.password));
        // Nothing half-made for the next deploy to trip over.
        auto left = m_services.list(m_install, app);
        QVERIFY(left && left->isEmpty());
        QVERIFY(!exists(u"/networks/"_s + DockerServiceProvisioner::networkName(m_install, app)));
    }

    void missingImage()
    {
        const QString app = u"noimage"_s + randomId();
        ServiceRequest r = request(app, u"db"_s, u"postgres"_s, u"15"_s);
        r.image = u"pando/no-such-image:0"_s;
        auto endpoint = m_services.provision(r, CancelToken(), {});
        QVERIFY(!endpoint);
        QVERIFY2(endpoint.error().message.contains(u"pando/no-such-image:0"_s), qPrintable(endpoint.error().text()));
        QVERIFY2(endpoint.error().hint.contains(u"--service-image"_s), qPrintable(endpoint.error().hint));
    }
};

QTEST_GUILESS_MAIN(TestDockerServices)
#include "tst_dockerservices.moc"
