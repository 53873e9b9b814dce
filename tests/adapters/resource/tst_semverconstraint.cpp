// registry-image's semver_constraint as Masterminds/semver reads constraints: which version tags
// each form allows, pre-releases only when a comparison names one, and what cannot be read named
// with the part that could not.

#include "adapters/resource/registryimage/semverconstraint.h"

#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;
using adapters::registryimage::parseTagVersion;
using adapters::registryimage::SemverConstraint;

class TestSemverConstraint : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void allows_data()
    {
        QTest::addColumn<QString>("constraint");
        QTest::addColumn<QStringList>("allowed");
        QTest::addColumn<QStringList>("refused");
        const auto row = [](const char *name, const QString &constraint, const QStringList &allowed,
                            const QStringList &refused) {
            QTest::newRow(name) << constraint << allowed << refused;
        };
        row("patch wildcard", u"~1.2.x"_s, {u"1.2.0"_s, u"1.2.9"_s}, {u"1.3.0"_s, u"1.1.9"_s});
        row("and, or", u">= 1.2 < 3.0.0 || >= 4.2.3"_s, {u"1.2.0"_s, u"2.9.9"_s, u"4.2.3"_s, u"5"_s},
            {u"1.1"_s, u"3.0.0"_s, u"4.2.2"_s});
        row("commas", u">= 1.2, < 3.0.0"_s, {u"2.0"_s}, {u"3.0.0"_s, u"1.1.9"_s});
        row("range", u"1.2 - 1.4.5"_s, {u"1.2.0"_s, u"1.4.5"_s}, {u"1.1.9"_s, u"1.4.6"_s});
        row("range to an open end", u"2.3 - 4.5"_s, {u"2.3.0"_s, u"4.5.9"_s}, {u"4.6.0"_s});
        row("equal, open patch", u"1.2.x"_s, {u"1.2.0"_s, u"1.2.7"_s}, {u"1.3.0"_s});
        row("equal, left out patch", u"1.2"_s, {u"1.2.7"_s}, {u"1.3.0"_s, u"1.1.0"_s});
        row("equal, whole", u"= 1.2.3"_s, {u"1.2.3"_s, u"v1.2.3"_s}, {u"1.2.4"_s});
        row("greater than open", u"> 1.2"_s, {u"1.3.0"_s, u"2"_s}, {u"1.2.9"_s});
        row("greater than major", u">1"_s, {u"2.0"_s}, {u"1.9"_s});
        row("greater than whole", u">1.2.3"_s, {u"1.2.4"_s}, {u"1.2.3"_s});
        row("at most open", u"<= 2.x"_s, {u"2.9.9"_s, u"1"_s}, {u"3.0.0"_s});
        row("at most whole", u"=<2.1.0"_s, {u"2.1.0"_s}, {u"2.1.1"_s});
        row("less than", u"< 2"_s, {u"1.9.9"_s}, {u"2.0.0"_s});
        row("at least", u"=> 1.2"_s, {u"1.2.0"_s}, {u"1.1.9"_s});
        row("not a minor", u"!= 1.2"_s, {u"1.3.0"_s, u"2.2.0"_s}, {u"1.2.5"_s});
        row("not one", u"!=1.2.3"_s, {u"1.2.4"_s}, {u"1.2.3"_s});
        row("any", u"*"_s, {u"0.0.1"_s, u"9.9"_s}, {u"1.0.0-rc.1"_s});
        row("tilde major", u"~1"_s, {u"1.0"_s, u"1.9"_s}, {u"2.0"_s, u"0.9"_s});
        row("tilde whole", u"~1.2.3"_s, {u"1.2.3"_s, u"1.2.9"_s}, {u"1.2.2"_s, u"1.3.0"_s});
        row("tilde arrow", u"~>1.2"_s, {u"1.2.5"_s}, {u"1.3"_s});
        row("caret", u"^1.2.3"_s, {u"1.2.3"_s, u"1.9.0"_s}, {u"1.2.2"_s, u"2.0.0"_s});
        row("caret below one", u"^0.2.3"_s, {u"0.2.9"_s}, {u"0.3.0"_s, u"0.2.2"_s});
        row("caret below a tenth", u"^0.0.3"_s, {u"0.0.3"_s}, {u"0.0.4"_s});
        row("caret open patch", u"^0.0"_s, {u"0.0.9"_s}, {u"0.1.0"_s});
        row("caret zero", u"^0"_s, {u"0.9"_s}, {u"1.0"_s});
        row("caret open minor", u"^1.x"_s, {u"1.5"_s}, {u"2.0"_s});
        row("build metadata", u"1.2.3+build.5"_s, {u"1.2.3"_s}, {u"1.2.4"_s});
        row("pre-releases not asked for", u">= 1.0"_s, {u"1.1.0"_s}, {u"1.1.0-rc.1"_s});
        row("pre-releases asked for", u">= 1.1.0-rc.0"_s, {u"1.1.0-rc.1"_s, u"1.1.0"_s}, {u"1.1.0-alpha.1"_s});
    }
    void allows()
    {
        QFETCH(QString, constraint);
        QFETCH(QStringList, allowed);
        QFETCH(QStringList, refused);
        auto parsed = SemverConstraint::parse(constraint, u"source.semver_constraint"_s);
        QVERIFY2(parsed, qPrintable(parsed ? QString() : parsed.error().text()));
        for (const QString &tag : std::as_const(allowed))
            QVERIFY2(parsed->matches(*parseTagVersion(tag)), qPrintable(tag + u" should pass"_s));
        for (const QString &tag : std::as_const(refused))
            QVERIFY2(!parsed->matches(*parseTagVersion(tag)), qPrintable(tag + u" should not pass"_s));
    }

    void badConstraintsAreNamed_data()
    {
        QTest::addColumn<QString>("constraint");
        QTest::addColumn<QString>("says");
        QTest::newRow("empty alternative") << u"|| >= 1"_s << u"empty alternative"_s;
        QTest::newRow("operator alone") << u">= 1.2 <"_s << u"cannot read \"<\""_s;
        QTest::newRow("words") << u"~apple"_s << u"cannot read \"~apple\""_s;
        QTest::newRow("four parts") << u">= 1.2.3.4"_s << u"cannot read"_s;
        QTest::newRow("nothing allowed") << u"> *"_s << u"allows no version"_s;
    }
    void badConstraintsAreNamed()
    {
        QFETCH(QString, constraint);
        QFETCH(QString, says);
        auto parsed = SemverConstraint::parse(constraint, u"source.semver_constraint"_s);
        QVERIFY(!parsed);
        QCOMPARE(parsed.error().where, u"source.semver_constraint"_s);
        QVERIFY2(parsed.error().text().contains(says), qPrintable(parsed.error().text()));
    }
};

QTEST_GUILESS_MAIN(TestSemverConstraint)
#include "tst_semverconstraint.moc"
