// Observe: callers at the same moment share one listing, an old listing is not served past its
// time, and a caller that knows the state changed never gets a listing from before the change.

#include "core/common/clock.h"
#include "core/observe/observer.h"

#include <QTest>
#include <atomic>

using namespace pando;
using namespace pando::core;

namespace {
// Counts listings; everything else is unused here.
class CountingRuntime : public adapters::Runtime {
public:
    std::atomic_int listings = 0;
    adapters::RuntimeCapabilities capabilities() override { return {}; }
    Status ping() override { return {}; }
    Result<QString> build(const adapters::BuildRequest &, const CancelToken &,
                          const std::function<void(const QString &)> &) override
    {
        return QString();
    }
    Result<QString> run(const adapters::ContainerSpec &) override { return QString(); }
    Result<adapters::ContainerInfo> inspect(const QString &) override { return adapters::ContainerInfo{}; }
    Result<QList<adapters::ContainerInfo>> containers(const adapters::Labels &) override
    {
        ++listings;
        adapters::ContainerInfo c;
        c.id = QString::number(listings.load());
        return QList<adapters::ContainerInfo>{c};
    }
    Status start(const QString &) override { return {}; }
    Status stop(const QString &, int) override { return {}; }
    Status remove(const QString &) override { return {}; }
    Result<QList<adapters::ImageInfo>> images(const adapters::Labels &) override
    {
        return QList<adapters::ImageInfo>{};
    }
    Status removeImage(const QString &) override { return {}; }
    Status logs(const QString &, int, bool, const CancelToken &,
                const std::function<void(const adapters::LogLine &)> &) override
    {
        return {};
    }
};
} // namespace

class TestObserver : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sharesWithinTtl()
    {
        CountingRuntime runtime;
        ManualClock clock;
        Observer observer(runtime, {}, clock, 1000);
        QCOMPARE(observer.containers()->first().id, QStringLiteral("1"));
        clock.advance(500);
        QCOMPARE(observer.containers()->first().id, QStringLiteral("1"));
        QCOMPARE(runtime.listings.load(), 1);
        clock.advance(600);
        QCOMPARE(observer.containers()->first().id, QStringLiteral("2"));
    }

    void neverServesAListingFromBeforeAKnownChange()
    {
        CountingRuntime runtime;
        ManualClock clock;
        Observer observer(runtime, {}, clock, 1000);
        const qint64 before = clock.nowMs();
        QVERIFY(observer.containers());
        clock.advance(10);
        const qint64 changed = clock.nowMs(); // e.g. an app switched to a new container
        QCOMPARE(observer.containers(before - 1)->first().id, QStringLiteral("1"));
        QCOMPARE(observer.containers(changed)->first().id, QStringLiteral("2"));
        // A listing begun in the same millisecond as the change is not trusted; a later one is.
        clock.advance(1);
        QCOMPARE(observer.containers(changed)->first().id, QStringLiteral("3"));
        QCOMPARE(observer.containers(changed)->first().id, QStringLiteral("3"));
    }

    void invalidateForgets()
    {
        CountingRuntime runtime;
        ManualClock clock;
        Observer observer(runtime, {}, clock, 1000);
        QVERIFY(observer.containers());
        observer.invalidate();
        QCOMPARE(observer.containers()->first().id, QStringLiteral("2"));
    }
};

QTEST_GUILESS_MAIN(TestObserver)
#include "tst_observer.moc"
