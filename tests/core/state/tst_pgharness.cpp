// The PostgreSQL test harness itself: later suites build on it, so it is tested on its own.

#include "core/state/database.h"
#include "tests/support/component.h"
#include "tests/support/pgharness.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>

#include <signal.h>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

class TestPgHarness : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void findsBinaries()
    {
        const QString dir = test::PostgresHarness::findBinDir();
        PANDO_REQUIRE_COMPONENT(!dir.isEmpty(), u"PostgreSQL server binaries (initdb, postgres)"_s);
        QVERIFY(QFileInfo(dir + u"/initdb"_s).isExecutable());
        QVERIFY(QFileInfo(dir + u"/postgres"_s).isExecutable());
    }

    void startQueryStop()
    {
        QString dataDir;
        int port = 0;
        {
            test::PostgresHarness pg;
            QElapsedTimer timer;
            timer.start();
            PANDO_REQUIRE_COMPONENT(pg.start(), pg.error());
            qInfo("PostgreSQL harness started in %lld ms on port %d", timer.elapsed(), pg.port());
            QVERIFY(pg.isRunning());
            QVERIFY(pg.port() > 0);
            QCOMPARE(pg.url(), u"postgres://pando@127.0.0.1:"_s + QString::number(pg.port()) + u"/pando"_s);
            dataDir = pg.dataDir();
            port = pg.port();
            QVERIFY(QFileInfo::exists(dataDir + u"/PG_VERSION"_s));
            QVERIFY(pg.start()); // already running: nothing to do

            // The URL works through the state package, and fresh databases do not share tables.
            const QString first = pg.freshDatabase();
            const QString second = pg.freshDatabase();
            QVERIFY2(!first.isEmpty() && !second.isEmpty(), qPrintable(pg.error()));
            QVERIFY(first != second);
            {
                Database a(DatabaseConfig::fromUrl(first).value());
                Database b(DatabaseConfig::fromUrl(second).value());
                QVERIFY(a.open());
                auto conn = a.connection().value();
                QSqlQuery q(conn);
                QVERIFY2(q.exec(u"CREATE TABLE only_in_a (x INTEGER)"_s), qPrintable(q.lastError().text()));
                QVERIFY(conn.tables().contains(u"only_in_a"_s));
                QVERIFY(!b.connection().value().tables().contains(u"only_in_a"_s));
                QSqlQuery who(conn);
                QVERIFY(who.exec(u"SELECT current_user, current_setting('fsync')"_s));
                QVERIFY(who.next());
                QCOMPARE(who.value(0).toString(), u"pando"_s);
                QCOMPARE(who.value(1).toString(), u"off"_s);
            }
            QVERIFY(pg.execute(u"pando"_s, u"SELECT 1"_s));
            QVERIFY(!pg.execute(u"pando"_s, u"SELEKT"_s));
            QVERIFY2(pg.error().contains(u"SELEKT"_s), qPrintable(pg.error()));
        }
        // Stopped and cleaned up: the port is free and the files are gone.
        QVERIFY(!QFileInfo::exists(dataDir));
        Database gone(
            DatabaseConfig::fromUrl(u"postgres://pando@127.0.0.1:"_s + QString::number(port) + u"/pando"_s).value());
        QCOMPARE(gone.open().error().code, ErrorCode::Unavailable);
    }

    void stopsWithOpenClients()
    {
        // Fast shutdown: a client still connected must not keep the server (and the test) alive.
        test::PostgresHarness pg;
        PANDO_REQUIRE_COMPONENT(pg.start(), pg.error());
        Database db(DatabaseConfig::fromUrl(pg.url()).value());
        QVERIFY(db.open());
        QElapsedTimer timer;
        timer.start();
        pg.stop();
        QVERIFY(!pg.isRunning());
        QVERIFY2(timer.elapsed() < 10000, "stop() waited for the client to leave");
    }

    void twoHarnessesSideBySide()
    {
        test::PostgresHarness a, b;
        PANDO_REQUIRE_COMPONENT(a.start(), a.error());
        QVERIFY2(b.start(), qPrintable(b.error()));
        QVERIFY(a.port() != b.port());
        QVERIFY(a.dataDir() != b.dataDir());
        Database da(DatabaseConfig::fromUrl(a.url()).value());
        Database db(DatabaseConfig::fromUrl(b.url()).value());
        QVERIFY(da.open());
        QVERIFY(db.open());
    }

    void reportsMissingBinaries()
    {
        // A harness that cannot find the binaries says so at once instead of hanging.
        qputenv("PANDO_PG_BINDIR", "/nonexistent/bin");
        test::PostgresHarness pg;
        QElapsedTimer timer;
        timer.start();
        const bool started = pg.start();
        qunsetenv("PANDO_PG_BINDIR");
        QVERIFY(!started);
        QVERIFY(timer.elapsed() < 2000);
        QVERIFY2(pg.error().contains(u"/nonexistent/bin"_s), qPrintable(pg.error()));
        QVERIFY(!pg.isRunning());
        QVERIFY(pg.freshDatabase().isEmpty());
        QVERIFY2(pg.error().contains(u"not running"_s), qPrintable(pg.error()));
    }
};

QTEST_GUILESS_MAIN(TestPgHarness)
#include "tst_pgharness.moc"
