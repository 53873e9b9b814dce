// ShellResourceType through the real HostTaskRunner with small scripts written by the test:
// Concourse's protocol both ways, strict validation of what scripts print, and timeouts.

#include "adapters/taskrunner/host/hosttaskrunner.h"
#include "core/pipelines/resource/shellresourcetype.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using pando::ErrorCode;
using pando::adapters::Version;
using pando::adapters::host::HostTaskRunner;
using pando::core::pipelines::ShellCommands;
using pando::core::pipelines::ShellResourceType;
using pando::core::pipelines::ShellTimeouts;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

class TestShellResourceType : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void checkHappyPath();
    void checkFromEmptyKeepsTheNewest();
    void inHappyPath();
    void outHappyPath();
    void invalidAnswers_data();
    void invalidAnswers();
    void longAnswerIsQuotedShort();
    void nonZeroExit();
    void hangingScriptTimesOut();
    void missingCommand();

private:
    // Writes an executable script into the test dir and returns its path.
    QString script(const QString &name, const QByteArray &body);
    ShellResourceType type(const QString &check, const QString &in = {}, const QString &out = {});
    QByteArray readFile(const QString &path) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    HostTaskRunner m_runner;
    QString m_record;
};

void TestShellResourceType::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_record = m_dir->filePath(u"request.json"_s);
}

QString TestShellResourceType::script(const QString &name, const QByteArray &body)
{
    const QString path = m_dir->filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write("#!/bin/sh\n" + body + '\n');
    file.close();
    file.setPermissions(file.permissions() | QFile::ExeOwner | QFile::ExeUser);
    return path;
}

ShellResourceType TestShellResourceType::type(const QString &check, const QString &in, const QString &out)
{
    ShellResourceType t(u"my-resource"_s, m_runner, QString(),
                        ShellCommands{check.isEmpty() ? QStringList{} : QStringList{check},
                                      in.isEmpty() ? QStringList{} : QStringList{in},
                                      out.isEmpty() ? QStringList{} : QStringList{out}});
    t.setEnvironment({{u"RECORD"_s, m_record}});
    return t;
}

QByteArray TestShellResourceType::readFile(const QString &path) const
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void TestShellResourceType::checkHappyPath()
{
    const QString check = script(u"check"_s, R"(cat > "$RECORD"
echo "checking" >&2
echo '[{"ref":"1"},{"ref":"2"},' ; echo '{"ref":"3","extra":"x"}]')");
    auto t = type(check);
    QStringList logs;
    auto versions = t.check(QJsonObject{{u"uri"_s, u"x"_s}}, Version{{u"ref"_s, u"1"_s}}, {},
                            [&](const QString &line) { logs << line; });
    PANDO_VERIFY_OK(versions);
    QCOMPARE(versions->size(), 2);
    QCOMPARE(versions->at(0), (Version{{u"ref"_s, u"2"_s}}));
    QCOMPARE(versions->at(1), (Version{{u"ref"_s, u"3"_s}, {u"extra"_s, u"x"_s}}));
    QCOMPARE(logs, QStringList{u"checking"_s});

    const QJsonObject request = QJsonDocument::fromJson(readFile(m_record)).object();
    QCOMPARE(request.value(u"source"_s).toObject().value(u"uri"_s).toString(), u"x"_s);
    QCOMPARE(request.value(u"version"_s).toObject().value(u"ref"_s).toString(), u"1"_s);

    // A from that no longer exists: everything is new.
    auto rewritten = t.check({}, Version{{u"ref"_s, u"gone"_s}}, {}, {});
    PANDO_VERIFY_OK(rewritten);
    QCOMPARE(rewritten->size(), 3);
}

void TestShellResourceType::checkFromEmptyKeepsTheNewest()
{
    const QString check = script(u"check"_s, R"(cat > "$RECORD"; echo '[{"ref":"a"},{"ref":"b"}]')");
    auto t = type(check);
    auto versions = t.check({}, {}, {}, {});
    PANDO_VERIFY_OK(versions);
    QCOMPARE(*versions, (QList<Version>{{{u"ref"_s, u"b"_s}}}));
    const QJsonObject request = QJsonDocument::fromJson(readFile(m_record)).object();
    QVERIFY(request.contains(u"version"_s));
    QVERIFY(request.value(u"version"_s).isNull());

    const QString none = script(u"none"_s, "echo '[]'");
    auto empty = type(none).check({}, {}, {}, {});
    PANDO_VERIFY_OK(empty);
    QVERIFY(empty->isEmpty());
}

void TestShellResourceType::inHappyPath()
{
    const QString in = script(u"in"_s, R"(dest="$1"
cat > "$RECORD"
echo "fetching into $dest" >&2
echo hello > "$dest/file.txt"
echo "$BUILD_PIPELINE_NAME/$BUILD_JOB_NAME #$BUILD_NAME" > "$dest/build.txt"
echo '{"version":{"ref":"2"},"metadata":[{"name":"author","value":"ada"},{"name":"note","value":"x y"}]}')");
    auto t = type(script(u"check"_s, "echo '[]'"), in);
    QTemporaryDir dest;
    QStringList logs;
    auto result =
        t.in(QJsonObject{{u"uri"_s, u"x"_s}}, Version{{u"ref"_s, u"2"_s}}, QJsonObject{{u"depth"_s, 1}}, dest.path(),
             {{u"BUILD_PIPELINE_NAME"_s, u"ci"_s}, {u"BUILD_JOB_NAME"_s, u"unit"_s}, {u"BUILD_NAME"_s, u"7"_s}}, {},
             [&](const QString &line) { logs << line; });
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->version, (Version{{u"ref"_s, u"2"_s}}));
    QCOMPARE(result->metadata.size(), 2);
    QCOMPARE(result->metadata.at(0), qMakePair(u"author"_s, u"ada"_s));
    QCOMPARE(result->metadata.at(1), qMakePair(u"note"_s, u"x y"_s));
    QCOMPARE(readFile(QDir(dest.path()).filePath(u"file.txt"_s)), QByteArray("hello\n"));
    // The build's metadata, as Concourse hands it to a resource: in its environment.
    QCOMPARE(readFile(QDir(dest.path()).filePath(u"build.txt"_s)), QByteArray("ci/unit #7\n"));
    QCOMPARE(logs, QStringList{u"fetching into "_s + QDir(dest.path()).absolutePath()});
    const QJsonObject request = QJsonDocument::fromJson(readFile(m_record)).object();
    QCOMPARE(request.value(u"params"_s).toObject().value(u"depth"_s).toInt(), 1);
    QCOMPARE(request.value(u"version"_s).toObject().value(u"ref"_s).toString(), u"2"_s);
}

void TestShellResourceType::outHappyPath()
{
    const QString out = script(u"out"_s, R"SH(cat > "$RECORD"
test -f "$1/inputs/artifact" || { echo "no artifact in $1" >&2; exit 1; }
test "$(pwd)" = "$1" || exit 2
echo '{"version":{"ref":"9"}}')SH");
    auto t = type({}, {}, out);
    QTemporaryDir work;
    QVERIFY(QDir(work.path()).mkpath(u"inputs"_s));
    QFile artifact(QDir(work.path()).filePath(u"inputs/artifact"_s));
    QVERIFY(artifact.open(QIODevice::WriteOnly));
    artifact.close();
    auto result =
        t.out(QJsonObject{{u"uri"_s, u"x"_s}}, QJsonObject{{u"file"_s, u"inputs/artifact"_s}}, work.path(), {}, {}, {});
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->version, (Version{{u"ref"_s, u"9"_s}}));
    QVERIFY(result->metadata.isEmpty());
    const QJsonObject request = QJsonDocument::fromJson(readFile(m_record)).object();
    QVERIFY(!request.contains(u"version"_s));
    QCOMPARE(request.value(u"params"_s).toObject().value(u"file"_s).toString(), u"inputs/artifact"_s);
}

void TestShellResourceType::invalidAnswers_data()
{
    QTest::addColumn<QString>("step");
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<QString>("expected");
    QTest::newRow("check: not JSON") << u"check"_s << QByteArray("this is not json") << u"invalid JSON"_s;
    QTest::newRow("check: nothing") << u"check"_s << QByteArray("") << u"invalid JSON"_s;
    QTest::newRow("check: object") << u"check"_s << QByteArray(R"({"ref":"1"})") << u"JSON array"_s;
    QTest::newRow("check: number item") << u"check"_s << QByteArray("[1]") << u"a number"_s;
    QTest::newRow("check: number value") << u"check"_s << QByteArray(R"([{"ref":1}])") << u"not a string"_s;
    QTest::newRow("check: nested value") << u"check"_s << QByteArray(R"([{"ref":{"a":"b"}}])") << u"not a string"_s;
    QTest::newRow("check: empty version") << u"check"_s << QByteArray("[{}]") << u"empty"_s;
    QTest::newRow("in: array") << u"in"_s << QByteArray(R"([{"ref":"1"}])") << u"JSON object"_s;
    QTest::newRow("in: no version") << u"in"_s << QByteArray(R"({"metadata":[]})") << u"no \"version\""_s;
    QTest::newRow("in: number value") << u"in"_s << QByteArray(R"({"version":{"ref":2}})") << u"not a string"_s;
    QTest::newRow("in: metadata object") << u"in"_s << QByteArray(R"({"version":{"ref":"2"},"metadata":{}})")
                                         << u"metadata"_s;
    QTest::newRow("in: metadata number") << u"in"_s
                                         << QByteArray(R"({"version":{"ref":"2"},"metadata":[{"name":"a","value":3}]})")
                                         << u"metadata[0]"_s;
    QTest::newRow("out: broken JSON") << u"out"_s << QByteArray(R"({"version":)") << u"invalid JSON"_s;
}

void TestShellResourceType::invalidAnswers()
{
    QFETCH(QString, step);
    QFETCH(QByteArray, answer);
    QFETCH(QString, expected);
    QFile answerFile(m_dir->filePath(u"answer"_s));
    QVERIFY(answerFile.open(QIODevice::WriteOnly));
    answerFile.write(answer);
    answerFile.close();
    const QString command = script(step, "cat > /dev/null; cat \"" + answerFile.fileName().toUtf8() + '"');
    auto t = type(command, command, command);
    QTemporaryDir dir;
    pando::Error error;
    if (step == u"check"_s) {
        auto r = t.check({}, {}, {}, {});
        QVERIFY(!r);
        error = r.error();
    } else if (step == u"in"_s) {
        auto r = t.in({}, Version{{u"ref"_s, u"2"_s}}, {}, dir.path(), {}, {}, {});
        QVERIFY(!r);
        error = r.error();
    } else {
        auto r = t.out({}, {}, dir.path(), {}, {}, {});
        QVERIFY(!r);
        error = r.error();
    }
    QCOMPARE(error.code, ErrorCode::Failed);
    QVERIFY2(error.text().contains(u"my-resource"_s), qPrintable(error.text()));
    QVERIFY2(error.message.contains(expected), qPrintable(error.message));
    if (!answer.isEmpty())
        QVERIFY2(error.message.contains(QString::fromUtf8(answer.left(10))), qPrintable(error.message));
}

void TestShellResourceType::longAnswerIsQuotedShort()
{
    const QString check = script(u"check"_s, "cat > /dev/null; i=0; while [ $i -lt 200 ]; do printf 'garbage '; "
                                             "i=$((i+1)); done");
    auto r = type(check).check({}, {}, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Failed);
    QVERIFY2(r.error().message.size() < 400, qPrintable(r.error().message));
    QVERIFY(r.error().message.contains(u"garbage"_s));
}

void TestShellResourceType::nonZeroExit()
{
    const QString check = script(u"check"_s, "cat > /dev/null; echo 'first' >&2; echo 'cannot reach the server' >&2; "
                                             "exit 4");
    QStringList logs;
    auto r = type(check).check({}, {}, {}, [&](const QString &line) { logs << line; });
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Failed);
    QVERIFY(r.error().message.contains(u"code 4"_s));
    QVERIFY(r.error().message.contains(u"cannot reach the server"_s));
    QCOMPARE(logs, (QStringList{u"first"_s, u"cannot reach the server"_s}));
}

void TestShellResourceType::hangingScriptTimesOut()
{
    const QString check = script(u"check"_s, "sleep 100");
    auto t = type(check);
    ShellTimeouts timeouts;
    timeouts.checkMs = 500;
    t.setTimeouts(timeouts);
    QCOMPARE(ShellTimeouts().checkMs, 60'000);
    QElapsedTimer clock;
    clock.start();
    auto r = t.check({}, {}, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Timeout);
    QVERIFY(r.error().text().contains(u"my-resource"_s));
    QVERIFY(clock.elapsed() < 5000);
}

void TestShellResourceType::missingCommand()
{
    auto t = type(script(u"check"_s, "echo '[]'"));
    QTemporaryDir dir;
    auto r = t.in({}, Version{{u"ref"_s, u"1"_s}}, {}, dir.path(), {}, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Invalid);
    QVERIFY(r.error().message.contains(u"no in command"_s));

    auto missing = type(m_dir->filePath(u"no-such-script"_s)).check({}, {}, {}, {});
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
    QVERIFY(missing.error().text().contains(u"my-resource"_s));
}

QTEST_GUILESS_MAIN(TestShellResourceType)
#include "tst_shellresourcetype.moc"
