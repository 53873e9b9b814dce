// A deploy's output after the deploy (docs/architecture.md, "The deploy pipeline"): a real engine
// (SQLite in a temporary directory; runtime, router and source are fakes, the clock is the real
// one moved on by hand) compresses the output of a deploy that ended and reads it back the same,
// keeps it while the install's retention (settings deploy_log_days) lasts, then removes it and
// says so when it is asked for; "forever" keeps it.

#include "app/wiring/install.h"
#include "enginepeople.h"
#include "tests/app/server/fakes.h"
#include "tests/support/laterclock.h"

#include <QDateTime>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;

namespace {

constexpr qint64 DayMs = 24LL * 60 * 60 * 1000;

QStringList texts(const QList<core::StepLogLine> &lines)
{
    QStringList list;
    for (const core::StepLogLine &line : lines)
        list << line.text;
    return list;
}

} // namespace

class TestEngineLogs : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void outputIsKeptCompressedThenRemoved();

private:
    // A deploy of an app named "buildfails" (its build prints three lines and fails), ended.
    QString failedDeploy(const QString &app);
    Status setDays(int days);

    QTemporaryDir m_dir;
    test::LaterClock m_clock;
    std::unique_ptr<wiring::Install> m_install;
    core::Engine *m_engine = nullptr;
    test::EnginePeople m_people;
};

void TestEngineLogs::initTestCase()
{
    QVERIFY(m_dir.isValid());
    wiring::InstallOptions options = test::quietInstallOptions(m_dir.path());
    options.runtime = std::make_shared<test::FakeRuntime>();
    options.router = std::make_shared<test::FakeRouter>();
    options.source = std::make_shared<test::FakeSource>();
    options.services = std::make_shared<test::FakeServiceProvisioner>();
    options.clock = &m_clock;
    options.engine.logSweepMs = 0; // swept by hand
    m_install = std::make_unique<wiring::Install>(std::move(options));
    auto opened = m_install->open();
    QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
    m_engine = &m_install->engine();
    const QString made = m_people.create(*m_engine, {{"ada", core::accounts::Role::Admin}});
    QVERIFY2(made.isEmpty(), qPrintable(made));
}

void TestEngineLogs::cleanupTestCase()
{
    m_engine = nullptr;
    m_install.reset();
}

QString TestEngineLogs::failedDeploy(const QString &app)
{
    const core::Actor ada = m_people.actor(u"ada"_s);
    if (!m_engine->app(app) && !m_engine->createApp(test::helloSpec(app), ada))
        return {};
    auto queued = m_engine->deploy(app, {}, ada);
    if (!queued)
        return {};
    const QString id = queued->id;
    QDeadlineTimer deadline(20000);
    while (!deadline.hasExpired()) {
        auto view = m_engine->deployView(id);
        if (view && core::isFinished(view->record.status))
            return id;
        QTest::qWait(20);
    }
    return {};
}

Status TestEngineLogs::setDays(int days)
{
    auto access = m_engine->appAccess();
    if (!access)
        return std::unexpected(access.error());
    access->deployLogDays = days;
    return m_engine->setAppAccess(*access, m_people.actor(u"ada"_s));
}

void TestEngineLogs::outputIsKeptCompressedThenRemoved()
{
    const QString id = failedDeploy(u"buildfails"_s);
    QVERIFY(!id.isEmpty());
    const QStringList printed = texts(m_engine->deployLog(id, -1, 0, 5000).value());
    QVERIFY2(printed.contains(u"make: *** No rule to make target 'all'.  Stop."_s), qPrintable(printed.join(u'\n')));

    // Compressed once it ended; read back line for line.
    auto swept = m_engine->sweepDeployLogs();
    QVERIFY2(swept, qPrintable(swept ? QString() : swept.error().text()));
    QCOMPARE(swept->archived, 1);
    QCOMPARE(swept->removed, 0);
    QCOMPARE(texts(m_engine->deployLog(id, -1, 0, 5000).value()), printed);
    QCOMPARE(m_engine->sweepDeployLogs()->archived, 0);

    // Kept while the retention lasts (the default: 90 days).
    m_clock.advance(89 * DayMs);
    QCOMPARE(m_engine->sweepDeployLogs()->removed, 0);
    QCOMPARE(texts(m_engine->deployLog(id, -1, 0, 5000).value()), printed);

    // "forever" keeps it past that; a shorter retention removes it at the next sweep.
    QVERIFY(setDays(0));
    m_clock.advance(30 * DayMs);
    QCOMPARE(m_engine->sweepDeployLogs()->removed, 0);
    const QString newer = failedDeploy(u"buildfails"_s);
    QVERIFY(!newer.isEmpty());
    m_clock.advance(DayMs / 2);
    QVERIFY(setDays(1));
    swept = m_engine->sweepDeployLogs();
    QVERIFY(swept);
    QCOMPARE(swept->archived, 1); // the newer deploy's
    QCOMPARE(swept->removed, 1);  // the old one's; the newer one ended half a day ago

    // Asked for, removed output says so, when and how to keep it longer; the deploy is there.
    auto gone = m_engine->deployLog(id, -1, 0, 5000);
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::NotFound);
    QVERIFY2(gone.error().message.contains(u"was removed on"_s) && gone.error().message.contains(u"1 day "_s),
             qPrintable(gone.error().text()));
    QVERIFY2(gone.error().hint.contains(u"pando settings set deploy-log-days"_s), qPrintable(gone.error().hint));
    QVERIFY(m_engine->deployView(id));
    QCOMPARE(texts(m_engine->deployLog(newer, -1, 0, 5000).value()), printed);
}

QTEST_GUILESS_MAIN(TestEngineLogs)
#include "tst_enginelogs.moc"
