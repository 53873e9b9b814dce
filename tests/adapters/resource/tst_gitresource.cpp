// The git resource type against real repositories made by the git CLI (GitFixture): branch
// history after a version, paths and ignore_paths filters, tag_filter, and in's tree (the
// repository a get leaves and what a put pushes: tst_gitput).

#include "adapters/resource/git/gitresourcetype.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using pando::ErrorCode;
using pando::adapters::Version;
using pando::adapters::git::GitResourceType;
using pando::adapters::git::matchPathGlob;
using pando::adapters::git::tagNameLess;
using pando::test::GitFile;
using pando::test::GitFixture;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

namespace {
QStringList refs(const QList<Version> &versions)
{
    QStringList out;
    for (const Version &v : versions)
        out << v.value(u"ref"_s);
    return out;
}
Version at(const QString &ref)
{
    return Version{{u"ref"_s, ref}};
}
} // namespace

class TestGitResource : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void globs_data();
    void globs();
    void tagOrder();
    void initTestCase();
    void latestWhenNoVersion();
    void commitsAfterAVersionInOrder();
    void pathsFilter_data();
    void pathsFilter();
    void otherBranch();
    void tagFilter();
    void inWritesTreeAndMetadata();
    void unknownRef();
    void invalidSource();
    void messageFilters();

private:
    QJsonObject source(const QJsonObject &extra = {}) const
    {
        QJsonObject s{{u"uri"_s, m_url}};
        for (auto it = extra.begin(); it != extra.end(); ++it)
            s.insert(it.key(), it.value());
        return s;
    }
    std::unique_ptr<GitFixture> m_git;
    std::unique_ptr<QTemporaryDir> m_cache;
    std::unique_ptr<GitResourceType> m_type;
    QString m_url;
    QStringList m_commits; // c1..c5 on main
    QString m_feature;
};

void TestGitResource::globs_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("matches");
    QTest::newRow("dir covers below") << u"src"_s << u"src/a/b.c"_s << true;
    QTest::newRow("dir prefix is not a dir") << u"src"_s << u"srcx/a.c"_s << false;
    QTest::newRow("star in segment") << u"src/*.c"_s << u"src/a.c"_s << true;
    QTest::newRow("star stays in segment") << u"src/*.c"_s << u"src/sub/a.c"_s << false;
    QTest::newRow("double star spans") << u"src/**/*.c"_s << u"src/sub/deep/a.c"_s << true;
    QTest::newRow("double star zero segments") << u"src/**/*.c"_s << u"src/a.c"_s << true;
    QTest::newRow("leading double star") << u"**/*.md"_s << u"docs/x/readme.md"_s << true;
    QTest::newRow("leading double star top") << u"**/*.md"_s << u"readme.md"_s << true;
    QTest::newRow("trailing double star") << u"docs/**"_s << u"docs/a/b"_s << true;
    QTest::newRow("question mark") << u"a?.txt"_s << u"ab.txt"_s << true;
    QTest::newRow("question no slash") << u"a?b"_s << u"a/b"_s << false;
    QTest::newRow("class") << u"v[0-9].txt"_s << u"v3.txt"_s << true;
    QTest::newRow("negated class") << u"v[!0-9].txt"_s << u"v3.txt"_s << false;
    QTest::newRow("dot is literal") << u"a.c"_s << u"abc"_s << false;
    QTest::newRow("exact file") << u"README"_s << u"README"_s << true;
}

void TestGitResource::globs()
{
    QFETCH(QString, pattern);
    QFETCH(QString, path);
    QFETCH(bool, matches);
    QCOMPARE(matchPathGlob(pattern, path), matches);
}

void TestGitResource::tagOrder()
{
    QStringList tags{u"v1.10"_s, u"v1.2"_s, u"v1.0"_s, u"v2.0"_s, u"v1.2.1"_s, u"v01.3"_s};
    std::sort(tags.begin(), tags.end(), tagNameLess);
    QCOMPARE(tags, (QStringList{u"v1.0"_s, u"v1.2"_s, u"v1.2.1"_s, u"v01.3"_s, u"v1.10"_s, u"v2.0"_s}));
}

void TestGitResource::initTestCase()
{
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"the git command line (Debian package git)"_s);
    m_git = std::make_unique<GitFixture>();
    QVERIFY2(m_git->isValid(), qPrintable(m_git->errorString()));
    m_url = m_git->createRepository(u"repo"_s);
    QVERIFY2(!m_url.isEmpty(), qPrintable(m_git->errorString()));
    const QList<QPair<pando::test::GitFiles, QString>> plan{
        {{{u"README"_s, GitFile{"hello\n"}}}, u"c1: readme"_s},
        {{{u"src/a.c"_s, GitFile{"int a;\n"}}}, u"c2: src a"_s},
        {{{u"docs/x.md"_s, GitFile{"# x\n"}}}, u"c3: docs"_s},
        {{{u"src/sub/b.c"_s, GitFile{"int b;\n", true}}, {u"docs/y.md"_s, GitFile{"# y\n"}}}, u"c4: src b and docs"_s},
        {{{u"README"_s, GitFile{"hello again\n"}}, {u"link"_s, GitFile{"README", false, true}}}, u"c5: readme again"_s},
    };
    for (const auto &[files, message] : plan) {
        const QString id = m_git->commit(u"repo"_s, u"main"_s, files, message);
        QVERIFY2(!id.isEmpty(), qPrintable(m_git->errorString()));
        m_commits << id;
    }
    m_feature = m_git->commit(u"repo"_s, u"feature"_s, {{u"feature.txt"_s, GitFile{"f\n"}}}, u"f1"_s);
    QVERIFY2(!m_feature.isEmpty(), qPrintable(m_git->errorString()));
    QVERIFY(!m_git->tag(u"repo"_s, u"v1.0"_s, m_commits[1]).isEmpty());
    QVERIFY(!m_git->tag(u"repo"_s, u"v1.10"_s, m_commits[3]).isEmpty());
    QVERIFY(!m_git->tag(u"repo"_s, u"v1.2"_s, m_commits[2]).isEmpty());
    QVERIFY(!m_git->tag(u"repo"_s, u"rel-1"_s, m_commits[4]).isEmpty());

    m_cache = std::make_unique<QTemporaryDir>();
    m_type = std::make_unique<GitResourceType>(m_cache->filePath(u"git"_s));
    QCOMPARE(m_type->name(), u"git"_s);
}

void TestGitResource::latestWhenNoVersion()
{
    QStringList logs;
    auto versions = m_type->check(source(), {}, {}, [&](const QString &line) { logs << line; });
    PANDO_VERIFY_OK(versions);
    QCOMPARE(refs(*versions), QStringList{m_commits[4]});
    QVERIFY(!logs.isEmpty());
}

void TestGitResource::commitsAfterAVersionInOrder()
{
    auto versions = m_type->check(source(), at(m_commits[0]), {}, {});
    PANDO_VERIFY_OK(versions);
    QCOMPARE(refs(*versions), m_commits.mid(1));
    auto none = m_type->check(source(), at(m_commits[4]), {}, {});
    PANDO_VERIFY_OK(none);
    QVERIFY(none->isEmpty());
}

void TestGitResource::pathsFilter_data()
{
    QTest::addColumn<QJsonObject>("filter");
    QTest::addColumn<QList<int>>("after");
    QTest::addColumn<QList<int>>("latest");
    QTest::newRow("paths dir") << QJsonObject{{u"paths"_s, QJsonArray{u"src"_s}}} << QList<int>{1, 3} << QList<int>{3};
    QTest::newRow("paths glob") << QJsonObject{{u"paths"_s, QJsonArray{u"src/**/*.c"_s}}} << QList<int>{1, 3}
                                << QList<int>{3};
    QTest::newRow("paths star one level")
        << QJsonObject{{u"paths"_s, QJsonArray{u"src/*.c"_s}}} << QList<int>{1} << QList<int>{1};
    QTest::newRow("ignore docs") << QJsonObject{{u"ignore_paths"_s, QJsonArray{u"docs/**"_s}}} << QList<int>{1, 3, 4}
                                 << QList<int>{4};
    QTest::newRow("ignore docs and readme")
        << QJsonObject{{u"ignore_paths"_s, QJsonArray{u"docs"_s, u"README"_s, u"link"_s}}} << QList<int>{1, 3}
        << QList<int>{3};
    QTest::newRow("paths and ignore") << QJsonObject{{u"paths"_s, QJsonArray{u"docs"_s}},
                                                     {u"ignore_paths"_s, QJsonArray{u"docs/y.md"_s}}}
                                      << QList<int>{2} << QList<int>{2};
    QTest::newRow("nothing matches") << QJsonObject{{u"paths"_s, QJsonArray{u"nope"_s}}} << QList<int>{}
                                     << QList<int>{};
}

void TestGitResource::pathsFilter()
{
    QFETCH(QJsonObject, filter);
    QFETCH(QList<int>, after);
    QFETCH(QList<int>, latest);
    QStringList expectedAfter, expectedLatest;
    for (int i : after)
        expectedAfter << m_commits[i];
    for (int i : latest)
        expectedLatest << m_commits[i];
    auto versions = m_type->check(source(filter), at(m_commits[0]), {}, {});
    PANDO_VERIFY_OK(versions);
    QCOMPARE(refs(*versions), expectedAfter);
    auto newest = m_type->check(source(filter), {}, {}, {});
    PANDO_VERIFY_OK(newest);
    QCOMPARE(refs(*newest), expectedLatest);
}

void TestGitResource::otherBranch()
{
    const QJsonObject s = source({{u"branch"_s, u"feature"_s}});
    auto versions = m_type->check(s, at(m_commits[4]), {}, {});
    PANDO_VERIFY_OK(versions);
    QCOMPARE(refs(*versions), QStringList{m_feature});

    // A version that is not in the branch's history (a force push): only the newest.
    auto rewritten = m_type->check(source(), at(m_feature), {}, {});
    PANDO_VERIFY_OK(rewritten);
    QCOMPARE(refs(*rewritten), QStringList{m_commits[4]});

    auto missing = m_type->check(source({{u"branch"_s, u"no-such-branch"_s}}), {}, {}, {});
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, ErrorCode::NotFound);
    QCOMPARE(missing.error().where, u"source.branch"_s);
}

void TestGitResource::tagFilter()
{
    const QJsonObject s = source({{u"tag_filter"_s, u"v*"_s}});
    auto latest = m_type->check(s, {}, {}, {});
    PANDO_VERIFY_OK(latest);
    QCOMPARE(latest->size(), 1);
    QCOMPARE(latest->first().value(u"tag"_s), u"v1.10"_s);
    QCOMPARE(latest->first().value(u"ref"_s), m_commits[3]);

    auto after = m_type->check(s, Version{{u"ref"_s, m_commits[1]}, {u"tag"_s, u"v1.0"_s}}, {}, {});
    PANDO_VERIFY_OK(after);
    QCOMPARE(after->size(), 2);
    QCOMPARE(after->at(0).value(u"tag"_s), u"v1.2"_s);
    QCOMPARE(after->at(0).value(u"ref"_s), m_commits[2]);
    QCOMPARE(after->at(1).value(u"tag"_s), u"v1.10"_s);

    auto none = m_type->check(source({{u"tag_filter"_s, u"nothing-*"_s}}), {}, {}, {});
    PANDO_VERIFY_OK(none);
    QVERIFY(none->isEmpty());
}

void TestGitResource::inWritesTreeAndMetadata()
{
    QTemporaryDir dir;
    auto result = m_type->in(source(), at(m_commits[4]), {}, dir.path(), {}, {}, {});
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->version.value(u"ref"_s), m_commits[4]);
    QFile readme(dir.filePath(u"README"_s));
    QVERIFY(readme.open(QIODevice::ReadOnly));
    QCOMPARE(readme.readAll(), QByteArray("hello again\n"));
    QVERIFY(QFileInfo(dir.filePath(u"src/sub/b.c"_s)).isExecutable());
    QVERIFY(QFileInfo(dir.filePath(u"link"_s)).isSymLink());
    QCOMPARE(QFileInfo(dir.filePath(u"link"_s)).symLinkTarget(),
             QFileInfo(dir.filePath(u"README"_s)).absoluteFilePath());
    QVERIFY(QFileInfo(dir.filePath(u".git"_s)).isDir()); // what it holds: tst_gitput

    QMap<QString, QString> metadata;
    for (const auto &[name, value] : result->metadata)
        metadata.insert(name, value);
    QCOMPARE(metadata.value(u"commit"_s), m_commits[4]);
    QCOMPARE(metadata.value(u"message"_s), u"c5: readme again"_s);
    QVERIFY(metadata.value(u"author"_s).contains(u'<'));
    QVERIFY(!metadata.value(u"author_date"_s).isEmpty());

    // An older commit's tree does not have later files; a non-empty directory is refused.
    QTemporaryDir older;
    auto first = m_type->in(source(), at(m_commits[1]), {}, older.path(), {}, {}, {});
    PANDO_VERIFY_OK(first);
    QVERIFY(QFileInfo::exists(older.filePath(u"src/a.c"_s)));
    QVERIFY(!QFileInfo::exists(older.filePath(u"docs"_s)));
    auto again = m_type->in(source(), at(m_commits[1]), {}, older.path(), {}, {}, {});
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Invalid);
}

void TestGitResource::unknownRef()
{
    QTemporaryDir dir;
    auto r = m_type->in(source(), at(u"0123456789abcdef0123456789abcdef01234567"_s), {}, dir.path(), {}, {}, {});
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::NotFound);
    QCOMPARE(r.error().where, u"version.ref"_s);
    auto noRef = m_type->in(source(), Version{{u"tag"_s, u"v1.0"_s}}, {}, dir.path(), {}, {}, {});
    QVERIFY(!noRef);
    QCOMPARE(noRef.error().code, ErrorCode::Invalid);
}

void TestGitResource::invalidSource()
{
    auto noUri = m_type->check(QJsonObject{}, {}, {}, {});
    QVERIFY(!noUri);
    QCOMPARE(noUri.error().where, u"source.uri"_s);
    auto badPaths = m_type->check(source({{u"paths"_s, 3}}), {}, {}, {});
    QVERIFY(!badPaths);
    QCOMPARE(badPaths.error().where, u"source.paths"_s);
    auto badUrl = m_type->check(QJsonObject{{u"uri"_s, u"ext::sh -c touch% /tmp/pwned"_s}}, {}, {}, {});
    QVERIFY(!badUrl);
    // What Pando's git resource does not do is refused with the reason, never skipped quietly.
    for (const QString &key :
         {u"git_crypt_key"_s, u"commit_verification_keys"_s, u"https_tunnel"_s, u"skip_ssl_verification"_s}) {
        const QJsonValue value = key == u"commit_verification_keys"_s ? QJsonValue(QJsonArray{u"KEY"_s})
                                 : key == u"skip_ssl_verification"_s  ? QJsonValue(true)
                                                                      : QJsonValue(u"x"_s);
        auto refused = m_type->check(source({{key, value}}), {}, {}, {});
        QVERIFY2(!refused, qPrintable(key));
        QCOMPARE(refused.error().where, u"source."_s + key);
    }
    PANDO_VERIFY_OK(
        m_type->check(source({{u"skip_ssl_verification"_s, false}, {u"git_config"_s, QJsonArray{}}}), {}, {}, {}));
}

// Concourse's message rules: "[ci skip]" and "[skip ci]" commits are no versions unless
// disable_ci_skip; commit_filter's exclude and include are plain text.
void TestGitResource::messageFilters()
{
    const QString url = m_git->createRepository(u"messages"_s);
    QStringList ids;
    for (const QString &message : {u"first"_s, u"docs only [ci skip]"_s, u"feature [skip deploy]"_s, u"fix: a bug"_s}) {
        ids << m_git->commit(u"messages"_s, u"main"_s, {{u"log"_s, GitFile{message.toUtf8()}}}, message);
        QVERIFY(!ids.last().isEmpty());
    }
    const auto check = [&](const QJsonObject &extra) {
        QJsonObject s{{u"uri"_s, url}};
        for (auto it = extra.begin(); it != extra.end(); ++it)
            s.insert(it.key(), it.value());
        auto versions = m_type->check(s, at(ids[0]), {}, {});
        return versions ? refs(*versions) : QStringList{versions.error().text()};
    };
    QCOMPARE(check({}), (QStringList{ids[2], ids[3]}));
    QCOMPARE(check({{u"disable_ci_skip"_s, true}}), ids.mid(1));
    QCOMPARE(check({{u"commit_filter"_s, QJsonObject{{u"exclude"_s, QJsonArray{u"[skip deploy]"_s}}}}}),
             QStringList{ids[3]});
    QCOMPARE(check({{u"commit_filter"_s, QJsonObject{{u"include"_s, QJsonArray{u"feature"_s, u"nothing"_s}}}}}),
             QStringList{ids[2]});
    auto bad =
        m_type->check(QJsonObject{{u"uri"_s, url}, {u"commit_filter"_s, QJsonObject{{u"exclude"_s, 3}}}}, {}, {}, {});
    QVERIFY(!bad);
    QCOMPARE(bad.error().where, u"source.commit_filter.exclude"_s);
}

QTEST_GUILESS_MAIN(TestGitResource)
#include "tst_gitresource.moc"
