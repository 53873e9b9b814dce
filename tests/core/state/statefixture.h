#pragma once
// The state tests' fixture: each test function of a class derived from StateFixture runs once
// per global row ("sqlite", "postgres") on a fresh database; set PANDO_STATE_DRIVERS=sqlite (or
// postgres) to run one of them. QtTest runs the fixture's own slots (the rows, init, cleanup)
// for every derived class.

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

namespace pando::test {

using namespace Qt::StringLiterals;
using namespace pando::core;

// Runs fn on `count` threads at once and waits for all of them.
template<class F> inline void onThreads(int count, F fn)
{
    std::vector<std::unique_ptr<QThread>> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back(QThread::create([fn, i] { fn(i); }));
    for (auto &t : threads)
        t->start();
    for (auto &t : threads)
        t->wait();
}

inline AppRecord app(const QString &name, qint64 ms = 1000)
{
    AppRecord a;
    a.name = name;
    a.specYaml = u"name: "_s + name + u"\n"_s;
    a.createdMs = ms;
    a.updatedMs = ms;
    return a;
}

inline DeployRecord deploy(const QString &id, const QString &appName, qint64 createdMs,
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

inline AuditRecord auditLine(int i, const QString &actor = u"token:admin"_s)
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

class StateFixture : public QObject {
    Q_OBJECT

protected:
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
};

} // namespace pando::test
