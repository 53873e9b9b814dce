// The state package on both drivers: apps, deploys, migrations, tokens and connections
// (statefixture.h runs each test once per driver).

#include "tests/core/state/statefixture.h"

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::test;

class TestState : public StateFixture {
    Q_OBJECT

private Q_SLOTS:
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

    // What builds left: kept per image (told twice, kept once), listed newest build first and
    // within a build newest first (the order they can be removed in), summed for capacity, and
    // outliving the app's row until removed.
    void buildCacheIsListedNewestFirst()
    {
        AppRepository apps(*m_db);
        BuildCacheRepository cache(*m_db);
        QVERIFY(apps.create(app(u"stages"_s)));
        QVERIFY(cache.add({{u"sha256:a1"_s, u"stages"_s, u"d1"_s, 0, 100, 1000},
                           {u"sha256:a2"_s, u"stages"_s, u"d1"_s, 1, 50, 1000}}));
        QVERIFY(cache.add({{u"sha256:b1"_s, u"stages"_s, u"d2"_s, 0, 7, 2000},
                           {u"sha256:a2"_s, u"stages"_s, u"d2"_s, 1, 9, 2000}, // a cached step told again
                           {u"sha256:c1"_s, u"other"_s, u"d9"_s, 0, 1, 1500}}));
        QStringList order;
        const QList<BuildCacheRecord> listed = cache.list(u"stages"_s).value();
        for (const BuildCacheRecord &r : listed)
            order << r.imageId + u'/' + r.deployId;
        QCOMPARE(order, QStringList({u"sha256:b1/d2"_s, u"sha256:a2/d1"_s, u"sha256:a1/d1"_s}));
        QCOMPARE(cache.list().value().size(), 4);
        QCOMPARE(cache.totals()->images, 4);
        QCOMPARE(cache.totals()->bytes, 158);
        QVERIFY(apps.remove(u"stages"_s));
        QCOMPARE(cache.list(u"stages"_s).value().size(), 3);
        QVERIFY(cache.remove(u"sha256:a1"_s));
        QVERIFY(cache.remove(u"sha256:absent"_s));
        QCOMPARE(cache.totals()->images, 3);
        QVERIFY(cache.add({}));
    }

    // A finished deploy's output becomes one compressed row per step and reads back the same:
    // each step, after a line, within a limit, every step; build output shrinks to a fraction;
    // past the retention it goes, but for the deploy an app serves, and says when it went.
    void outputIsCompressedThenRemoved()
    {
        AppRepository apps(*m_db);
        DeployRepository deploys(*m_db);
        QVERIFY(apps.create(app(u"hello"_s)));
        QList<StepLogLine> written;
        for (const QString &id : {u"d1"_s, u"d2"_s, u"d3"_s}) {
            QVERIFY(deploys.create(deploy(id, u"hello"_s, 10)));
            DeployRecord ended = deploys.find(id).value();
            ended.status = id == u"d3"_s ? DeployStatus::Running : DeployStatus::Succeeded;
            ended.finishedMs = id == u"d3"_s ? 0 : 1000;
            QVERIFY(deploys.update(ended));
            // What a classic docker build prints, a layer after another.
            QList<StepLogLine> lines;
            for (int i = 1; i <= 3000; ++i) {
                const QString text =
                    i % 3 == 1 ? u"Step %1/3000 : RUN pip install --no-cache-dir -r requirements.txt"_s.arg(i)
                    : i % 3 == 2
                        ? u" ---> Running in 4f2a9c%1e0b7"_s.arg(i % 97, 2, 10, QLatin1Char('0'))
                        : u"Collecting package-%1==1.%2.0 (from -r requirements.txt (line %1))"_s.arg(i).arg(i % 7);
                lines.append({1 + i / 1000, i, 1'700'000'000'000 + i * 13, i % 50 == 0, text});
            }
            QVERIFY(deploys.appendStepLog(id, lines));
            if (id == u"d1"_s)
                written = lines;
        }
        QVERIFY(apps.setCurrentDeploy(u"hello"_s, u"d2"_s, 1000));
        const auto before = deploys.stepLog(u"d1"_s, -1, 0, 5000).value();
        const auto beforeSize = deploys.outputSize(u"d1"_s).value();

        // A running deploy's rows stay rows.
        const QStringList ended = deploys.outputToArchive(2000, 10).value();
        QCOMPARE(ended, QStringList({u"d1"_s, u"d2"_s}));
        for (const QString &id : ended)
            QVERIFY(deploys.archiveStepLogs(id));
        QCOMPARE(deploys.outputToArchive(2000, 10)->size(), 0);
        QCOMPARE(deploys.stepLog(u"d1"_s, -1, 0, 5000).value().size(), before.size());
        const auto after = deploys.stepLog(u"d1"_s, -1, 0, 5000).value();
        for (int i = 0; i < after.size(); ++i) {
            QCOMPARE(after.at(i).seq, before.at(i).seq);
            QCOMPARE(after.at(i).line, before.at(i).line);
            QCOMPARE(after.at(i).timeMs, before.at(i).timeMs);
            QCOMPARE(after.at(i).stderrStream, before.at(i).stderrStream);
            QCOMPARE(after.at(i).text, before.at(i).text);
        }
        const auto step2 = deploys.stepLog(u"d1"_s, 2, 1500, 10).value();
        QCOMPARE(step2.size(), 10);
        QCOMPARE(step2.first().line, 1501);
        QCOMPARE(step2.first().text, written.at(1500).text);
        const auto size = deploys.outputSize(u"d1"_s).value();
        QCOMPARE(size.lines, 3000);
        QCOMPARE(size.rawBytes, beforeSize.rawBytes);
        qInfo("3000 lines of build output: %lld bytes of text kept in %lld bytes (%.1f%%)",
              static_cast<long long>(size.rawBytes), static_cast<long long>(size.storedBytes),
              100.0 * double(size.storedBytes) / double(size.rawBytes));
        QVERIFY2(size.storedBytes * 5 < size.rawBytes, "compressed to less than a fifth");
        QCOMPARE(deploys.stepLogRemovedMs(u"d1"_s).value(), 0);

        // Retention: d1 ended before the cut and serves nothing; d2 serves; d3 runs.
        QCOMPARE(deploys.pruneStepLogs(1500, 7000).value(), 1);
        QCOMPARE(deploys.stepLog(u"d1"_s, -1, 0, 5000)->size(), 0);
        QCOMPARE(deploys.stepLogRemovedMs(u"d1"_s).value(), 7000);
        QCOMPARE(deploys.stepLog(u"d2"_s, -1, 0, 5000)->size(), 3000);
        QCOMPARE(deploys.stepLog(u"d3"_s, -1, 0, 5000)->size(), 3000);
        QCOMPARE(deploys.pruneStepLogs(1500, 8000).value(), 0); // once
        QCOMPARE(deploys.stepLogRemovedMs(u"d1"_s).value(), 7000);
        // Once d2 no longer serves, it goes at the next sweep.
        QVERIFY(apps.setCurrentDeploy(u"hello"_s, QString(), 9000));
        QCOMPARE(deploys.pruneStepLogs(1500, 9000).value(), 1);
        QCOMPARE(deploys.stepLog(u"d2"_s, -1, 0, 5000)->size(), 0);
        // The app's removal takes its archives.
        QVERIFY(apps.remove(u"hello"_s));
        QCOMPARE(deploys.stepLogRemovedMs(u"d1"_s).value(), 0);
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

QTEST_GUILESS_MAIN(TestState)
#include "tst_state.moc"
