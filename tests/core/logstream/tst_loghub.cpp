// LogHub with a fake runtime: one upstream per app however many watch it, lines fan out to
// every subscriber, the last one leaving cancels the upstream.
#include "core/logstream/loghub.h"

#include <QTest>
#include <condition_variable>
#include <mutex>

using namespace pando;
using namespace pando::adapters;
using pando::core::LogHub;
using pando::core::LogSubscription;

namespace {

// A Runtime whose logs() follow waits for lines pushed by the test until it is cancelled.
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
        m_containers.append(id);
        m_lastTail = tail;
        m_lastFollow = follow;
        ++m_active;
        while (!cancel.isCancelled() && !m_endStreams) {
            while (!m_queue.isEmpty()) {
                LogLine line;
                line.text = m_queue.takeFirst();
                lock.unlock();
                sink(line);
                lock.lock();
            }
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
        m_queue.append(text);
        m_cv.notify_all();
    }
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
    QStringList m_queue;
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
        QCOMPARE(fake->calls(), 1);
        QCOMPARE(fake->containersFollowed(), QStringList{QStringLiteral("container-of-web")});
        QCOMPARE(fake->lastTail(), 0);
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
        QTRY_COMPARE(fake->calls(), 2);
        QCOMPARE(fake->containersFollowed(), QStringList({QStringLiteral("web1"), QStringLiteral("web2")}));
        QTRY_COMPARE(c.ended.size(), 1);
        fake->push(QStringLiteral("after"));
        QTRY_COMPARE(c.lines, QStringList{QStringLiteral("after")});
        QCOMPARE(hub.upstreamCount(), 1);
        hub.restart(QStringLiteral("nobody-watches"));
        QCOMPARE(hub.upstreamCount(), 1);
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
        // A slot on the upstream's own thread drops the last subscription: no self-join.
        auto fake = std::make_shared<FakeRuntime>();
        LogHub hub(fake, [](const QString &app) { return app; });
        auto s = hub.subscribe(QStringLiteral("web"));
        std::atomic_bool dropped = false;
        std::mutex holder;
        connect(
            s.get(), &LogSubscription::line, s.get(),
            [&](const LogLine &) {
                std::lock_guard lock(holder);
                s.reset();
                dropped = true;
            },
            Qt::DirectConnection);
        QTRY_COMPARE(fake->active(), 1);
        fake->push(QStringLiteral("bye"));
        QTRY_VERIFY(dropped.load());
        QCOMPARE(hub.upstreamCount(), 0);
        QTRY_COMPARE(fake->active(), 0);
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
