// GitSource against real repositories made by the git CLI and read back through libgit2.

#include "adapters/source/generic/gitsource.h"
#include "tests/support/component.h"
#include "tests/support/gitfixture.h"
#include "tests/support/ports.h"
#include "tests/support/sshserver.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <thread>

using namespace Qt::StringLiterals;

// QVERIFY2 evaluates its message even on success, so the error is only read when there is one.
template<class R> QByteArray errorText(const R &result)
{
    return result.has_value() ? QByteArray() : result.error().text().toUtf8();
}
#define PANDO_VERIFY_OK(result) QVERIFY2((result).has_value(), errorText(result).constData())
using pando::CancelToken;
using pando::ErrorCode;
using pando::adapters::git::GitSource;
using pando::test::GitFile;
using pando::test::GitFixture;

class TestGitSource : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void checkUrl_data();
    void checkUrl();
    void checkoutBranch();
    void checkoutAnnotatedTag();
    void checkoutCommitIds();
    void defaultBranchAndSlashedBranch();
    void fetchSeesNewCommits();
    void missingRef();
    void unsafeRef_data();
    void unsafeRef();
    void missingRepository();
    void refusedUrlInCheckout();
    void preCancelled();
    void cancelDuringFetch();
    void concurrentCheckouts();
    void progressLines();
    void checkoutOverSmartHttp();
    void checkoutOverSsh();
    void unknownHostKeyIsRefused();

private:
    std::unique_ptr<GitFixture> m_git;
    std::unique_ptr<QTemporaryDir> m_data;
    QString m_url;
    QString m_first;
    QString m_second;

    QString cacheDir() const { return m_data->filePath(u"cache/git"_s); }
    QString workDir() const { return m_data->filePath(u"work"_s); }
};

void TestGitSource::initTestCase()
{
    PANDO_REQUIRE_COMPONENT(GitFixture::gitAvailable(), u"git (the fixture makes repositories with it)"_s);
}

void TestGitSource::init()
{
    if (QByteArrayView(QTest::currentTestFunction()) == "checkUrl")
        return; // pure string checks need no repository
    m_git = std::make_unique<GitFixture>();
    QVERIFY(m_git->isValid());
    m_data = std::make_unique<QTemporaryDir>();
    m_url = m_git->createRepository(u"app"_s);
    QVERIFY2(!m_url.isEmpty(), qPrintable(m_git->errorString()));
    m_first = m_git->commit(u"app"_s, u"main"_s,
                            {{u"README.md"_s, GitFile{"hello\n"}},
                             {u"bin/run.sh"_s, GitFile{"#!/bin/sh\necho hi\n", true}},
                             {u"docs/link"_s, GitFile{"../README.md", false, true}},
                             {u"escape"_s, GitFile{"/etc/passwd", false, true}}},
                            u"first"_s);
    QVERIFY2(!m_first.isEmpty(), qPrintable(m_git->errorString()));
    QVERIFY(!m_git->tag(u"app"_s, u"v1.0"_s, m_first, u"first release"_s).isEmpty());
    m_second = m_git->commit(u"app"_s, u"main"_s, {{u"README.md"_s, GitFile{"hello again\n"}}}, u"second"_s);
    QVERIFY2(!m_second.isEmpty(), qPrintable(m_git->errorString()));
}

void TestGitSource::checkUrl_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<bool>("accepted");
    QTest::newRow("file") << u"file:///x"_s << true;
    QTest::newRow("file-localhost") << u"file://localhost/srv/x.git"_s << true;
    QTest::newRow("https") << u"https://h/x.git"_s << true;
    QTest::newRow("https-port-user") << u"https://user@git.example.com:8443/org/my-repo.git"_s << true;
    QTest::newRow("http") << u"http://127.0.0.1:8080/x.git"_s << true;
    QTest::newRow("ssh") << u"ssh://git@h:2222/org/x.git"_s << true;
    QTest::newRow("ssh-ipv6") << u"ssh://git@[::1]/x.git"_s << true;
    QTest::newRow("scp") << u"git@h:x.git"_s << true;
    QTest::newRow("scp-path") << u"deploy@git.example.com:org/x.git"_s << true;
    QTest::newRow("empty") << QString() << false;
    QTest::newRow("ext") << u"ext::sh -c touch% /tmp/pwned"_s << false;
    QTest::newRow("ext-nospace") << u"ext::touch"_s << false;
    QTest::newRow("fd") << u"fd::17"_s << false;
    QTest::newRow("transport-https") << u"https::https://h/x.git"_s << false;
    QTest::newRow("transport-inside") << u"https://h/x::y"_s << false;
    QTest::newRow("leading-dash") << u"-h"_s << false;
    QTest::newRow("upload-pack") << u"--upload-pack=touch /tmp/x"_s << false;
    QTest::newRow("upload-pack-inside") << u"https://h/x.git--upload-pack=touch"_s << false;
    QTest::newRow("ssh-option-host") << u"ssh://-oProxyCommand=touch%20x/x"_s << false;
    QTest::newRow("scp-option-host") << u"git@-oProxyCommand=x:y"_s << false;
    QTest::newRow("scp-option-path") << u"git@h:-x"_s << false;
    QTest::newRow("space") << u"https://h/x y.git"_s << false;
    QTest::newRow("tab") << u"https://h/x\t.git"_s << false;
    QTest::newRow("newline") << u"https://h/x.git\n"_s << false;
    QTest::newRow("nul") << u"https://h/x"_s + QChar(0) + u".git"_s << false;
    QTest::newRow("git-scheme") << u"git://h/x.git"_s << false;
    QTest::newRow("unknown-scheme") << u"gopher://h/x"_s << false;
    QTest::newRow("bare-path") << u"/srv/x.git"_s << false;
    QTest::newRow("relative-path") << u"x.git"_s << false;
    QTest::newRow("file-host") << u"file://otherhost/x"_s << false;
    QTest::newRow("file-no-path") << u"file://"_s << false;
    QTest::newRow("https-no-host") << u"https:///x.git"_s << false;
}

void TestGitSource::checkUrl()
{
    QFETCH(QString, url);
    QFETCH(bool, accepted);
    GitSource source(u"/nonexistent/cache"_s); // checkUrl touches no files
    const pando::Status status = source.checkUrl(url);
    if (accepted) {
        PANDO_VERIFY_OK(status);
    } else {
        QVERIFY(!status.has_value());
        QCOMPARE(status.error().code, ErrorCode::Invalid);
        QVERIFY(!status.error().message.isEmpty());
    }
}

void TestGitSource::checkoutBranch()
{
    GitSource source(cacheDir());
    const auto result = source.checkout(m_url, u"main"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->commit, m_second);
    QVERIFY(result->directory.startsWith(workDir()));
    const QDir dir(result->directory);
    QVERIFY(!dir.exists(u".git"_s));

    QFile readme(dir.filePath(u"README.md"_s));
    QVERIFY(readme.open(QIODevice::ReadOnly));
    QCOMPARE(readme.readAll(), QByteArray("hello again\n"));

    const QFileInfo script(dir.filePath(u"bin/run.sh"_s));
    QVERIFY(script.isFile());
    QVERIFY(script.permissions() & QFileDevice::ExeOwner);
    QVERIFY(!(QFileInfo(dir.filePath(u"README.md"_s)).permissions() & QFileDevice::ExeOwner));

    // Symlinks stay symlinks with their target as written, even one pointing outside the tree.
    const QFileInfo link(dir.filePath(u"docs/link"_s));
    QVERIFY(link.isSymLink());
    QCOMPARE(link.symLinkTarget(), dir.filePath(u"README.md"_s));
    char target[256] = {};
    const ssize_t n = ::readlink(QFile::encodeName(dir.filePath(u"escape"_s)).constData(), target, sizeof target - 1);
    QCOMPARE(QByteArray(target, int(n)), QByteArray("/etc/passwd"));

    QVERIFY(QFileInfo::exists(source.mirrorPath(m_url)));
    QVERIFY(source.mirrorPath(m_url).startsWith(cacheDir()));
    // The mirrors hold what private repositories hold: their directory is the owner's alone.
    QCOMPARE(QFileInfo(cacheDir()).permissions() & (QFile::ReadGroup | QFile::ReadOther | QFile::ExeGroup |
                                                    QFile::ExeOther | QFile::WriteGroup | QFile::WriteOther),
             QFile::Permissions());
}

void TestGitSource::checkoutAnnotatedTag()
{
    GitSource source(cacheDir());
    const auto result = source.checkout(m_url, u"v1.0"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(result);
    QCOMPARE(result->commit, m_first); // the tag object peeled to its commit
    QFile readme(QDir(result->directory).filePath(u"README.md"_s));
    QVERIFY(readme.open(QIODevice::ReadOnly));
    QCOMPARE(readme.readAll(), QByteArray("hello\n"));

    const auto full = source.checkout(m_url, u"refs/tags/v1.0"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(full);
    QCOMPARE(full->commit, m_first);
}

void TestGitSource::checkoutCommitIds()
{
    GitSource source(cacheDir());
    const auto full = source.checkout(m_url, m_first, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(full);
    QCOMPARE(full->commit, m_first);

    const auto abbreviated = source.checkout(m_url, m_first.left(7), workDir(), {}, {}, {});
    PANDO_VERIFY_OK(abbreviated);
    QCOMPARE(abbreviated->commit, m_first);
    QVERIFY(abbreviated->directory != full->directory); // every checkout gets its own tree

    const auto upper = source.resolve(m_url, m_second.left(10).toUpper(), {});
    PANDO_VERIFY_OK(upper);
    QCOMPARE(*upper, m_second);
}

void TestGitSource::defaultBranchAndSlashedBranch()
{
    const QString feature = m_git->commit(u"app"_s, u"feature/x"_s, {{u"f.txt"_s, GitFile{"f"}}}, u"feature"_s);
    QVERIFY(!feature.isEmpty());
    GitSource source(cacheDir());
    const auto head = source.resolve(m_url, QString(), {});
    PANDO_VERIFY_OK(head);
    QCOMPARE(*head, m_second);
    const auto branch = source.checkout(m_url, u"feature/x"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(branch);
    QCOMPARE(branch->commit, feature);
    QVERIFY(QFileInfo::exists(QDir(branch->directory).filePath(u"f.txt"_s)));
}

void TestGitSource::fetchSeesNewCommits()
{
    GitSource source(cacheDir());
    const auto before = source.checkout(m_url, u"main"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(before);
    QCOMPARE(before->commit, m_second);
    const QString third = m_git->commit(u"app"_s, u"main"_s, {{u"new.txt"_s, GitFile{"new\n"}}}, u"third"_s);
    QVERIFY(!third.isEmpty());
    const auto after = source.checkout(m_url, u"main"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(after);
    QCOMPARE(after->commit, third);
    QVERIFY(QFileInfo::exists(QDir(after->directory).filePath(u"new.txt"_s)));

    // A branch deleted upstream is pruned from the mirror.
    QVERIFY(!m_git->commit(u"app"_s, u"gone"_s, {{u"g"_s, GitFile{"g"}}}).isEmpty());
    QVERIFY(source.resolve(m_url, u"gone"_s, {}).has_value());
    QVERIFY(m_git->deleteBranch(u"app"_s, u"gone"_s));
    const auto gone = source.resolve(m_url, u"gone"_s, {});
    QVERIFY(!gone.has_value());
    QCOMPARE(gone.error().code, ErrorCode::NotFound);
}

void TestGitSource::missingRef()
{
    GitSource source(cacheDir());
    const auto result = source.checkout(m_url, u"nope"_s, workDir(), {}, {}, {});
    QVERIFY(!result.has_value());
    QCOMPARE(result.error().code, ErrorCode::NotFound);
    QVERIFY2(result.error().message.contains(u"ref \"nope\" not found in"_s), qPrintable(result.error().message));
    QVERIFY2(result.error().hint.contains(u"main"_s), qPrintable(result.error().hint));
    QVERIFY2(result.error().hint.contains(u"v1.0"_s), qPrintable(result.error().hint));
    const auto unknownId = source.resolve(m_url, u"deadbeefdeadbeef"_s, {});
    QVERIFY(!unknownId.has_value());
    QCOMPARE(unknownId.error().code, ErrorCode::NotFound);
    // Nothing is left in the work root by a failed checkout.
    QCOMPARE(QDir(workDir()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).size(), 0);
}

void TestGitSource::unsafeRef_data()
{
    QTest::addColumn<QString>("ref");
    QTest::newRow("option") << u"--upload-pack=x"_s;
    QTest::newRow("space") << u"main x"_s;
    QTest::newRow("newline") << u"main\n"_s;
}

void TestGitSource::unsafeRef()
{
    QFETCH(QString, ref);
    GitSource source(cacheDir());
    const auto result = source.checkout(m_url, ref, workDir(), {}, {}, {});
    QVERIFY(!result.has_value());
    QCOMPARE(result.error().code, ErrorCode::Invalid);
}

void TestGitSource::missingRepository()
{
    GitSource source(cacheDir());
    const QString url = QUrl::fromLocalFile(m_git->root() + u"/nothing-here.git"_s).toString();
    const auto result = source.checkout(url, u"main"_s, workDir(), {}, {}, {});
    QVERIFY(!result.has_value());
    QCOMPARE(result.error().code, ErrorCode::Unavailable);
    QVERIFY2(result.error().message.contains(u"nothing-here"_s), qPrintable(result.error().message));
}

void TestGitSource::refusedUrlInCheckout()
{
    GitSource source(cacheDir());
    const auto result = source.checkout(u"ext::sh -c touch% /tmp/pando-pwned"_s, u"main"_s, workDir(), {}, {}, {});
    QVERIFY(!result.has_value());
    QCOMPARE(result.error().code, ErrorCode::Invalid);
    QVERIFY(!QFileInfo::exists(u"/tmp/pando-pwned"_s));
}

void TestGitSource::preCancelled()
{
    GitSource source(cacheDir());
    CancelToken cancel;
    cancel.cancel();
    const auto result = source.checkout(m_url, u"main"_s, workDir(), {}, cancel, {});
    QVERIFY(!result.has_value());
    QCOMPARE(result.error().code, ErrorCode::Cancelled);
}

void TestGitSource::cancelDuringFetch()
{
    // Enough objects that the transfer reports progress before it ends.
    pando::test::GitFiles many;
    for (int i = 0; i < 300; ++i)
        many.insert(u"data/file%1.txt"_s.arg(i), GitFile{QByteArray::number(i).repeated(200)});
    QVERIFY(!m_git->commit(u"app"_s, u"main"_s, many, u"many"_s).isEmpty());

    GitSource source(cacheDir());
    CancelToken cancel;
    QStringList lines;
    const auto result = source.checkout(m_url, u"main"_s, workDir(), {}, cancel, [&](const QString &line) {
        lines << line;
        if (line.startsWith(u"received"_s))
            cancel.cancel();
    });
    QVERIFY2(!result.has_value(), qPrintable(lines.join(u" | "_s)));
    QCOMPARE(result.error().code, ErrorCode::Cancelled);

    // The mirror is still usable afterwards.
    const auto again = source.checkout(m_url, u"main"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(again);
}

void TestGitSource::concurrentCheckouts()
{
    GitSource one(cacheDir());
    GitSource two(cacheDir()); // a second instance shares the per-mirror lock
    pando::Result<pando::adapters::SourceCheckout> results[4];
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            GitSource &source = i % 2 ? one : two;
            results[i] = source.checkout(m_url, i < 2 ? u"main"_s : u"v1.0"_s, workDir(), {}, {}, {});
        });
    }
    for (auto &thread : threads)
        thread.join();
    for (int i = 0; i < 4; ++i) {
        PANDO_VERIFY_OK(results[i]);
        QCOMPARE(results[i]->commit, i < 2 ? m_second : m_first);
    }
}

void TestGitSource::progressLines()
{
    GitSource source(cacheDir());
    QStringList lines;
    const auto result =
        source.checkout(m_url, u"main"_s, workDir(), {}, {}, [&](const QString &line) { lines << line; });
    PANDO_VERIFY_OK(result);
    QVERIFY2(lines.size() >= 2, qPrintable(lines.join(u" | "_s)));
    QVERIFY(lines.first().startsWith(u"fetching "_s));
    QVERIFY(lines.last().startsWith(u"checked out "_s));
}

// The https:// and http:// forms go through libgit2's smart HTTP transport: a real git
// http-backend serves the fixture's bare repositories on loopback.
void TestGitSource::checkoutOverSmartHttp()
{
    PANDO_REQUIRE_COMPONENT(!QStandardPaths::findExecutable(u"python3"_s).isEmpty(), u"python3"_s);
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
    const quint16 port = probe.serverPort();
    probe.close();
    QProcess server;
    server.start(u"python3"_s, {pando::test::sourceDir() + u"/tests/support/git-http-server.py"_s,
                                QString::number(port), QFileInfo(m_git->barePath(u"app"_s)).absolutePath()});
    PANDO_REQUIRE_COMPONENT(server.waitForStarted(5000) && server.waitForReadyRead(10000),
                            u"git smart HTTP test server: "_s + QString::fromUtf8(server.readAllStandardError()));
    const QString url = u"http://127.0.0.1:%1/%2"_s.arg(port).arg(QFileInfo(m_git->barePath(u"app"_s)).fileName());
    GitSource source(cacheDir());
    auto checkout = source.checkout(url, u"main"_s, workDir(), {}, {}, {});
    PANDO_VERIFY_OK(checkout);
    QCOMPARE(checkout->commit, m_second);
    QFile readme(checkout->directory + u"/README.md"_s);
    QVERIFY(readme.open(QIODevice::ReadOnly));
    QCOMPARE(readme.readAll(), QByteArray("hello again\n"));
    auto tag = source.resolve(url, u"v1.0"_s, {});
    PANDO_VERIFY_OK(tag);
    QCOMPARE(*tag, m_first);

    // A fetch that may not reach this machine (a member's app without internal-hosts) is refused
    // at the connect, on the address the name resolves to then: what a name rebound to 127.0.0.1
    // after the URL was checked would get. The mirror fetched above is not used instead.
    pando::adapters::SourceAccess outsideOnly;
    outsideOnly.internalHosts = false;
    for (const QString &host : {u"127.0.0.1"_s, u"localhost"_s}) {
        const QString inside =
            u"http://%1:%2/%3"_s.arg(host).arg(port).arg(QFileInfo(m_git->barePath(u"app"_s)).fileName());
        auto refused = source.resolve(inside, u"main"_s, outsideOnly);
        QVERIFY2(!refused, qPrintable(host));
        QVERIFY2(refused.error().message.contains(u"an address of this machine or its link"_s) &&
                     refused.error().message.contains(host),
                 qPrintable(refused.error().text()));
        QVERIFY(!source.checkout(inside, u"main"_s, workDir(), outsideOnly, {}, {}));
    }
    // The rule ends with the call: the same thread fetches from loopback again.
    PANDO_VERIFY_OK(source.resolve(url, u"main"_s, {}));
    server.kill();
    server.waitForFinished();
}

namespace {

using pando::test::sshAvailable;
using pando::test::SshServer;
using pando::test::unusedPort;

} // namespace

// ssh:// through libgit2's libssh2 transport against a real sshd: key-file authentication,
// the host key pinned in a known_hosts file, git-upload-pack run by the server's shell.
void TestGitSource::checkoutOverSsh()
{
    PANDO_REQUIRE_COMPONENT(sshAvailable(), u"OpenSSH server and client (openssh-server, openssh-client)"_s);
    SshServer server;
    const quint16 port = unusedPort();
    QVERIFY(port != 0);
    const QString started = server.start(port);
    QVERIFY2(started.isEmpty(), qPrintable(started));
    pando::adapters::git::GitCredentials credentials;
    credentials.useSshAgent = false; // only the key below: the test must not depend on an agent
    credentials.sshPrivateKeyPath = server.path(u"client_ed25519"_s);
    credentials.sshKnownHostsPath = server.knownHosts();
    QVERIFY(!credentials.sshKnownHostsPath.isEmpty());
    const QString bare = QFileInfo(m_git->barePath(u"app"_s)).absoluteFilePath();
    const QString url = u"ssh://root@127.0.0.1:%1%2"_s.arg(port).arg(bare);
    GitSource source(cacheDir(), credentials);
    QVERIFY(source.checkUrl(url));
    auto checkout = source.checkout(url, u"main"_s, workDir(), {}, {}, {});
    QVERIFY2(checkout.has_value(), QByteArray(errorText(checkout) + "\nsshd: " + server.log().toUtf8()).constData());
    QCOMPARE(checkout->commit, m_second);
    QFile readme(checkout->directory + u"/README.md"_s);
    QVERIFY(readme.open(QIODevice::ReadOnly));
    QCOMPARE(readme.readAll(), QByteArray("hello again\n"));
    QVERIFY(QFileInfo(checkout->directory + u"/bin/run.sh"_s).isExecutable());
    auto tag = source.resolve(url, u"v1.0"_s, {});
    PANDO_VERIFY_OK(tag);
    QCOMPARE(*tag, m_first);

    // A fetch for a member's app offers none of the install's credentials: the key that just
    // worked is not tried, the mirror fetched above notwithstanding (issue 12).
    const pando::adapters::SourceAccess memberAccess{false};
    auto anonymous = source.resolve(url, u"v1.0"_s, memberAccess);
    QVERIFY(!anonymous);
    QCOMPARE(anonymous.error().code, ErrorCode::Unauthorized);
    QVERIFY(!source.checkout(url, u"main"_s, workDir(), memberAccess, {}, {}));

    // A wrong client key is refused by the server: Unauthorized, not a hang or a crash.
    pando::adapters::git::GitCredentials wrongKey = credentials;
    wrongKey.sshPrivateKeyPath = server.path(u"host_ed25519"_s);
    GitSource refused(m_data->filePath(u"cache/other"_s), wrongKey);
    auto denied = refused.resolve(url, u"main"_s, {});
    QVERIFY(!denied);
    QCOMPARE(denied.error().code, ErrorCode::Unauthorized);

    // The scp-like form (user@host:path) has no port field, so it can only be tried when
    // port 22 on loopback is free for a second server.
    QTcpServer port22;
    if (!port22.listen(QHostAddress::LocalHost, 22)) {
        qInfo("scp-like form not tried: port 22 on 127.0.0.1 is taken");
        return;
    }
    port22.close();
    SshServer scpServer;
    const QString scpStarted = scpServer.start(22);
    QVERIFY2(scpStarted.isEmpty(), qPrintable(scpStarted));
    pando::adapters::git::GitCredentials scpCredentials;
    scpCredentials.useSshAgent = false;
    scpCredentials.sshPrivateKeyPath = scpServer.path(u"client_ed25519"_s);
    scpCredentials.sshKnownHostsPath =
        scpServer.writeKnownHosts(u"known_hosts"_s, u"localhost,127.0.0.1"_s, u"host_ed25519.pub"_s);
    const QString scpUrl = u"root@localhost:"_s + bare;
    QVERIFY(source.checkUrl(scpUrl));
    GitSource scpSource(m_data->filePath(u"cache/scp"_s), scpCredentials);
    auto scpCheckout = scpSource.checkout(scpUrl, u"v1.0"_s, workDir(), {}, {}, {});
    QVERIFY2(scpCheckout.has_value(),
             QByteArray(errorText(scpCheckout) + "\nsshd: " + scpServer.log().toUtf8()).constData());
    QCOMPARE(scpCheckout->commit, m_first);
    QFile scpReadme(scpCheckout->directory + u"/README.md"_s);
    QVERIFY(scpReadme.open(QIODevice::ReadOnly));
    QCOMPARE(scpReadme.readAll(), QByteArray("hello\n"));
}

// The host key must be pinned: a server missing from known_hosts, or listed with another
// key, is refused before any credential is sent, with a message that says which.
void TestGitSource::unknownHostKeyIsRefused()
{
    PANDO_REQUIRE_COMPONENT(sshAvailable(), u"OpenSSH server and client (openssh-server, openssh-client)"_s);
    SshServer server;
    const quint16 port = unusedPort();
    QVERIFY(port != 0);
    const QString started = server.start(port);
    QVERIFY2(started.isEmpty(), qPrintable(started));
    const QString url =
        u"ssh://root@127.0.0.1:%1%2"_s.arg(port).arg(QFileInfo(m_git->barePath(u"app"_s)).absoluteFilePath());
    pando::adapters::git::GitCredentials credentials;
    credentials.useSshAgent = false;
    credentials.sshPrivateKeyPath = server.path(u"client_ed25519"_s);

    // Listed for another host (the default port) only: not listed.
    credentials.sshKnownHostsPath =
        server.writeKnownHosts(u"other_host"_s, u"127.0.0.1,localhost"_s, u"host_ed25519.pub"_s);
    auto unlisted = GitSource(m_data->filePath(u"cache/a"_s), credentials).resolve(url, u"main"_s, {});
    QVERIFY(!unlisted);
    QCOMPARE(unlisted.error().code, ErrorCode::Unauthorized);
    QVERIFY2(unlisted.error().message.contains(u"not listed in the known hosts"_s),
             qPrintable(unlisted.error().text()));
    QCOMPARE(unlisted.error().where, credentials.sshKnownHostsPath);
    QVERIFY(unlisted.error().hint.contains(u"ssh-keyscan"_s));

    // Listed with another key (the client key stands in for a changed host key).
    credentials.sshKnownHostsPath =
        server.writeKnownHosts(u"changed_key"_s, u"[127.0.0.1]:%1"_s.arg(port), u"client_ed25519.pub"_s);
    auto changed = GitSource(m_data->filePath(u"cache/b"_s), credentials).resolve(url, u"main"_s, {});
    QVERIFY(!changed);
    QCOMPARE(changed.error().code, ErrorCode::Unauthorized);
    QVERIFY2(changed.error().message.contains(u"does not match"_s), qPrintable(changed.error().text()));

    // No file configured: libgit2's check against ~/.ssh/known_hosts, where this random port
    // is not listed.
    credentials.sshKnownHostsPath.clear();
    auto unconfigured = GitSource(m_data->filePath(u"cache/c"_s), credentials).resolve(url, u"main"_s, {});
    QVERIFY(!unconfigured);
    QCOMPARE(unconfigured.error().code, ErrorCode::Unauthorized);
    QVERIFY2(unconfigured.error().message.contains(u"known_hosts"_s), qPrintable(unconfigured.error().text()));

    // A hashed entry (ssh-keygen -H) for the right host and key is accepted.
    QFile::copy(server.knownHosts(), server.path(u"hashed"_s));
    QProcess hash;
    hash.start(u"ssh-keygen"_s, {u"-q"_s, u"-H"_s, u"-f"_s, server.path(u"hashed"_s)});
    QVERIFY(hash.waitForFinished(10000) && hash.exitCode() == 0);
    QFile hashed(server.path(u"hashed"_s));
    QVERIFY(hashed.open(QIODevice::ReadOnly));
    QVERIFY(hashed.readAll().contains("|1|"));
    credentials.sshKnownHostsPath = hashed.fileName();
    auto accepted = GitSource(m_data->filePath(u"cache/d"_s), credentials).resolve(url, u"main"_s, {});
    PANDO_VERIFY_OK(accepted);
    QCOMPARE(*accepted, m_second);
}

QTEST_GUILESS_MAIN(TestGitSource)
#include "tst_gitsource.moc"
