// The host policy: which deploys need sign-off (by app glob, environment label, and what changed
// between the serving spec and the new one), its JSON reader's errors, and specgate.
#include "core/policy/policy.h"
#include "core/policy/specgate.h"

#include <QTemporaryDir>
#include <QTest>

Q_DECLARE_METATYPE(pando::core::AppSpec)

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::core::policy;

namespace {

// An empty repo stands for the usual one, so rows can change only the limits.
AppSpec spec(const QString &repo = {}, qint64 memory = 256LL << 20, double cpus = 1, const QString &environment = {})
{
    AppSpec s;
    s.name = u"hello"_s;
    s.source.repo = repo.isEmpty() ? u"https://git.example/app.git"_s : repo;
    s.run.port = 8080;
    s.run.memoryBytes = memory;
    s.run.cpus = cpus;
    if (!environment.isEmpty())
        s.labels.insert(u"environment"_s, environment);
    return s;
}

AppSpec withEgress(AppSpec s, AppSpec::Egress egress)
{
    s.network.egress = egress;
    return s;
}

const QByteArray FullPolicy = R"({"apps": ["billing-*", "auth"], "environments": ["prod"],
  "changes": {"newSourceRepo": true, "egress": true, "memoryAbove": "1Gi", "cpusAbove": 2}})";

} // namespace

class TestPolicy : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void decide_data()
    {
        QTest::addColumn<QString>("app");
        QTest::addColumn<bool>("hasCurrent");
        QTest::addColumn<AppSpec>("current");
        QTest::addColumn<AppSpec>("next");
        QTest::addColumn<bool>("needsApproval");
        QTest::addColumn<QString>("reason"); // a fragment of the first reason

        const AppSpec base = spec();
        QTest::newRow("nothing matches") << u"hello"_s << true << base << base << false << QString();
        QTest::newRow("first deploy, nothing matches")
            << u"hello"_s << false << AppSpec() << base << false << QString();
        QTest::newRow("app glob") << u"billing-api"_s << true << base << base << true << u"matches billing-*"_s;
        QTest::newRow("app exact") << u"auth"_s << true << base << base << true << u"matches auth"_s;
        QTest::newRow("glob is whole-name") << u"my-billing-api"_s << true << base << base << false << QString();
        QTest::newRow("environment label")
            << u"hello"_s << true << base << spec({}, 256LL << 20, 1, u"prod"_s) << true << u"environment is prod"_s;
        QTest::newRow("dropping the label does not dodge")
            << u"hello"_s << true << spec({}, 256LL << 20, 1, u"prod"_s) << base << true << u"environment was prod"_s;
        QTest::newRow("other environment")
            << u"hello"_s << true << base << spec({}, 256LL << 20, 1, u"staging"_s) << false << QString();
        QTest::newRow("new source repo") << u"hello"_s << true << base << spec(u"https://evil.example/x.git"_s) << true
                                         << u"source repository changes"_s;
        AppSpec image = base;
        image.source.repo.clear();
        image.source.image = u"ghcr.io/acme/web:2"_s;
        AppSpec otherImage = image;
        otherImage.source.image = u"docker.io/evil/web:2"_s;
        QTest::newRow("repo to image") << u"hello"_s << true << base << image << true
                                       << u"source image changes from https://"_s;
        QTest::newRow("another image") << u"hello"_s << true << image << otherImage << true
                                       << u"source image changes from ghcr.io/acme/web:2 to docker.io/evil/web:2"_s;
        QTest::newRow("same image") << u"hello"_s << true << image << image << false << QString();
        QTest::newRow("image to repo") << u"hello"_s << true << image << base << true
                                       << u"source repository changes from ghcr.io/acme/web:2 to "_s;
        QTest::newRow("first deploy has no new repo")
            << u"hello"_s << false << AppSpec() << spec(u"https://x/y.git"_s) << false << QString();
        const AppSpec closed = withEgress(base, AppSpec::Egress::None);
        QTest::newRow("egress opened") << u"hello"_s << true << closed << base << true
                                       << u"egress changes from none to all"_s;
        QTest::newRow("egress closed") << u"hello"_s << true << base << closed << true
                                       << u"egress changes from all to none"_s;
        QTest::newRow("egress none, unchanged") << u"hello"_s << true << closed << closed << false << QString();
        QTest::newRow("first deploy has no egress change")
            << u"hello"_s << false << AppSpec() << base << false << QString();
        QTest::newRow("first deploy without egress")
            << u"hello"_s << false << AppSpec() << closed << false << QString();
        QTest::newRow("memory raised above")
            << u"hello"_s << true << base << spec({}, 2LL << 30) << true << u"memory limit 2Gi"_s;
        QTest::newRow("memory at threshold") << u"hello"_s << true << base << spec({}, 1LL << 30) << false << QString();
        QTest::newRow("memory unlimited")
            << u"hello"_s << true << base << spec({}, 0) << true << u"memory limit unlimited"_s;
        QTest::newRow("memory already high, unchanged")
            << u"hello"_s << true << spec({}, 4LL << 30) << spec({}, 4LL << 30) << false << QString();
        QTest::newRow("memory lowered but still high")
            << u"hello"_s << true << spec({}, 4LL << 30) << spec({}, 2LL << 30) << false << QString();
        QTest::newRow("first deploy above memory")
            << u"hello"_s << false << AppSpec() << spec({}, 2LL << 30) << true << u"memory limit"_s;
        QTest::newRow("cpus raised above")
            << u"hello"_s << true << base << spec({}, 256LL << 20, 4) << true << u"cpu limit 4"_s;
        QTest::newRow("cpus at threshold")
            << u"hello"_s << true << base << spec({}, 256LL << 20, 2) << false << QString();
        QTest::newRow("cpus unlimited") << u"hello"_s << true << base << spec({}, 256LL << 20, 0) << true
                                        << u"cpu limit unlimited"_s;
    }

    void decide()
    {
        QFETCH(QString, app);
        QFETCH(bool, hasCurrent);
        QFETCH(AppSpec, current);
        QFETCH(AppSpec, next);
        QFETCH(bool, needsApproval);
        QFETCH(QString, reason);
        auto policy = parsePolicy(FullPolicy);
        QVERIFY2(policy, qPrintable(policy ? QString() : policy.error().text()));
        const Decision d = policy->decide(hasCurrent ? &current : nullptr, next, app);
        QCOMPARE(d.needsApproval, needsApproval);
        QCOMPARE(d.reasons.isEmpty(), !needsApproval);
        if (!reason.isEmpty())
            QVERIFY2(d.reasons.first().contains(reason), qPrintable(d.reasons.join(u" | "_s)));
    }

    void reasonsAccumulate()
    {
        auto policy = parsePolicy(FullPolicy).value();
        const AppSpec current = spec();
        const AppSpec next = withEgress(spec(u"https://other/x.git"_s, 2LL << 30, 8, u"prod"_s), AppSpec::Egress::None);
        const Decision d = policy.decide(&current, next, u"billing-api"_s);
        QVERIFY(d.needsApproval);
        QCOMPARE(d.reasons.size(), 6); // app, environment, repo, egress, memory, cpus
        QCOMPARE(d.reasons.at(3), u"egress changes from all to none"_s);
    }

    void egressRuleIsOptIn()
    {
        // Without "egress": true, a change of egress alone asks for nothing.
        auto policy = parsePolicy(R"({"changes": {"newSourceRepo": true, "egress": false}})");
        QVERIFY2(policy, qPrintable(policy ? QString() : policy.error().text()));
        QVERIFY(!policy->egress);
        const AppSpec closed = withEgress(spec(), AppSpec::Egress::None);
        QVERIFY(!policy->decide(&closed, spec(), u"hello"_s).needsApproval);

        auto only = parsePolicy(R"({"changes": {"egress": true}})");
        QVERIFY2(only, qPrintable(only ? QString() : only.error().text()));
        QVERIFY(only->egress);
        QVERIFY(!only->isEmpty()); // a policy with only this rule is still a policy
        const Decision d = only->decide(&closed, spec(), u"hello"_s);
        QVERIFY(d.needsApproval);
        QCOMPARE(d.reasons, QStringList{u"egress changes from none to all"_s});
    }

    void emptyPolicyNeverAsks()
    {
        auto policy = parsePolicy("{}");
        QVERIFY(policy);
        QVERIFY(policy->isEmpty());
        const AppSpec next = spec(u"https://other/x.git"_s, 0, 0, u"prod"_s);
        QVERIFY(!policy->decide(nullptr, next, u"anything"_s).needsApproval);
    }

    void parseErrors_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("where");

        QTest::newRow("not json") << QByteArray("{") << u"offset"_s;
        QTest::newRow("not an object") << QByteArray("[]") << u"(top level)"_s;
        QTest::newRow("unknown key") << QByteArray(R"({"app": []})") << u"app"_s;
        QTest::newRow("apps not a list") << QByteArray(R"({"apps": "x"})") << u"apps"_s;
        QTest::newRow("apps entry empty") << QByteArray(R"({"apps": ["a", ""]})") << u"apps[1]"_s;
        QTest::newRow("environments entry") << QByteArray(R"({"environments": [3]})") << u"environments[0]"_s;
        QTest::newRow("changes not object") << QByteArray(R"({"changes": 1})") << u"changes"_s;
        QTest::newRow("changes unknown key") << QByteArray(R"({"changes": {"ingress": true}})") << u"changes.ingress"_s;
        QTest::newRow("changes egress near miss")
            << QByteArray(R"({"changes": {"egres": true}})") << u"changes.egres"_s;
        QTest::newRow("egress not bool") << QByteArray(R"({"changes": {"egress": "none"}})") << u"changes.egress"_s;
        QTest::newRow("newSourceRepo not bool")
            << QByteArray(R"({"changes": {"newSourceRepo": "yes"}})") << u"changes.newSourceRepo"_s;
        QTest::newRow("memory unreadable")
            << QByteArray(R"({"changes": {"memoryAbove": "lots"}})") << u"changes.memoryAbove"_s;
        QTest::newRow("memory zero") << QByteArray(R"({"changes": {"memoryAbove": 0}})") << u"changes.memoryAbove"_s;
        QTest::newRow("cpus negative") << QByteArray(R"({"changes": {"cpusAbove": -1}})") << u"changes.cpusAbove"_s;
    }

    void parseErrors()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, where);
        auto policy = parsePolicy(json);
        QVERIFY(!policy);
        QCOMPARE(policy.error().code, ErrorCode::Invalid);
        QVERIFY2(policy.error().where.startsWith(where), qPrintable(policy.error().text()));
    }

    void memoryInBytes()
    {
        auto policy = parsePolicy(R"({"changes": {"memoryAbove": 1048576}})");
        QVERIFY(policy);
        QCOMPARE(policy->memoryAboveBytes, 1048576);
    }

    void loadNamesTheFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"policy.json"_s);
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"changes": {"cpusAbove": "two"}})");
        file.close();
        auto policy = loadPolicy(path);
        QVERIFY(!policy);
        QVERIFY2(policy.error().where.contains(path), qPrintable(policy.error().text()));
        QVERIFY2(policy.error().where.contains(u"changes.cpusAbove"_s), qPrintable(policy.error().text()));
        auto missing = loadPolicy(dir.filePath(u"none.json"_s));
        QVERIFY(!missing);
        QVERIFY(missing.error().where.endsWith(u"none.json"_s));
    }

    void specgate_data()
    {
        QTest::addColumn<QString>("app");
        QTest::addColumn<int>("role");
        QTest::addColumn<AppSpec>("next");
        QTest::addColumn<bool>("allowed");

        const AppSpec newRepo = spec(u"https://other/x.git"_s);
        const AppSpec bigger = spec({}, 8LL << 30);
        QTest::newRow("member, new repo, app under approval")
            << u"billing-api"_s << int(accounts::Role::Member) << newRepo << false;
        QTest::newRow("member, more memory, app under approval")
            << u"billing-api"_s << int(accounts::Role::Member) << bigger << false;
        QTest::newRow("viewer, new repo, prod label")
            << u"hello"_s << int(accounts::Role::Viewer) << spec(u"https://other/x.git"_s, 256LL << 20, 1, u"prod"_s)
            << false;
        QTest::newRow("operator, new repo") << u"billing-api"_s << int(accounts::Role::Operator) << newRepo << true;
        QTest::newRow("admin, new repo") << u"billing-api"_s << int(accounts::Role::Admin) << newRepo << true;
        QTest::newRow("member, app not under approval") << u"hello"_s << int(accounts::Role::Member) << newRepo << true;
        QTest::newRow("member, ungated change") << u"billing-api"_s << int(accounts::Role::Member) << spec() << true;
        const AppSpec closed = withEgress(spec(), AppSpec::Egress::None);
        QTest::newRow("member, egress change, app under approval")
            << u"billing-api"_s << int(accounts::Role::Member) << closed << false;
        QTest::newRow("member, egress change, prod label")
            << u"hello"_s << int(accounts::Role::Member)
            << withEgress(spec({}, 256LL << 20, 1, u"prod"_s), AppSpec::Egress::None) << false;
        QTest::newRow("operator, egress change") << u"billing-api"_s << int(accounts::Role::Operator) << closed << true;
        QTest::newRow("member, egress change, app not under approval")
            << u"hello"_s << int(accounts::Role::Member) << closed << true;
    }

    void specgate()
    {
        QFETCH(QString, app);
        QFETCH(int, role);
        QFETCH(AppSpec, next);
        QFETCH(bool, allowed);
        const Policy policy = parsePolicy(FullPolicy).value();
        const AppSpec current = spec();
        auto gate = maySpecWrite(policy, accounts::Role(role), &current, next, app);
        QCOMPARE(bool(gate), allowed);
        if (!allowed) {
            QCOMPARE(gate.error().code, ErrorCode::Forbidden);
            QCOMPARE(gate.error().where, u"app/"_s + app);
            if (next.network.egress != current.network.egress)
                QVERIFY2(gate.error().message.contains(u"egress changes from all to none"_s),
                         qPrintable(gate.error().text()));
        }
    }
};

QTEST_GUILESS_MAIN(TestPolicy)
#include "tst_policy.moc"
