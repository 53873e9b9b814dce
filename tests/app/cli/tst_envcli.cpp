// `pando apps env list|set|unset` and the diff `pando apps update` shows, run as the built binary
// against an install served from this test process: what the app's container finds in its
// environment and from where (secrets' and services' values never shown), run.env changed as a
// new spec revision that keeps the rest of the text its writer wrote, and bad input refused with
// where it was wrong.

#include "tests/app/server/fakes.h"
#include "tests/support/clirun.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryFile>
#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

const QByteArray NotesSpec = "# notes: a small app we keep on one machine\n"
                             "name: notes\n"
                             "source:\n"
                             "  repo: https://git.example/notes.git\n"
                             "run:\n"
                             "  port: 8080\n"
                             "  env:\n"
                             "    # how much it says\n"
                             "    LOG: info\n"
                             "    MODE: prod   # never debug here\n"
                             "services:\n"
                             "  db: {kind: postgres}\n";

} // namespace

class TestEnvCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void listSaysWhereEachVariableComesFrom();
    void setAndUnsetReviseOnlyTheirLines();
    void badInputSaysWhere();
    void updateShowsTheDiff();

private:
    test::CliRun pando(const QStringList &args, const QByteArray &input = {});
    QString specText(const QString &app);

    test::TestInstall m_install;
    QTemporaryDir m_config;
};

void TestEnvCli::initTestCase()
{
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    QTemporaryFile spec;
    QVERIFY(spec.open());
    spec.write(NotesSpec);
    spec.flush();
    const test::CliRun created = pando({u"apps"_s, u"create"_s, u"-f"_s, spec.fileName()});
    QVERIFY2(created.code == 0, qPrintable(created.all()));
    const test::CliRun secret = pando({u"secrets"_s, u"set"_s, u"notes"_s, u"API_KEY"_s}, "s3cr3t-value");
    QVERIFY2(secret.code == 0, qPrintable(secret.all()));
}

test::CliRun TestEnvCli::pando(const QStringList &args, const QByteArray &input)
{
    return test::runCli(args, test::cliEnvironment(m_install.baseUrl(), m_install.token, m_config.path()), input);
}

QString TestEnvCli::specText(const QString &app)
{
    const test::CliRun shown = pando({u"apps"_s, u"spec"_s, app});
    return shown.code == 0 ? shown.out : u"(apps spec failed: %1)"_s.arg(shown.all());
}

void TestEnvCli::listSaysWhereEachVariableComesFrom()
{
    const test::CliRun listed = pando({u"apps"_s, u"env"_s, u"list"_s, u"notes"_s});
    QVERIFY2(listed.code == 0, qPrintable(listed.all()));
    const auto row = [&](const QString &pattern) {
        return QRegularExpression(pattern, QRegularExpression::MultilineOption).match(listed.out).hasMatch();
    };
    QVERIFY2(row(u"^LOG\\s+info\\s+run\\.env$"_s), qPrintable(listed.out));
    QVERIFY2(row(u"^PORT\\s+8080\\s+Pando \\(run\\.port\\)$"_s), qPrintable(listed.out));
    QVERIFY2(row(u"^DB_URL\\s+\\(hidden\\)\\s+service db$"_s), qPrintable(listed.out));
    QVERIFY2(row(u"^DB_PASSWORD\\s+\\(hidden\\)\\s+service db$"_s), qPrintable(listed.out));
    QVERIFY2(row(u"^API_KEY\\s+\\(hidden\\)\\s+secret$"_s), qPrintable(listed.out));
    QVERIFY(!listed.all().contains(u"s3cr3t"_s));

    const test::CliRun json = pando({u"apps"_s, u"env"_s, u"list"_s, u"notes"_s, u"--json"_s});
    QVERIFY2(json.code == 0, qPrintable(json.all()));
    const QJsonArray variables = QJsonDocument::fromJson(json.out.toUtf8()).object().value(u"variables"_s).toArray();
    for (const QJsonValue value : variables) {
        const QJsonObject variable = value.toObject();
        const QString from = variable.value(u"from"_s).toString();
        QVERIFY2(variable.contains(u"value"_s) == (from == u"spec" || from == u"pando"),
                 qPrintable(QString::fromUtf8(QJsonDocument(variable).toJson())));
    }
}

void TestEnvCli::setAndUnsetReviseOnlyTheirLines()
{
    test::CliRun set = pando({u"apps"_s, u"env"_s, u"set"_s, u"notes"_s, u"LOG=debug"_s, u"GREETING=hello there"_s});
    QVERIFY2(set.code == 0, qPrintable(set.all()));
    QVERIFY2(set.out.contains(u"~ LOG: info → debug"_s), qPrintable(set.out));
    QVERIFY2(set.out.contains(u"+ GREETING=hello there"_s), qPrintable(set.out));
    QVERIFY2(set.out.contains(u"pando deploy notes"_s), qPrintable(set.out));
    QString text = specText(u"notes"_s);
    // Only the changed and the added lines differ from what was written.
    QString expected = QString::fromUtf8(NotesSpec);
    expected.replace(u"    LOG: info\n"_s, u"    LOG: \"debug\"\n"_s);
    expected.replace(u"    MODE: prod   # never debug here\n"_s,
                     u"    MODE: prod   # never debug here\n    GREETING: \"hello there\"\n"_s);
    QCOMPARE(text, expected);

    const test::CliRun unset = pando({u"apps"_s, u"env"_s, u"unset"_s, u"notes"_s, u"GREETING"_s, u"API_KEY"_s});
    QVERIFY2(unset.code == 0, qPrintable(unset.all()));
    QVERIFY2(unset.out.contains(u"- GREETING (was hello there)"_s), qPrintable(unset.out));
    // A secret's name is not run.env's: the secret stays, and the user is told where it goes.
    QVERIFY2(unset.err.contains(u"API_KEY is not in run.env"_s) &&
                 unset.err.contains(u"pando secrets rm notes API_KEY"_s),
             qPrintable(unset.err));
    QVERIFY(pando({u"apps"_s, u"env"_s, u"list"_s, u"notes"_s}).out.contains(u"API_KEY"_s));
    expected = QString::fromUtf8(NotesSpec);
    expected.replace(u"    LOG: info\n"_s, u"    LOG: \"debug\"\n"_s);
    QCOMPARE(specText(u"notes"_s), expected);

    // Saying again what the spec says writes nothing: no new revision, no audit line.
    const auto updates = [&] {
        const test::CliRun audit = pando({u"audit"_s, u"list"_s, u"--action"_s, u"app.update"_s, u"--json"_s});
        return QJsonDocument::fromJson(audit.out.toUtf8()).object().value(u"lines"_s).toArray();
    };
    const QJsonArray before = updates();
    QCOMPARE(before.size(), 2);
    const QJsonObject detail = before.first().toObject().value(u"detail"_s).toObject();
    QCOMPARE(detail.value(u"env"_s).toObject().value(u"unset"_s).toArray(), QJsonArray{u"GREETING"_s});
    QVERIFY(!QJsonDocument(before).toJson().contains("hello there"));
    const test::CliRun again = pando({u"apps"_s, u"env"_s, u"set"_s, u"notes"_s, u"LOG=debug"_s});
    QVERIFY2(again.code == 0, qPrintable(again.all()));
    QVERIFY2(again.out.contains(u"already says so; nothing changed"_s), qPrintable(again.out));
    QCOMPARE(updates().size(), 2);
}

void TestEnvCli::badInputSaysWhere()
{
    const QString before = specText(u"notes"_s);
    test::CliRun run = pando({u"apps"_s, u"env"_s, u"set"_s, u"notes"_s, u"1BAD=x"_s});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(u"run.env.1BAD"_s), qPrintable(run.err));
    // A variable the service in slot db sets is the service's.
    run = pando({u"apps"_s, u"env"_s, u"set"_s, u"notes"_s, u"DB_URL=postgres://elsewhere"_s});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(u"run.env.DB_URL"_s) && run.err.contains(u"slot db"_s), qPrintable(run.err));
    run = pando({u"apps"_s, u"env"_s, u"set"_s, u"notes"_s, u"NOVALUE"_s});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(u"expected NAME=VALUE, got \"NOVALUE\""_s), qPrintable(run.err));
    run = pando({u"apps"_s, u"env"_s, u"frob"_s, u"notes"_s});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(u"list, set or unset"_s), qPrintable(run.err));
    run = pando({u"apps"_s, u"env"_s, u"set"_s, u"nosuch"_s, u"A=b"_s});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(u"nosuch"_s), qPrintable(run.err));
    QCOMPARE(specText(u"notes"_s), before);

    // A run.env written as a flow mapping is not rewritten behind its writer's back.
    QTemporaryFile spec;
    QVERIFY(spec.open());
    spec.write("name: flow\nsource: {repo: https://git.example/flow.git}\nrun: {port: 80, env: {A: b}}\n");
    spec.flush();
    QCOMPARE(pando({u"apps"_s, u"create"_s, u"-f"_s, spec.fileName()}).code, 0);
    run = pando({u"apps"_s, u"env"_s, u"set"_s, u"flow"_s, u"C=d"_s});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(u"run.env"_s) && run.err.contains(u"pando apps update"_s), qPrintable(run.err));
}

void TestEnvCli::updateShowsTheDiff()
{
    const QString before = specText(u"notes"_s);
    QString next = before;
    next.replace(u"  port: 8080\n"_s, u"  port: 9090\n"_s);
    QTemporaryFile spec;
    QVERIFY(spec.open());
    spec.write(next.toUtf8());
    spec.flush();
    // Not a terminal: the diff is shown and the update made, as a script expects.
    test::CliRun run = pando({u"apps"_s, u"update"_s, u"notes"_s, u"-f"_s, spec.fileName()});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(u"@@ -3,7 +3,7 @@\n"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"\n-  port: 8080\n+  port: 9090\n"_s), qPrintable(run.out));
    QVERIFY2(run.out.contains(u"updated app notes"_s), qPrintable(run.out));
    QCOMPARE(specText(u"notes"_s), next);
    run = pando({u"apps"_s, u"update"_s, u"notes"_s, u"-f"_s, spec.fileName()});
    QVERIFY2(run.code == 0, qPrintable(run.all()));
    QVERIFY2(run.out.contains(u"already says this; nothing changed"_s), qPrintable(run.out));
    QVERIFY(!run.out.contains(u"@@"_s));
}

QTEST_GUILESS_MAIN(TestEnvCli)
#include "tst_envcli.moc"
