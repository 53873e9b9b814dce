// The vocabulary's tables: every value round-trips through its string, the strings are the ones
// docs/api/openapi.yaml documents (read from the file, so the two cannot disagree unnoticed),
// and a string no table holds is refused rather than read as some other state.
#include "core/vocab/vocab.h"
#include "tests/support/component.h"
#include "tests/support/vocabtesting.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core;

namespace {

template<typename E> QStringList tableStrings()
{
    QStringList out;
    for (E value : vocab::values<E>())
        out << toString(value);
    return out;
}

template<typename E> void checkRoundTrip(std::optional<E> (*parse)(QStringView))
{
    QSet<QString> seen;
    for (E value : vocab::values<E>()) {
        const QString text = toString(value);
        QVERIFY2(!text.isEmpty(), "a value without a string");
        QVERIFY2(!seen.contains(text), qPrintable(u"\"%1\" names two values"_s.arg(text)));
        seen.insert(text);
        const std::optional<E> back = parse(text);
        QVERIFY2(back.has_value(), qPrintable(u"\"%1\" does not parse"_s.arg(text)));
        QCOMPARE(*back, value);
    }
}

// The enum: [a, b, c] of one property of one schema under components/schemas, as the file has
// it ("    Name:" opens a schema; "        property: {... enum: [...]}" is one of its fields).
QStringList documentedEnum(const QString &schema, const QString &property)
{
    QFile file(pando::test::sourceDir() + u"/docs/api/openapi.yaml"_s);
    if (!file.open(QIODevice::ReadOnly))
        return {u"<cannot read docs/api/openapi.yaml>"_s};
    const QStringList lines = QString::fromUtf8(file.readAll()).split(u'\n');
    const QRegularExpression field(u"^        "_s + QRegularExpression::escape(property) +
                                   u":\\s*\\{.*\\benum:\\s*\\[([^\\]]*)\\]"_s);
    bool inSchema = false;
    for (const QString &line : lines) {
        if (line.startsWith(u"    "_s) && !line.startsWith(u"     "_s)) {
            inSchema = line.trimmed() == schema + u':';
            continue;
        }
        if (!inSchema)
            continue;
        const QRegularExpressionMatch m = field.match(line);
        if (m.hasMatch()) {
            QStringList words;
            for (const QString &word : m.captured(1).split(u','))
                words << word.trimmed().remove(u'"');
            return words;
        }
    }
    return {u"<no enum for %1.%2 in docs/api/openapi.yaml>"_s.arg(schema, property)};
}

template<typename E> void checkDocumented(const QString &schema, const QString &property)
{
    QStringList documented = documentedEnum(schema, property);
    QStringList ours = tableStrings<E>();
    documented.sort();
    ours.sort();
    QCOMPARE(ours, documented);
}

} // namespace

class TestVocab : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTrips()
    {
        checkRoundTrip<DeployStatus>(parseDeployStatus);
        checkRoundTrip<AppStatus>(parseAppStatus);
        checkRoundTrip<DeployStepStatus>(parseDeployStepStatus);
        checkRoundTrip<RunStatus>(parseRunStatus);
        checkRoundTrip<RunStepStatus>(parseRunStepStatus);
        checkRoundTrip<EventType>(parseEventType);
    }

    void stringsAreTheDocumentedOnes()
    {
        checkDocumented<DeployStatus>(u"DeployRecord"_s, u"status"_s);
        checkDocumented<AppStatus>(u"AppView"_s, u"status"_s);
        checkDocumented<DeployStepStatus>(u"Step"_s, u"status"_s);
        checkDocumented<RunStatus>(u"RunRecord"_s, u"status"_s);
        checkDocumented<RunStepStatus>(u"RunStep"_s, u"status"_s);
        checkDocumented<EventType>(u"Event"_s, u"type"_s);
    }

    // A few strings spelled out, so a table edit that changes a wire string fails here too.
    void knownStrings()
    {
        QCOMPARE(toString(DeployStatus::AwaitingApproval), u"awaiting-approval"_s);
        QCOMPARE(toString(DeployStepStatus::Waiting), u"waiting"_s);
        QCOMPARE(toString(RunStepStatus::Cached), u"cached"_s);
        QCOMPARE(toString(AppStatus::New), u"new"_s);
        QCOMPARE(toString(EventType::AppDiskExceeded), u"app.disk.exceeded"_s);
        QCOMPARE(parseRunStatus(u"errored"), std::optional(RunStatus::Errored));
    }

    void unknownStringsAreRefused_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("empty") << QString();
        QTest::newRow("case") << u"Succeeded"_s;
        QTest::newRow("space") << u"succeeded "_s;
        QTest::newRow("other word") << u"done"_s;
        QTest::newRow("prefix") << u"succ"_s;
        QTest::newRow("underscore") << u"awaiting_approval"_s;
        QTest::newRow("event prefix") << u"deploy."_s;
    }
    void unknownStringsAreRefused()
    {
        QFETCH(QString, text);
        QVERIFY(!parseDeployStatus(text));
        QVERIFY(!parseAppStatus(text));
        QVERIFY(!parseDeployStepStatus(text));
        QVERIFY(!parseRunStatus(text));
        QVERIFY(!parseRunStepStatus(text));
        QVERIFY(!parseEventType(text));
    }

    // Each concept keeps its own words: a run's "errored" is no deploy status, a deploy's
    // "awaiting-approval" no run status.
    void conceptsStaySeparate()
    {
        QVERIFY(!parseDeployStatus(u"errored"));
        QVERIFY(!parseRunStatus(u"awaiting-approval"));
        QVERIFY(!parseDeployStepStatus(u"cached"));
        QVERIFY(!parseRunStatus(u"pending"));
    }
};

QTEST_GUILESS_MAIN(TestVocab)
#include "tst_vocab.moc"
