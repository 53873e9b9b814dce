// auditstream with a fake sink: batching, lag, a sink that is down losing nothing, the cursor
// surviving a restart, filters, OCSF, and the worker's growing retry delay.
#include "core/audit/auditlog.h"
#include "core/auditstream/auditstream.h"
#include "core/state/database.h"

#include <QMutex>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

class FakeSink final : public adapters::AuditSink {
public:
    explicit FakeSink(QString name, adapters::AuditSinkSettings settings = {})
        : m_name(std::move(name)), m_settings(std::move(settings))
    {}
    QString name() const override { return m_name; }
    const adapters::AuditSinkSettings &settings() const override { return m_settings; }
    Status deliver(const QList<adapters::AuditLine> &batch, const CancelToken &) override
    {
        if (!up.load())
            return fail(ErrorCode::Unavailable, u"connection refused"_s, u"fake:514"_s);
        QMutexLocker lock(&m_mutex);
        m_batches.append(batch);
        return {};
    }
    QList<QList<adapters::AuditLine>> batches() const
    {
        QMutexLocker lock(&m_mutex);
        return m_batches;
    }
    QList<qint64> seqs() const
    {
        QList<qint64> out;
        for (const auto &b : batches())
            for (const auto &l : b)
                out.append(l.seq);
        return out;
    }
    std::atomic_bool up{true};

private:
    QString m_name;
    adapters::AuditSinkSettings m_settings;
    mutable QMutex m_mutex;
    QList<QList<adapters::AuditLine>> m_batches;
};

QList<qint64> range(qint64 from, qint64 to)
{
    QList<qint64> out;
    for (qint64 i = from; i <= to; ++i)
        out.append(i);
    return out;
}

} // namespace

class TestAuditStream : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Database> m_db;
    ManualClock m_clock;
    int m_n = 0;

    void write(int count, const QString &action = u"app.update"_s, const QString &outcome = u"success"_s)
    {
        AuditLog log(*m_db, m_clock);
        for (int i = 0; i < count; ++i)
            QVERIFY(log.record(Actor{u"user:alice"_s, u"127.0.0.1"_s, {}}, action, u"app/a"_s + QString::number(++m_n),
                               outcome));
    }

private Q_SLOTS:
    void init()
    {
        QVERIFY(m_dir.isValid());
        m_db = std::make_unique<Database>(
            DatabaseConfig::fromUrl(u"sqlite://"_s + m_dir.filePath(u"t%1.db"_s.arg(++m_n * 1000))).value());
        QVERIFY(m_db->open());
    }
    void cleanup() { m_db.reset(); }

    void batchesAndLag()
    {
        adapters::AuditSinkSettings settings;
        settings.batchSize = 100;
        auto sink = std::make_shared<FakeSink>(u"siem"_s, settings);
        AuditStream stream(*m_db, m_clock);
        QVERIFY(stream.addSink(sink));
        write(250);
        QCOMPARE(stream.lag(u"siem"_s).value(), 250);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 100);
        QCOMPARE(stream.lag(u"siem"_s).value(), 150);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 100);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 50);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 0);
        QCOMPARE(sink->batches().size(), 3);
        QCOMPARE(sink->seqs(), range(1, 250));
        const auto status = stream.status(u"siem"_s).value();
        QCOMPARE(status.cursor, 250);
        QCOMPARE(status.newest, 250);
        QCOMPARE(status.lag, 0);
        QVERIFY(status.lastError.isEmpty());
    }

    void downSinkLosesNothing()
    {
        auto sink = std::make_shared<FakeSink>(u"siem"_s);
        AuditStream stream(*m_db, m_clock);
        QVERIFY(stream.addSink(sink));
        write(5);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 5);
        sink->up = false;
        write(7);
        auto failed = stream.pumpOnce(u"siem"_s);
        QVERIFY(!failed);
        QCOMPARE(failed.error().code, ErrorCode::Unavailable);
        auto status = stream.status(u"siem"_s).value();
        QCOMPARE(status.lag, 7);
        QCOMPARE(status.cursor, 5);
        QVERIFY2(status.lastError.contains(u"connection refused"_s), qPrintable(status.lastError));
        QCOMPARE(status.failures, 1);
        sink->up = true;
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 7);
        status = stream.status(u"siem"_s).value();
        QCOMPARE(status.lag, 0);
        QVERIFY(status.lastError.isEmpty());
        QCOMPARE(status.failures, 0);
        QCOMPARE(sink->seqs(), range(1, 12));
    }

    void cursorSurvivesRestart()
    {
        const QString path = m_db->config().sqlitePath;
        {
            auto sink = std::make_shared<FakeSink>(u"siem"_s);
            AuditStream stream(*m_db, m_clock);
            QVERIFY(stream.addSink(sink));
            write(10);
            QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 10);
        }
        write(5);
        // A new process: a new Database on the same file, a new stream, a new sink object.
        m_db.reset();
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(u"sqlite://"_s + path).value());
        QVERIFY(m_db->open());
        auto sink = std::make_shared<FakeSink>(u"siem"_s);
        auto other = std::make_shared<FakeSink>(u"other"_s);
        AuditStream stream(*m_db, m_clock);
        QVERIFY(stream.addSink(sink));
        QVERIFY(stream.addSink(other));
        QCOMPARE(stream.lag(u"siem"_s).value(), 5);
        QCOMPARE(stream.lag(u"other"_s).value(), 15);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 5);
        QCOMPARE(sink->seqs(), range(11, 15));
        QCOMPARE(stream.pumpOnce(u"other"_s).value(), 15);
        QCOMPARE(other->seqs(), range(1, 15));
    }

    void filtersMoveTheCursorPastRefusedLines()
    {
        adapters::AuditSinkSettings settings;
        settings.actionPrefixes = {u"app."_s};
        settings.outcomes = {u"denied"_s};
        auto sink = std::make_shared<FakeSink>(u"siem"_s, settings);
        AuditStream stream(*m_db, m_clock);
        QVERIFY(stream.addSink(sink));
        write(3, u"app.delete"_s, u"denied"_s);   // 1..3 sent
        write(3, u"app.delete"_s, u"success"_s);  // 4..6 refused by outcome
        write(3, u"deploy.start"_s, u"denied"_s); // 7..9 refused by action
        write(1, u"app.create"_s, u"denied"_s);   // 10 sent
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 10);
        QCOMPARE(sink->seqs(), (QList<qint64>{1, 2, 3, 10}));
        QCOMPARE(stream.lag(u"siem"_s).value(), 0);
        // Nothing admitted: the cursor still moves and deliver() is not called.
        write(2, u"deploy.start"_s, u"success"_s);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 2);
        QCOMPARE(sink->batches().size(), 1);
        QCOMPARE(stream.lag(u"siem"_s).value(), 0);
    }

    void ocsfFormat()
    {
        adapters::AuditSinkSettings settings;
        settings.format = adapters::AuditSinkSettings::Format::Ocsf;
        auto sink = std::make_shared<FakeSink>(u"siem"_s, settings);
        auto plain = std::make_shared<FakeSink>(u"plain"_s);
        AuditStream stream(*m_db, m_clock);
        QVERIFY(stream.addSink(sink));
        QVERIFY(stream.addSink(plain));
        write(1);
        QCOMPARE(stream.pumpOnce(u"siem"_s).value(), 1);
        QCOMPARE(stream.pumpOnce(u"plain"_s).value(), 1);
        QCOMPARE(sink->batches().at(0).at(0).ocsf.value(u"class_uid"_s).toInt(), 6003);
        QVERIFY(plain->batches().at(0).at(0).ocsf.isEmpty());
    }

    void duplicateNames()
    {
        AuditStream stream(*m_db, m_clock);
        QVERIFY(stream.addSink(std::make_shared<FakeSink>(u"siem"_s)));
        auto again = stream.addSink(std::make_shared<FakeSink>(u"siem"_s));
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::Conflict);
        QCOMPARE(stream.pumpOnce(u"nope"_s).error().code, ErrorCode::NotFound);
    }

    void workerDeliversBacklogAfterOutage()
    {
        adapters::AuditSinkSettings settings;
        settings.batchSize = 7;
        auto sink = std::make_shared<FakeSink>(u"siem"_s, settings);
        AuditStreamOptions options;
        options.pollMs = 20;
        options.retryDelayMs = 5;
        options.maxRetryDelayMs = 20;
        AuditStream stream(*m_db, SystemClock::instance(), options);
        QVERIFY(stream.addSink(sink));
        stream.start();
        write(20);
        stream.notify();
        QTRY_COMPARE(stream.lag(u"siem"_s).value(), 0);
        sink->up = false;
        write(30);
        stream.notify();
        QTRY_VERIFY(stream.status(u"siem"_s).value().failures >= 2);
        QCOMPARE(stream.lag(u"siem"_s).value(), 30);
        sink->up = true;
        QTRY_COMPARE(stream.lag(u"siem"_s).value(), 0);
        stream.stop();
        QCOMPARE(sink->seqs(), range(1, 50));
    }

    void retryDelayGrows()
    {
        auto sink = std::make_shared<FakeSink>(u"siem"_s);
        sink->up = false;
        ManualSleeper sleeper;
        AuditStreamOptions options;
        options.retryDelayMs = 10;
        options.maxRetryDelayMs = 80;
        options.sleeper = &sleeper;
        AuditStream stream(*m_db, m_clock, options);
        QVERIFY(stream.addSink(sink));
        write(1);
        stream.start();
        QTRY_VERIFY(sleeper.sleeps().size() >= 6);
        stream.stop();
        QCOMPARE(sleeper.sleeps().mid(0, 6), (QList<qint64>{10, 20, 40, 80, 80, 80}));
        QCOMPARE(stream.lag(u"siem"_s).value(), 1);
    }
};

QTEST_GUILESS_MAIN(TestAuditStream)
#include "tst_auditstream.moc"
