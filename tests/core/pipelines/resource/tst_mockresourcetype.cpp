// The built-in mock resource type, as Concourse's documentation describes it: check's versions,
// the files in writes, the versions out makes, and what it refuses.

#include "core/pipelines/resource/mockresourcetype.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using pando::CancelToken;
using pando::ErrorCode;
using pando::adapters::Version;
using namespace pando::core::pipelines;

namespace {
Version v(const QString &text)
{
    return Version{{u"version"_s, text}};
}
QByteArray read(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
}
} // namespace

class TestMockResourceType : public QObject {
    Q_OBJECT

    MockResourceType m_mock;
    CancelToken m_cancel;

private Q_SLOTS:
    void checkEmitsWhatTheSourceSays()
    {
        QCOMPARE(m_mock.check({}, {}, m_cancel, {}).value(), QList<Version>{v(u"mock"_s)});
        QCOMPARE(m_mock.check({{u"initial_version"_s, u"1.0"_s}}, {}, m_cancel, {}).value(),
                 QList<Version>{v(u"1.0"_s)});
        QVERIFY(m_mock.check({{u"no_initial_version"_s, true}}, {}, m_cancel, {}).value().isEmpty());
        // A version it is asked from comes back: that is how a check --from makes a new one.
        QCOMPARE(m_mock.check({{u"initial_version"_s, u"1.0"_s}}, v(u"foo"_s), m_cancel, {}).value(),
                 QList<Version>{v(u"foo"_s)});
        // force_version wins over all of that.
        QCOMPARE(m_mock.check({{u"force_version"_s, u"pinned"_s}}, v(u"foo"_s), m_cancel, {}).value(),
                 QList<Version>{v(u"pinned"_s)});
        // YAML numbers arrive as JSON numbers.
        QCOMPARE(m_mock.check({{u"initial_version"_s, 3}}, {}, m_cancel, {}).value(), QList<Version>{v(u"3"_s)});
    }

    void checkFailsAndWaitsOnRequest()
    {
        QStringList logged;
        const auto failed = m_mock.check({{u"check_failure"_s, u"registry down"_s}, {u"log"_s, u"checking"_s}}, {},
                                         m_cancel, [&](const QString &line) { logged << line; });
        QVERIFY(!failed);
        QCOMPARE(failed.error().message, u"registry down"_s);
        QCOMPARE(logged, QStringList{u"checking"_s});

        QElapsedTimer timer;
        timer.start();
        QVERIFY(m_mock.check({{u"check_delay"_s, u"300ms"_s}}, {}, m_cancel, {}));
        QVERIFY(timer.elapsed() >= 290);
        // A cancelled check stops waiting.
        CancelToken cancelled;
        cancelled.cancel();
        timer.restart();
        const auto stopped = m_mock.check({{u"check_delay"_s, u"5m"_s}}, {}, cancelled, {});
        QVERIFY(!stopped);
        QCOMPARE(stopped.error().code, ErrorCode::Cancelled);
        QVERIFY(timer.elapsed() < 2000);
        const auto tooLong = m_mock.check({{u"check_delay"_s, u"2h"_s}}, {}, m_cancel, {});
        QVERIFY(!tooLong);
        QCOMPARE(tooLong.error().where, u"source.check_delay"_s);
    }

    void inWritesTheVersionAndTheFiles()
    {
        QTemporaryDir dir;
        const QJsonObject source{
            {u"create_files"_s,
             QJsonObject{{u"config/app.yml"_s, u"foo: bar\n"_s}, {u"run.sh"_s, u"#!/bin/sh\necho hi\n"_s}}},
            {u"metadata"_s, QJsonArray{QJsonObject{{u"name"_s, u"foo"_s}, {u"value"_s, u"bar"_s}}}}};
        const QJsonObject params{{u"create_files_via_params"_s, QJsonObject{{u"run.sh"_s, u"echo from params\n"_s}}}};
        const auto got = m_mock.in(source, v(u"2.1"_s), params, dir.path(), {}, m_cancel, {});
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QCOMPARE(got->version, v(u"2.1"_s));
        QCOMPARE(got->metadata.size(), 1);
        QCOMPARE(got->metadata.first().second, u"bar"_s);
        QCOMPARE(read(dir.filePath(u"version"_s)), QByteArray("2.1"));
        QCOMPARE(read(dir.filePath(u"privileged"_s)), QByteArray("false"));
        QCOMPARE(read(dir.filePath(u"config/app.yml"_s)), QByteArray("foo: bar\n"));
        QCOMPARE(read(dir.filePath(u"run.sh"_s)), QByteArray("echo from params\n")); // the params win
    }

    void inKeepsFilesInsideItsDirectory()
    {
        QTemporaryDir parent;
        const QString dir = parent.filePath(u"get"_s);
        QVERIFY(QDir().mkpath(dir));
        for (const QString &name : {u"../escaped"_s, u"/tmp/abs"_s, u"a/../../escaped"_s}) {
            const auto refused =
                m_mock.in({{u"create_files"_s, QJsonObject{{name, u"x"_s}}}}, v(u"1"_s), {}, dir, {}, m_cancel, {});
            QVERIFY2(!refused, qPrintable(name));
            QCOMPARE(refused.error().where, u"create_files."_s + name);
        }
        QVERIFY(!QFile::exists(parent.filePath(u"escaped"_s)));
        const auto mirror = m_mock.in({{u"mirror_self"_s, true}}, v(u"1"_s), {}, dir, {}, m_cancel, {});
        QVERIFY(!mirror);
        QCOMPARE(mirror.error().where, u"source.mirror_self"_s);
        const auto unknown = m_mock.check({{u"initial_verison"_s, u"1"_s}}, {}, m_cancel, {});
        QVERIFY(!unknown);
        QCOMPARE(unknown.error().where, u"source.initial_verison"_s);
    }

    void outMakesTheVersionItIsGiven()
    {
        QTemporaryDir work;
        QVERIFY(QDir(work.path()).mkpath(u"bump"_s));
        QFile file(work.filePath(u"bump/next"_s));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("3.0.0\n");
        file.close();
        QCOMPARE(m_mock.out({}, {{u"version"_s, u"2.0"_s}}, work.path(), {}, m_cancel, {}).value().version,
                 v(u"2.0"_s));
        QCOMPARE(m_mock.out({}, {{u"file"_s, u"bump/next"_s}}, work.path(), {}, m_cancel, {}).value().version,
                 v(u"3.0.0"_s));
        QStringList logged;
        QVERIFY(m_mock.out({}, {{u"version"_s, u"x"_s}, {u"print_env"_s, true}}, work.path(),
                           {{u"BUILD_JOB_NAME"_s, u"ship"_s}}, m_cancel, [&](const QString &line) { logged << line; }));
        QCOMPARE(logged, QStringList{u"BUILD_JOB_NAME=ship"_s});
        const auto outside = m_mock.out({}, {{u"file"_s, u"../../etc/hostname"_s}}, work.path(), {}, m_cancel, {});
        QVERIFY(!outside);
        QCOMPARE(outside.error().where, u"params.file"_s);
        const auto nothing = m_mock.out({}, {}, work.path(), {}, m_cancel, {});
        QVERIFY(!nothing);
        QVERIFY(nothing.error().message.contains(u"params.version or params.file"_s));
    }
};

QTEST_GUILESS_MAIN(TestMockResourceType)
#include "tst_mockresourcetype.moc"
