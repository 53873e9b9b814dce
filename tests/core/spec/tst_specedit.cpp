// `apps env set|unset` edits a spec's text in place: the variables asked for change, every other
// line stays as written, and a layout the edit cannot follow is refused, never guessed. Also the
// line diff and its unified form that `apps update` and the desktop show.
#include "core/common/linediff.h"
#include "core/spec/appspec.h"
#include "core/spec/specedit.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;

namespace {

const QByteArray Head =
    "# the shop's front\nname: shop\nsource:\n  repo: https://git.example/shop.git  # the monorepo\n";

QString errorText(const Result<QByteArray> &r)
{
    return r ? QString() : r.error().text();
}

} // namespace

class TestSpecEdit : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void changesOnlyTheVariablesAsked()
    {
        const QByteArray text = Head + "run:\n  port: 8080\n  env:\n    # logging\n    LOG: info\n"
                                       "    GREETING: >-\n      hello\n      there\n    MODE: prod\n"
                                       "health:\n  path: /up\n";
        auto edited =
            editRunEnv(text, {{{u"LOG"_s, u"debug"_s}, {u"NEW"_s, u"a \"quoted\" # value"_s}}, {u"GREETING"_s}});
        QVERIFY2(edited, qPrintable(errorText(edited)));
        QCOMPARE(*edited, Head + "run:\n  port: 8080\n  env:\n    # logging\n    LOG: \"debug\"\n    MODE: prod\n"
                                 "    NEW: \"a \\\"quoted\\\" # value\"\n"
                                 "health:\n  path: /up\n");
        auto spec = parseAppSpec(*edited);
        QVERIFY(spec);
        QCOMPARE(spec->run.env.value(u"NEW"_s), u"a \"quoted\" # value"_s);
        QCOMPARE(spec->run.env.size(), 3);
    }

    void addsEnvAndRunWhenTheSpecHasNone()
    {
        auto withRun = editRunEnv(Head + "run:\n    port: 8080\n# end\n", {{{u"A"_s, u"1"_s}}, {}});
        QVERIFY2(withRun, qPrintable(errorText(withRun)));
        QCOMPARE(*withRun, Head + "run:\n    port: 8080\n    env:\n      A: \"1\"\n# end\n");
        auto withoutRun = editRunEnv(Head, {{{u"A"_s, u"x\ny"_s}}, {}});
        QVERIFY2(withoutRun, qPrintable(errorText(withoutRun)));
        QCOMPARE(*withoutRun, Head + "run:\n  env:\n    A: \"x\\ny\"\n");
        QCOMPARE(parseAppSpec(*withoutRun)->run.env.value(u"A"_s), u"x\ny"_s);
        // An empty env ({} or nothing) is filled in place; emptied, it says so.
        auto filled = editRunEnv(Head + "run:\n  env: {}\n  port: 80\n", {{{u"B"_s, u""_s}}, {}});
        QVERIFY2(filled, qPrintable(errorText(filled)));
        QCOMPARE(*filled, Head + "run:\n  env:\n    B: \"\"\n  port: 80\n");
        auto emptied = editRunEnv(*filled, {{}, {u"B"_s}});
        QVERIFY2(emptied, qPrintable(errorText(emptied)));
        QCOMPARE(*emptied, Head + "run:\n  env: {}\n  port: 80\n");
    }

    void keepsLineBreaksAndJson()
    {
        QByteArray crlf = Head + "run:\n  env:\n    A: b\n";
        crlf.replace("\n", "\r\n");
        auto edited = editRunEnv(crlf, {{{u"C"_s, u"d"_s}}, {}});
        QVERIFY2(edited, qPrintable(errorText(edited)));
        QVERIFY(edited->endsWith("    A: b\r\n    C: \"d\"\r\n"));
        QVERIFY(!edited->replace("\r\n", "").contains('\n'));
        auto json = editRunEnv(R"({"name": "shop", "source": {"repo": "https://git.example/shop.git"}})",
                               {{{u"A"_s, u"1"_s}}, {}});
        QVERIFY2(json, qPrintable(errorText(json)));
        QCOMPARE(parseAppSpec(*json)->run.env.value(u"A"_s), u"1"_s);
        QVERIFY(json->trimmed().startsWith('{'));
    }

    void noChangeLeavesTheTextAlone()
    {
        const QByteArray text = Head + "run:\n  env: {A: b}\n";
        QCOMPARE(envChanges({{u"A"_s, u"b"_s}}, {{{u"A"_s, u"b"_s}}, {u"Z"_s}}), QList<EnvChange>());
        auto same = editRunEnv(text, {{{u"A"_s, u"b"_s}}, {u"Z"_s}});
        QVERIFY(same);
        QCOMPARE(*same, text);
        const QList<EnvChange> changes =
            envChanges({{u"A"_s, u"b"_s}, {u"C"_s, u"d"_s}}, {{{u"A"_s, u"B"_s}, {u"E"_s, u"f"_s}}, {u"C"_s}});
        const QList<EnvChange> expected{
            {u"A"_s, u"b"_s, u"B"_s}, {u"C"_s, u"d"_s, std::nullopt}, {u"E"_s, std::nullopt, u"f"_s}};
        QCOMPARE(changes, expected);
    }

    void refusesWhatItCannotEditOrWhatBreaksTheSpec()
    {
        // A flow mapping is not rewritten behind its writer's back.
        auto flow = editRunEnv(Head + "run:\n  env: {A: b}\n", {{{u"C"_s, u"d"_s}}, {}});
        QVERIFY(!flow);
        QCOMPARE(flow.error().where, u"run.env"_s);
        QVERIFY2(flow.error().hint.contains(u"apps update"_s), qPrintable(flow.error().hint));
        auto bad = editRunEnv(Head, {{{u"1BAD"_s, u"x"_s}}, {}});
        QVERIFY(!bad);
        QCOMPARE(bad.error().where, u"run.env.1BAD"_s);
        auto broken = editRunEnv("name: [", {{{u"A"_s, u"b"_s}}, {}});
        QVERIFY(!broken);
        QVERIFY2(broken.error().where.startsWith(u"line"_s), qPrintable(broken.error().where));
    }

    void diffShowsHunksWithContext()
    {
        QStringList before, after;
        for (int i = 1; i <= 20; ++i)
            before << QString::number(i);
        after = before;
        after[1] = u"two"_s;
        after.insert(15, u"fifteen and a half"_s);
        const QStringList hunks = unifiedDiff(lineDiff(before.join(u'\n'), after.join(u'\n')), 2);
        const QStringList expected{u"@@ -1,4 +1,4 @@"_s,
                                   u" 1"_s,
                                   u"-2"_s,
                                   u"+two"_s,
                                   u" 3"_s,
                                   u" 4"_s,
                                   u"@@ -14,4 +14,5 @@"_s,
                                   u" 14"_s,
                                   u" 15"_s,
                                   u"+fifteen and a half"_s,
                                   u" 16"_s,
                                   u" 17"_s};
        QCOMPARE(hunks, expected);
        QVERIFY(unifiedDiff(lineDiff(u"a\n"_s, u"a\n"_s)).isEmpty());
        QCOMPARE(unifiedDiff(lineDiff(QString(), u"x\n"_s)), (QStringList{u"@@ -0,0 +1,1 @@"_s, u"+x"_s}));
        // A diff too large to compute exactly still says every line once.
        QString big, other;
        for (int i = 0; i < 2500; ++i) {
            big += u"a%1\n"_s.arg(i);
            other += u"b%1\n"_s.arg(i);
        }
        const QList<DiffLine> coarse = lineDiff(big, other);
        QCOMPARE(coarse.size(), 5000);
        QCOMPARE(coarse.first().kind, DiffLine::Kind::Removed);
        QCOMPARE(coarse.last().kind, DiffLine::Kind::Added);
    }
};

QTEST_APPLESS_MAIN(TestSpecEdit)
#include "tst_specedit.moc"
