// The git resource's get and put against real repositories: what a get leaves is a repository git
// itself reads as a clean checkout, and a put pushes what a task committed there, as Concourse's
// git resource documents it (rebase, merge, force, tags, only_tag), to file:// remotes and to a
// private one over smart HTTP behind a password. Every result is read back with the git CLI.

#include "adapters/resource/git/gitresourcetype.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/privategit.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <functional>

using namespace Qt::StringLiterals;
using pando::ErrorCode;
using pando::adapters::Version;
using pando::adapters::VersionMetadata;
using pando::adapters::git::GitResourceType;
using pando::test::GitFile;
using pando::test::GitFixture;

template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
}

bool writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(content) == content.size();
}

} // namespace

class TestGitPut : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void getLeavesACleanRepository();
    void getParams();
    void putPushesWhatATaskCommitted();
    void aMovedBranchIsRefusedUnlessRebasedOrMerged();
    void aBranchMovingDuringThePutIsBuiltOnAgain();
    void aRebaseConflictNamesTheFiles();
    void forceReplacesTheBranch();
    void tags();
    void badInputIsRefusedAndNothingMoves();
    void aRepositoryCannotReadOutsideItself();
    void privateRepositoryOverHttps();

private:
    QJsonObject source(const QJsonObject &extra = {}) const
    {
        QJsonObject s{{u"uri"_s, m_url}, {u"branch"_s, u"main"_s}};
        for (auto it = extra.begin(); it != extra.end(); ++it)
            s.insert(it.key(), it.value());
        return s;
    }
    // A get of the branch's tip into WORK/name.
    QString getInto(const QString &name, const QJsonObject &params = {})
    {
        const QString dir = m_work->filePath(name);
        QDir().mkpath(dir);
        const QString tip = remoteTip();
        auto got = m_type->in(source(), Version{{u"ref"_s, tip}}, params, dir, {}, {}, {});
        if (!got) {
            qWarning("get failed: %s", qPrintable(got.error().text()));
            return {};
        }
        return dir;
    }
    // A commit made in a clone the way a task makes it.
    QString commitIn(const QString &dir, const QString &path, const QByteArray &content, const QString &message)
    {
        if (!writeFile(dir + u'/' + path, content) || !m_git->git({u"add"_s, u"-A"_s}, dir) ||
            !m_git->git({u"commit"_s, u"-q"_s, u"--author=Task <task@ci.invalid>"_s, u"-m"_s, message}, dir))
            return {};
        return m_git->git({u"rev-parse"_s, u"HEAD"_s}, dir).value_or(QString());
    }
    // Someone else pushes to main, on top of what it holds now.
    QString theyPush(const QString &path, const QByteArray &content, const QString &message)
    {
        const QString work = m_git->workPath(u"repo"_s);
        if (!m_git->git({u"fetch"_s, u"-q"_s, u"origin"_s}, work) ||
            !m_git->git({u"checkout"_s, u"-q"_s, u"-B"_s, u"main"_s, u"origin/main"_s}, work))
            return {};
        return m_git->commit(u"repo"_s, u"main"_s, {{path, GitFile{content}}}, message);
    }
    QString remoteTip(const QString &ref = u"main"_s)
    {
        return m_git->git({u"rev-parse"_s, ref}, m_git->barePath(u"repo"_s)).value_or(QString());
    }
    pando::Result<VersionMetadata> put(const QJsonObject &params, const QJsonObject &extraSource = {})
    {
        return m_type->out(source(extraSource), params, m_work->path(), {}, {}, [this](const QString &line) {
            m_log << line;
            if (m_onLine)
                m_onLine(line);
        });
    }
    std::function<void(const QString &)> m_onLine; // called with each progress line of a put
    std::unique_ptr<GitFixture> m_git;
    std::unique_ptr<QTemporaryDir> m_cache;
    std::unique_ptr<QTemporaryDir> m_work;
    std::unique_ptr<GitResourceType> m_type;
    QString m_url;
    QStringList m_log;
};

void TestGitPut::init()
{
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"the git command line (Debian package git)"_s);
    m_git = std::make_unique<GitFixture>();
    QVERIFY2(m_git->isValid(), qPrintable(m_git->errorString()));
    m_url = m_git->createRepository(u"repo"_s);
    QVERIFY2(!m_url.isEmpty(), qPrintable(m_git->errorString()));
    QVERIFY(!m_git->commit(u"repo"_s, u"main"_s, {{u"README"_s, GitFile{"hello\n"}}}, u"first"_s).isEmpty());
    const QString second = m_git->commit(
        u"repo"_s, u"main"_s, {{u"app.sh"_s, GitFile{"echo hi\n", true}}, {u"link"_s, GitFile{"README", false, true}}},
        u"second\n\nwith a body"_s);
    QVERIFY(!second.isEmpty());
    QVERIFY(!m_git->tag(u"repo"_s, u"v0.1.0"_s, second).isEmpty());
    m_cache = std::make_unique<QTemporaryDir>();
    m_work = std::make_unique<QTemporaryDir>();
    m_type = std::make_unique<GitResourceType>(m_cache->filePath(u"git"_s));
    m_log.clear();
    m_onLine = {};
}

void TestGitPut::getLeavesACleanRepository()
{
    const QString tip = remoteTip();
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    // git itself sees a checkout of the commit with nothing changed, without refreshing the index.
    QCOMPARE(m_git->git({u"rev-parse"_s, u"HEAD"_s}, dir).value_or(u"?"_s), tip);
    QVERIFY2(m_git->git({u"diff-index"_s, u"--quiet"_s, u"HEAD"_s}, dir), qPrintable(m_git->errorString()));
    QCOMPARE(m_git->git({u"status"_s, u"--porcelain"_s}, dir).value_or(u"?"_s), QString());
    QCOMPARE(m_git->git({u"rev-parse"_s, u"main"_s}, dir).value_or(u"?"_s), tip);
    QCOMPARE(m_git->git({u"remote"_s, u"get-url"_s, u"origin"_s}, dir).value_or(u"?"_s), m_url);
    QCOMPARE(m_git->git({u"log"_s, u"--format=%s"_s}, dir).value_or(u"?"_s), u"second\nfirst"_s);
    QVERIFY(QFileInfo(dir + u"/app.sh"_s).isExecutable());
    QVERIFY(QFileInfo(dir + u"/link"_s).isSymLink());
    // The files Concourse's git resource leaves for the tasks after it.
    QCOMPARE(readAll(dir + u"/.git/ref"_s), tip.toUtf8() + '\n');
    QCOMPARE(readAll(dir + u"/.git/short_ref"_s), tip.left(7).toUtf8());
    QCOMPARE(readAll(dir + u"/.git/commit_message"_s), QByteArray("second\n\nwith a body"));
    QCOMPARE(readAll(dir + u"/.git/committer"_s), QByteArray("test@pando.invalid"));
    QCOMPARE(readAll(dir + u"/.git/committer_name"_s), QByteArray("Pando Test"));
    QCOMPARE(readAll(dir + u"/.git/describe_ref"_s), QByteArray("v0.1.0"));
    QVERIFY(readAll(dir + u"/.git/metadata.json"_s).contains("\"commit\""));
    QCOMPARE(m_git->git({u"tag"_s}, dir).value_or(u"?"_s), u"v0.1.0"_s);
    // Nothing in it names where the mirror is kept on this machine.
    for (QDirIterator it(dir + u"/.git"_s, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories); it.hasNext();)
        QVERIFY2(!readAll(it.next()).contains(m_cache->path().toUtf8()), qPrintable(it.filePath()));

    // What a task does to its copy never reaches the mirror the next get reads.
    QVERIFY(!commitIn(dir, u"README"_s, "changed\n", u"local"_s).isEmpty());
    QVERIFY(m_git->git({u"gc"_s, u"-q"_s, u"--prune=now"_s}, dir));
    const QString again = getInto(u"again"_s);
    QVERIFY(!again.isEmpty());
    QCOMPARE(readAll(again + u"/README"_s), QByteArray("hello\n"));
    QVERIFY2(m_git->git({u"fsck"_s, u"--no-progress"_s}, again), qPrintable(m_git->errorString()));
}

void TestGitPut::getParams()
{
    const QString dir = getInto(u"repo"_s, {{u"short_ref_format"_s, u"build-%s%%"_s}, {u"clean_tags"_s, true}});
    QVERIFY(!dir.isEmpty());
    QCOMPARE(readAll(dir + u"/.git/short_ref"_s), (u"build-"_s + remoteTip().left(7) + u'%').toUtf8());
    QCOMPARE(m_git->git({u"tag"_s}, dir).value_or(u"?"_s), QString());

    QTemporaryDir bad;
    auto refused = m_type->in(source(), Version{{u"ref"_s, remoteTip()}}, {{u"short_ref_format"_s, u"%d"_s}},
                              bad.path(), {}, {}, {});
    QVERIFY(!refused);
    QCOMPARE(refused.error().where, u"params.short_ref_format"_s);
    QVERIFY(QDir(bad.path()).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden));
}

void TestGitPut::putPushesWhatATaskCommitted()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    const QString made = commitIn(dir, u"CHANGELOG"_s, "1.0\n", u"release notes"_s);
    QVERIFY(!made.isEmpty());
    auto pushed = put({{u"repository"_s, u"repo"_s}});
    PANDO_VERIFY_OK(pushed);
    QCOMPARE(pushed->version.value(u"ref"_s), made);
    QCOMPARE(remoteTip(), made);
    QVERIFY2(m_log.join(u'\n').contains(u"pushed branch main"_s), qPrintable(m_log.join(u'\n')));
    // The version a put returns is one the next get reads.
    QTemporaryDir next;
    auto got = m_type->in(source(), pushed->version, {}, next.path(), {}, {}, {});
    PANDO_VERIFY_OK(got);
    QCOMPARE(readAll(next.filePath(u"CHANGELOG"_s)), QByteArray("1.0\n"));
    // Pushing it again changes nothing and succeeds.
    auto again = put({{u"repository"_s, u"repo"_s}});
    PANDO_VERIFY_OK(again);
    QCOMPARE(remoteTip(), made);
    // params.branch pushes elsewhere, leaving main as it was.
    auto other = put({{u"repository"_s, u"repo"_s}, {u"branch"_s, u"release"_s}});
    PANDO_VERIFY_OK(other);
    QCOMPARE(remoteTip(u"release"_s), made);
}

void TestGitPut::aMovedBranchIsRefusedUnlessRebasedOrMerged()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    const QString local = commitIn(dir, u"mine.txt"_s, "mine\n", u"mine"_s);
    const QString theirs = theyPush(u"theirs.txt"_s, "theirs\n", u"theirs"_s);
    QVERIFY(!local.isEmpty() && !theirs.isEmpty());

    auto refused = put({{u"repository"_s, u"repo"_s}});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Conflict);
    QVERIFY2(refused.error().hint.contains(u"rebase"_s), qPrintable(refused.error().text()));
    QCOMPARE(remoteTip(), theirs);

    // Merged: a merge commit of both, and `returning: unmerged` names the task's own commit.
    QVERIFY(m_git->git({u"branch"_s, u"saved"_s}, dir));
    auto merged = put({{u"repository"_s, u"repo"_s}, {u"merge"_s, true}, {u"returning"_s, u"unmerged"_s}});
    PANDO_VERIFY_OK(merged);
    QCOMPARE(merged->version.value(u"ref"_s), local);
    const QString mergeCommit = remoteTip();
    QCOMPARE(m_git->git({u"rev-parse"_s, mergeCommit + u"^1"_s, mergeCommit + u"^2"_s}, m_git->barePath(u"repo"_s))
                 .value_or(u"?"_s),
             local + u'\n' + theirs);

    // Rebased: the task's commit replayed on the tip, its author and message kept.
    const QString dir2 = getInto(u"repo2"_s);
    QVERIFY(!dir2.isEmpty());
    const QString later = commitIn(dir2, u"later.txt"_s, "later\n", u"later change"_s);
    const QString moved = theyPush(u"other.txt"_s, "o\n", u"other"_s);
    QVERIFY(!later.isEmpty() && !moved.isEmpty());
    auto rebased = put({{u"repository"_s, u"repo2"_s}, {u"rebase"_s, true}});
    PANDO_VERIFY_OK(rebased);
    const QString tip = remoteTip();
    QCOMPARE(rebased->version.value(u"ref"_s), tip);
    QVERIFY(tip != later);
    const QString bare = m_git->barePath(u"repo"_s);
    QCOMPARE(m_git->git({u"rev-parse"_s, tip + u"^"_s}, bare).value_or(u"?"_s), moved);
    QCOMPARE(m_git->git({u"log"_s, u"-1"_s, u"--format=%an <%ae>|%s"_s, tip}, bare).value_or(u"?"_s),
             u"Task <task@ci.invalid>|later change"_s);
    QCOMPARE(m_git->git({u"show"_s, tip + u":later.txt"_s}, bare).value_or(u"?"_s), u"later"_s);
    QCOMPARE(m_git->git({u"show"_s, tip + u":other.txt"_s}, bare).value_or(u"?"_s), u"o"_s);
    // The task's own copy is as the task left it: a put works on the mirror, never on the input.
    QCOMPARE(m_git->git({u"rev-parse"_s, u"HEAD"_s}, dir2).value_or(u"?"_s), later);
}

// Someone pushes between the put's fetch and its push (here: as the put says it is pushing): the
// push is refused, and the put fetches again and builds on the new tip, up to five times.
void TestGitPut::aBranchMovingDuringThePutIsBuiltOnAgain()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    QVERIFY(!commitIn(dir, u"mine.txt"_s, "mine\n", u"mine"_s).isEmpty());
    QStringList racing; // what they pushed, in order
    int races = 1;
    m_onLine = [&](const QString &line) {
        if (line.startsWith(u"pushing "_s) && racing.size() < races)
            racing << theyPush(u"race%1.txt"_s.arg(racing.size()), "r\n", u"race %1"_s.arg(racing.size()));
    };
    // Fast-forward only: the put fails, saying how to build on the branch; nothing of it lands.
    auto refused = put({{u"repository"_s, u"repo"_s}});
    QVERIFY(!refused);
    QVERIFY2(refused.error().code == ErrorCode::Conflict, qPrintable(refused.error().text()));
    QVERIFY2(refused.error().hint.contains(u"params.rebase"_s), qPrintable(refused.error().text()));
    QCOMPARE(racing.size(), 1);
    QCOMPARE(remoteTip(), racing.last());

    // Rebased: once refused, fetched again and replayed on what they pushed.
    racing.clear();
    m_log.clear();
    auto rebased = put({{u"repository"_s, u"repo"_s}, {u"rebase"_s, true}});
    PANDO_VERIFY_OK(rebased);
    QCOMPARE(racing.size(), 1);
    const QString bare = m_git->barePath(u"repo"_s);
    QCOMPARE(rebased->version.value(u"ref"_s), remoteTip());
    QCOMPARE(m_git->git({u"rev-parse"_s, remoteTip() + u"^"_s}, bare).value_or(u"?"_s), racing.last());
    QCOMPARE(m_git->git({u"show"_s, remoteTip() + u":mine.txt"_s}, bare).value_or(u"?"_s), u"mine"_s);
    QVERIFY2(m_log.join(u'\n').contains(u"moved meanwhile; fetching it again (attempt 2 of 5)"_s),
             qPrintable(m_log.join(u'\n')));

    // A branch that never stops moving: given up after five pushes, saying so.
    const QString dir2 = getInto(u"repo2"_s);
    QVERIFY(!dir2.isEmpty());
    QVERIFY(!commitIn(dir2, u"again.txt"_s, "again\n", u"again"_s).isEmpty());
    racing.clear();
    races = 100;
    auto gaveUp = put({{u"repository"_s, u"repo2"_s}, {u"merge"_s, true}});
    QVERIFY(!gaveUp);
    QCOMPARE(gaveUp.error().code, ErrorCode::Conflict);
    QVERIFY2(gaveUp.error().hint.contains(u"kept moving"_s), qPrintable(gaveUp.error().text()));
    QCOMPARE(racing.size(), 5);
    QCOMPARE(remoteTip(), racing.last());
    m_onLine = {};
}

void TestGitPut::aRebaseConflictNamesTheFiles()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    QVERIFY(!commitIn(dir, u"README"_s, "mine\n", u"mine"_s).isEmpty());
    const QString theirs = theyPush(u"README"_s, "theirs\n", u"theirs"_s);
    for (const char *how : {"rebase", "merge"}) {
        auto refused = put({{u"repository"_s, u"repo"_s}, {QString::fromLatin1(how), true}});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Conflict);
        QVERIFY2(refused.error().message.contains(u"conflict in README"_s), qPrintable(refused.error().text()));
        QCOMPARE(remoteTip(), theirs);
    }
}

void TestGitPut::forceReplacesTheBranch()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    const QString local = commitIn(dir, u"mine.txt"_s, "mine\n", u"mine"_s);
    QVERIFY(!theyPush(u"theirs.txt"_s, "t\n", u"theirs"_s).isEmpty());
    auto forced = put({{u"repository"_s, u"repo"_s}, {u"force"_s, true}});
    PANDO_VERIFY_OK(forced);
    QCOMPARE(remoteTip(), local);
}

void TestGitPut::tags()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    const QString made = commitIn(dir, u"VERSION"_s, "1.2.3\n", u"bump"_s);
    QVERIFY(writeFile(m_work->filePath(u"version/number"_s), "1.2.3\n"));
    QVERIFY(writeFile(m_work->filePath(u"notes/release.md"_s), "First release\n"));
    // A tag the task made itself goes with the branch.
    QVERIFY(m_git->git({u"tag"_s, u"task-made"_s}, dir));
    auto tagged = put({{u"repository"_s, u"repo"_s},
                       {u"tag"_s, u"version/number"_s},
                       {u"tag_prefix"_s, u"v"_s},
                       {u"annotate"_s, u"notes/release.md"_s}});
    PANDO_VERIFY_OK(tagged);
    const QString bare = m_git->barePath(u"repo"_s);
    QCOMPARE(m_git->git({u"cat-file"_s, u"-t"_s, u"v1.2.3"_s}, bare).value_or(u"?"_s), u"tag"_s);
    QCOMPARE(m_git->git({u"rev-parse"_s, u"v1.2.3^{commit}"_s}, bare).value_or(u"?"_s), made);
    QCOMPARE(m_git->git({u"tag"_s, u"-l"_s, u"--format=%(contents:subject)"_s, u"v1.2.3"_s}, bare).value_or(u"?"_s),
             u"First release"_s);
    QCOMPARE(m_git->git({u"rev-parse"_s, u"task-made"_s}, bare).value_or(u"?"_s), made);
    QCOMPARE(remoteTip(), made);

    // only_tag: the tag goes, the branch stays.
    const QString dir2 = getInto(u"repo2"_s);
    const QString unpushed = commitIn(dir2, u"x.txt"_s, "x\n", u"not for main"_s);
    QVERIFY(writeFile(m_work->filePath(u"version/number"_s), "2.0.0"));
    auto onlyTag = put({{u"repository"_s, u"repo2"_s}, {u"tag"_s, u"version/number"_s}, {u"only_tag"_s, true}});
    PANDO_VERIFY_OK(onlyTag);
    QCOMPARE(m_git->git({u"rev-parse"_s, u"2.0.0"_s}, bare).value_or(u"?"_s), unpushed);
    QCOMPARE(remoteTip(), made);
    QCOMPARE(onlyTag->version.value(u"ref"_s), unpushed);

    // A published tag is never moved.
    QVERIFY(!commitIn(dir2, u"y.txt"_s, "y\n", u"another"_s).isEmpty());
    auto moved = put({{u"repository"_s, u"repo2"_s}, {u"tag"_s, u"version/number"_s}, {u"only_tag"_s, true}});
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, ErrorCode::Conflict);
    QCOMPARE(moved.error().where, u"params.tag"_s);
    QCOMPARE(m_git->git({u"rev-parse"_s, u"2.0.0"_s}, bare).value_or(u"?"_s), unpushed);
}

void TestGitPut::badInputIsRefusedAndNothingMoves()
{
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    QVERIFY(!commitIn(dir, u"new.txt"_s, "n\n", u"new"_s).isEmpty());
    QVERIFY(QDir().mkpath(m_work->filePath(u"plain"_s)));
    QVERIFY(writeFile(m_work->filePath(u"empty-tag"_s), "\n"));
    const QString before = remoteTip();
    const QList<std::tuple<QJsonObject, QJsonObject, QString>> cases{
        {{}, {}, u"params.repository"_s},
        {{{u"repository"_s, u"../outside"_s}}, {}, u"params.repository"_s},
        {{{u"repository"_s, u"missing"_s}}, {}, u"params.repository"_s},
        {{{u"repository"_s, u"plain"_s}}, {}, u"params.repository"_s},
        {{{u"repository"_s, u"repo"_s}, {u"rebase"_s, true}, {u"merge"_s, true}}, {}, u"params.merge"_s},
        {{{u"repository"_s, u"repo"_s}, {u"returning"_s, u"both"_s}}, {}, u"params.returning"_s},
        {{{u"repository"_s, u"repo"_s}, {u"notes"_s, u"notes.txt"_s}}, {}, u"params.notes"_s},
        {{{u"repository"_s, u"repo"_s}, {u"annotate"_s, u"empty-tag"_s}}, {}, u"params.annotate"_s},
        {{{u"repository"_s, u"repo"_s}, {u"tag"_s, u"empty-tag"_s}}, {}, u"params.tag"_s},
        {{{u"repository"_s, u"repo"_s}, {u"tag"_s, u"/etc/hostname"_s}}, {}, u"params.tag"_s},
        {{{u"repository"_s, u"repo"_s}, {u"rebase"_s, u"sometimes"_s}}, {}, u"params.rebase"_s},
        {{{u"repository"_s, u"repo"_s}}, {{u"branch"_s, QJsonValue()}}, u"source.branch"_s},
        {{{u"repository"_s, u"repo"_s}, {u"branch"_s, u"-x"_s}}, {}, u"params.branch"_s},
    };
    for (const auto &[params, extraSource, where] : cases) {
        auto refused = put(params, extraSource);
        QVERIFY2(!refused, qPrintable(where));
        QVERIFY2(refused.error().where == where, qPrintable(where + u": "_s + refused.error().text()));
    }
    QCOMPARE(remoteTip(), before);
}

void TestGitPut::aRepositoryCannotReadOutsideItself()
{
    // Objects borrowed from elsewhere on this machine (here: the resource's own mirror cache) are
    // never pushed: an alternates file, a link inside .git, or a .git that is a file are refused.
    const QString dir = getInto(u"repo"_s);
    QVERIFY(!dir.isEmpty());
    QVERIFY(writeFile(dir + u"/.git/objects/info/alternates"_s, m_cache->path().toUtf8() + '\n'));
    auto alternates = put({{u"repository"_s, u"repo"_s}});
    QVERIFY(!alternates);
    QVERIFY2(alternates.error().message.contains(u"alternates"_s), qPrintable(alternates.error().text()));
    QVERIFY(QFile::remove(dir + u"/.git/objects/info/alternates"_s));

    QVERIFY(QFile::link(m_cache->path(), dir + u"/.git/refs/elsewhere"_s));
    auto link = put({{u"repository"_s, u"repo"_s}});
    QVERIFY(!link);
    QVERIFY2(link.error().message.contains(u"symbolic link"_s), qPrintable(link.error().text()));

    QVERIFY(writeFile(m_work->filePath(u"worktree/.git"_s), "gitdir: " + dir.toUtf8() + "/.git\n"));
    auto gitFile = put({{u"repository"_s, u"worktree"_s}});
    QVERIFY(!gitFile);
    QCOMPARE(gitFile.error().where, u"params.repository"_s);
}

void TestGitPut::privateRepositoryOverHttps()
{
    PANDO_REQUIRE_COMPONENT(pando::test::privateHttpGitAvailable(), u"caddy and python3"_s);
    QVERIFY(m_git->git({u"config"_s, u"http.receivepack"_s, u"true"_s}, m_git->barePath(u"repo"_s)));
    pando::test::PrivateHttpGit server;
    const QString failed = server.start(QFileInfo(m_git->barePath(u"repo"_s)).path(), u"ci"_s, "s3cret-token");
    QVERIFY2(failed.isEmpty(), qPrintable(failed));
    m_url = server.url(QFileInfo(m_git->barePath(u"repo"_s)).fileName());

    // Without the source's credentials the remote says no, and the error says what to do.
    auto anonymous = m_type->check(source(), {}, {}, {});
    QVERIFY(!anonymous);
    QCOMPARE(anonymous.error().code, ErrorCode::Unauthorized);
    QVERIFY(!anonymous.error().text().contains(u"s3cret"_s));

    const QJsonObject login{{u"username"_s, u"ci"_s}, {u"password"_s, u"s3cret-token"_s}};
    auto versions = m_type->check(source(login), {}, {}, {});
    PANDO_VERIFY_OK(versions);
    QTemporaryDir dir;
    auto got = m_type->in(source(login), versions->last(), {}, dir.path(), {}, {}, {});
    PANDO_VERIFY_OK(got);
    QVERIFY(!readAll(dir.filePath(u".git/config"_s)).contains("s3cret"));

    QVERIFY(QDir().rename(dir.path(), m_work->filePath(u"private"_s)));
    const QString made = commitIn(m_work->filePath(u"private"_s), u"p.txt"_s, "p\n", u"over https"_s);
    auto wrong = put({{u"repository"_s, u"private"_s}}, {{u"username"_s, u"ci"_s}, {u"password"_s, u"wrong"_s}});
    QVERIFY(!wrong);
    QCOMPARE(wrong.error().code, ErrorCode::Unauthorized);
    QVERIFY(!wrong.error().text().contains(u"wrong"_s));
    auto pushed = put({{u"repository"_s, u"private"_s}}, login);
    PANDO_VERIFY_OK(pushed);
    QCOMPARE(remoteTip(), made);
}

QTEST_GUILESS_MAIN(TestGitPut)
#include "tst_gitput.moc"
