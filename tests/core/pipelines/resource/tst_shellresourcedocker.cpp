// ShellResourceType through the DockerTaskRunner: the request arrives on stdin inside the
// container and in's destination is mounted at /tmp/build/get and passed as $1.

#include "adapters/taskrunner/docker/dockertaskrunner.h"
#include "core/pipelines/resource/shellresourcetype.h"
#include "tests/adapters/docker/dockerharness.h"
#include "tests/support/component.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using pando::ErrorCode;
using pando::adapters::Version;
using pando::adapters::docker::DockerTaskRunner;
using pando::core::pipelines::ShellCommands;
using pando::core::pipelines::ShellResourceType;
using pando::test::DockerHarness;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

class TestShellResourceDocker : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void checkAndInInAContainer();

private:
    DockerTaskRunner m_runner;
};

void TestShellResourceDocker::initTestCase()
{
    QString why;
    PANDO_REQUIRE_COMPONENT(DockerHarness::available(&why), why);
    auto image = DockerHarness::ensureBaseImage();
    PANDO_VERIFY_OK(image);
}

void TestShellResourceDocker::checkAndInInAContainer()
{
    ShellCommands commands;
    // The request's source.greeting comes back as a version, so stdin really arrived.
    commands.check = {u"sh"_s, u"-c"_s, uR"(req=$(cat); echo "got $req" >&2; echo '[{"ref":"1"},{"ref":"2"}]')"_s};
    commands.in = {
        u"sh"_s, u"-c"_s,
        uR"(cat > "$1/request.json"; echo hi > "$1/file"; echo '{"version":{"ref":"2"},"metadata":[{"name":"where","value":"'"$1"'"}]}')"_s,
        u"in"_s};
    ShellResourceType type(u"boxed"_s, m_runner, DockerHarness::baseImage(), commands);
    QStringList logs;
    auto versions = type.check(QJsonObject{{u"greeting"_s, u"hello"_s}}, Version{{u"ref"_s, u"1"_s}}, {},
                               [&](const QString &line) { logs << line; });
    PANDO_VERIFY_OK(versions);
    QCOMPARE(versions->size(), 1);
    QCOMPARE(versions->first().value(u"ref"_s), u"2"_s);
    QCOMPARE(logs.size(), 1);
    QVERIFY2(logs.first().contains(u"\"greeting\":\"hello\""_s), qPrintable(logs.first()));

    QTemporaryDir dest;
    // Writable for every user: an image may run as someone other than this test.
    QVERIFY(QFile::setPermissions(dest.path(), QFile::Permissions(0x7777)));
    auto fetched = type.in({}, Version{{u"ref"_s, u"2"_s}}, {}, dest.path(), {}, {}, {});
    PANDO_VERIFY_OK(fetched);
    QCOMPARE(fetched->metadata.value(0).second, u"/tmp/build/get"_s);
    QFile file(QDir(dest.path()).filePath(u"file"_s));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("hi\n"));
    QVERIFY(QFile::exists(QDir(dest.path()).filePath(u"request.json"_s)));
}

QTEST_GUILESS_MAIN(TestShellResourceDocker)
#include "tst_shellresourcedocker.moc"
