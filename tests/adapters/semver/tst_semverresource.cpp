// The semver resource type: Concourse's bump semantics, and its git driver against real
// repositories (written by libgit2, read back with the git command line) and its s3 driver
// against s3rver.

#include "adapters/kit/gitkit/gitmirrors.h"
#include "adapters/kit/s3kit/s3client.h"
#include "adapters/resource/semver/semverresourcetype.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/s3server.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using adapters::Version;
using adapters::semver::SemverResourceType;

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

Version number(const QString &n)
{
    return Version{{u"number"_s, n}};
}

// A git driver's source: file on the branch "version" of url, with extra keys.
QJsonObject gitSource(const QString &url, const QString &file, const QJsonObject &extra = {})
{
    QJsonObject source{{u"driver"_s, u"git"_s}, {u"uri"_s, url}, {u"branch"_s, u"version"_s}, {u"file"_s, file}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        source.insert(it.key(), it.value());
    return source;
}

} // namespace

class TestSemverResource : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void bumpsAsConcourseDocuments_data()
    {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("bump");
        QTest::addColumn<QString>("pre");
        QTest::addColumn<bool>("withoutVersion");
        QTest::addColumn<QString>("to");
        QTest::newRow("major") << u"1.0.0"_s << u"major"_s << QString() << false << u"2.0.0"_s;
        QTest::newRow("minor") << u"0.1.0"_s << u"minor"_s << QString() << false << u"0.2.0"_s;
        QTest::newRow("patch") << u"0.0.1"_s << u"patch"_s << QString() << false << u"0.0.2"_s;
        QTest::newRow("minor resets patch") << u"1.4.7"_s << u"minor"_s << QString() << false << u"1.5.0"_s;
        QTest::newRow("final") << u"1.0.0-rc.1"_s << u"final"_s << QString() << false << u"1.0.0"_s;
        QTest::newRow("same pre counts up") << u"1.0.0-rc.1"_s << QString() << u"rc"_s << false << u"1.0.0-rc.2"_s;
        QTest::newRow("other pre restarts")
            << u"1.0.0-alpha.3"_s << QString() << u"beta"_s << false << u"1.0.0-beta.1"_s;
        QTest::newRow("pre added") << u"1.0.0"_s << QString() << u"rc"_s << false << u"1.0.0-rc.1"_s;
        QTest::newRow("bump and pre") << u"1.0.0"_s << u"minor"_s << u"rc"_s << false << u"1.1.0-rc.1"_s;
        QTest::newRow("pre without version") << u"1.0.0"_s << u"minor"_s << u"rc"_s << true << u"1.1.0-rc"_s;
        QTest::newRow("build dropped") << u"1.0.0+b.7"_s << u"patch"_s << QString() << false << u"1.0.1"_s;
    }

    void bumpsAsConcourseDocuments()
    {
        QFETCH(QString, from);
        QFETCH(QString, bump);
        QFETCH(QString, pre);
        QFETCH(bool, withoutVersion);
        QFETCH(QString, to);
        auto bumped = adapters::semver::bumpSemVer(*adapters::semver::parseSemVer(from), bump, pre, withoutVersion);
        QVERIFY(bumped);
        QCOMPARE(bumped->text(), to);
    }

    void ordersAsSemverOrgDoes()
    {
        using adapters::semver::compareSemVer;
        using adapters::semver::parseSemVer;
        const QStringList ordered{u"1.0.0-alpha"_s, u"1.0.0-alpha.1"_s, u"1.0.0-alpha.beta"_s,
                                  u"1.0.0-beta"_s,  u"1.0.0-beta.2"_s,  u"1.0.0-beta.11"_s,
                                  u"1.0.0-rc.1"_s,  u"1.0.0"_s,         u"1.0.1"_s,
                                  u"1.2.0"_s,       u"10.0.0"_s};
        for (qsizetype i = 0; i + 1 < ordered.size(); ++i)
            QVERIFY2(compareSemVer(*parseSemVer(ordered[i]), *parseSemVer(ordered[i + 1])) < 0,
                     qPrintable(ordered[i] + u" < "_s + ordered[i + 1]));
        QCOMPARE(compareSemVer(*parseSemVer(u"1.0.0+a"_s), *parseSemVer(u"1.0.0+b"_s)), 0);
        for (const QString &bad : {u"v1.0.0"_s, u"1.0"_s, u"01.0.0"_s, u"1.0.0-01"_s, u"1.0.0-"_s, u"latest"_s})
            QVERIFY2(!parseSemVer(bad), qPrintable(bad));
    }

    void badSourcesSayWhatIsWrong_data()
    {
        QTest::addColumn<QJsonObject>("source");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("swift") << QJsonObject{{u"driver"_s, u"swift"_s}} << u"source.driver"_s << u"not supported"_s;
        QTest::newRow("git without uri") << QJsonObject{{u"driver"_s, u"git"_s},
                                                        {u"branch"_s, u"v"_s},
                                                        {u"file"_s, u"version"_s}}
                                         << u"source.uri"_s << u"required by the git driver"_s;
        QTest::newRow("s3 without key") << QJsonObject{{u"bucket"_s, u"b"_s}} << u"source.key"_s
                                        << u"required by the s3 driver"_s;
        QTest::newRow("initial") << QJsonObject{{u"initial_version"_s, u"one"_s}, {u"bucket"_s, u"b"_s}}
                                 << u"source.initial_version"_s << u"not a semantic version"_s;
        QTest::newRow("file outside") << QJsonObject{{u"driver"_s, u"git"_s},
                                                     {u"uri"_s, u"file:///x"_s},
                                                     {u"branch"_s, u"v"_s},
                                                     {u"file"_s, u"../v"_s}}
                                      << u"source.file"_s << u"inside the repository"_s;
    }

    void badSourcesSayWhatIsWrong()
    {
        QFETCH(QJsonObject, source);
        QFETCH(QString, where);
        QFETCH(QString, says);
        SemverResourceType type(m_cache.path());
        auto checked = type.check(source, {}, {}, {});
        QVERIFY(!checked);
        QCOMPARE(checked.error().where, where);
        QVERIFY2(checked.error().message.contains(says), qPrintable(checked.error().text()));
    }

    void gitDriverReadsBumpsAndPushes()
    {
        requireGit();
        const QString url = m_git.createRepository(u"app"_s);
        QVERIFY(!m_git.commit(u"app"_s, u"main"_s, {{u"README"_s, {"app"}}}).isEmpty());
        QVERIFY(!m_git.commit(u"app"_s, u"version"_s, {{u"version"_s, {"1.2.3\n"}}}, u"start"_s).isEmpty());
        const QJsonObject source = gitSource(url, u"version"_s, {{u"git_user"_s, u"Release Bot <bot@example.com>"_s}});
        SemverResourceType type(m_cache.path());
        auto checked = type.check(source, {}, {}, {});
        QVERIFY2(checked, qPrintable(checked ? QString() : checked.error().text()));
        QCOMPARE(*checked, QList<Version>{number(u"1.2.3"_s)});
        auto same = type.check(source, number(u"1.2.3"_s), {}, {});
        QVERIFY(same);
        QVERIFY(same->isEmpty());

        // A get bumps for its build only.
        QTemporaryDir dir;
        auto got = type.in(source, number(u"1.2.3"_s), QJsonObject{{u"bump"_s, u"minor"_s}}, dir.path(), {}, {}, {});
        QVERIFY2(got, qPrintable(got ? QString() : got.error().text()));
        QCOMPARE(readAll(dir.filePath(u"version"_s)), QByteArray("1.3.0"));
        QCOMPARE(readAll(dir.filePath(u"number"_s)), QByteArray("1.3.0"));
        QCOMPARE(m_git.git({u"show"_s, u"version:version"_s}, m_git.barePath(u"app"_s)), u"1.2.3"_s);

        // A put bumps what is stored: a commit on the branch, as git itself reads it.
        auto put = type.out(source, QJsonObject{{u"bump"_s, u"patch"_s}}, dir.path(), {}, {}, {});
        QVERIFY2(put, qPrintable(put ? QString() : put.error().text()));
        QCOMPARE(put->version, number(u"1.2.4"_s));
        const QString bare = m_git.barePath(u"app"_s);
        QCOMPARE(m_git.git({u"show"_s, u"version:version"_s}, bare), u"1.2.4"_s);
        QCOMPARE(m_git.git({u"log"_s, u"-1"_s, u"--format=%s|%an|%ae"_s, u"version"_s}, bare),
                 u"bump to 1.2.4|Release Bot|bot@example.com"_s);
        QCOMPARE(m_git.git({u"rev-list"_s, u"--count"_s, u"version"_s}, bare), u"3"_s);
        QCOMPARE(m_git.git({u"show"_s, u"main:README"_s}, bare), u"app"_s); // other branches untouched
        auto after = type.check(source, number(u"1.2.3"_s), {}, {});
        QVERIFY(after);
        QCOMPARE(*after, QList<Version>{number(u"1.2.4"_s)});
    }

    void gitDriverBumpsWhatIsThereNow()
    {
        requireGit();
        const QString url = m_git.createRepository(u"moving"_s);
        QVERIFY(!m_git.commit(u"moving"_s, u"version"_s, {{u"VERSION"_s, {"2.0.0"}}}).isEmpty());
        const QJsonObject source = gitSource(url, u"VERSION"_s);
        SemverResourceType type(m_cache.path());
        QVERIFY(type.check(source, {}, {}, {}));
        // Someone else moves the branch after Pando last read it.
        QVERIFY(!m_git.commit(u"moving"_s, u"version"_s, {{u"VERSION"_s, {"2.1.0"}}}).isEmpty());
        QTemporaryDir dir;
        auto put = type.out(source, QJsonObject{{u"bump"_s, u"minor"_s}}, dir.path(), {}, {}, {});
        QVERIFY2(put, qPrintable(put ? QString() : put.error().text()));
        QCOMPARE(put->version, number(u"2.2.0"_s));
        QCOMPARE(m_git.git({u"show"_s, u"version:VERSION"_s}, m_git.barePath(u"moving"_s)), u"2.2.0"_s);

        // Writing on top of a tip that is no longer the branch's is refused, not forced.
        adapters::git::GitMirrors mirrors(m_cache.path());
        const QString stale = *m_git.git({u"rev-parse"_s, u"version~1"_s}, m_git.barePath(u"moving"_s));
        auto refused = mirrors.commitFile(url, {u"version"_s, u"VERSION"_s, "9.9.9", u"x"_s}, stale);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Conflict);
        QCOMPARE(m_git.git({u"show"_s, u"version:VERSION"_s}, m_git.barePath(u"moving"_s)), u"2.2.0"_s);
    }

    void anEmptyPlaceStartsFromTheInitialVersion()
    {
        requireGit();
        const QString url = m_git.createRepository(u"fresh"_s);
        QVERIFY(!m_git.commit(u"fresh"_s, u"version"_s, {{u"README"_s, {"versions live here"}}}).isEmpty());
        const QJsonObject source = gitSource(url, u"ci/version"_s, {{u"initial_version"_s, u"0.1.0"_s}});
        SemverResourceType type(m_cache.path());
        auto checked = type.check(source, {}, {}, {});
        QVERIFY2(checked, qPrintable(checked ? QString() : checked.error().text()));
        QCOMPARE(*checked, QList<Version>{number(u"0.1.0"_s)});
        QTemporaryDir work;
        QVERIFY(QDir().mkpath(work.filePath(u"bumped"_s)));
        QFile file(work.filePath(u"bumped/number"_s));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("3.0.0-rc.2\n");
        file.close();
        auto put = type.out(source, QJsonObject{{u"file"_s, u"bumped/number"_s}}, work.path(), {}, {}, {});
        QVERIFY2(put, qPrintable(put ? QString() : put.error().text()));
        QCOMPARE(put->version, number(u"3.0.0-rc.2"_s));
        QCOMPARE(m_git.git({u"show"_s, u"version:ci/version"_s}, m_git.barePath(u"fresh"_s)), u"3.0.0-rc.2"_s);
    }

    void whatIsStoredMustBeAVersion()
    {
        requireGit();
        const QString url = m_git.createRepository(u"junk"_s);
        QVERIFY(!m_git.commit(u"junk"_s, u"version"_s, {{u"version"_s, {"next release"}}}).isEmpty());
        const QJsonObject source = gitSource(url, u"version"_s);
        SemverResourceType type(m_cache.path());
        auto checked = type.check(source, {}, {}, {});
        QVERIFY(!checked);
        QCOMPARE(checked.error().where, u"source.file"_s);
        QVERIFY2(checked.error().message.contains(u"\"next release\""_s), qPrintable(checked.error().message));
        QTemporaryDir work;
        auto put = type.out(source, QJsonObject{{u"bump"_s, u"huge"_s}}, work.path(), {}, {}, {});
        QVERIFY(!put);
        QCOMPARE(put.error().where, u"params.bump"_s);
        auto nothing = type.out(source, {}, work.path(), {}, {}, {});
        QVERIFY(!nothing);
        QCOMPARE(nothing.error().where, u"params"_s);
    }

    void s3DriverKeepsTheVersionInAnObject()
    {
        QString why;
        PANDO_REQUIRE_COMPONENT(test::S3Server::available(&why), u"s3rver: "_s + why);
        test::S3Server server;
        QVERIFY2(server.start(), qPrintable(server.error()));
        adapters::s3kit::Config config;
        config.bucket = u"versions"_s;
        config.endpoint = server.endpoint();
        config.credentials = {QLatin1String(test::S3Server::AccessKey), QLatin1String(test::S3Server::SecretKey), {}};
        const adapters::s3kit::S3Client client(config);
        QVERIFY(client.createBucket());
        const QJsonObject source{{u"driver"_s, u"s3"_s},
                                 {u"bucket"_s, u"versions"_s},
                                 {u"key"_s, u"app/version"_s},
                                 {u"endpoint"_s, server.endpoint()},
                                 {u"access_key_id"_s, QLatin1String(test::S3Server::AccessKey)},
                                 {u"secret_access_key"_s, QLatin1String(test::S3Server::SecretKey)}};
        SemverResourceType type(m_cache.path());
        auto first = type.check(source, {}, {}, {});
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        QCOMPARE(*first, QList<Version>{number(u"0.0.0"_s)});
        QTemporaryDir work;
        auto put = type.out(source, QJsonObject{{u"bump"_s, u"major"_s}, {u"pre"_s, u"rc"_s}}, work.path(), {}, {}, {});
        QVERIFY2(put, qPrintable(put ? QString() : put.error().text()));
        QCOMPARE(put->version, number(u"1.0.0-rc.1"_s));
        QBuffer stored;
        stored.open(QIODevice::WriteOnly);
        QVERIFY(client.download(u"app/version"_s, {}, stored));
        QCOMPARE(stored.data(), QByteArray("1.0.0-rc.1"));
        auto again = type.out(source, QJsonObject{{u"pre"_s, u"rc"_s}}, work.path(), {}, {}, {});
        QVERIFY(again);
        QCOMPARE(again->version, number(u"1.0.0-rc.2"_s));
        auto checked = type.check(source, number(u"1.0.0-rc.1"_s), {}, {});
        QVERIFY(checked);
        QCOMPARE(*checked, QList<Version>{number(u"1.0.0-rc.2"_s)});
    }

private:
    void requireGit() { PANDO_REQUIRE_COMPONENT(test::GitFixture::gitAvailable(), u"git"_s); }

    test::GitFixture m_git;
    QTemporaryDir m_cache;
};

QTEST_GUILESS_MAIN(TestSemverResource)
#include "tst_semverresource.moc"
