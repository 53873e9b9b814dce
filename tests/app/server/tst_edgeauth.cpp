// Identity assertions over the API, against a real engine and server (fake adapters): the
// forward-auth route the edge asks (who gets an assertion for which app, by token or by the
// pando_session cookie, and that a request bringing its own header is refused), the JWKS URL,
// and an app's side done with a real JWT library (PyJWT) in its own process.

#include "fakes.h"

#include "core/assertion/assertion.h"
#include "tests/support/component.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

using namespace pando;
using namespace Qt::StringLiterals;

namespace {

struct Answer {
    int status = 0;
    QJsonObject json;
    QByteArray assertion;    // X-Pando-Assertion
    QByteArray cacheControl; // Cache-Control
};

} // namespace

class TestEdgeAuth : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void jwksIsPublic();
    void signedInWithAGrantGetsAnAssertion();
    void whoGetsOne_data();
    void whoGetsOne();
    void sessionCookieSignsIn();
    void ownHeaderIsRefused();
    void appIsNamed();
    void jwtLibraryVerifiesIt();
    void keyRotatesByHand(); // last: the others expect one key

private:
    Answer get(const QString &path, const QList<std::pair<QByteArray, QByteArray>> &headers = {});
    Answer auth(const QString &app, const QString &token);
    static Answer answerOf(QNetworkReply *sent); // waits for it, then deletes it
    test::TestInstall m_install;
    QNetworkAccessManager m_network;
};

void TestEdgeAuth::initTestCase()
{
    QVERIFY2(m_install.start(), qPrintable(m_install.error));
    // member owns "shop" (its creator); viewer holds a viewer grant on it; member2 holds none.
    QNetworkRequest request(QUrl(m_install.baseUrl() + u"/api/v1/apps"_s));
    request.setRawHeader("Authorization", "Bearer " + m_install.tokens.value(u"member"_s).toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/yaml"));
    QCOMPARE(answerOf(m_network.post(request, test::helloSpec(u"shop"_s))).status, 201);
    auto viewer = m_install.engine->addGrant(core::authz::ObjectKind::App, u"shop"_s, u"viewer"_s, u"viewer"_s,
                                             core::Actor::system(u"test"_s));
    QVERIFY2(viewer, qPrintable(viewer ? QString() : viewer.error().text()));
}

Answer TestEdgeAuth::get(const QString &path, const QList<std::pair<QByteArray, QByteArray>> &headers)
{
    QNetworkRequest request(QUrl(m_install.baseUrl() + path));
    for (const auto &[name, value] : headers)
        request.setRawHeader(name, value);
    return answerOf(m_network.get(request));
}

Answer TestEdgeAuth::answerOf(QNetworkReply *sent)
{
    const std::unique_ptr<QNetworkReply> reply(sent);
    // finished is emitted from the event loop, never before the spy exists.
    if (!reply->isFinished())
        QSignalSpy(reply.get(), &QNetworkReply::finished).wait(10000);
    return Answer{reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
                  QJsonDocument::fromJson(reply->readAll()).object(), reply->rawHeader("X-Pando-Assertion"),
                  reply->rawHeader("Cache-Control")};
}

Answer TestEdgeAuth::auth(const QString &app, const QString &token)
{
    QList<std::pair<QByteArray, QByteArray>> headers;
    if (!token.isEmpty())
        headers.append({"Authorization", "Bearer " + token.toUtf8()});
    return get(u"/api/v1/edge/auth?app="_s + app, headers);
}

void TestEdgeAuth::jwksIsPublic()
{
    const Answer jwks = get(u"/.well-known/jwks.json"_s);
    QCOMPARE(jwks.status, 200);
    QCOMPARE(jwks.cacheControl, QByteArray("public, max-age=300"));
    const QJsonArray keys = jwks.json.value(u"keys"_s).toArray();
    QCOMPARE(keys.size(), 1);
    const QJsonObject key = keys.first().toObject();
    QCOMPARE(key.value(u"kty"_s).toString(), u"EC"_s);
    QCOMPARE(key.value(u"alg"_s).toString(), u"ES256"_s);
    QVERIFY(!key.value(u"kid"_s).toString().isEmpty());
    QVERIFY(!key.contains(u"d"_s));
}

void TestEdgeAuth::signedInWithAGrantGetsAnAssertion()
{
    const Answer answer = auth(u"shop"_s, m_install.tokens.value(u"viewer"_s));
    QCOMPARE(answer.status, 200);
    QVERIFY(!answer.assertion.isEmpty());
    QCOMPARE(answer.cacheControl, QByteArray("no-store"));

    // It verifies with the keys the JWKS URL publishes, for this app only.
    core::assertion::AssertionVerifier verifier;
    QVERIFY(verifier.setKeys(get(u"/.well-known/jwks.json"_s).json));
    auto claims = verifier.verify(answer.assertion, u"shop"_s);
    QVERIFY2(claims, qPrintable(claims ? QString() : claims.error().text()));
    QCOMPARE(claims->name, u"viewer"_s);
    QCOMPARE(claims->subject, m_install.engine->accounts()->user(u"viewer"_s)->id);
    QCOMPARE(claims->role, u"viewer"_s);
    QCOMPARE(claims->grants, QStringList{u"viewer"_s});
    QCOMPARE(claims->issuer, u"pando:"_s + m_install.install->installId());
    QCOMPARE(claims->expires - claims->issuedAt, 60);
    QVERIFY(!verifier.verify(answer.assertion, u"other"_s));
    // The body says the same, for whoever looks at the answer.
    QCOMPARE(answer.json.value(u"aud"_s).toString(), u"shop"_s);

    // The owner's assertion names its owner grant.
    const Answer owner = auth(u"shop"_s, m_install.tokens.value(u"member"_s));
    QCOMPARE(owner.status, 200);
    auto ownerClaims = verifier.verify(owner.assertion, u"shop"_s);
    QVERIFY(ownerClaims);
    QCOMPARE(ownerClaims->grants, QStringList{u"owner"_s});
    QCOMPARE(ownerClaims->role, u"member"_s);
}

void TestEdgeAuth::whoGetsOne_data()
{
    QTest::addColumn<QString>("who");
    QTest::addColumn<int>("status");
    // Operators and administrators read every app; members only what they hold a grant on.
    QTest::newRow("admin") << u"admin"_s << 200;
    QTest::newRow("operator") << u"operator"_s << 200;
    QTest::newRow("member with no grant") << u"member2"_s << 403;
    QTest::newRow("not signed in") << QString() << 401;
    QTest::newRow("a token nobody issued") << u"pando_wrongwrongwrongwrongwrongwrongwrongwrongwr"_s << 401;
}

void TestEdgeAuth::whoGetsOne()
{
    QFETCH(QString, who);
    QFETCH(int, status);
    const QString token = who.startsWith(u"pando_"_s) ? who : m_install.tokens.value(who);
    const Answer answer = auth(u"shop"_s, token);
    QCOMPARE(answer.status, status);
    QCOMPARE(answer.assertion.isEmpty(), status != 200);
    if (status == 403)
        QCOMPARE(answer.json.value(u"error"_s).toObject().value(u"code"_s).toString(), u"forbidden"_s);
    if (token.isEmpty())
        QVERIFY2(answer.json.value(u"error"_s).toObject().value(u"hint"_s).toString().contains(u"pando_session"_s),
                 "the refusal says how to sign in");
}

void TestEdgeAuth::sessionCookieSignsIn()
{
    auto session = m_install.engine->accounts()->login(u"viewer"_s, QString::fromLatin1(test::TestInstall::Password),
                                                       u"127.0.0.1"_s);
    QVERIFY2(session, qPrintable(session ? QString() : session.error().text()));
    // The cookie among the app's own, as a browser sends them.
    const QByteArray cookie = "theme=dark; pando_session=" + session->secret.toUtf8() + "; lang=de";
    const Answer answer = get(u"/api/v1/edge/auth?app=shop"_s, {{"Cookie", cookie}});
    QCOMPARE(answer.status, 200);
    core::assertion::AssertionVerifier verifier;
    QVERIFY(verifier.setKeys(get(u"/.well-known/jwks.json"_s).json));
    auto claims = verifier.verify(answer.assertion, u"shop"_s);
    QVERIFY(claims);
    QCOMPARE(claims->name, u"viewer"_s);
    // An app's own Authorization scheme does not hide the cookie.
    QCOMPARE(get(u"/api/v1/edge/auth?app=shop"_s, {{"Cookie", cookie}, {"Authorization", "Basic YTpi"}}).status, 200);

    // Signed out, the cookie opens nothing.
    QVERIFY(m_install.engine->accounts()->logout(session->secret, core::Actor::system(u"test"_s)));
    QCOMPARE(get(u"/api/v1/edge/auth?app=shop"_s, {{"Cookie", cookie}}).status, 401);
    // Other routes never take a credential from a cookie.
    auto other = m_install.engine->accounts()->login(u"viewer"_s, QString::fromLatin1(test::TestInstall::Password),
                                                     u"127.0.0.1"_s);
    QVERIFY(other);
    QCOMPARE(get(u"/api/v1/apps"_s, {{"Cookie", "pando_session=" + other->secret.toUtf8()}}).status, 401);
}

void TestEdgeAuth::ownHeaderIsRefused()
{
    const QString token = m_install.tokens.value(u"viewer"_s);
    const Answer genuine = auth(u"shop"_s, token);
    QCOMPARE(genuine.status, 200);
    const QByteArray bearer = "Bearer " + token.toUtf8();

    // Replayed: the edge minted it for an earlier request.
    Answer replayed =
        get(u"/api/v1/edge/auth?app=shop"_s, {{"Authorization", bearer}, {"X-Pando-Assertion", genuine.assertion}});
    QCOMPARE(replayed.status, 400);
    QVERIFY(replayed.assertion.isEmpty());
    QString message = replayed.json.value(u"error"_s).toObject().value(u"message"_s).toString();
    QVERIFY2(message.contains(u"replayed"_s), qPrintable(message));

    // Forged: a byte of the signature changed.
    QByteArray forged = genuine.assertion;
    forged[forged.size() - 3] = forged[forged.size() - 3] == 'A' ? 'B' : 'A';
    Answer refused = get(u"/api/v1/edge/auth?app=shop"_s, {{"Authorization", bearer}, {"X-Pando-Assertion", forged}});
    QCOMPARE(refused.status, 400);
    message = refused.json.value(u"error"_s).toObject().value(u"message"_s).toString();
    QVERIFY2(message.contains(u"forged"_s), qPrintable(message));

    // Even without a credential: the header alone gets nowhere.
    QCOMPARE(get(u"/api/v1/edge/auth?app=shop"_s, {{"X-Pando-Assertion", genuine.assertion}}).status, 400);
}

void TestEdgeAuth::appIsNamed()
{
    const Answer none = get(u"/api/v1/edge/auth"_s, {{"Authorization", "Bearer " + m_install.token.toUtf8()}});
    QCOMPARE(none.status, 400);
    QCOMPARE(none.json.value(u"error"_s).toObject().value(u"where"_s).toString(), u"query.app"_s);
    QCOMPARE(auth(u"nosuchapp"_s, m_install.token).status, 404);
}

void TestEdgeAuth::jwtLibraryVerifiesIt()
{
    // Debian's python3 with python3-jwt; a pyenv or venv python on PATH may lack them.
    const QString python = u"/usr/bin/python3"_s;
    QProcess probe;
    probe.start(python, {u"-c"_s, u"import jwt, cryptography"_s});
    const bool available =
        probe.waitForFinished(30000) && probe.exitStatus() == QProcess::NormalExit && probe.exitCode() == 0;
    PANDO_REQUIRE_COMPONENT(available, u"python3-jwt and python3-cryptography (PyJWT) for /usr/bin/python3"_s);

    const Answer answer = auth(u"shop"_s, m_install.tokens.value(u"viewer"_s));
    QCOMPARE(answer.status, 200);
    const QString script = test::sourceDir() + u"/tests/app/server/verify_assertion.py"_s;
    const QString jwksUrl = m_install.baseUrl() + u"/.well-known/jwks.json"_s;
    // The script fetches the JWKS from this server: the event loop must keep serving while it
    // runs, so it is waited for with a spy, not a blocking wait.
    auto verify = [&](const QByteArray &token, const QString &app, int *exitCode) {
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        QSignalSpy done(&process, &QProcess::finished);
        process.start(python, {script, jwksUrl, app});
        process.write(token);
        process.closeWriteChannel();
        if (done.isEmpty())
            done.wait(30000);
        *exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        return process.readAll();
    };
    int exitCode = -1;
    const QByteArray output = verify(answer.assertion, u"shop"_s, &exitCode);
    QVERIFY2(exitCode == 0, output.constData());
    const QJsonObject claims = QJsonDocument::fromJson(output).object();
    QCOMPARE(claims.value(u"name"_s).toString(), u"viewer"_s);
    QCOMPARE(claims.value(u"aud"_s).toString(), u"shop"_s);
    QCOMPARE(claims.value(u"grants"_s).toArray(), QJsonArray{u"viewer"_s});
    QCOMPARE(claims.value(u"sub"_s).toString(), m_install.engine->accounts()->user(u"viewer"_s)->id);

    // The library refuses what an app must refuse: another app's assertion, a forged one.
    QByteArray out = verify(answer.assertion, u"other"_s, &exitCode);
    QVERIFY2(exitCode == 1 && out.contains("InvalidAudience"), out.constData());
    QByteArray forged = answer.assertion;
    forged[forged.size() - 3] = forged[forged.size() - 3] == 'A' ? 'B' : 'A';
    out = verify(forged, u"shop"_s, &exitCode);
    QVERIFY2(exitCode == 1 && out.contains("InvalidSignature"), out.constData());
}

void TestEdgeAuth::keyRotatesByHand()
{
    const Answer before = auth(u"shop"_s, m_install.tokens.value(u"viewer"_s));
    QCOMPARE(before.status, 200);
    const QString oldKid =
        get(u"/.well-known/jwks.json"_s).json.value(u"keys"_s).toArray().first()[u"kid"_s].toString();

    QNetworkRequest request(QUrl(m_install.baseUrl() + u"/api/v1/edge/keys/rotate"_s));
    request.setRawHeader("Authorization", "Bearer " + m_install.token.toUtf8());
    const Answer rotated = answerOf(m_network.post(request, QByteArray()));
    QCOMPARE(rotated.status, 200);
    const QString newKid = rotated.json.value(u"kid"_s).toString();
    QVERIFY(!newKid.isEmpty() && newKid != oldKid);

    // Both are published, the new one first; what the old one signed still verifies.
    const QJsonObject jwks = get(u"/.well-known/jwks.json"_s).json;
    const QJsonArray keys = jwks.value(u"keys"_s).toArray();
    QCOMPARE(keys.size(), 2);
    QCOMPARE(keys.at(0)[u"kid"_s].toString(), newKid);
    QCOMPARE(keys.at(1)[u"kid"_s].toString(), oldKid);
    core::assertion::AssertionVerifier verifier;
    QVERIFY(verifier.setKeys(jwks));
    QVERIFY(verifier.verify(before.assertion, u"shop"_s));
    const Answer after = auth(u"shop"_s, m_install.tokens.value(u"viewer"_s));
    auto claims = verifier.verify(after.assertion, u"shop"_s);
    QVERIFY(claims);
    const QJsonObject header = QJsonDocument::fromJson(QByteArray::fromBase64(after.assertion.split('.').first(),
                                                                              QByteArray::Base64UrlEncoding))
                                   .object();
    QCOMPARE(header.value(u"kid"_s).toString(), newKid);

    // Audited with the new kid.
    core::AuditRepository::Filter filter;
    filter.action = u"assertion.rotate"_s;
    auto lines = m_install.engine->auditLines(filter);
    QVERIFY(lines);
    QCOMPARE(lines->size(), 1);
    QCOMPARE(lines->first().object, u"assertion-key/"_s + newKid);
}

QTEST_GUILESS_MAIN(TestEdgeAuth)
#include "tst_edgeauth.moc"
