// ensureRoute, the part every router's ensure() shares: a port picked as free that another
// process takes before the router listens on it is picked again when any port would do, and
// not when the spec asked for that port.
#include "adapters/api/routetable.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

class TestRouteTable : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void takenPortIsPickedAgain()
    {
        QList<int> picks{40001, 40002, 40003};
        QList<int> tried;
        const auto pick = [&picks](int requested) -> Result<int> {
            return requested ? requested : picks.takeFirst();
        };
        // The first port is taken by the time the router listens.
        const auto apply = [&tried](const QHash<QString, Route> &next) -> Status {
            tried << next.value(u"shop"_s).port;
            if (tried.size() == 1)
                return fail(ErrorCode::Conflict, u"the edge cannot listen: address already in use"_s, u"port"_s);
            return {};
        };
        auto route = ensureRoute({}, u"shop"_s, 0, pick, apply);
        QVERIFY2(route, qPrintable(route ? QString() : route.error().text()));
        QCOMPARE(route->port, 40002);
        QCOMPARE(tried, (QList<int>{40001, 40002}));

        // A port the spec asked for is not swapped for another.
        tried.clear();
        auto asked = ensureRoute({}, u"shop"_s, 40100, pick, apply);
        QVERIFY(!asked);
        QCOMPARE(asked.error().code, ErrorCode::Conflict);
        QCOMPARE(tried, QList<int>{40100});

        // Another failure is not a reason to try another port; nor are endless collisions.
        tried.clear();
        picks = {40004, 40005, 40006, 40007, 40008, 40009};
        auto refused = ensureRoute({}, u"shop"_s, 0, pick, [&tried](const QHash<QString, Route> &next) -> Status {
            tried << next.value(u"shop"_s).port;
            return fail(ErrorCode::Failed, u"the edge refused the change"_s, u"edge"_s);
        });
        QVERIFY(!refused);
        QCOMPARE(tried.size(), 1);
        tried.clear();
        auto crowded = ensureRoute({}, u"shop"_s, 0, pick, [&tried](const QHash<QString, Route> &next) -> Status {
            tried << next.value(u"shop"_s).port;
            return fail(ErrorCode::Conflict, u"address already in use"_s, u"port"_s);
        });
        QVERIFY(!crowded);
        QCOMPARE(tried.size(), 5);
    }
};

QTEST_GUILESS_MAIN(TestRouteTable)
#include "tst_routetable.moc"
