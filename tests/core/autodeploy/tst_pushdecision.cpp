// What a verified delivery means for one app (core/autodeploy/pushdecision.h): a push names the
// app's repository in any of the forms a forge writes it, to what the app follows, while
// auto-deploy is on push: deploy the pushed commit (a tag by its name); anything else says why.
#include "core/autodeploy/pushdecision.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;
using namespace pando::core::autodeploy;
using Action = PushDecision::Action;

namespace {

const QString Commit = u"8f14e45fceea167a5a36dedd4bea2543b1c9e2a7"_s;

AppSpec app(const QString &autodeploy = u"push"_s, const QString &repo = u"git@github.com:Acme/Shop.git"_s)
{
    auto parsed = parseAppSpec(
        u"name: shop\nsource:\n  repo: %1\n  ref: main\n  autodeploy: %2\nrun:\n  port: 80\n"_s.arg(repo, autodeploy)
            .toUtf8());
    return parsed ? *parsed : AppSpec{};
}

HookEvent push(const QString &ref = u"refs/heads/main"_s, const QString &commit = Commit)
{
    HookEvent event;
    event.kind = HookEvent::Kind::Push;
    event.eventName = u"push"_s;
    event.ref = ref;
    event.commit = commit;
    event.deleted = commit.isEmpty();
    event.repoUrls = {u"https://github.com/acme/shop.git"_s, u"git@github.com:acme/shop.git"_s,
                      u"https://github.com/acme/shop"_s};
    return event;
}

} // namespace

class TestPushDecision : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void oneRepositoryInEveryForm_data()
    {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("same");
        QTest::newRow("https and scp-like")
            << u"https://github.com/acme/shop.git"_s << u"git@github.com:acme/shop"_s << true;
        QTest::newRow("case") << u"https://GitHub.com/Acme/Shop"_s << u"https://github.com/acme/shop.git"_s << true;
        QTest::newRow("ssh with a port") << u"ssh://git@git.example.com:2222/acme/shop.git"_s
                                         << u"https://git.example.com/acme/shop"_s << true;
        QTest::newRow("azure forms") << u"https://dev.azure.com/acme/web/_git/shop"_s
                                     << u"git@ssh.dev.azure.com:v3/acme/web/shop"_s << true;
        QTest::newRow("another repository")
            << u"https://github.com/acme/shop.git"_s << u"https://github.com/acme/shop-old.git"_s << false;
        QTest::newRow("another host") << u"https://github.com/acme/shop.git"_s << u"https://gitlab.com/acme/shop.git"_s
                                      << false;
        QTest::newRow("local paths") << u"file:///srv/git/shop.git"_s << u"file:///srv/git/shop.git"_s << true;
        QTest::newRow("nothing") << QString() << QString() << false;
    }

    void oneRepositoryInEveryForm()
    {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(bool, same);
        QCOMPARE(sameRepository(a, b), same);
    }

    void aPushToWhatIsFollowedDeploysThePushedCommit()
    {
        const PushDecision decision = decidePush(app(), push());
        QCOMPARE(decision.action, Action::Deploy);
        QCOMPARE(decision.ref, Commit);
    }

    void everythingElseSaysWhy()
    {
        const PushDecision other = decidePush(app(), push(u"refs/heads/dev"_s));
        QCOMPARE(other.action, Action::Ignore);
        QCOMPARE(other.reason, u"push to refs/heads/dev; shop follows branch main"_s);
        const PushDecision deleted = decidePush(app(), push(u"refs/heads/main"_s, QString()));
        QCOMPARE(deleted.action, Action::Ignore);
        QCOMPARE(deleted.reason, u"the push deleted refs/heads/main"_s);
        const PushDecision off = decidePush(app(u"off"_s), push());
        QCOMPARE(off.action, Action::Ignore);
        QCOMPARE(off.reason, u"auto-deploy on push is off for shop (source.autodeploy: off)"_s);
        const PushDecision polled = decidePush(app(u"poll"_s), push());
        QCOMPARE(polled.action, Action::Ignore);
        HookEvent ping;
        ping.kind = HookEvent::Kind::Ping;
        QCOMPARE(decidePush(app(), ping).action, Action::Ignore);
        HookEvent issue;
        issue.kind = HookEvent::Kind::Other;
        issue.eventName = u"issues"_s;
        QCOMPARE(decidePush(app(), issue).reason, u"issues events are not acted on; Pando deploys on push"_s);
        const PushDecision elsewhere = decidePush(app(u"push"_s, u"https://github.com/acme/other.git"_s), push());
        QCOMPARE(elsewhere.action, Action::Refuse);
        QVERIFY2(elsewhere.reason.contains(u"https://github.com/acme/other.git"_s), qPrintable(elsewhere.reason));
    }

    void aTagDeploysByItsName()
    {
        auto parsed = parseAppSpec("name: shop\nsource:\n  repo: https://github.com/acme/shop\n  ref: main\n"
                                   "  autodeploy:\n    on: push\n    tags: \"v*\"\nrun:\n  port: 80\n");
        QVERIFY(parsed);
        const PushDecision tag = decidePush(*parsed, push(u"refs/tags/v2.0"_s));
        QCOMPARE(tag.action, Action::Deploy);
        QCOMPARE(tag.ref, u"v2.0"_s);
        QCOMPARE(decidePush(*parsed, push()).action, Action::Ignore);
    }
};

QTEST_GUILESS_MAIN(TestPushDecision)
#include "tst_pushdecision.moc"
