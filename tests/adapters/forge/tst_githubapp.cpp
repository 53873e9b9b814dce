// GitHub App installations through the forge adapter (adapters::mintInstallationToken, and the
// GitHub API with an installation's token), against the stand-in for GitHub's API
// (forge_api_standin.py), which verifies the app's JSON Web Token with the app's public key as
// GitHub documents it (RS256, iss the app id, at most ten minutes between iat and exp) and answers
// GitHub's documented bodies for a token, a suspended installation (403) and one it does not know
// (404). The key pair is made for the test by openssl, PKCS#1 as GitHub hands them out. GitHub
// itself cannot be reached from here.

#include "adapters/api/forge.h"
#include "adapters/api/jose/rs256.h"
#include "adapters/forge/rest/forgerest.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/support/component.h"

#include <QDateTime>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

namespace {

const QByteArray Token = "ghp_personal-Standin-Token-2046";
const QByteArray InstallationToken = "ghs_installation-Standin-Token-9183";
const QString AppId = u"812734"_s;

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

} // namespace

class TestGitHubApp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void mintsAnInstallationsToken();
    void refusalsSayWhatToDo();
    void badInputIsRefusedBeforeAnyRequest();
    void anInstallationListsItsRepositories();
    void theKeyMustBeAnAppsKey();

private:
    ForgeAppInstallation app(const QString &installation) const;
    QString api() const { return m_standIn->base() + u"/github"_s; }
    std::unique_ptr<test::ForgeStandIn> m_standIn;
    test::RsaKeyPair m_key;
};

ForgeAppInstallation TestGitHubApp::app(const QString &installation) const
{
    return ForgeAppInstallation{ForgeScope{ForgeKind::GitHub, u"https://github.com"_s, {}}, AppId, installation,
                                m_key.privatePem};
}

void TestGitHubApp::initTestCase()
{
    PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                            u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
    m_key = test::rsaKeyPair();
    QVERIFY2(!m_key.publicPem.isEmpty(), "openssl made no RSA key");
    QVERIFY(m_key.privatePem.startsWith("-----BEGIN RSA PRIVATE KEY-----"));
    m_standIn = std::make_unique<test::ForgeStandIn>(Token);
    QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");
    m_standIn->gitHubApp(AppId, m_key.publicPem, QJsonObject{{"77"_L1, "active"_L1}, {"78"_L1, "suspended"_L1}},
                         InstallationToken, {u"acme/api"_s, u"acme/tools"_s});
}

void TestGitHubApp::mintsAnInstallationsToken()
{
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    auto minted = mintInstallationToken(app(u"77"_s), api());
    QVERIFY2(minted, qPrintable(minted ? QString() : text(minted.error())));
    QCOMPARE(minted->token, InstallationToken);
    // GitHub's tokens last an hour: the expiry is read from the answer, not assumed.
    QVERIFY2(minted->expiresMs > before + 3500 * 1000 && minted->expiresMs < before + 3700 * 1000,
             qPrintable(QString::number(minted->expiresMs - before)));
    const QJsonArray requests = m_standIn->requests(u"github"_s);
    QCOMPARE(requests.last()[u"method"_s].toString(), u"POST"_s);
    QCOMPARE(requests.last()[u"path"_s].toString(), u"/github/app/installations/77/access_tokens"_s);
}

void TestGitHubApp::refusalsSayWhatToDo()
{
    // Uninstalled from the account (or never installed): 404.
    auto gone = mintInstallationToken(app(u"79"_s), api());
    QVERIFY(!gone);
    QCOMPARE(gone.error().code, ErrorCode::NotFound);
    QCOMPARE(gone.error().where, u"installation_id"_s);
    QVERIFY2(gone.error().message.contains(u"installation 79 of GitHub App 812734"_s), qPrintable(text(gone.error())));
    QVERIFY2(gone.error().hint.contains(u"install the app"_s), qPrintable(text(gone.error())));

    auto suspended = mintInstallationToken(app(u"78"_s), api());
    QVERIFY(!suspended);
    QCOMPARE(suspended.error().code, ErrorCode::Forbidden);
    QVERIFY2(suspended.error().message.contains(u"suspended"_s), qPrintable(text(suspended.error())));

    // Another app's id: the JWT is not this app's, and GitHub refuses it as a whole.
    ForgeAppInstallation other = app(u"77"_s);
    other.appId = u"999"_s;
    auto wrongApp = mintInstallationToken(other, api());
    QVERIFY(!wrongApp);
    QCOMPARE(wrongApp.error().code, ErrorCode::Unauthorized);
    QCOMPARE(wrongApp.error().where, u"private_key"_s);
    QVERIFY2(wrongApp.error().hint.contains(u"app id"_s), qPrintable(text(wrongApp.error())));
}

void TestGitHubApp::badInputIsRefusedBeforeAnyRequest()
{
    const qsizetype asked = m_standIn->requests(u"github"_s).size();
    ForgeAppInstallation notNumber = app(u"77"_s);
    notNumber.installationId = u"../../user"_s;
    auto refused = mintInstallationToken(notNumber, api());
    QVERIFY(!refused);
    QCOMPARE(refused.error().where, u"installation_id"_s);

    ForgeAppInstallation gitlab = app(u"77"_s);
    gitlab.scope.kind = ForgeKind::GitLab;
    QCOMPARE(mintInstallationToken(gitlab, api()).error().where, u"kind"_s);

    ForgeAppInstallation noKey = app(u"77"_s);
    noKey.privateKey = "ghp_not-a-key";
    auto keyless = mintInstallationToken(noKey, api());
    QVERIFY(!keyless);
    QCOMPARE(keyless.error().where, u"private_key"_s);
    QVERIFY2(!keyless.error().message.contains(u"ghp_not-a-key"_s), qPrintable(text(keyless.error())));
    QCOMPARE(m_standIn->requests(u"github"_s).size(), asked);
}

void TestGitHubApp::anInstallationListsItsRepositories()
{
    auto minted = mintInstallationToken(app(u"77"_s), api());
    QVERIFY2(minted, qPrintable(minted ? QString() : text(minted.error())));
    ForgeAccount account{ForgeScope{ForgeKind::GitHub, u"https://github.com"_s, {}}, {}, minted->token, true};
    auto listed = forgerest::makeApi(account, {.apiBase = api()})->repositories({});
    QVERIFY2(listed, qPrintable(listed ? QString() : text(listed.error())));
    QStringList names;
    for (const ForgeRepository &r : std::as_const(*listed))
        names << r.fullName;
    QCOMPARE(names, (QStringList{u"acme/api"_s, u"acme/tools"_s}));
    // Everything else reads as with a person's token: a ref of a repository it was given.
    auto ref = forgerest::makeApi(account, {.apiBase = api()})
                   ->resolve(*parseRepoAddress(u"https://github.com/acme/api.git"_s, ForgeKind::GitHub), u"main"_s, {});
    QVERIFY2(ref, qPrintable(ref ? QString() : text(ref.error())));

    // GitHub refuses /user/repos to an installation's token: the listing must not ask it.
    account.installation = false;
    auto asUser = forgerest::makeApi(account, {.apiBase = api()})->repositories({});
    QVERIFY(!asUser);
    QCOMPARE(asUser.error().code, ErrorCode::Forbidden);
}

void TestGitHubApp::theKeyMustBeAnAppsKey()
{
    QVERIFY(jose::RsaKey::fromPem(m_key.privatePem));
    const QByteArray data = "header.claims";
    auto key = jose::RsaKey::fromPem(m_key.privatePem);
    QCOMPARE(key->bits(), 2048);
    const QByteArray signature = key->sign(data);
    QCOMPARE(signature.size(), 256);
    QVERIFY(key->verify(data, signature));
    QVERIFY(!key->verify("header.claimz", signature));

    QCOMPARE(jose::RsaKey::fromPem("not a key").error().code, ErrorCode::Invalid);
    QVERIFY(jose::RsaKey::fromPem(m_key.privatePem.left(200)).error().message.contains(u"cut short"_s));
    // A public key, an EC key, a short RSA key, a key behind a passphrase: each is told apart.
    QVERIFY(!jose::RsaKey::fromPem(m_key.publicPem));
    const auto openssl = [](const QStringList &args) {
        QProcess p;
        p.start(u"openssl"_s, args);
        return p.waitForFinished(30000) ? p.readAllStandardOutput() : QByteArray();
    };
    auto ec = jose::RsaKey::fromPem(
        openssl({u"genpkey"_s, u"-algorithm"_s, u"EC"_s, u"-pkeyopt"_s, u"ec_paramgen_curve:P-256"_s}));
    QVERIFY(!ec);
    QVERIFY2(ec.error().message.contains(u"RSA"_s), qPrintable(ec.error().message));
    auto small = jose::RsaKey::fromPem(openssl({u"genrsa"_s, u"1024"_s}));
    QVERIFY(!small);
    QVERIFY2(small.error().message.contains(u"1024 bits"_s), qPrintable(small.error().message));
    auto locked =
        jose::RsaKey::fromPem(openssl({u"genrsa"_s, u"-aes256"_s, u"-passout"_s, u"pass:secret-pass"_s, u"2048"_s}));
    QVERIFY(!locked);
    QVERIFY2(locked.error().message.contains(u"passphrase"_s), qPrintable(locked.error().message));
}

QTEST_GUILESS_MAIN(TestGitHubApp)
#include "tst_githubapp.moc"
