// The state package on both drivers: the job queue (claimers on threads and in other
// processes) and the audit chain (statefixture.h runs each test once per driver).

#include "tests/core/state/statefixture.h"

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::test;

class TestStateJobs : public StateFixture {
    Q_OBJECT

private Q_SLOTS:
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
    TestStateJobs test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_statejobs.moc"
