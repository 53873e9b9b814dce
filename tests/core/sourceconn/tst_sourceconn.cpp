// Source connections: repository addresses in every form the forges document, which connection
// covers which address, the rules for a new connection (keys as ssh-keygen writes them), and the
// sealed store on both drivers, through a seal key rotation.
#include "adapters/api/repoaddress.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/secrets/sealrotation.h"
#include "core/sourceconn/sourceconn.h"
#include "core/state/database.h"
#include "core/state/repositories.h"
#include "core/state/sql.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"

#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <thread>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using adapters::ForgeKind;
using adapters::ForgeScope;
using sourceconn::AuthKind;
using sourceconn::ConnectionInput;

Q_DECLARE_METATYPE(pando::adapters::ForgeKind)

namespace {

const QByteArray Token = "ghp_0123456789abcdefTOKEN";
const QString KnownHosts =
    u"git.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"_s;

// A key as ssh-keygen writes it (extra: e.g. {"-N", "pass"}); empty when ssh-keygen is missing.
struct KeyFiles {
    QByteArray privateKey;
    QString fingerprint; // as ssh-keygen -l prints it
};

KeyFiles makeKey(const QString &dir, const QString &name, const QStringList &extra)
{
    const QString keygen = QStandardPaths::findExecutable(u"ssh-keygen"_s);
    if (keygen.isEmpty())
        return {};
    const QString path = dir + u'/' + name;
    QProcess make;
    make.start(keygen, QStringList{u"-q"_s, u"-f"_s, path, u"-C"_s, u"deploy"_s} + extra);
    make.waitForFinished(30000);
    QProcess list;
    list.start(keygen, {u"-l"_s, u"-f"_s, path + u".pub"_s});
    list.waitForFinished(10000);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    // "256 SHA256:abc… deploy (ED25519)"
    return KeyFiles{file.readAll(), QString::fromUtf8(list.readAllStandardOutput()).section(u' ', 1, 1)};
}

// An RSA key as GitHub hands out a GitHub App's (PKCS#1 PEM); empty when openssl is missing.
QByteArray appKey()
{
    static const QByteArray key = [] {
        QProcess make;
        make.start(u"openssl"_s, {u"genrsa"_s, u"-traditional"_s, u"2048"_s});
        return make.waitForFinished(30000) && make.exitCode() == 0 ? make.readAllStandardOutput() : QByteArray();
    }();
    return key;
}

ConnectionInput appInput(const QString &name)
{
    ConnectionInput input;
    input.name = name;
    input.scope = ForgeScope{ForgeKind::GitHub, u"https://github.com"_s, u"acme"_s};
    input.auth = AuthKind::GitHubApp;
    input.appId = u"812734"_s;
    input.installationId = u"41002"_s;
    input.secret = appKey();
    return input;
}

ConnectionInput tokenInput(const QString &name, const QString &url, ForgeKind kind = ForgeKind::GitHub)
{
    ConnectionInput input;
    input.name = name;
    input.scope = ForgeScope{kind, url, {}};
    input.auth = AuthKind::Token;
    input.secret = Token;
    return input;
}

ConnectionInput oauthInput(const QString &name, ForgeKind kind = ForgeKind::GitLab,
                           const QString &url = u"https://gitlab.com"_s)
{
    ConnectionInput input;
    input.name = name;
    input.scope = ForgeScope{kind, url, {}};
    input.auth = AuthKind::OAuth;
    input.clientId = u"3f1c9d2e"_s;
    input.secret = "gloas-Client-Secret-0042";
    return input;
}

// A forge's token endpoint as the store's renewals see it: each renewal takes the last refresh
// token it gave and gives a new one (refusing any other, as GitLab does), counted.
class FakeForgeOAuth final : public adapters::ForgeOAuth {
public:
    explicit FakeForgeOAuth(Clock &clock) : m_clock(clock) {}
    Result<QString> authorizeUrl(const adapters::ForgeOAuthApp &, const QString &, const QString &,
                                 const QString &) const override
    {
        return u"https://gitlab.com/oauth/authorize"_s;
    }
    Result<adapters::ForgeOAuthGrant> exchange(const adapters::ForgeOAuthApp &, const QString &, const QString &,
                                               const QByteArray &, const CancelToken &) const override
    {
        return grant();
    }
    Result<adapters::ForgeOAuthGrant> refresh(const adapters::ForgeOAuthApp &app, const QByteArray &refreshToken,
                                              const CancelToken &) const override
    {
        QMutexLocker lock(&m_mutex);
        ++renewals;
        secretSeen = app.clientSecret;
        if (refuse || refreshToken != m_lastRefresh)
            return fail(ErrorCode::Unauthorized, u"GitLab no longer renews the authorization"_s, u"refresh_token"_s,
                        u"authorize the connection again"_s);
        return grantLocked();
    }
    adapters::ForgeOAuthGrant grant() const
    {
        QMutexLocker lock(&m_mutex);
        return grantLocked();
    }
    mutable int renewals = 0;
    mutable QByteArray secretSeen;
    bool refuse = false;

private:
    adapters::ForgeOAuthGrant grantLocked() const
    {
        ++m_issued;
        m_lastRefresh = "refresh-" + QByteArray::number(m_issued);
        // GitLab's access tokens last two hours.
        return {"access-" + QByteArray::number(m_issued), m_lastRefresh, m_clock.nowMs() + 2 * 60 * 60 * 1000};
    }
    Clock &m_clock;
    mutable QMutex m_mutex;
    mutable int m_issued = 0;
    mutable QByteArray m_lastRefresh;
};

} // namespace

class TestSourceConn : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<QTemporaryDir> m_data;
    std::unique_ptr<Database> m_db;
    ManualClock m_clock;

    QString sealedOf(const QString &name)
    {
        auto q = detail::run(*m_db, u"SELECT sealed FROM source_connections WHERE name = ?"_s, {name}, u"read"_s);
        return q && q->next() ? q->value(0).toString() : QString();
    }

private Q_SLOTS:
    void initTestCase_data() { test::addDriverRows(); }
    void initTestCase() { m_pgStarted = m_pg.start(); }

    void init()
    {
        PANDO_FRESH_DATABASE(url, m_pg, m_pgStarted, m_tmp);
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(url).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_data = std::make_unique<QTemporaryDir>();
    }

    void cleanup()
    {
        m_db.reset();
        m_tmp.reset();
        m_data.reset();
    }

    // The forms each forge's documentation gives for cloning one repository.
    void addresses_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<ForgeKind>("kind");
        QTest::addColumn<QString>("host");
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("ssh");
        QTest::newRow("github https") << u"https://github.com/acme/api.git"_s << ForgeKind::GitHub << u"github.com"_s
                                      << u"acme/api"_s << false;
        QTest::newRow("github https bare")
            << u"https://github.com/acme/api"_s << ForgeKind::GitHub << u"github.com"_s << u"acme/api"_s << false;
        QTest::newRow("github scp") << u"git@github.com:acme/api.git"_s << ForgeKind::GitHub << u"github.com"_s
                                    << u"acme/api"_s << true;
        QTest::newRow("ssh url with port") << u"ssh://git@git.example.com:2222/team/app.git"_s << ForgeKind::Gitea
                                           << u"git.example.com"_s << u"team/app"_s << true;
        QTest::newRow("gitlab subgroups") << u"https://gitlab.com/group/sub/project.git"_s << ForgeKind::GitLab
                                          << u"gitlab.com"_s << u"group/sub/project"_s << false;
        QTest::newRow("host in capitals")
            << u"https://GitHub.com/acme/api"_s << ForgeKind::GitHub << u"github.com"_s << u"acme/api"_s << false;
        QTest::newRow("azure https") << u"https://dev.azure.com/contoso/web/_git/shop"_s << ForgeKind::AzureDevOps
                                     << u"dev.azure.com"_s << u"contoso/web/shop"_s << false;
        QTest::newRow("azure https with org user")
            << u"https://contoso@dev.azure.com/contoso/web/_git/shop"_s << ForgeKind::AzureDevOps << u"dev.azure.com"_s
            << u"contoso/web/shop"_s << false;
        QTest::newRow("azure visualstudio.com")
            << u"https://contoso.visualstudio.com/web/_git/shop"_s << ForgeKind::AzureDevOps << u"dev.azure.com"_s
            << u"contoso/web/shop"_s << false;
        QTest::newRow("azure ssh") << u"git@ssh.dev.azure.com:v3/contoso/web/shop"_s << ForgeKind::AzureDevOps
                                   << u"dev.azure.com"_s << u"contoso/web/shop"_s << true;
        QTest::newRow("azure server") << u"https://tfs.example.com/tfs/Default/web/_git/shop"_s
                                      << ForgeKind::AzureDevOps << u"tfs.example.com"_s << u"tfs/Default/web/shop"_s
                                      << false;
        QTest::newRow("bitbucket cloud") << u"https://bitbucket.org/team/repo.git"_s << ForgeKind::Bitbucket
                                         << u"bitbucket.org"_s << u"team/repo"_s << false;
        QTest::newRow("bitbucket dc http") << u"https://bb.example.com/scm/PROJ/repo.git"_s << ForgeKind::Bitbucket
                                           << u"bb.example.com"_s << u"scm/PROJ/repo"_s << false;
        QTest::newRow("bitbucket dc ssh") << u"ssh://git@bb.example.com:7999/PROJ/repo.git"_s << ForgeKind::Bitbucket
                                          << u"bb.example.com"_s << u"PROJ/repo"_s << true;
    }
    void addresses()
    {
        QFETCH(QString, url);
        QFETCH(ForgeKind, kind);
        QFETCH(QString, host);
        QFETCH(QString, path);
        QFETCH(bool, ssh);
        auto address = adapters::parseRepoAddress(url, kind);
        QVERIFY2(address, qPrintable(address ? QString() : address.error().text()));
        QCOMPARE(address->host, host);
        QCOMPARE(address->path.join(u'/'), path);
        QCOMPARE(address->transport == adapters::RepoAddress::Transport::Ssh, ssh);
    }

    void badAddresses()
    {
        for (const QString &url :
             {u"https://github.com/"_s, u"git@github.com:"_s, u"ftp://host/repo"_s, u"no-colon-here"_s, u"@:repo"_s}) {
            auto address = adapters::parseRepoAddress(url);
            QVERIFY2(!address, qPrintable(url));
            QCOMPARE(address.error().where, u"source.repo"_s);
            QVERIFY2(address.error().message.contains(url), qPrintable(address.error().message));
        }
    }

    // Which connection covers which address; -1 is "not covered".
    void coverage_data()
    {
        QTest::addColumn<ForgeKind>("kind");
        QTest::addColumn<QString>("base");
        QTest::addColumn<QString>("owner");
        QTest::addColumn<bool>("token");
        QTest::addColumn<QString>("repo");
        QTest::addColumn<int>("score");
        const auto gh = ForgeKind::GitHub;
        QTest::newRow("host") << gh << u"https://github.com"_s << QString() << true
                              << u"https://github.com/acme/api.git"_s << 1;
        QTest::newRow("owner") << gh << u"https://github.com"_s << u"acme"_s << true
                               << u"https://github.com/acme/api.git"_s << 2;
        QTest::newRow("owner any case") << gh << u"https://github.com"_s << u"Acme"_s << true
                                        << u"https://github.com/acme/api"_s << 2;
        QTest::newRow("other owner") << gh << u"https://github.com"_s << u"acme"_s << true
                                     << u"https://github.com/evil/api.git"_s << -1;
        QTest::newRow("owner is not a repo")
            << gh << u"https://github.com"_s << u"acme"_s << true << u"https://github.com/acme"_s << -1;
        QTest::newRow("other host") << gh << u"https://github.com"_s << QString() << true
                                    << u"https://github.com.evil.example/acme/api"_s << -1;
        QTest::newRow("token, ssh address")
            << gh << u"https://github.com"_s << QString() << true << u"git@github.com:acme/api.git"_s << -1;
        QTest::newRow("key, ssh address")
            << gh << u"https://github.com"_s << QString() << false << u"git@github.com:acme/api.git"_s << 1;
        QTest::newRow("key, https address")
            << gh << u"https://github.com"_s << QString() << false << u"https://github.com/acme/api.git"_s << -1;
        QTest::newRow("other port") << ForgeKind::Gitea << u"https://git.example.com:3000"_s << QString() << true
                                    << u"https://git.example.com/team/app.git"_s << -1;
        QTest::newRow("same port") << ForgeKind::Gitea << u"https://git.example.com:3000"_s << QString() << true
                                   << u"https://git.example.com:3000/team/app.git"_s << 1;
        QTest::newRow("ssh ignores web port") << ForgeKind::Gitea << u"https://git.example.com:3000"_s << QString()
                                              << false << u"ssh://git@git.example.com:2222/team/app.git"_s << 1;
        QTest::newRow("http to https") << ForgeKind::Generic << u"http://127.0.0.1:8080"_s << QString() << true
                                       << u"https://127.0.0.1:8080/r.git"_s << -1;
        QTest::newRow("gitlab below a path") << ForgeKind::GitLab << u"https://example.com/gitlab"_s << QString()
                                             << true << u"https://example.com/gitlab/group/app.git"_s << 2;
        QTest::newRow("gitlab path missing") << ForgeKind::GitLab << u"https://example.com/gitlab"_s << QString()
                                             << true << u"https://example.com/group/app.git"_s << -1;
        QTest::newRow("gitlab ssh without the path") << ForgeKind::GitLab << u"https://example.com/gitlab"_s
                                                     << QString() << false << u"git@example.com:group/app.git"_s << 1;
        QTest::newRow("bitbucket dc scm") << ForgeKind::Bitbucket << u"https://bb.example.com"_s << u"PROJ"_s << true
                                          << u"https://bb.example.com/scm/proj/repo.git"_s << 2;
        QTest::newRow("bitbucket dc ssh") << ForgeKind::Bitbucket << u"https://bb.example.com"_s << u"PROJ"_s << false
                                          << u"ssh://git@bb.example.com:7999/PROJ/repo.git"_s << 2;
        QTest::newRow("azure org") << ForgeKind::AzureDevOps << u"https://dev.azure.com/contoso"_s << QString() << true
                                   << u"https://dev.azure.com/contoso/web/_git/shop"_s << 2;
        QTest::newRow("azure old host") << ForgeKind::AzureDevOps << u"https://dev.azure.com/contoso"_s << QString()
                                        << true << u"https://contoso.visualstudio.com/web/_git/shop"_s << 2;
        QTest::newRow("azure ssh") << ForgeKind::AzureDevOps << u"https://dev.azure.com/contoso"_s << QString() << false
                                   << u"git@ssh.dev.azure.com:v3/contoso/web/shop"_s << 2;
        QTest::newRow("azure other org") << ForgeKind::AzureDevOps << u"https://dev.azure.com/contoso"_s << QString()
                                         << false << u"git@ssh.dev.azure.com:v3/fabrikam/web/shop"_s << -1;
        QTest::newRow("file") << ForgeKind::Generic << u"https://example.com"_s << QString() << true
                              << u"file:///srv/git/app.git"_s << -1;
    }
    void coverage()
    {
        QFETCH(ForgeKind, kind);
        QFETCH(QString, base);
        QFETCH(QString, owner);
        QFETCH(bool, token);
        QFETCH(QString, repo);
        QFETCH(int, score);
        const ForgeScope scope{kind, base, owner};
        QVERIFY2(adapters::checkForgeScope(scope), qPrintable(base));
        auto address = adapters::parseRepoAddress(repo, kind);
        QVERIFY2(address, qPrintable(address ? QString() : address.error().text()));
        QCOMPARE(adapters::coverage(scope, token, *address), score);
    }

    void inputRules_data()
    {
        QTest::addColumn<QString>("field"); // what is changed from a good token input
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("name") << u"name"_s << u"My_Conn"_s << u"name"_s << u"connection name"_s;
        QTest::newRow("plain http") << u"url"_s << u"http://git.example.com"_s << u"url"_s << u"plain http"_s;
        QTest::newRow("token in url") << u"url"_s << u"https://user:tok@github.com"_s << u"url"_s << u"password"_s;
        QTest::newRow("no host") << u"url"_s << u"github.com"_s << u"url"_s << u"not a URL"_s;
        QTest::newRow("ftp") << u"url"_s << u"ftp://github.com"_s << u"url"_s << u"https:// or ssh://"_s;
        QTest::newRow("owner") << u"owner"_s << u"../etc"_s << u"owner"_s << u"organisation"_s;
        QTest::newRow("empty token") << u"token"_s << QString() << u"token"_s << u"needs a token"_s;
        QTest::newRow("token line break") << u"token"_s << u"abc\n"_s << u"token"_s << u"line break"_s;
        QTest::newRow("token too long") << u"token"_s << QString(5000, u'x') << u"token"_s << u"bytes"_s;
        QTest::newRow("gitea needs a user") << u"kind"_s << u"gitea"_s << u"username"_s << u"user name"_s;
        QTest::newRow("user with colon") << u"username"_s << u"a:b"_s << u"username"_s << u"not a user name"_s;
        QTest::newRow("hosts with a token") << u"known_hosts"_s << KnownHosts << u"known_hosts"_s << u"ssh-key"_s;
    }
    void inputRules()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, where);
        QFETCH(QString, says);
        ConnectionInput input = tokenInput(u"github"_s, u"https://github.com"_s);
        QVERIFY(sourceconn::checkConnectionInput(input));
        if (field == u"name")
            input.name = value;
        else if (field == u"url")
            input.scope.baseUrl = value;
        else if (field == u"owner")
            input.scope.owner = value;
        else if (field == u"token")
            input.secret = value.toUtf8();
        else if (field == u"kind")
            input.scope.kind = adapters::parseForgeKind(value).value();
        else if (field == u"username")
            input.username = value;
        else if (field == u"known_hosts")
            input.knownHosts = value;
        const Status checked = sourceconn::checkConnectionInput(input);
        QVERIFY(!checked);
        QCOMPARE(checked.error().where, where);
        QVERIFY2(checked.error().message.contains(says), qPrintable(checked.error().text()));
        QVERIFY(!checked.error().text().contains(QString::fromUtf8(Token)));
    }

    void loopbackHttpIsAllowed()
    {
        QVERIFY(adapters::checkForgeScope(ForgeScope{ForgeKind::Generic, u"http://127.0.0.1:8080"_s, {}}));
        QVERIFY(adapters::checkForgeScope(ForgeScope{ForgeKind::Generic, u"http://[::1]:8080"_s, {}}));
        QVERIFY(!adapters::checkForgeScope(ForgeScope{ForgeKind::Generic, u"http://10.0.0.1"_s, {}}));
    }

    // Keys exactly as ssh-keygen writes them.
    void deployKeys()
    {
        QTemporaryDir dir;
        const KeyFiles ed25519 = makeKey(dir.path(), u"ed"_s, {u"-t"_s, u"ed25519"_s, u"-N"_s, QString()});
        PANDO_REQUIRE_COMPONENT(!ed25519.privateKey.isEmpty(), u"ssh-keygen (openssh-client) is not installed"_s);
        ConnectionInput input;
        input.name = u"deploy"_s;
        input.scope = ForgeScope{ForgeKind::Generic, u"ssh://git.example.com"_s, {}};
        input.auth = AuthKind::SshKey;
        input.secret = ed25519.privateKey;
        input.knownHosts = KnownHosts;
        QVERIFY2(sourceconn::checkConnectionInput(input),
                 qPrintable(sourceconn::checkConnectionInput(input).error().text()));
        QCOMPARE(sourceconn::keyFingerprint(ed25519.privateKey), ed25519.fingerprint);

        const KeyFiles pem = makeKey(dir.path(), u"rsa"_s,
                                     {u"-t"_s, u"rsa"_s, u"-b"_s, u"2048"_s, u"-m"_s, u"PEM"_s, u"-N"_s, QString()});
        input.secret = pem.privateKey;
        QVERIFY(sourceconn::checkConnectionInput(input));

        for (const QStringList &format :
             {QStringList{u"-t"_s, u"ed25519"_s}, QStringList{u"-t"_s, u"rsa"_s, u"-m"_s, u"PEM"_s}}) {
            const KeyFiles locked =
                makeKey(dir.path(), u"locked-"_s + format.last(), format + QStringList{u"-N"_s, u"a passphrase"_s});
            input.secret = locked.privateKey;
            const Status refused = sourceconn::checkConnectionInput(input);
            QVERIFY2(!refused, qPrintable(format.join(u' ')));
            QCOMPARE(refused.error().where, u"ssh_key"_s);
            QVERIFY(refused.error().message.contains(u"passphrase"_s));
        }

        QFile pub(dir.path() + u"/ed.pub"_s);
        QVERIFY(pub.open(QIODevice::ReadOnly));
        input.secret = pub.readAll();
        const Status publicKey = sourceconn::checkConnectionInput(input);
        QVERIFY(!publicKey);
        QVERIFY(publicKey.error().message.contains(u"public key"_s));

        input.secret = ed25519.privateKey;
        input.knownHosts = QString();
        QCOMPARE(sourceconn::checkConnectionInput(input).error().where, u"known_hosts"_s);
        input.knownHosts = u"git.example.com not-a-key\n"_s;
        const Status badHosts = sourceconn::checkConnectionInput(input);
        QCOMPARE(badHosts.error().where, u"known_hosts"_s);
        QVERIFY(badHosts.error().message.contains(u"line 1"_s));
    }

    void chooseTheClosest()
    {
        const auto connection = [](const QString &name, const QString &owner, AuthKind auth) {
            sourceconn::Connection c;
            c.name = name;
            c.scope = ForgeScope{ForgeKind::GitHub, u"https://github.com"_s, owner};
            c.auth = auth;
            return c;
        };
        const QList<sourceconn::Connection> all{connection(u"all"_s, {}, AuthKind::Token),
                                                connection(u"acme"_s, u"acme"_s, AuthKind::Token),
                                                connection(u"key"_s, {}, AuthKind::SshKey)};
        QCOMPARE(sourceconn::choose(all, u"https://github.com/acme/api"_s).value()->name, u"acme"_s);
        QCOMPARE(sourceconn::choose(all, u"https://github.com/other/api"_s).value()->name, u"all"_s);
        QCOMPARE(sourceconn::choose(all, u"git@github.com:acme/api.git"_s).value()->name, u"key"_s);
        QVERIFY(!sourceconn::choose(all, u"https://gitlab.com/acme/api"_s).value());
        const auto tie =
            sourceconn::choose(all + QList{connection(u"all-too"_s, {}, AuthKind::Token)}, u"https://github.com/x/y"_s);
        QVERIFY(!tie);
        QCOMPARE(tie.error().code, ErrorCode::Conflict);
        QCOMPARE(tie.error().where, u"source.connection"_s);
        QVERIFY(tie.error().message.contains(u"all, all-too"_s));
    }

    void storeSealsAndRotates()
    {
        auto key = pipelines::keyfile::create(m_data->path() + u"/seal.key"_s);
        QVERIFY(key);
        const pipelines::SealBox box({*key});
        sourceconn::ConnectionStore store(*m_db, box, m_clock);

        auto added = store.add(tokenInput(u"github"_s, u"https://github.com"_s), u"token:admin"_s);
        QVERIFY2(added, qPrintable(added ? QString() : added.error().text()));
        QCOMPARE(added->createdBy, u"token:admin"_s);
        auto again = store.add(tokenInput(u"github"_s, u"https://github.example.com"_s), u"token:admin"_s);
        QCOMPARE(again.error().code, ErrorCode::Conflict);
        QCOMPARE(again.error().where, u"name"_s);

        // At rest only an envelope; opened, the token with GitHub's documented user name.
        const QString sealed = sealedOf(u"github"_s);
        QVERIFY(pipelines::SealBox::isSealed(sealed));
        QVERIFY(!sealed.contains(QString::fromUtf8(Token)));
        auto credential = store.credential(u"github"_s);
        QVERIFY(credential);
        QCOMPARE(credential->token, Token);
        QCOMPARE(credential->username, u"x-access-token"_s);
        QVERIFY(credential->sshPrivateKey.isEmpty());

        auto listed = store.list();
        QVERIFY(listed);
        QCOMPARE(listed->size(), 1);
        QCOMPARE(listed->first().scope.baseUrl, u"https://github.com"_s);

        // An app reading through it is what keeps it.
        AppRecord app;
        app.name = u"web"_s;
        app.sourceConnection = u"github"_s;
        QVERIFY(AppRepository(*m_db).create(app));
        QCOMPARE(store.appsUsing(u"github"_s).value(), QStringList{u"web"_s});
        QCOMPARE(AppRepository(*m_db).find(u"web"_s)->sourceConnection, u"github"_s);

        // A sealed value copied to another connection's row does not open there.
        QVERIFY(store.add(tokenInput(u"other"_s, u"https://gitlab.com"_s, ForgeKind::GitLab), {}));
        QCOMPARE(store.credential(u"other"_s)->username, u"oauth2"_s);
        QVERIFY(detail::run(*m_db, u"UPDATE source_connections SET sealed = ? WHERE name = 'other'"_s, {sealed},
                            u"copy"_s));
        auto copied = store.credential(u"other"_s);
        QVERIFY(!copied);
        QVERIFY(!copied.error().text().contains(QString::fromUtf8(Token)));

        // Rotation re-seals it with the new key.
        QVERIFY(store.remove(u"other"_s));
        auto report = secrets::rotateSealKey(*m_db, m_data->path());
        QVERIFY2(report, qPrintable(report ? QString() : report.error().text()));
        QCOMPARE(report->connectionCredentials, 1);
        auto newKey = secrets::loadSealKey(m_data->path());
        QVERIFY(newKey);
        const pipelines::SealBox rotated({*newKey});
        QCOMPARE(sourceconn::ConnectionStore(*m_db, rotated, m_clock).credential(u"github"_s)->token, Token);
        QVERIFY(sealedOf(u"github"_s) != sealed);

        QCOMPARE(store.remove(u"missing"_s).error().code, ErrorCode::NotFound);
        const auto gone = store.credential(u"missing"_s);
        QCOMPARE(gone.error().where, u"source.connection"_s);
        QVERIFY(gone.error().hint.contains(u"pando connections add"_s));
    }

    // A GitHub App connection: GitHub's, two numbers and the app's RSA key, nothing else.
    void gitHubAppRules()
    {
        QVERIFY2(!appKey().isEmpty(), "openssl made no RSA key");
        QVERIFY(sourceconn::checkConnectionInput(appInput(u"app"_s)));
        const auto refusedAt = [](const ConnectionInput &input) {
            auto checked = sourceconn::checkConnectionInput(input);
            return checked ? u"accepted"_s : checked.error().where;
        };
        ConnectionInput input = appInput(u"app"_s);
        input.scope.kind = ForgeKind::Gitea;
        QCOMPARE(refusedAt(input), u"kind"_s);
        input = appInput(u"app"_s);
        input.appId = u"Iv1.8a61f9b3a7aba766"_s; // the app's client id, given where its id goes
        QCOMPARE(refusedAt(input), u"app_id"_s);
        input = appInput(u"app"_s);
        input.installationId.clear();
        QCOMPARE(refusedAt(input), u"installation_id"_s);
        input = appInput(u"app"_s);
        input.username = u"bot"_s;
        QCOMPARE(refusedAt(input), u"username"_s);
        input = appInput(u"app"_s);
        input.secret = Token; // a token where the key goes
        QCOMPARE(refusedAt(input), u"private_key"_s);
        QVERIFY(!sourceconn::checkConnectionInput(input).error().text().contains(QString::fromUtf8(Token)));
        // The ids belong to GitHub App connections alone.
        input = tokenInput(u"token"_s, u"https://github.com"_s);
        input.appId = u"812734"_s;
        QCOMPARE(refusedAt(input), u"app_id"_s);
    }

    // Its installation tokens are minted when a fetch needs one, kept until five minutes before
    // they expire, and never outlive the connection they were minted for.
    void gitHubAppTokensAreMintedAndKept()
    {
        QVERIFY2(!appKey().isEmpty(), "openssl made no RSA key");
        auto key = pipelines::keyfile::create(m_data->path() + u"/seal.key"_s);
        QVERIFY(key);
        const pipelines::SealBox box({*key});
        m_clock.set(1'800'000'000'000);
        QList<adapters::ForgeAppInstallation> asked;
        bool refuse = false;
        sourceconn::InstallationTokens tokens(
            [&](const adapters::ForgeAppInstallation &app) -> Result<adapters::ForgeAccessToken> {
                asked << app;
                if (refuse)
                    return fail(ErrorCode::NotFound, u"GitHub has no installation 41002 of GitHub App 812734"_s,
                                u"installation_id"_s);
                return adapters::ForgeAccessToken{"ghs_minted-" + QByteArray::number(asked.size()),
                                                  m_clock.nowMs() + 60 * 60 * 1000};
            },
            m_clock);

        // Without a way to mint, the connection cannot be read, and says so.
        QVERIFY(sourceconn::ConnectionStore(*m_db, box, m_clock).add(appInput(u"app"_s), u"user:ada"_s));
        QCOMPARE(sourceconn::ConnectionStore(*m_db, box, m_clock).credential(u"app"_s).error().code,
                 ErrorCode::Unavailable);

        sourceconn::ConnectionStore store(*m_db, box, m_clock, &tokens);
        auto found = store.find(u"app"_s);
        QVERIFY(found);
        QCOMPARE(found->auth, AuthKind::GitHubApp);
        QCOMPARE(found->appId, u"812734"_s);
        QCOMPARE(found->installationId, u"41002"_s);
        QVERIFY(found->overHttps());
        QVERIFY(!sealedOf(u"app"_s).contains(u"PRIVATE KEY"_s));

        auto first = store.credential(u"app"_s);
        QVERIFY2(first, qPrintable(first ? QString() : first.error().text()));
        QCOMPARE(first->username, u"x-access-token"_s);
        QCOMPARE(first->token, QByteArray("ghs_minted-1"));
        QCOMPARE(asked.size(), 1);
        QCOMPARE(asked.first().appId, u"812734"_s);
        QCOMPARE(asked.first().installationId, u"41002"_s);
        QCOMPARE(asked.first().scope.owner, u"acme"_s);
        QCOMPARE(asked.first().privateKey.trimmed(), appKey().trimmed());

        // Kept while it has more than five minutes left …
        m_clock.advance(54 * 60 * 1000);
        QCOMPARE(store.credential(u"app"_s)->token, QByteArray("ghs_minted-1"));
        QCOMPARE(asked.size(), 1);
        // … and renewed after.
        m_clock.advance(2 * 60 * 1000);
        QCOMPARE(store.credential(u"app"_s)->token, QByteArray("ghs_minted-2"));

        // Removed and added again under its name: nothing of the one before is handed out.
        tokens.forget(u"app"_s);
        QVERIFY(store.remove(u"app"_s));
        m_clock.advance(1000);
        QVERIFY(store.add(appInput(u"app"_s), u"user:ada"_s));
        QCOMPARE(store.credential(u"app"_s)->token, QByteArray("ghs_minted-3"));
        QVERIFY(store.remove(u"app"_s));
        m_clock.advance(1000);
        QVERIFY(store.add(appInput(u"app"_s), u"user:ada"_s)); // not forgotten: its creation tells it apart
        QCOMPARE(store.credential(u"app"_s)->token, QByteArray("ghs_minted-4"));

        // A refused mint is the connection's error, and nothing is kept of it.
        tokens.forget(u"app"_s);
        refuse = true;
        auto refused = store.credential(u"app"_s);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Failed);
        QCOMPARE(refused.error().where, u"installation_id"_s);
        QVERIFY2(refused.error().message.startsWith(u"connection app: GitHub has no installation"_s),
                 qPrintable(refused.error().message));
        refuse = false;
        QCOMPARE(store.credential(u"app"_s)->token, QByteArray("ghs_minted-6"));
    }

    // An OAuth connection: a forge that has OAuth applications, at an https address, a client id
    // and secret, nothing else; the browser comes back only to this machine.
    void oauthRules()
    {
        QVERIFY(sourceconn::checkConnectionInput(oauthInput(u"o"_s)));
        for (const auto &[kind, url] : {std::pair{ForgeKind::GitHub, u"https://github.com"_s},
                                        std::pair{ForgeKind::Gitea, u"https://codeberg.org"_s},
                                        std::pair{ForgeKind::Bitbucket, u"https://bitbucket.org"_s}})
            QVERIFY(sourceconn::checkConnectionInput(oauthInput(u"o"_s, kind, url)));
        const auto refusedAt = [](const ConnectionInput &input) {
            auto checked = sourceconn::checkConnectionInput(input);
            return checked ? u"accepted"_s : checked.error().where;
        };
        QCOMPARE(refusedAt(oauthInput(u"o"_s, ForgeKind::AzureDevOps, u"https://dev.azure.com/acme"_s)), u"kind"_s);
        QCOMPARE(refusedAt(oauthInput(u"o"_s, ForgeKind::Bitbucket, u"https://bitbucket.example.com"_s)), u"kind"_s);
        QCOMPARE(refusedAt(oauthInput(u"o"_s, ForgeKind::Generic, u"https://git.example.com"_s)), u"kind"_s);
        QCOMPARE(refusedAt(oauthInput(u"o"_s, ForgeKind::GitLab, u"ssh://git@gitlab.com"_s)), u"url"_s);
        ConnectionInput input = oauthInput(u"o"_s);
        input.clientId = u"has space"_s;
        QCOMPARE(refusedAt(input), u"client_id"_s);
        input = oauthInput(u"o"_s);
        input.secret.clear();
        QCOMPARE(refusedAt(input), u"client_secret"_s);
        input = oauthInput(u"o"_s);
        input.secret = "two\nlines";
        QCOMPARE(refusedAt(input), u"client_secret"_s);
        input = oauthInput(u"o"_s);
        input.username = u"me"_s;
        QCOMPARE(refusedAt(input), u"username"_s);
        input = tokenInput(u"t"_s, u"https://github.com"_s);
        input.clientId = u"3f1c9d2e"_s;
        QCOMPARE(refusedAt(input), u"client_id"_s);

        for (const QString &uri :
             {u"http://127.0.0.1:49152/callback"_s, u"http://[::1]:8080/cb"_s, u"http://localhost:1234/callback"_s})
            QVERIFY2(sourceconn::checkRedirectUri(uri), qPrintable(uri));
        for (const QString &uri : {u"https://127.0.0.1:49152/callback"_s, u"http://127.0.0.1/callback"_s,
                                   u"http://example.com:80/callback"_s, u"http://user@127.0.0.1:80/callback"_s,
                                   u"http://127.0.0.2.example.com:80/"_s, u"not a url"_s}) {
            auto checked = sourceconn::checkRedirectUri(uri);
            QVERIFY2(!checked, qPrintable(uri));
            QCOMPARE(checked.error().where, u"redirect_uri"_s);
        }
    }

    // An authorization under way: finished only by who began it, once, within ten minutes; its
    // challenge is the S256 of a verifier nobody else sees.
    void oauthAuthorizationsWait()
    {
        m_clock.set(1'800'000'000'000);
        FakeForgeOAuth forge(m_clock);
        sourceconn::OAuthGrants grants(std::shared_ptr<const adapters::ForgeOAuth>(&forge, [](auto *) {}), m_clock);
        const auto begin = [&](const QString &actor) {
            return grants.begin({oauthInput(u"o"_s), false, u"http://127.0.0.1:5/callback"_s, {}, actor, 0});
        };
        const auto begun = begin(u"user:ada"_s);
        QVERIFY(begun.state.size() >= 43);
        QCOMPARE(begun.expiresMs, m_clock.nowMs() + sourceconn::OAuthGrants::PendingTtlMs);
        QCOMPARE(grants.take(begun.state, u"user:bob"_s).error().code, ErrorCode::NotFound);
        auto taken = grants.take(begun.state, u"user:ada"_s);
        QVERIFY(taken);
        QCOMPARE(taken->input.secret, oauthInput(u"o"_s).secret);
        const QByteArray challenge = QCryptographicHash::hash(taken->verifier, QCryptographicHash::Sha256)
                                         .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
        QCOMPARE(QString::fromLatin1(challenge), begun.codeChallenge);
        QCOMPARE(grants.take(begun.state, u"user:ada"_s).error().where, u"state"_s);

        const auto late = begin(u"user:ada"_s);
        m_clock.advance(sourceconn::OAuthGrants::PendingTtlMs);
        QCOMPARE(grants.take(late.state, u"user:ada"_s).error().code, ErrorCode::NotFound);

        // At most MaxPending wait: the oldest goes first.
        const auto oldest = begin(u"user:ada"_s);
        m_clock.advance(1);
        QString newest;
        for (int i = 0; i < sourceconn::OAuthGrants::MaxPending; ++i) {
            newest = begin(u"user:ada"_s).state;
            m_clock.advance(1);
        }
        QVERIFY(!grants.take(oldest.state, u"user:ada"_s));
        QVERIFY(grants.take(newest, u"user:ada"_s));
    }

    // The store keeps what the forge granted sealed, hands out the access token, renews it five
    // minutes before it expires (once, however many ask at once) and keeps the new refresh token;
    // a refused renewal says to authorize again.
    void oauthTokensAreRenewed()
    {
        auto key = pipelines::keyfile::create(m_data->path() + u"/seal.key"_s);
        QVERIFY(key);
        const pipelines::SealBox box({*key});
        m_clock.set(1'800'000'000'000);
        FakeForgeOAuth forge(m_clock);
        sourceconn::OAuthGrants grants(std::shared_ptr<const adapters::ForgeOAuth>(&forge, [](auto *) {}), m_clock);
        sourceconn::ConnectionStore store(*m_db, box, m_clock, nullptr, &grants);

        QCOMPARE(store.add(oauthInput(u"gl"_s), u"user:ada"_s).error().where, u"auth"_s);
        const adapters::ForgeOAuthGrant first = forge.grant();
        auto added = store.add(oauthInput(u"gl"_s), u"user:ada"_s, &first);
        QVERIFY2(added, qPrintable(added ? QString() : added.error().text()));
        QCOMPARE(added->clientId, u"3f1c9d2e"_s);
        QCOMPARE(store.find(u"gl"_s)->auth, AuthKind::OAuth);
        for (const QString &plain : {u"access-1"_s, u"refresh-1"_s, u"gloas-Client-Secret-0042"_s})
            QVERIFY(!sealedOf(u"gl"_s).contains(plain));

        auto credential = store.credential(u"gl"_s);
        QVERIFY2(credential, qPrintable(credential ? QString() : credential.error().text()));
        QCOMPARE(credential->token, QByteArray("access-1"));
        QCOMPARE(credential->username, u"oauth2"_s);
        QCOMPARE(forge.renewals, 0);

        // Five minutes before the two hours are up, the next use renews, and two at once renew once.
        m_clock.advance(116 * 60 * 1000);
        Result<adapters::SourceCredential> seen[2];
        std::thread other([&] { seen[1] = store.credential(u"gl"_s); });
        seen[0] = store.credential(u"gl"_s);
        other.join();
        for (const Result<adapters::SourceCredential> &one : seen) {
            QVERIFY2(one, qPrintable(one ? QString() : one.error().text()));
            QCOMPARE(one->token, QByteArray("access-2"));
        }
        QCOMPARE(forge.renewals, 1);
        QCOMPARE(forge.secretSeen, QByteArray("gloas-Client-Secret-0042"));
        // The renewal's refresh token was kept: the next renewal is taken too.
        m_clock.advance(116 * 60 * 1000);
        QCOMPARE(store.credential(u"gl"_s)->token, QByteArray("access-3"));
        QCOMPARE(forge.renewals, 2);

        // Refused: the connection's failure, saying how to authorize it again.
        m_clock.advance(116 * 60 * 1000);
        forge.refuse = true;
        auto refused = store.credential(u"gl"_s);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, ErrorCode::Failed);
        QVERIFY2(refused.error().hint.contains(u"pando connections authorize gl"_s),
                 qPrintable(refused.error().text()));
        // Authorized again: the new grant is what is handed out.
        forge.refuse = false;
        QVERIFY(store.reauthorize(u"gl"_s, forge.grant()));
        QCOMPARE(store.credential(u"gl"_s)->token, QByteArray("access-4"));
        QCOMPARE(store.reauthorize(u"nope"_s, forge.grant()).error().code, ErrorCode::NotFound);
        // Without renewals, an OAuth connection cannot be read.
        QCOMPARE(sourceconn::ConnectionStore(*m_db, box, m_clock).credential(u"gl"_s).error().code,
                 ErrorCode::Unavailable);
    }
};

QTEST_GUILESS_MAIN(TestSourceConn)
#include "tst_sourceconn.moc"
