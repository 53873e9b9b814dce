// LogHub with a fake runtime: one upstream per app however many watch it, lines fan out to
// every subscriber, the last one leaving cancels the upstream; a subscriber's backlog and the
// live lines after it form one stream with nothing lost or repeated.
#include "core/logstream/loghub.h"

#include <QTest>
#include <condition_variable>
#include <mutex>

using namespace pando;
using namespace pando::adapters;
using pando::core::LogHub;
using pando::core::LogSubscription;

namespace {

// A Runtime whose containers share one log "file": logs() sends its last `tail` lines and, when
// following, every line pushed after that until it is cancelled. A line's time is its position
// in the file divided by timeStep (lines sharing a millisecond, as a busy app's do).
class FakeRuntime : public Runtime {
public:
    RuntimeCapabilities capabilities() override { return {}; }
    Status ping() override { return {}; }
    Result<QString> build(const BuildRequest &, const CancelToken &,
                          const std::function<void(const QString &)> &) override
    {
        return fail(ErrorCode::Internal, QStringLiteral("not in this fake"));
    }
    Result<QString> run(const ContainerSpec &) override { return fail(ErrorCode::Internal, QStringLiteral("fake")); }
    Result<ContainerInfo> inspect(const QString &) override
    {
        return fail(ErrorCode::NotFound, QStringLiteral("fake"));
    }
    Result<QList<ContainerInfo>> containers(const Labels &) override { return QList<ContainerInfo>{}; }
    Status start(const QString &) override { return {}; }
    Status stop(const QString &, int) override { return {}; }
    Status remove(const QString &) override { return {}; }
    Result<QList<ImageInfo>> images(const Labels &) override { return QList<ImageInfo>{}; }
    Status removeImage(const QString &) override { return {}; }

    Status logs(const QString &id, int tail, bool follow, const CancelToken &cancel,
                const std::function<void(const LogLine &)> &sink) override
    {
        std::unique_lock lock(m_mutex);
        ++m_calls;
        if (follow)
            m_containers.append(id);
        m_lastTail = tail;
        m_lastFollow = follow;
        if (follow && m_beforeFollow) {
            const std::function<void()> hook = std::exchange(m_beforeFollow, {});
            lock.unlock();
            hook();
            lock.lock();
        }
        qsizetype next = std::max<qsizetype>(0, m_log.size() - std::max(tail, 0));
        auto sendFrom = [&] {
            while (next < m_log.size()) {
                const LogLine line = m_log.at(next++);
                lock.unlock();
                sink(line);
                lock.lock();
            }
        };
        sendFrom();
        if (!follow)
            return {};
        ++m_active;
        while (!cancel.isCancelled() && !m_endStreams) {
            sendFrom();
            m_cv.wait_for(lock, std::chrono::milliseconds(10));
        }
        if (cancel.isCancelled())
            ++m_cancelled;
        --m_active;
        return {};
    }

    void push(const QString &text)
    {
        std::lock_guard lock(m_mutex);
        m_log.append(LogLine{1'000 + m_log.size() / m_timeStep, false, text});
        m_cv.notify_all();
    }
    void setTimeStep(int linesPerMs) { m_timeStep = linesPerMs; }
    // Called once, at the start of the next follow, before it reads: what the app writes meanwhile.
    void setBeforeFollow(std::function<void()> hook) { m_beforeFollow = std::move(hook); }
    void endStreams()
    {
        std::lock_guard lock(m_mutex);
        m_endStreams = true;
    }
    int calls() const
    {
        std::lock_guard lock(m_mutex);
        return m_calls;
    }
    int cancelled() const
    {
        std::lock_guard lock(m_mutex);
        return m_cancelled;
    }
    int active() const
    {
        std::lock_guard lock(m_mutex);
        return m_active;
    }
    QStringList containersFollowed() const
    {
        std::lock_guard lock(m_mutex);
        return m_containers;
    }
    int lastTail() const
    {
        std::lock_guard lock(m_mutex);
        return m_lastTail;
    }
    bool lastFollow() const
    {
        std::lock_guard lock(m_mutex);
        return m_lastFollow;
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    QList<LogLine> m_log;
    int m_timeStep = 1;
    std::function<void()> m_beforeFollow;
    QStringList m_containers;
    int m_calls = 0;
    int m_cancelled = 0;
    int m_active = 0;
    int m_lastTail = -2;
    bool m_lastFollow = false;
    bool m_endStreams = false;
};

// Collects a subscription's signals in the test's thread (queued: they come from the upstream).
struct Collector : QObject {
    QStringList lines;
    QStringList ended;
    explicit Collector(LogSubscription *s)
    {
        connect(s, &LogSubscription::line, this, [this](const LogLine &l) { lines.append(l.text); });
        connect(s, &LogSubscription::ended, this, [this](const QString &r) { ended.append(r); });
    }
};

} // namespace

class TestLogHub : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void twoSubscribersShareOneUpstream()
    {
        auto fake = std::make_shared<FakeRuntime>();
        LogHub hub(fake, [](const QString &app) -> QString { return QStringLiteral("container-of-") + app; });
        auto a = hub.subscribe(QStringLiteral("web"));
        auto b = hub.subscribe(QStringLiteral("web"));
        Collector ca(a.get()), cb(b.get());
        QCOMPARE(hub.upstreamCount(), 1);
        QTRY_COMPARE(fake->active(), 1);
        QCOMPARE(fake->calls(), 2); // the history, then the follow
        QCOMPARE(fake->containersFollowed(), QStringList{QStringLiteral("container-of-web")});
        QCOMPARE(fake->lastTail(), LogHub::BacklogLimit);
        QVERIFY(fake->lastFollow());

        fake->push(QStringLiteral("one"));
        fake->push(QStringLiteral("two"));
        QTRY_COMPARE(ca.lines, QStringList({QStringLiteral("one"), QStringLiteral("two")}));
        QTRY_COMPARE(cb.lines, QStringList({QStringLiteral("one"), QStringLiteral("two")}));

        a.reset();
        QCOMPARE(hub.upstreamCount(), 1);
        QCOMPARE(fake->cancelled(), 0);
        fake->push(QStringLiteral("three"));
        QTRY_COMPARE(cb.lines.size(), 3);

        b.reset();
        // The release joins the upstream: by now the fake has seen the cancel.
        QCOMPARE(hub.upstreamCount(), 0);
        QCOMPARE(fake->cancelled(), 1);
        QCOMPARE(fake->active(), 0);
        QVERIFY(ca.ended.isEmpty());
    }

    void oneUpstreamPerApp()
    {
        auto fake = std::make_shared<FakeRuntime>();
        LogHub hub(fake, [](const QString &app) { return app; });
        auto a = hub.subscribe(QStringLiteral("a"));
        auto b = hub.subscribe(QStringLiteral("b"));
        auto b2 = b; // copies of one handle are one subscriber
        QCOMPARE(hub.upstreamCount(), 2);
        QTRY_COMPARE(fake->active(), 2);
        b.reset();
        QCOMPARE(hub.upstreamCount(), 2);
        b2.reset();
        QCOMPARE(hub.upstreamCount(), 1);
        QCOMPARE(fake->cancelled(), 1);
        a.reset();
        QCOMPARE(hub.upstreamCount(), 0);
        QCOMPARE(fake->cancelled(), 2);
    }

    void restartFollowsAgain()
    {
        auto fake = std::make_shared<FakeRuntime>();
        int generation = 0;
        LogHub hub(fake, [&generation](const QString &app) -> QString { return app + QString::number(++generation); });
        auto s = hub.subscribe(QStringLiteral("web"));
        Collector c(s.get());
        QTRY_COMPARE(fake->active(), 1);
        hub.restart(QStringLiteral("web"));
        QCOMPARE(fake->cancelled(), 1);
        QTRY_COMPARE(fake->calls(), 4);
        QCOMPARE(fake->containersFollowed(), QStringList({QStringLiteral("web1"), QStringLiteral("web2")}));
        QTRY_COMPARE(c.ended.size(), 1);
        fake->push(QStringLiteral("after"));
        QTRY_COMPARE(c.lines, QStringList{QStringLiteral("after")});
        QCOMPARE(hub.upstreamCount(), 1);
        hub.restart(QStringLiteral("nobody-watches"));
        QCOMPARE(hub.upstreamCount(), 1);
    }

    void backlogThenLive()
    {
        auto fake = std::make_shared<FakeRuntime>();
        for (const char *text : {"a", "b", "c"})
            fake->push(QString::fromLatin1(text));
        LogHub hub(fake, [](const QString &app) { return app; });
        auto first = hub.subscribe(QStringLiteral("web"), 2);
        Collector c1(first.get());
        QTRY_COMPARE(fake->active(), 1);
        QTRY_COMPARE(c1.lines, QStringList({QStringLiteral("b"), QStringLiteral("c")}));
        fake->push(QStringLiteral("d"));
        QTRY_COMPARE(c1.lines.size(), 3);

        // Joining a running upstream: the backlog comes from what it kept, then the live lines.
        auto second = hub.subscribe(QStringLiteral("web"), 10);
        auto third = hub.subscribe(QStringLiteral("web"));
        Collector c2(second.get()), c3(third.get());
        fake->push(QStringLiteral("e"));
        QTRY_COMPARE(c2.lines, QStringList({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"),
                                            QStringLiteral("d"), QStringLiteral("e")}));
        QTRY_COMPARE(c3.lines, QStringList{QStringLiteral("e")});
        QTRY_COMPARE(c1.lines,
                     QStringList({QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d"), QStringLiteral("e")}));
        QCOMPARE(hub.upstreamCount(), 1);
        QCOMPARE(fake->calls(), 2);
    }

    void nothingLostOrRepeatedBetweenHistoryAndFollow()
    {
        // Three lines per millisecond, so the history's last line shares its time with others,
        // and the app writes two lines between the history read and the follow.
        auto fake = std::make_shared<FakeRuntime>();
        fake->setTimeStep(3);
        QStringList expected;
        for (int i = 0; i < 7; ++i) {
            expected.append(QStringLiteral("line %1").arg(i));
            fake->push(expected.last());
        }
        fake->setBeforeFollow([&fake] {
            fake->push(QStringLiteral("between 1"));
            fake->push(QStringLiteral("between 2"));
        });
        LogHub hub(fake, [](const QString &app) { return app; });
        auto s = hub.subscribe(QStringLiteral("web"), 100);
        Collector c(s.get());
        QTRY_COMPARE(fake->active(), 1);
        fake->push(QStringLiteral("live"));
        expected << QStringLiteral("between 1") << QStringLiteral("between 2") << QStringLiteral("live");
        QTRY_COMPARE(c.lines, expected);
        QTest::qWait(50);
        QCOMPARE(c.lines, expected);
    }

    void noContainerEnds()
    {
        auto fake = std::make_shared<FakeRuntime>();
        LogHub hub(fake, [](const QString &) { return QString(); });
        auto s = hub.subscribe(QStringLiteral("idle"));
        Collector c(s.get());
        QTRY_COMPARE(c.ended.size(), 1);
        QVERIFY(c.ended.first().contains(QStringLiteral("idle")));
        QCOMPARE(fake->calls(), 0);
    }

    void streamEndTellsSubscribers()
    {
        auto fake = std::make_shared<FakeRuntime>();
        LogHub hub(fake, [](const QString &app) { return app; });
        auto s = hub.subscribe(QStringLiteral("web"));
        Collector c(s.get());
        QTRY_COMPARE(fake->active(), 1);
        fake->endStreams();
        QTRY_COMPARE(c.ended.size(), 1);
        QVERIFY(c.ended.first().contains(QStringLiteral("stopped")));
    }

    void releaseFromADirectSlot()
    {
        // A slot drops the last subscription while lines are being delivered: the upstream
        // stops, and the lines still queued are not delivered to the dropped subscription.
        auto fake = std::make_shared<FakeRuntime>();
        LogHub hub(fake, [](const QString &app) { return app; });
        auto s = hub.subscribe(QStringLiteral("web"));
        int calls = 0;
        connect(s.get(), &LogSubscription::line, s.get(), [&](const LogLine &) {
            ++calls;
            s.reset();
        });
        QTRY_COMPARE(fake->active(), 1);
        fake->push(QStringLiteral("bye"));
        fake->push(QStringLiteral("and more"));
        QTRY_COMPARE(calls, 1);
        QCOMPARE(hub.upstreamCount(), 0);
        QTRY_COMPARE(fake->active(), 0);
        QTest::qWait(50);
        QCOMPARE(calls, 1);
    }

    void hubDestroyedFirst()
    {
        auto fake = std::make_shared<FakeRuntime>();
        std::shared_ptr<LogSubscription> s;
        {
            LogHub hub(fake, [](const QString &app) { return app; });
            s = hub.subscribe(QStringLiteral("web"));
            QTRY_COMPARE(fake->active(), 1);
        }
        QCOMPARE(fake->cancelled(), 1);
        s.reset(); // must not touch the dead hub
    }
};

QTEST_GUILESS_MAIN(TestLogHub)
#include "tst_loghub.moc"
