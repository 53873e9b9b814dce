// The state package on both drivers: every test function runs once per global row ("sqlite",
// "postgres"); set PANDO_STATE_DRIVERS=sqlite (or postgres) to run one of them.

#include "core/state/database.h"
#include "core/state/migrations.h"
#include "core/state/repositories.h"
#include "tests/support/component.h"
#include "tests/support/pgharness.h"
#include "tests/support/vocabtesting.h"

#include <QCoreApplication>
#include <QMutex>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QTextStream>
#include <QThread>
#include <memory>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

// Runs fn on `count` threads at once and waits for all of them.
template<class F> void onThreads(int count, F fn)
{
    std::vector<std::unique_ptr<QThread>> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back(QThread::create([fn, i] { fn(i); }));
    for (auto &t : threads)
        t->start();
    for (auto &t : threads)
        t->wait();
}

AppRecord app(const QString &name, qint64 ms = 1000)
{
    AppRecord a;
    a.name = name;
    a.specYaml = u"name: "_s + name + u"\n"_s;
    a.createdMs = ms;
    a.updatedMs = ms;
    return a;
}

DeployRecord deploy(const QString &id, const QString &appName, qint64 createdMs,
                    DeployStatus status = DeployStatus::Queued)
{
    DeployRecord d;
    d.id = id;
    d.app = appName;
    d.ref = u"main"_s;
    d.status = status;
    d.actor = u"token:admin"_s;
    d.createdMs = createdMs;
    return d;
}

AuditRecord auditLine(int i, const QString &actor = u"token:admin"_s)
{
    AuditRecord line;
    line.timeMs = 1'700'000'000'000 + i;
    line.actor = actor;
    line.action = i % 2 ? u"deploy.start"_s : u"app.create"_s;
    line.object = u"app/a"_s + QString::number(i % 3);
    line.outcome = u"success"_s;
    line.detail = u"{\"i\":"_s + QString::number(i) + u'}';
    line.requestId = u"r"_s + QString::number(i);
    line.source = u"engine"_s;
    return line;
}

} // namespace

class TestState : public QObject {
    Q_OBJECT

private:
    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    QString m_url;
    std::unique_ptr<Database> m_db;

    QString m_driver;
    Status rawExec(const QString &sql, const QVariantList &values)
    {
        auto db = m_db->connection();
        if (!db)
            return std::unexpected(db.error());
        QSqlQuery q(*db);
        q.prepare(sql);
        for (const QVariant &v : values)
            q.addBindValue(v);
        if (!q.exec())
            return fail(ErrorCode::Internal, q.lastError().text());
        return {};
    }

private Q_SLOTS:
    void initTestCase_data()
    {
        QTest::addColumn<QString>("driver");
        const QStringList wanted = qEnvironmentVariable("PANDO_STATE_DRIVERS", u"sqlite,postgres"_s).split(u',');
        for (const QString &d : {u"sqlite"_s, u"postgres"_s}) {
            if (wanted.contains(d))
                QTest::newRow(d.toLatin1().constData()) << d;
        }
    }

    void initTestCase()
    {
        if (qEnvironmentVariable("PANDO_STATE_DRIVERS", u"postgres"_s).contains(u"postgres"_s))
            m_pgStarted = m_pg.start();
    }

    void init()
    {
        QFETCH_GLOBAL(QString, driver);
        m_driver = driver;
        if (m_driver == u"postgres"_s) {
            PANDO_REQUIRE_COMPONENT(m_pgStarted, m_pg.error());
            m_url = m_pg.freshDatabase();
            QVERIFY2(!m_url.isEmpty(), qPrintable(m_pg.error()));
        } else {
            m_tmp = std::make_unique<QTemporaryDir>();
            QVERIFY(m_tmp->isValid());
            m_url = u"sqlite://"_s + m_tmp->path() + u"/state/pando.db"_s; // state/ does not exist yet
        }
        auto config = DatabaseConfig::fromUrl(m_url);
        QVERIFY2(config, qPrintable(config ? QString() : config.error().text()));
        m_db = std::make_unique<Database>(*config);
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    }

    void cleanup()
    {
        m_db.reset();
        m_tmp.reset();
    }

    void configFromUrl_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("expect"); // path/host for valid, a word of the message for invalid
        QTest::newRow("sqlite") << u"sqlite:///var/lib/pando/pando.db"_s << true << u"/var/lib/pando/pando.db"_s;
        QTest::newRow("sqlite-relative") << u"sqlite://pando.db"_s << false << u"host"_s;
        QTest::newRow("sqlite-no-path") << u"sqlite://"_s << false << u"absolute"_s;
        QTest::newRow("postgres") << u"postgres://u:p%40ss@db.example:6543/pando"_s << true << u"db.example"_s;
        QTest::newRow("postgresql") << u"postgresql://u@db/pando"_s << true << u"db"_s;
        QTest::newRow("pg-no-db") << u"postgres://u@db/"_s << false << u"database name"_s;
        QTest::newRow("pg-no-host") << u"postgres:///pando"_s << false << u"no host"_s;
        QTest::newRow("scheme") << u"mysql://u@db/pando"_s << false << u"mysql"_s;
        QTest::newRow("empty") << QString() << false << u"empty"_s;
    }

    void configFromUrl()
    {
        QFETCH(QString, url);
        QFETCH(bool, valid);
        QFETCH(QString, expect);
        const auto config = DatabaseConfig::fromUrl(url);
        QCOMPARE(bool(config), valid);
        if (!valid) {
            QCOMPARE(config.error().code, ErrorCode::Invalid);
            QVERIFY2(config.error().message.contains(expect), qPrintable(config.error().message));
            return;
        }
        if (config->driver == DatabaseConfig::Driver::Sqlite) {
            QCOMPARE(config->sqlitePath, expect);
        } else {
            QCOMPARE(config->host, expect);
            QCOMPARE(config->name, u"pando"_s);
            QCOMPARE(config->user, u"u"_s);
        }
        if (url.contains(u"6543"_s)) {
            QCOMPARE(config->port, 6543);
            QCOMPARE(config->password, u"p@ss"_s);
        }
    }

    void migrationsApplyOnce()
    {
        const int latest = detail::migrations().last().version;
        QCOMPARE(m_db->schemaVersion().value(), latest);
        for (int i = 0; i < detail::migrations().size(); ++i)
            QCOMPARE(detail::migrations().at(i).version, i + 1);

        auto db = m_db->connection().value();
        const auto appliedAt = [&] {
            QSqlQuery q(db);
            q.exec(u"SELECT COUNT(*), MAX(applied_ms) FROM schema_migrations"_s);
            q.next();
            return std::pair{q.value(0).toInt(), q.value(1).toLongLong()};
        };
        const auto before = appliedAt();
        QCOMPARE(before.first, detail::migrations().size());
        QTest::qWait(5);
        QVERIFY(m_db->open());
        // A second Database on the same URL (another process, in effect) applies nothing either.
        Database other(DatabaseConfig::fromUrl(m_url).value());
        QVERIFY(other.open());
        QCOMPARE(other.schemaVersion().value(), latest);
        QCOMPARE(appliedAt(), before);
        for (const QString &table :
             {u"apps"_s, u"deploys"_s, u"deploy_steps"_s, u"jobs"_s, u"audit_log"_s, u"tokens"_s})
            QVERIFY2(db.tables().contains(table), qPrintable(table));
    }

    // The postgres row has already run every statement on PostgreSQL (init opened the database);
    // this also keeps SQLite-only spellings out of the migrations.
    void migrationsArePortable()
    {
        static const QRegularExpression sqliteOnly(
            u"AUTOINCREMENT|SERIAL|PRAGMA|WITHOUT\\s+ROWID|INSERT\\s+OR|REPLACE\\s+INTO|DATETIME|STRICT|GLOB"_s,
            QRegularExpression::CaseInsensitiveOption);
        for (const auto &migration : detail::migrations()) {
            for (const QString &statement : migration.statements) {
                QVERIFY2(!statement.contains(sqliteOnly), qPrintable(statement));
                QVERIFY2(!statement.contains(u';'), qPrintable(statement)); // one statement per entry
            }
        }
        QCOMPARE(m_db->schemaVersion().value(), detail::migrations().last().version);
    }

    void appsCrud()
    {
        AppRepository apps(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QVERIFY(apps.create(app(u"api"_s)));
        auto found = apps.find(u"hello"_s);
        QVERIFY(found);
        QCOMPARE(found->specYaml, u"name: hello\n"_s);
        QCOMPARE(found->routePort, 0);
        QCOMPARE(found->currentDeploy, QString(u""_s));
        QVERIFY(apps.setSpec(u"hello"_s, u"name: hello\nport: 8080\n"_s, 2000));
        QVERIFY(apps.setRoutePort(u"hello"_s, 41234, 3000));
        QVERIFY(apps.setCurrentDeploy(u"hello"_s, u"d0123456789ab"_s, 4000));
        found = apps.find(u"hello"_s);
        QCOMPARE(found->specYaml, u"name: hello\nport: 8080\n"_s);
        QCOMPARE(found->routePort, 41234);
        QCOMPARE(found->currentDeploy, u"d0123456789ab"_s);
        QCOMPARE(found->createdMs, 1000);
        QCOMPARE(found->updatedMs, 4000);
        auto all = apps.list();
        QVERIFY(all);
        QCOMPARE(all->size(), 2);
        QCOMPARE(all->at(0).name, u"api"_s); // by name
        QVERIFY(apps.remove(u"api"_s));
        QCOMPARE(apps.list()->size(), 1);
    }

    void appsDuplicateAndMissing()
    {
        AppRepository apps(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        auto dup = apps.create(app(u"hello"_s));
        QVERIFY(!dup);
        QCOMPARE(dup.error().code, ErrorCode::Conflict);
        QVERIFY2(dup.error().message.contains(u"hello"_s), qPrintable(dup.error().text()));
        QCOMPARE(apps.find(u"nope"_s).error().code, ErrorCode::NotFound);
        QCOMPARE(apps.setSpec(u"nope"_s, u"x"_s, 1).error().code, ErrorCode::NotFound);
        QCOMPARE(apps.setRoutePort(u"nope"_s, 1, 1).error().code, ErrorCode::NotFound);
        QCOMPARE(apps.setCurrentDeploy(u"nope"_s, u"d"_s, 1).error().code, ErrorCode::NotFound);
        QCOMPARE(apps.remove(u"nope"_s).error().code, ErrorCode::NotFound);
        // Values are bound, never spliced: quotes are data.
        QVERIFY(apps.create(app(u"o'brien\"; DROP TABLE apps; --"_s)));
        QCOMPARE(apps.find(u"o'brien\"; DROP TABLE apps; --"_s)->name, u"o'brien\"; DROP TABLE apps; --"_s);
        QCOMPARE(apps.list()->size(), 2);
    }

    void removeCascades()
    {
        AppRepository apps(*m_db);
        DeployRepository deploys(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QVERIFY(apps.create(app(u"other"_s)));
        QVERIFY(deploys.create(deploy(u"d1"_s, u"hello"_s, 10)));
        QVERIFY(deploys.create(deploy(u"d2"_s, u"other"_s, 10)));
        QVERIFY(deploys.addStep({u"d1"_s, 0, u"fetch"_s, DeployStepStatus::Succeeded, u"ok"_s, 10, 11}));
        QVERIFY(deploys.addStep({u"d1"_s, 1, u"build"_s, DeployStepStatus::Running, {}, 11, 0}));
        QVERIFY(apps.remove(u"hello"_s));
        QCOMPARE(deploys.find(u"d1"_s).error().code, ErrorCode::NotFound);
        QCOMPARE(deploys.steps(u"d1"_s)->size(), 0);
        QVERIFY(deploys.find(u"d2"_s));
        // A deploy of an app that is not there is refused by the foreign key.
        auto orphan = deploys.create(deploy(u"d3"_s, u"hello"_s, 10));
        QVERIFY(!orphan);
        QCOMPARE(orphan.error().code, ErrorCode::NotFound);
    }

    void deploysNewestFirst()
    {
        AppRepository apps(*m_db);
        DeployRepository deploys(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QVERIFY(apps.create(app(u"other"_s)));
        for (int i = 0; i < 10; ++i)
            QVERIFY(deploys.create(deploy(u"d"_s + QString::number(i), u"hello"_s, 100 + i)));
        QVERIFY(deploys.create(deploy(u"x"_s, u"other"_s, 500)));
        auto dup = deploys.create(deploy(u"d3"_s, u"hello"_s, 1));
        QCOMPARE(dup.error().code, ErrorCode::Conflict);
        auto list = deploys.listForApp(u"hello"_s, 3);
        QVERIFY(list);
        QCOMPARE(list->size(), 3);
        QCOMPARE(list->at(0).id, u"d9"_s);
        QCOMPARE(list->at(1).id, u"d8"_s);
        QCOMPARE(list->at(2).id, u"d7"_s);
        QCOMPARE(deploys.listForApp(u"hello"_s, 100)->size(), 10);
        QCOMPARE(deploys.listForApp(u"none"_s, 5)->size(), 0);
        QCOMPARE(deploys.listForApp(u"hello"_s, 0).error().code, ErrorCode::Invalid);

        DeployRecord d = deploys.find(u"d4"_s).value();
        d.status = DeployStatus::Failed;
        d.commit = u"0123abcd"_s;
        d.failedStep = u"build"_s;
        d.error = u"exit 2"_s;
        d.imageId = u"sha256:aa"_s;
        d.containerId = u"c1"_s;
        d.startedMs = 200;
        d.finishedMs = 300;
        d.createdMs = 9999; // not written by update
        QVERIFY(deploys.update(d));
        const DeployRecord back = deploys.find(u"d4"_s).value();
        QCOMPARE(back.status, DeployStatus::Failed);
        QCOMPARE(back.commit, u"0123abcd"_s);
        QCOMPARE(back.failedStep, u"build"_s);
        QCOMPARE(back.error, u"exit 2"_s);
        QCOMPARE(back.imageId, u"sha256:aa"_s);
        QCOMPARE(back.containerId, u"c1"_s);
        QCOMPARE(back.startedMs, 200);
        QCOMPARE(back.finishedMs, 300);
        QCOMPARE(back.createdMs, 104);
        d.id = u"nope"_s;
        QCOMPARE(deploys.update(d).error().code, ErrorCode::NotFound);
    }

    void steps()
    {
        AppRepository apps(*m_db);
        DeployRepository deploys(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QVERIFY(deploys.create(deploy(u"d1"_s, u"hello"_s, 10)));
        const QStringList names = {u"fetch"_s, u"detect"_s, u"plan"_s, u"build"_s};
        // Added out of order; read back by seq.
        for (int seq : {2, 0, 3, 1})
            QVERIFY(deploys.addStep({u"d1"_s, seq, names[seq], DeployStepStatus::Running, {}, 100 + seq, 0}));
        QCOMPARE(deploys.addStep({u"d1"_s, 1, u"again"_s, DeployStepStatus::Running, {}, 0, 0}).error().code,
                 ErrorCode::Conflict);
        QCOMPARE(deploys.addStep({u"nope"_s, 0, u"fetch"_s, DeployStepStatus::Running, {}, 0, 0}).error().code,
                 ErrorCode::NotFound);
        QVERIFY(deploys.updateStep({u"d1"_s, 3, u"build"_s, DeployStepStatus::Failed, u"exit status 2"_s, 103, 150}));
        QCOMPARE(deploys.updateStep({u"d1"_s, 9, u"x"_s, DeployStepStatus::Failed, {}, 0, 0}).error().code,
                 ErrorCode::NotFound);
        auto steps = deploys.steps(u"d1"_s);
        QVERIFY(steps);
        QCOMPARE(steps->size(), 4);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(steps->at(i).seq, i);
            QCOMPARE(steps->at(i).name, names[i]);
        }
        QCOMPARE(steps->at(3).status, DeployStepStatus::Failed);
        QCOMPARE(steps->at(3).detail, u"exit status 2"_s);
        QCOMPARE(steps->at(3).finishedMs, 150);
    }

    void unfinished()
    {
        AppRepository apps(*m_db);
        DeployRepository deploys(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QVERIFY(deploys.create(deploy(u"d1"_s, u"hello"_s, 10, DeployStatus::Succeeded)));
        QVERIFY(deploys.create(deploy(u"d2"_s, u"hello"_s, 30, DeployStatus::Running)));
        QVERIFY(deploys.create(deploy(u"d3"_s, u"hello"_s, 20, DeployStatus::Queued)));
        QVERIFY(deploys.create(deploy(u"d4"_s, u"hello"_s, 40, DeployStatus::Failed)));
        QVERIFY(deploys.create(deploy(u"d5"_s, u"hello"_s, 50, DeployStatus::Cancelled)));
        auto open = deploys.unfinished();
        QVERIFY(open);
        QCOMPARE(open->size(), 2);
        QCOMPARE(open->at(0).id, u"d3"_s);
        QCOMPARE(open->at(1).id, u"d2"_s);
    }

    // The columns hold the vocabulary's exact strings, and a word no table knows (a newer
    // Pando's, a hand edit) is an error naming the row, never read as some other state.
    void statusWords()
    {
        AppRepository apps(*m_db);
        DeployRepository deploys(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QVERIFY(deploys.create(deploy(u"d1"_s, u"hello"_s, 10, DeployStatus::AwaitingApproval)));
        QVERIFY(deploys.addStep({u"d1"_s, 0, u"approval"_s, DeployStepStatus::Waiting, {}, 10, 0}));
        auto db = m_db->connection();
        QVERIFY(db);
        QSqlQuery q(*db);
        QVERIFY(q.exec(u"SELECT d.status, s.status FROM deploys d JOIN deploy_steps s ON s.deploy_id = d.id"_s));
        QVERIFY(q.next());
        QCOMPARE(q.value(0).toString(), u"awaiting-approval"_s);
        QCOMPARE(q.value(1).toString(), u"waiting"_s);

        QVERIFY(rawExec(u"UPDATE deploys SET status = 'Succeeded' WHERE id = 'd1'"_s, {}));
        auto found = deploys.find(u"d1"_s);
        QVERIFY(!found);
        QCOMPARE(found.error().code, ErrorCode::Internal);
        QVERIFY2(found.error().message.contains(u"deploy d1"_s) && found.error().message.contains(u"\"Succeeded\""_s),
                 qPrintable(found.error().text()));
        QCOMPARE(found.error().where, u"deploys.status"_s);
        QVERIFY(!deploys.listForApp(u"hello"_s, 10));

        QVERIFY(rawExec(u"UPDATE deploys SET status = 'succeeded' WHERE id = 'd1'"_s, {}));
        QVERIFY(rawExec(u"UPDATE deploy_steps SET status = 'done' WHERE deploy_id = 'd1'"_s, {}));
        QCOMPARE(deploys.find(u"d1"_s)->status, DeployStatus::Succeeded);
        auto steps = deploys.steps(u"d1"_s);
        QVERIFY(!steps);
        QCOMPARE(steps.error().where, u"deploy_steps.status"_s);
    }

    void jobsOrder()
    {
        JobRepository jobs(*m_db);
        const qint64 a = jobs.enqueue(u"deploy"_s, u"a"_s, u"{\"n\":1}"_s, 100).value();
        const qint64 b = jobs.enqueue(u"deploy"_s, u"b"_s, u"{}"_s, 50).value();
        const qint64 c = jobs.enqueue(u"remove"_s, u"c"_s, u"{}"_s, 200).value();
        QVERIFY(a > 0 && b > a && c > b);
        QCOMPARE(jobs.claimNext(u"p1"_s, 300).value()->id, b);
        auto first = jobs.claimNext(u"p1"_s, 300).value();
        QVERIFY(first);
        QCOMPARE(first->id, a);
        QCOMPARE(first->state, u"running"_s);
        QCOMPARE(first->owner, u"p1"_s);
        QCOMPARE(first->payload, u"{\"n\":1}"_s);
        QCOMPARE(jobs.claimNext(u"p1"_s, 300).value()->id, c);
        QVERIFY(!jobs.claimNext(u"p1"_s, 300).value());
        auto stored = jobs.find(a).value();
        QCOMPARE(stored.state, u"running"_s);
        QCOMPARE(stored.owner, u"p1"_s);
        QCOMPARE(stored.kind, u"deploy"_s);
        QCOMPARE(stored.key, u"a"_s);
        QCOMPARE(stored.createdMs, 100);
        QCOMPARE(stored.updatedMs, 300);
        QCOMPARE(jobs.find(9999).error().code, ErrorCode::NotFound);
    }

    void jobsPerKey()
    {
        JobRepository jobs(*m_db);
        const qint64 a1 = jobs.enqueue(u"deploy"_s, u"hello"_s, {}, 1).value();
        const qint64 a2 = jobs.enqueue(u"deploy"_s, u"hello"_s, {}, 2).value();
        const qint64 b1 = jobs.enqueue(u"deploy"_s, u"api"_s, {}, 3).value();
        QCOMPARE(jobs.claimNext(u"p"_s, 10).value()->id, a1);
        // a2 waits for a1: same key. b1 has a key of its own.
        QCOMPARE(jobs.claimNext(u"p"_s, 10).value()->id, b1);
        QVERIFY(!jobs.claimNext(u"p"_s, 10).value());
        QVERIFY(jobs.finish(a1, false, u"build failed"_s, 20));
        const JobRecord done = jobs.find(a1).value();
        QCOMPARE(done.state, u"failed"_s);
        QCOMPARE(done.error, u"build failed"_s);
        QCOMPARE(jobs.claimNext(u"p"_s, 30).value()->id, a2);
        QVERIFY(jobs.finish(a2, true, {}, 40));
        QCOMPARE(jobs.find(a2)->state, u"done"_s);
        QCOMPARE(jobs.finish(4242, true, {}, 40).error().code, ErrorCode::NotFound);
    }

    void jobsConcurrentClaimers()
    {
        JobRepository jobs(*m_db);
        constexpr int kJobs = 200;
        for (int i = 0; i < kJobs; ++i)
            QVERIFY(jobs.enqueue(u"deploy"_s, u"k"_s + QString::number(i), {}, i));
        QMutex mutex;
        QList<qint64> claimed;
        QStringList errors;
        onThreads(4, [&](int t) {
            JobRepository mine(*m_db);
            const QString owner = u"claimer-"_s + QString::number(t);
            for (;;) {
                auto job = mine.claimNext(owner, 1000);
                if (!job) {
                    QMutexLocker lock(&mutex);
                    errors.append(job.error().text());
                    return;
                }
                if (!*job)
                    return;
                if (auto ok = mine.finish((*job)->id, true, {}, 1001); !ok) {
                    QMutexLocker lock(&mutex);
                    errors.append(ok.error().text());
                }
                QMutexLocker lock(&mutex);
                claimed.append((*job)->id);
            }
        });
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        QCOMPARE(claimed.size(), kJobs);
        QCOMPARE(QSet<qint64>(claimed.begin(), claimed.end()).size(), kJobs);
        QVERIFY(!jobs.claimNext(u"late"_s, 2000).value());
    }

    // Claimers in other processes (this executable in claimer mode, see main()): on SQLite
    // that is several processes on one WAL file, on PostgreSQL several sessions.
    void jobsConcurrentProcesses()
    {
        JobRepository jobs(*m_db);
        constexpr int kJobs = 200, kProcesses = 3;
        for (int i = 0; i < kJobs; ++i)
            QVERIFY(jobs.enqueue(u"deploy"_s, u"k"_s + QString::number(i), {}, i));
        std::vector<std::unique_ptr<QProcess>> claimers;
        for (int p = 0; p < kProcesses; ++p) {
            auto process = std::make_unique<QProcess>();
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(u"PANDO_STATE_CLAIMER_URL"_s, m_url);
            env.insert(u"PANDO_STATE_CLAIMER_OWNER"_s, u"process-"_s + QString::number(p));
            process->setProcessEnvironment(env);
            process->start(QCoreApplication::applicationFilePath(), {});
            claimers.push_back(std::move(process));
        }
        QList<qint64> claimed;
        for (auto &process : claimers) {
            QVERIFY(process->waitForFinished(60000));
            QVERIFY2(process->exitCode() == 0, process->readAllStandardError().constData());
            for (const QByteArray &line : process->readAllStandardOutput().split('\n')) {
                if (!line.trimmed().isEmpty())
                    claimed.append(line.trimmed().toLongLong());
            }
        }
        QCOMPARE(claimed.size(), kJobs);
        QCOMPARE(QSet<qint64>(claimed.begin(), claimed.end()).size(), kJobs);
        QVERIFY(!jobs.claimNext(u"late"_s, 2000).value());
    }

    void jobsSameKeyAcrossThreads()
    {
        // Many claimers, few keys: never two running jobs with one key.
        JobRepository jobs(*m_db);
        for (int i = 0; i < 40; ++i)
            QVERIFY(jobs.enqueue(u"deploy"_s, u"k"_s + QString::number(i % 4), {}, i));
        QMutex mutex;
        QSet<QString> running;
        QStringList errors;
        int done = 0;
        onThreads(4, [&](int t) {
            JobRepository mine(*m_db);
            for (int idle = 0; idle < 200;) {
                auto job = mine.claimNext(u"c"_s + QString::number(t), 1);
                if (!job) {
                    QMutexLocker lock(&mutex);
                    errors.append(job.error().text());
                    return;
                }
                if (!*job) {
                    {
                        QMutexLocker lock(&mutex);
                        if (done == 40)
                            return;
                    }
                    ++idle;
                    QThread::msleep(2);
                    continue;
                }
                {
                    QMutexLocker lock(&mutex);
                    if (running.contains((*job)->key))
                        errors.append(u"key "_s + (*job)->key + u" claimed twice at once"_s);
                    running.insert((*job)->key);
                }
                QThread::msleep(1);
                {
                    // Leave the running set before the row is finished, so a new claim of the key is legal.
                    QMutexLocker lock(&mutex);
                    running.remove((*job)->key);
                    ++done;
                }
                if (auto finished = mine.finish((*job)->id, true, {}, 2); !finished) {
                    QMutexLocker lock(&mutex);
                    errors.append(u"finishing "_s + (*job)->key + u": "_s + finished.error().message);
                }
            }
        });
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        QCOMPARE(done, 40);
    }

    void jobsRequeueAbandoned()
    {
        JobRepository jobs(*m_db);
        const qint64 a = jobs.enqueue(u"deploy"_s, u"a"_s, {}, 1).value();
        const qint64 b = jobs.enqueue(u"deploy"_s, u"b"_s, {}, 2).value();
        const qint64 c = jobs.enqueue(u"deploy"_s, u"c"_s, {}, 3).value();
        QCOMPARE(jobs.claimNext(u"old"_s, 10).value()->id, a);
        QCOMPARE(jobs.claimNext(u"old"_s, 10).value()->id, b);
        QCOMPARE(jobs.claimNext(u"new"_s, 10).value()->id, c);
        QVERIFY(jobs.finish(b, true, {}, 11));
        auto back = jobs.requeueAbandoned(u"new"_s, 20);
        QVERIFY(back);
        QCOMPARE(back->size(), 1);
        QCOMPARE(back->at(0).id, a);
        QCOMPARE(back->at(0).attempts, 1);
        QCOMPARE(back->at(0).state, u"queued"_s);
        const JobRecord stored = jobs.find(a).value();
        QCOMPARE(stored.state, u"queued"_s);
        QCOMPARE(stored.owner, QString(u""_s));
        QCOMPARE(stored.attempts, 1);
        QCOMPARE(stored.updatedMs, 20);
        QCOMPARE(jobs.find(c)->state, u"running"_s); // the current owner's job stays
        QCOMPARE(jobs.find(b)->state, u"done"_s);
        QCOMPARE(jobs.claimNext(u"new"_s, 30).value()->id, a);
        QCOMPARE(jobs.requeueAbandoned(u"newer"_s, 40)->size(), 2);
        QCOMPARE(jobs.find(a)->attempts, 2);
        QCOMPARE(jobs.requeueAbandoned(u"newer"_s, 50)->size(), 0);
    }

    void auditChain()
    {
        AuditRepository audit(*m_db);
        QVERIFY(!audit.verify().value()); // empty log holds
        QString prev = u""_s;
        for (int i = 1; i <= 120; ++i) {
            auto line = audit.append(auditLine(i));
            QVERIFY2(line, qPrintable(line ? QString() : line.error().text()));
            QCOMPARE(line->seq, i);
            QCOMPARE(line->prevHash, prev);
            QCOMPARE(line->hash.size(), 64);
            QCOMPARE(line->hash, AuditRepository::hashOf(*line));
            prev = line->hash;
        }
        QCOMPARE(audit.verify().value(), std::nullopt);

        // The encoding is unambiguous: moving a character between fields changes the hash.
        AuditRecord x = auditLine(1), y = auditLine(1);
        x.actor = u"ab"_s;
        x.action = u"c"_s;
        y.actor = u"a"_s;
        y.action = u"bc"_s;
        QVERIFY(AuditRepository::hashOf(x) != AuditRepository::hashOf(y));

        QVERIFY(rawExec(u"UPDATE audit_log SET outcome = ? WHERE seq = ?"_s, {u"failure"_s, 57}));
        QCOMPARE(audit.verify().value(), std::optional<qint64>(57));
    }

    void auditTamperedLinkAndGap()
    {
        AuditRepository audit(*m_db);
        for (int i = 1; i <= 10; ++i)
            QVERIFY(audit.append(auditLine(i)));
        // Recomputing line 4's hash after an edit still breaks line 5's link.
        AuditRecord four = audit.list({.limit = 100}).value().at(6);
        QCOMPARE(four.seq, 4);
        four.detail = u"{\"forged\":true}"_s;
        four.hash = AuditRepository::hashOf(four);
        QVERIFY(rawExec(u"UPDATE audit_log SET detail = ?, hash = ? WHERE seq = 4"_s, {four.detail, four.hash}));
        QCOMPARE(audit.verify().value(), std::optional<qint64>(5));
        QVERIFY(rawExec(u"DELETE FROM audit_log WHERE seq >= 3 AND seq <= 4"_s, {}));
        QCOMPARE(audit.verify().value(), std::optional<qint64>(3));
    }

    void auditConcurrent()
    {
        constexpr int kThreads = 4, kEach = 40;
        QMutex mutex;
        QStringList errors;
        onThreads(kThreads, [&](int t) {
            AuditRepository audit(*m_db);
            for (int i = 0; i < kEach; ++i) {
                auto line = audit.append(auditLine(i, u"thread:"_s + QString::number(t)));
                if (!line) {
                    QMutexLocker lock(&mutex);
                    errors.append(line.error().text());
                }
            }
        });
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(u'\n')));
        AuditRepository audit(*m_db);
        auto all = audit.list({.limit = 1000}).value();
        QCOMPARE(all.size(), kThreads * kEach);
        for (int i = 0; i < all.size(); ++i)
            QCOMPARE(all.at(i).seq, kThreads * kEach - i); // newest first, no gaps
        QCOMPARE(audit.verify().value(), std::nullopt);
    }

    void auditList()
    {
        AuditRepository audit(*m_db);
        for (int i = 1; i <= 30; ++i)
            QVERIFY(audit.append(auditLine(i, i <= 10 ? u"token:admin"_s : u"system:reconciler"_s)));
        QCOMPARE(audit.list({.limit = 5})->size(), 5);
        QCOMPARE(audit.list({.limit = 5})->first().seq, 30);
        QCOMPARE(audit.list({.actor = u"token:admin"_s})->size(), 10);
        QCOMPARE(audit.list({.action = u"deploy.start"_s})->size(), 15);
        const auto objects = audit.list({.object = u"app/a1"_s}).value();
        QCOMPARE(objects.size(), 10);
        for (const auto &line : objects)
            QCOMPARE(line.object, u"app/a1"_s);
        // sinceMs inclusive, untilMs exclusive.
        const qint64 base = 1'700'000'000'000;
        const auto window = audit.list({.sinceMs = base + 5, .untilMs = base + 8}).value();
        QCOMPARE(window.size(), 3);
        QCOMPARE(window.first().seq, 7);
        QCOMPARE(window.last().seq, 5);
        QCOMPARE(audit.list({.actor = u"token:admin"_s, .action = u"app.create"_s, .limit = 2})->size(), 2);
        QCOMPARE(audit.list({.limit = 0}).error().code, ErrorCode::Invalid);
    }

    void tokens()
    {
        TokenRepository tokens(*m_db);
        QCOMPARE(tokens.count().value(), 0);
        QVERIFY(tokens.create({u"t01"_s, u"laptop"_s, u"aa11"_s, u"admin"_s, 100, 0}));
        QVERIFY(tokens.create({u"t02"_s, u"old"_s, u"bb22"_s, u"admin"_s, 100, 500}));
        QCOMPARE(tokens.create({u"t03"_s, u"dup"_s, u"aa11"_s, u"admin"_s, 100, 0}).error().code, ErrorCode::Conflict);
        QCOMPARE(tokens.create({u"t01"_s, u"dup"_s, u"cc33"_s, u"admin"_s, 100, 0}).error().code, ErrorCode::Conflict);
        auto found = tokens.findByDigest(u"aa11"_s);
        QVERIFY(found);
        QCOMPARE(found->id, u"t01"_s);
        QCOMPARE(found->name, u"laptop"_s);
        QCOMPARE(found->role, u"admin"_s);
        QCOMPARE(tokens.findByDigest(u"bb22"_s).error().code, ErrorCode::NotFound); // revoked
        QCOMPARE(tokens.findByDigest(u"zz"_s).error().code, ErrorCode::NotFound);
        QCOMPARE(tokens.count().value(), 1);
    }

    void connectionsPerThread()
    {
        const qsizetype before = QSqlDatabase::connectionNames().size();
        qsizetype during = 0;
        onThreads(1, [&](int) {
            AppRepository apps(*m_db);
            discardResult(apps.list(), "only opens this thread's connection");
            during = QSqlDatabase::connectionNames().size();
        });
        QCOMPARE(during, before + 1);
        QCOMPARE(QSqlDatabase::connectionNames().size(), before); // removed when the thread ended
        {
            Database other(DatabaseConfig::fromUrl(m_url).value());
            QVERIFY(other.connection());
            QCOMPARE(QSqlDatabase::connectionNames().size(), before + 1);
        }
        QCOMPARE(QSqlDatabase::connectionNames().size(), before); // and when the Database went
    }

    // A session the server dropped fails once as Unavailable; the thread's next call reconnects.
    void reconnectsAfterLostSession()
    {
        if (m_driver != u"postgres"_s)
            QSKIP("PostgreSQL only: an SQLite file has no session to lose");
        AppRepository apps(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        const QString database = m_url.section(u'/', -1);
        QVERIFY2(m_pg.execute(u"postgres"_s, u"SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                             " WHERE datname = '"_s +
                                                 database + u"' AND pid <> pg_backend_pid()"_s),
                 qPrintable(m_pg.error()));
        auto lost = apps.find(u"hello"_s);
        QVERIFY(!lost);
        QVERIFY2(lost.error().code == ErrorCode::Unavailable, qPrintable(lost.error().text()));
        auto again = apps.find(u"hello"_s);
        QVERIFY2(again, qPrintable(again ? QString() : again.error().text()));
        QCOMPARE(again->name, u"hello"_s);
    }

    void unavailable()
    {
        // Nothing listens on port 1; a path under /proc cannot be created.
        const QString url =
            m_driver == u"postgres"_s ? u"postgres://pando@127.0.0.1:1/none"_s : u"sqlite:///proc/pando/x.db"_s;
        Database db(DatabaseConfig::fromUrl(url).value());
        auto opened = db.open();
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, ErrorCode::Unavailable);
        AppRepository apps(db);
        QCOMPARE(apps.find(u"x"_s).error().code, ErrorCode::Unavailable);
    }
};

// Claimer mode for jobsConcurrentProcesses: claims and finishes jobs until none is left and
// prints each id it claimed on a line of its own.
static int runClaimer()
{
    auto config = DatabaseConfig::fromUrl(qEnvironmentVariable("PANDO_STATE_CLAIMER_URL"));
    if (!config) {
        qCritical("%s", qPrintable(config.error().text()));
        return 2;
    }
    Database db(*config);
    JobRepository jobs(db);
    const QString owner = qEnvironmentVariable("PANDO_STATE_CLAIMER_OWNER");
    QTextStream out(stdout);
    for (;;) {
        auto job = jobs.claimNext(owner, 1000);
        if (!job) {
            qCritical("claim: %s", qPrintable(job.error().text()));
            return 1;
        }
        if (!*job)
            return 0;
        if (auto ok = jobs.finish((*job)->id, true, {}, 1001); !ok) {
            qCritical("finish: %s", qPrintable(ok.error().text()));
            return 1;
        }
        out << (*job)->id << '\n';
        out.flush();
    }
}

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    if (qEnvironmentVariableIsSet("PANDO_STATE_CLAIMER_URL"))
        return runClaimer();
    TestState test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_state.moc"
