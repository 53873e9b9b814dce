// OAuth applications through the forge adapter (adapters::ForgeOAuth): the authorization page's
// address, the code exchanged with its PKCE verifier, renewals, and each forge's refusals, against
// the stand-in's OAuth pages (forge_api_standin.py), which answer as GitHub, GitLab, Gitea and
// Bitbucket Cloud document: GitHub a refusal with 200 and "error", the others 400 invalid_grant and
// 401 invalid_client. No forge can be reached from here.

#include "adapters/api/forge.h"
#include "adapters/forge/rest/forgerest.h"
#include "tests/adapters/forge/forgestandin.h"
#include "tests/support/component.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QTest>
#include <QUrl>
#include <QUrlQuery>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;

namespace {

const QByteArray Token = "gho_oauth-Standin-Token-5521";
const QByteArray Secret = "client-Secret-Of-The-App-7713";
const QString ClientId = u"Iv1.8a61f9b3a7aba766"_s;
const QString Redirect = u"http://127.0.0.1:43117/callback"_s;
const QByteArray Verifier = "a-pkce-verifier-of-at-least-43-characters-for-the-test";

QString text(const Error &e)
{
    return u"[%1] %2 (at %3; hint: %4)"_s.arg(errorCodeName(e.code), e.message, e.where, e.hint);
}

QString challenge(const QByteArray &verifier)
{
    return QString::fromLatin1(QCryptographicHash::hash(verifier, QCryptographicHash::Sha256)
                                   .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

struct Forge {
    QString prefix;
    ForgeScope scope;
};

} // namespace

class TestForgeOAuth : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void codeForTokens_data();
    void codeForTokens();
    void refusalsSayWhatToDo_data();
    void refusalsSayWhatToDo();
    void renewalsRotateAndEnd();
    void forgesWithoutAppsAreRefused();

private:
    std::shared_ptr<const ForgeOAuth> oauth(const QString &prefix) const
    {
        return forgerest::makeOAuth({.apiBase = m_standIn->base() + u'/' + prefix, .requestTimeoutMs = 5000});
    }
    // The code the forge sends back once the user authorized app on forge's page.
    QString authorize(const ForgeOAuth &forge, const ForgeScope &scope, const QString &state);
    std::unique_ptr<test::ForgeStandIn> m_standIn;
};

void TestForgeOAuth::initTestCase()
{
    PANDO_REQUIRE_COMPONENT(test::ForgeStandIn::available(),
                            u"Debian's python3 with python3-jwt (runs the stand-in for the forges' APIs)"_s);
    m_standIn = std::make_unique<test::ForgeStandIn>(Token);
    QVERIFY2(m_standIn->start(), "the stand-in for the forges' APIs did not start");
}

void TestForgeOAuth::init()
{
    m_standIn->oauthApp(ClientId, Secret, 7200);
}

QString TestForgeOAuth::authorize(const ForgeOAuth &forge, const ForgeScope &scope, const QString &state)
{
    auto url = forge.authorizeUrl({scope, ClientId, {}}, Redirect, state, challenge(Verifier));
    if (!url)
        return {};
    const QUrl back(test::ForgeStandIn::authorizationRedirect(*url));
    if (back.toString(QUrl::RemoveQuery) != Redirect)
        return {};
    const QUrlQuery query(back);
    return query.queryItemValue(u"state"_s, QUrl::FullyDecoded) == state
               ? query.queryItemValue(u"code"_s, QUrl::FullyDecoded)
               : QString();
}

void TestForgeOAuth::codeForTokens_data()
{
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("page");
    QTest::addColumn<QString>("scopes");
    QTest::newRow("github") << u"github"_s << int(ForgeKind::GitHub) << u"https://github.com"_s
                            << u"/github/login/oauth/authorize"_s << u"repo admin:repo_hook"_s;
    QTest::newRow("gitlab") << u"gitlab"_s << int(ForgeKind::GitLab) << u"https://gitlab.example.com"_s
                            << u"/gitlab/oauth/authorize"_s << u"api"_s;
    QTest::newRow("gitea") << u"gitea"_s << int(ForgeKind::Gitea) << u"https://codeberg.org"_s
                           << u"/gitea/login/oauth/authorize"_s << QString();
    QTest::newRow("bitbucket") << u"bitbucket"_s << int(ForgeKind::Bitbucket) << u"https://bitbucket.org"_s
                               << u"/bitbucket/site/oauth2/authorize"_s << QString();
}

void TestForgeOAuth::codeForTokens()
{
    QFETCH(QString, prefix);
    QFETCH(int, kind);
    QFETCH(QString, url);
    QFETCH(QString, page);
    QFETCH(QString, scopes);
    const ForgeScope scope{ForgeKind(kind), url, {}};
    const auto forge = oauth(prefix);
    // The page's address says who asks, where to come back, the state and the S256 challenge.
    auto address = forge->authorizeUrl({scope, ClientId, {}}, Redirect, u"st4te"_s, challenge(Verifier));
    QVERIFY2(address, qPrintable(address ? QString() : text(address.error())));
    const QUrl parsed(*address);
    QCOMPARE(parsed.path(), page);
    const QUrlQuery query(parsed);
    QCOMPARE(query.queryItemValue(u"client_id"_s, QUrl::FullyDecoded), ClientId);
    QCOMPARE(query.queryItemValue(u"redirect_uri"_s, QUrl::FullyDecoded), Redirect);
    QCOMPARE(query.queryItemValue(u"response_type"_s), u"code"_s);
    QCOMPARE(query.queryItemValue(u"code_challenge"_s, QUrl::FullyDecoded), challenge(Verifier));
    QCOMPARE(query.queryItemValue(u"code_challenge_method"_s), u"S256"_s);
    QCOMPARE(query.queryItemValue(u"scope"_s, QUrl::FullyDecoded), scopes);

    const QString code = authorize(*forge, scope, u"st4te"_s);
    QVERIFY(!code.isEmpty());
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    auto grant = forge->exchange({scope, ClientId, Secret}, code, Redirect, Verifier, {});
    QVERIFY2(grant, qPrintable(grant ? QString() : text(grant.error())));
    QCOMPARE(grant->accessToken, Token);
    QVERIFY(grant->refreshToken.startsWith("r1_"));
    QVERIFY2(grant->expiresMs >= before + 7200 * 1000 && grant->expiresMs < before + 7300 * 1000,
             qPrintable(QString::number(grant->expiresMs - before)));
    // The token reads the forge's API like any token of it.
    auto api = forgerest::makeApi({scope, prefix == u"gitlab"_s ? u"oauth2"_s : QString(), grant->accessToken},
                                  {.apiBase = m_standIn->base() + u'/' + prefix, .requestTimeoutMs = 5000});
    auto repositories = api->repositories({});
    QVERIFY2(repositories, qPrintable(repositories ? QString() : text(repositories.error())));
    QCOMPARE(repositories->size(), 3);
    // A code is used once.
    auto again = forge->exchange({scope, ClientId, Secret}, code, Redirect, Verifier, {});
    QVERIFY(!again);
    QCOMPARE(again.error().code, ErrorCode::Invalid);
    QCOMPARE(again.error().where, u"code"_s);
}

void TestForgeOAuth::refusalsSayWhatToDo_data()
{
    QTest::addColumn<QString>("prefix");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("url");
    QTest::newRow("github, 200 with an error") << u"github"_s << int(ForgeKind::GitHub) << u"https://github.com"_s;
    QTest::newRow("gitlab, 400 and 401") << u"gitlab"_s << int(ForgeKind::GitLab) << u"https://gitlab.com"_s;
    QTest::newRow("bitbucket, Basic client")
        << u"bitbucket"_s << int(ForgeKind::Bitbucket) << u"https://bitbucket.org"_s;
}

void TestForgeOAuth::refusalsSayWhatToDo()
{
    QFETCH(QString, prefix);
    QFETCH(int, kind);
    QFETCH(QString, url);
    const ForgeScope scope{ForgeKind(kind), url, {}};
    const auto forge = oauth(prefix);

    // A verifier that is not the challenge's: the code is refused (so a stolen code is of no use).
    QString code = authorize(*forge, scope, u"s1"_s);
    QVERIFY(!code.isEmpty());
    auto stolen = forge->exchange({scope, ClientId, Secret}, code, Redirect, "another-verifier", {});
    QVERIFY(!stolen);
    QCOMPARE(stolen.error().code, ErrorCode::Invalid);
    QCOMPARE(stolen.error().where, u"code"_s);
    QVERIFY2(stolen.error().message.contains(u"refused the authorization code"_s), qPrintable(text(stolen.error())));
    QVERIFY2(!stolen.error().message.contains(code), qPrintable(text(stolen.error())));

    // Another redirect address than the code's.
    code = authorize(*forge, scope, u"s2"_s);
    auto moved = forge->exchange({scope, ClientId, Secret}, code, u"http://127.0.0.1:9/callback"_s, Verifier, {});
    QVERIFY(!moved);
    QCOMPARE(moved.error().where, u"code"_s);

    // A wrong client secret: Unauthorized at client_secret, and the secret is in no error.
    code = authorize(*forge, scope, u"s3"_s);
    const QByteArray wrong = "not-the-Client-Secret-3381";
    auto refused = forge->exchange({scope, ClientId, wrong}, code, Redirect, Verifier, {});
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, ErrorCode::Unauthorized);
    QCOMPARE(refused.error().where, u"client_secret"_s);
    QVERIFY2(!text(refused.error()).contains(QString::fromLatin1(wrong)), qPrintable(text(refused.error())));

    // A forge that does not answer in time says so.
    auto silent = forgerest::makeOAuth({.apiBase = u"http://127.0.0.1:1"_s, .requestTimeoutMs = 2000})
                      ->exchange({scope, ClientId, Secret}, u"c"_s, Redirect, Verifier, {});
    QVERIFY(!silent);
    QCOMPARE(silent.error().code, ErrorCode::Unavailable);
}

void TestForgeOAuth::renewalsRotateAndEnd()
{
    const ForgeScope scope{ForgeKind::GitLab, u"https://gitlab.com"_s, {}};
    const auto forge = oauth(u"gitlab"_s);
    const QString code = authorize(*forge, scope, u"r"_s);
    auto grant = forge->exchange({scope, ClientId, Secret}, code, Redirect, Verifier, {});
    QVERIFY2(grant, qPrintable(grant ? QString() : text(grant.error())));
    // Each renewal hands out a new refresh token; the one before is refused after.
    auto renewed = forge->refresh({scope, ClientId, Secret}, grant->refreshToken, {});
    QVERIFY2(renewed, qPrintable(renewed ? QString() : text(renewed.error())));
    QVERIFY(renewed->refreshToken != grant->refreshToken);
    QVERIFY(renewed->expiresMs > 0);
    auto reused = forge->refresh({scope, ClientId, Secret}, grant->refreshToken, {});
    QVERIFY(!reused);
    QCOMPARE(reused.error().code, ErrorCode::Unauthorized);
    QCOMPARE(reused.error().where, u"refresh_token"_s);
    QVERIFY2(reused.error().hint.contains(u"authorize"_s), qPrintable(text(reused.error())));
    // Revoked by the user: the newest one is refused too.
    m_standIn->revokeOAuth();
    auto revoked = forge->refresh({scope, ClientId, Secret}, renewed->refreshToken, {});
    QVERIFY(!revoked);
    QVERIFY2(revoked.error().message.contains(u"revoked"_s), qPrintable(text(revoked.error())));
    QVERIFY2(!revoked.error().message.contains(QString::fromLatin1(renewed->refreshToken)),
             qPrintable(text(revoked.error())));
    // No refresh token (GitHub's classic apps): nothing is asked.
    auto none = forge->refresh({scope, ClientId, Secret}, {}, {});
    QVERIFY(!none);
    QCOMPARE(none.error().where, u"refresh_token"_s);

    // An application whose tokens do not expire grants no refresh token and no expiry.
    m_standIn->oauthApp(ClientId, Secret, 0);
    const ForgeScope gitHub{ForgeKind::GitHub, u"https://github.com"_s, {}};
    const auto classic = oauth(u"github"_s);
    auto lasting =
        classic->exchange({gitHub, ClientId, Secret}, authorize(*classic, gitHub, u"c"_s), Redirect, Verifier, {});
    QVERIFY2(lasting, qPrintable(lasting ? QString() : text(lasting.error())));
    QCOMPARE(lasting->expiresMs, 0);
    QVERIFY(lasting->refreshToken.isEmpty());
}

void TestForgeOAuth::forgesWithoutAppsAreRefused()
{
    const auto forge = makeForgeOAuth();
    for (const ForgeScope &scope : {ForgeScope{ForgeKind::AzureDevOps, u"https://dev.azure.com/acme"_s, {}},
                                    ForgeScope{ForgeKind::Bitbucket, u"https://bitbucket.example.com"_s, {}},
                                    ForgeScope{ForgeKind::Generic, u"https://git.example.com"_s, {}}}) {
        auto url = forge->authorizeUrl({scope, ClientId, {}}, Redirect, u"s"_s, challenge(Verifier));
        QVERIFY(!url);
        QCOMPARE(url.error().where, u"kind"_s);
    }
    auto ssh = forge->authorizeUrl({{ForgeKind::GitLab, u"ssh://git@gitlab.com"_s, {}}, ClientId, {}}, Redirect, u"s"_s,
                                   challenge(Verifier));
    QVERIFY(!ssh);
    QCOMPARE(ssh.error().where, u"url"_s);
}

QTEST_GUILESS_MAIN(TestForgeOAuth)
#include "tst_forgeoauth.moc"
