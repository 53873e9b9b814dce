// Instanced pipelines' names (core/pipelines/config/instancename.h): one written form per
// instance, read back from fly's -p spelling in any key order, values bare only where they read
// back as themselves, and bad names refused with what is wrong.

#include "core/pipelines/config/instancename.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando::core::pipelines;
using pando::ErrorCode;

class TestInstanceName : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void writtenForm_data();
    void writtenForm();
    void readBack();
    void badNames_data();
    void badNames();
    void instanceVarsAreVars();
    void pipelinePaths_data();
    void pipelinePaths();
};

void TestInstanceName::pipelinePaths_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("rest");
    QTest::newRow("plain") << u"ci"_s << u"ci"_s << QString();
    QTest::newRow("plain job") << u"ci/unit"_s << u"ci"_s << u"unit"_s;
    QTest::newRow("instance") << u"preview/branch:a"_s << u"preview/branch:a"_s << QString();
    QTest::newRow("instance job") << u"preview/branch:a,n:2/unit"_s << u"preview/branch:a,n:2"_s << u"unit"_s;
    QTest::newRow("quoted slash") << u"preview/branch:\"feature/login\"/unit"_s << u"preview/branch:\"feature/login\""_s
                                  << u"unit"_s;
}

void TestInstanceName::pipelinePaths()
{
    QFETCH(QString, text);
    QFETCH(QString, pipeline);
    QFETCH(QString, rest);
    const auto [p, r] = splitPipelinePath(text);
    QCOMPARE(p, pipeline);
    QCOMPARE(r, rest);
}

void TestInstanceName::writtenForm_data()
{
    QTest::addColumn<QJsonObject>("vars");
    QTest::addColumn<QString>("name");
    QTest::newRow("none") << QJsonObject{} << u"preview"_s;
    QTest::newRow("branch") << QJsonObject{{u"branch"_s, u"feature-1"_s}} << u"preview/branch:feature-1"_s;
    QTest::newRow("keys in order") << QJsonObject{{u"region"_s, u"eu"_s}, {u"env"_s, u"prod"_s}}
                                   << u"preview/env:prod,region:eu"_s;
    QTest::newRow("slash in a value") << QJsonObject{{u"branch"_s, u"feature/login"_s}}
                                      << u"preview/branch:\"feature/login\""_s;
    QTest::newRow("comma quoted") << QJsonObject{{u"branch"_s, u"a,b"_s}} << u"preview/branch:\"a,b\""_s;
    QTest::newRow("number as text quoted") << QJsonObject{{u"v"_s, u"1.2"_s}} << u"preview/v:\"1.2\""_s;
    QTest::newRow("number") << QJsonObject{{u"v"_s, 3}} << u"preview/v:3"_s;
    QTest::newRow("true as text quoted") << QJsonObject{{u"on"_s, u"true"_s}} << u"preview/on:\"true\""_s;
    QTest::newRow("boolean") << QJsonObject{{u"on"_s, true}} << u"preview/on:true"_s;
    QTest::newRow("space quoted") << QJsonObject{{u"who"_s, u"a b"_s}} << u"preview/who:\"a b\""_s;
    QTest::newRow("quote escaped") << QJsonObject{{u"q"_s, u"say \"hi\""_s}} << u"preview/q:\"say \\\"hi\\\"\""_s;
}

void TestInstanceName::writtenForm()
{
    QFETCH(QJsonObject, vars);
    QFETCH(QString, name);
    auto written = instanceName(u"preview"_s, vars, u"instance_vars"_s);
    QVERIFY2(written, qPrintable(written ? QString() : written.error().text()));
    QCOMPARE(*written, name);
    // It reads back as what it was made of, and is the one form checkPipelineName takes.
    auto read = parsePipelineName(name);
    QVERIFY2(read, qPrintable(read ? QString() : read.error().text()));
    QCOMPARE(read->group, u"preview"_s);
    QCOMPARE(read->instanceVars, vars);
    QVERIFY(checkPipelineName(name));
}

void TestInstanceName::readBack()
{
    // fly's -p spelling in another order names the same instance, and is told the form to use.
    auto read = parsePipelineName(u"deploy/region:eu,env:prod"_s);
    QVERIFY(read);
    QCOMPARE(read->instanceVars, (QJsonObject{{u"env"_s, u"prod"_s}, {u"region"_s, u"eu"_s}}));
    auto other = checkPipelineName(u"deploy/region:eu,env:prod"_s);
    QVERIFY(!other);
    QVERIFY2(other.error().message.contains(u"deploy/env:prod,region:eu"_s), qPrintable(other.error().text()));
    // -i values read as fly reads them.
    QCOMPARE(instanceVarValue(u"12"_s), QJsonValue(12));
    QCOMPARE(instanceVarValue(u"false"_s), QJsonValue(false));
    QCOMPARE(instanceVarValue(u"\"12\""_s), QJsonValue(u"12"_s));
    QCOMPARE(instanceVarValue(u"feature-1"_s), QJsonValue(u"feature-1"_s));
}

void TestInstanceName::badNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("says");
    QTest::newRow("no colon") << u"preview/branch"_s << u"no ':'"_s;
    QTest::newRow("empty value") << u"preview/branch:"_s << u"1-200 characters"_s;
    QTest::newRow("bad key") << u"preview/1x:y"_s << u"not a var name"_s;
    QTest::newRow("key twice") << u"preview/a:1,a:2"_s << u"given twice"_s;
    QTest::newRow("unclosed quote") << u"preview/a:\"x"_s << u"no closing quote"_s;
    QTest::newRow("after a quote") << u"preview/a:\"x\"y"_s << u"separated by ','"_s;
    QTest::newRow("bad group") << u"-x/a:1"_s << u"must be 1-100"_s;
    QTest::newRow("control character") << u"preview/a:\"x\\ty\""_s << u"control characters"_s;
    QTest::newRow("too long") << u"preview/a:"_s + QString(201, u'x') << u"1-200 characters"_s;
}

void TestInstanceName::badNames()
{
    QFETCH(QString, name);
    QFETCH(QString, says);
    auto refused = checkPipelineName(name, u"name"_s);
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Invalid);
    QCOMPARE(refused.error().where, u"name"_s);
    QVERIFY2(refused.error().message.contains(says), qPrintable(refused.error().text()));
    auto nested = instanceName(u"preview"_s, QJsonObject{{u"a"_s, QJsonArray{1}}}, u"instance_vars"_s);
    QVERIFY(!nested);
    QCOMPARE(nested.error().where, u"instance_vars"_s);
}

void TestInstanceName::instanceVarsAreVars()
{
    auto merged = withInstanceVars("greeting: hi\n", QJsonObject{{u"branch"_s, u"main"_s}});
    QVERIFY(merged);
    const QJsonObject vars = QJsonDocument::fromJson(*merged).object();
    QCOMPARE(vars, (QJsonObject{{u"greeting"_s, u"hi"_s}, {u"branch"_s, u"main"_s}}));
    QVERIFY(withInstanceVars("branch: main\n", QJsonObject{{u"branch"_s, u"main"_s}}));
    QVERIFY(withInstanceVars("n: 3\n", QJsonObject{{u"n"_s, 3}}));
    auto clash = withInstanceVars("branch: other\n", QJsonObject{{u"branch"_s, u"main"_s}});
    QVERIFY(!clash);
    QCOMPARE(clash.error().where, u"vars"_s);
    QCOMPARE(*withInstanceVars("a: 1\n", {}), QByteArray("a: 1\n"));
}

QTEST_GUILESS_MAIN(TestInstanceName)
#include "tst_instancename.moc"
