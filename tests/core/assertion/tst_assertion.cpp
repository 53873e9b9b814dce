// Identity assertions on their own (core/assertion): what a minted one says and how it is
// signed, the JWKS that verifies it, the verifier's refusals (forged, re-signed, alg none,
// expired, for another app, replayed), key rotation by the clock and the key file.

#include "core/assertion/assertion.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace pando;
using namespace pando::core;
using namespace pando::core::assertion;

namespace {

constexpr qint64 Day = 24LL * 60 * 60 * 1000;

QByteArray part(const QByteArray &token, int index)
{
    return token.split('.').value(index);
}

QJsonObject decodedPart(const QByteArray &token, int index)
{
    return QJsonDocument::fromJson(*adapters::jose::fromBase64Url(part(token, index))).object();
}

QByteArray encoded(const QJsonObject &object)
{
    return adapters::jose::base64Url(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

Subject alice()
{
    return Subject{QStringLiteral("u00000000000000a1"),
                   QStringLiteral("alice"),
                   QStringLiteral("member"),
                   {QStringLiteral("deployer"), QStringLiteral("viewer")}};
}

} // namespace

class TestAssertion : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void mintedAssertionVerifies();
    void jwksPublishesTheKey();
    void refusals_data();
    void refusals();
    void replayIsRefused();
    void rotationKeepsTheOldKeyUntilItsAssertionsExpired();
    void rotationPeriodIsConfigurable();
    void keysSurviveARestartInAPrivateFile();
    void damagedKeyFileIsNotReplaced();
    void replayGuardIsBounded();
    void incomingHeaderIsNamedForgedOrReplayed();
    void mintsFromManyThreadsWhileTheKeyRotates();

private:
    AssertionService &service();
    std::unique_ptr<AssertionVerifier> verifierFor(AssertionService &service);
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<ManualClock> m_clock;
    std::unique_ptr<AssertionService> m_service;
};

void TestAssertion::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_clock = std::make_unique<ManualClock>();
    m_service.reset();
}

void TestAssertion::cleanup()
{
    m_service.reset();
}

AssertionService &TestAssertion::service()
{
    if (!m_service) {
        m_service = std::make_unique<AssertionService>(m_dir->filePath(QStringLiteral("assertion-keys.json")), *m_clock,
                                                       AssertionOptions{QStringLiteral("https://pando.example"), {}});
        const Status opened = m_service->open();
        if (!opened)
            qFatal("open: %s", qPrintable(opened.error().text()));
    }
    return *m_service;
}

std::unique_ptr<AssertionVerifier> TestAssertion::verifierFor(AssertionService &service)
{
    auto verifier = std::make_unique<AssertionVerifier>(*m_clock);
    auto jwks = service.jwks();
    if (!jwks || !verifier->setKeys(*jwks))
        qFatal("the JWKS does not load");
    return verifier;
}

void TestAssertion::mintedAssertionVerifies()
{
    auto minted = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY2(minted, qPrintable(minted ? QString() : minted.error().text()));

    const QJsonObject header = decodedPart(minted->token, 0);
    QCOMPARE(header.value(QStringLiteral("alg")).toString(), QStringLiteral("ES256"));
    QCOMPARE(header.value(QStringLiteral("typ")).toString(), QStringLiteral("JWT"));
    QCOMPARE(header.value(QStringLiteral("kid")).toString(), minted->kid);
    // JWS carries r||s, 32 bytes each; a DER signature would be 70-72 bytes.
    QCOMPARE(adapters::jose::fromBase64Url(part(minted->token, 2))->size(), 64);

    const QJsonObject claims = decodedPart(minted->token, 1);
    QCOMPARE(claims.value(QStringLiteral("iss")).toString(), QStringLiteral("https://pando.example"));
    QCOMPARE(claims.value(QStringLiteral("sub")).toString(), QStringLiteral("u00000000000000a1"));
    QCOMPARE(claims.value(QStringLiteral("name")).toString(), QStringLiteral("alice"));
    QCOMPARE(claims.value(QStringLiteral("aud")).toString(), QStringLiteral("shop"));
    QCOMPARE(claims.value(QStringLiteral("role")).toString(), QStringLiteral("member"));
    QCOMPARE(claims.value(QStringLiteral("grants")).toArray(),
             QJsonArray({QStringLiteral("deployer"), QStringLiteral("viewer")}));
    const qint64 now = m_clock->nowMs() / 1000;
    QCOMPARE(qint64(claims.value(QStringLiteral("iat")).toDouble()), now);
    QCOMPARE(qint64(claims.value(QStringLiteral("nbf")).toDouble()), now);
    QCOMPARE(qint64(claims.value(QStringLiteral("exp")).toDouble()), now + 60);
    QVERIFY(claims.value(QStringLiteral("jti")).toString().size() >= 20);

    auto verified = verifierFor(service())->verify(minted->token, QStringLiteral("shop"));
    QVERIFY2(verified, qPrintable(verified ? QString() : verified.error().text()));
    QCOMPARE(verified->name, QStringLiteral("alice"));
    QCOMPARE(verified->grants, alice().grants);

    // Every assertion is its own: a new jti and a new signature each time.
    auto second = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(second);
    QVERIFY(second->claims.id != minted->claims.id);
}

void TestAssertion::jwksPublishesTheKey()
{
    auto minted = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(minted);
    auto jwks = service().jwks();
    QVERIFY(jwks);
    const QJsonArray keys = jwks->value(QStringLiteral("keys")).toArray();
    QCOMPARE(keys.size(), 1);
    const QJsonObject key = keys.first().toObject();
    QCOMPARE(key.value(QStringLiteral("kty")).toString(), QStringLiteral("EC"));
    QCOMPARE(key.value(QStringLiteral("crv")).toString(), QStringLiteral("P-256"));
    QCOMPARE(key.value(QStringLiteral("use")).toString(), QStringLiteral("sig"));
    QCOMPARE(key.value(QStringLiteral("alg")).toString(), QStringLiteral("ES256"));
    QCOMPARE(key.value(QStringLiteral("kid")).toString(), minted->kid);
    QCOMPARE(adapters::jose::fromBase64Url(key.value(QStringLiteral("x")).toString().toLatin1())->size(), 32);
    QCOMPARE(adapters::jose::fromBase64Url(key.value(QStringLiteral("y")).toString().toLatin1())->size(), 32);
    // Only the public half is published.
    QVERIFY(!key.contains(QStringLiteral("d")));
    // The kid is the key's RFC 7638 thumbprint: recomputed from what is published.
    auto publicKey = adapters::jose::EcKey::fromJwk(key);
    QVERIFY(publicKey);
    QCOMPARE(publicKey->thumbprint(), minted->kid);
}

void TestAssertion::refusals_data()
{
    QTest::addColumn<QString>("attack");
    QTest::addColumn<int>("kind");
    const auto row = [](const char *name, Refusal::Kind kind) {
        QTest::newRow(name) << QString::fromLatin1(name) << int(kind);
    };
    row("flipped signature byte", Refusal::Kind::Signature);
    row("flipped claim", Refusal::Kind::Signature);
    row("unknown kid", Refusal::Kind::UnknownKey);
    row("alg none", Refusal::Kind::Algorithm);
    row("alg HS256", Refusal::Kind::Algorithm);
    row("re-signed with another key", Refusal::Kind::Signature);
    row("DER signature", Refusal::Kind::Signature);
    row("expired", Refusal::Kind::Expired);
    row("not yet valid", Refusal::Kind::NotYetValid);
    row("other app", Refusal::Kind::Audience);
    row("two parts", Refusal::Kind::Malformed);
}

void TestAssertion::refusals()
{
    QFETCH(QString, attack);
    QFETCH(int, kind);
    auto minted = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(minted);
    auto verifier = verifierFor(service());
    QByteArray token = minted->token;
    QString audience = QStringLiteral("shop");
    QJsonObject header = decodedPart(token, 0);
    QJsonObject claims = decodedPart(token, 1);
    const QByteArray signature = *adapters::jose::fromBase64Url(part(token, 2));
    auto foreign = adapters::jose::EcKey::generate();
    QVERIFY(foreign);

    if (attack == QLatin1String("flipped signature byte")) {
        QByteArray bad = signature;
        bad[10] = char(bad[10] ^ 0x01);
        token = part(token, 0) + '.' + part(token, 1) + '.' + adapters::jose::base64Url(bad);
    } else if (attack == QLatin1String("flipped claim")) {
        claims.insert(QStringLiteral("role"), QStringLiteral("admin"));
        token = part(token, 0) + '.' + encoded(claims) + '.' + part(token, 2);
    } else if (attack == QLatin1String("unknown kid")) {
        header.insert(QStringLiteral("kid"), foreign->thumbprint());
        token = encoded(header) + '.' + part(token, 1) + '.' + part(token, 2);
    } else if (attack == QLatin1String("alg none")) {
        header.insert(QStringLiteral("alg"), QStringLiteral("none"));
        token = encoded(header) + '.' + part(token, 1) + '.';
    } else if (attack == QLatin1String("alg HS256")) {
        header.insert(QStringLiteral("alg"), QStringLiteral("HS256"));
        token = encoded(header) + '.' + part(token, 1) + '.' + part(token, 2);
    } else if (attack == QLatin1String("re-signed with another key")) {
        // The install's kid, claims of the attacker's choosing, the attacker's key.
        claims.insert(QStringLiteral("grants"), QJsonArray{QStringLiteral("owner")});
        const QByteArray input = part(token, 0) + '.' + encoded(claims);
        token = input + '.' + adapters::jose::base64Url(foreign->sign(input));
    } else if (attack == QLatin1String("DER signature")) {
        token = part(token, 0) + '.' + part(token, 1) + '.' + adapters::jose::base64Url(QByteArray(71, '\x30'));
    } else if (attack == QLatin1String("expired")) {
        m_clock->advance(60 * 1000);
    } else if (attack == QLatin1String("not yet valid")) {
        m_clock->advance(-2000);
    } else if (attack == QLatin1String("other app")) {
        audience = QStringLiteral("admin-panel");
    } else if (attack == QLatin1String("two parts")) {
        token = part(token, 0) + '.' + part(token, 1);
    }
    Refusal refusal;
    auto verified = verifier->verify(token, audience, nullptr, &refusal);
    QVERIFY2(!verified, "the verifier took it");
    QCOMPARE(verified.error().code, ErrorCode::Unauthorized);
    QCOMPARE(verified.error().where, QStringLiteral("X-Pando-Assertion"));
    QCOMPARE(int(refusal.kind), kind);
    // The genuine one still verifies: the refusal is the attack's doing.
    if (attack != QLatin1String("expired") && attack != QLatin1String("not yet valid"))
        QVERIFY(verifier->verify(minted->token, QStringLiteral("shop")));
}

void TestAssertion::replayIsRefused()
{
    auto minted = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(minted);
    auto verifier = verifierFor(service());
    ReplayGuard seen;
    QVERIFY(verifier->verify(minted->token, QStringLiteral("shop"), &seen));
    m_clock->advance(1000);
    Refusal refusal;
    auto again = verifier->verify(minted->token, QStringLiteral("shop"), &seen, &refusal);
    QVERIFY(!again);
    QCOMPARE(refusal.kind, Refusal::Kind::Replayed);
    // Another assertion for the same user and app is a new one.
    auto next = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(next);
    QVERIFY(verifier->verify(next->token, QStringLiteral("shop"), &seen));
}

void TestAssertion::rotationKeepsTheOldKeyUntilItsAssertionsExpired()
{
    auto before = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(before);
    m_clock->advance(7 * Day - 30 * 1000);
    auto old = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(old);
    QCOMPARE(old->kid, before->kid);

    m_clock->advance(30 * 1000); // the key is 7 days old: the next mint rotates
    auto rotated = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(rotated);
    QVERIFY(rotated->kid != old->kid);
    auto jwks = service().jwks();
    QVERIFY(jwks);
    const QJsonArray keys = jwks->value(QStringLiteral("keys")).toArray();
    QCOMPARE(keys.size(), 2);
    QCOMPARE(keys.at(0).toObject().value(QStringLiteral("kid")).toString(), rotated->kid);
    QCOMPARE(keys.at(1).toObject().value(QStringLiteral("kid")).toString(), old->kid);
    // What the old key signed 30 s ago still verifies with the published keys.
    auto verifier = verifierFor(service());
    QVERIFY(verifier->verify(old->token, QStringLiteral("shop")));
    QVERIFY(verifier->verify(rotated->token, QStringLiteral("shop")));

    // Past its last assertion's expiry plus the margin (60 s + 5 min), the old key is gone.
    m_clock->advance(60 * 1000 + 5 * 60 * 1000 - 1);
    QCOMPARE(service().jwks()->value(QStringLiteral("keys")).toArray().size(), 2);
    m_clock->advance(2);
    const QJsonArray after = service().jwks()->value(QStringLiteral("keys")).toArray();
    QCOMPARE(after.size(), 1);
    QCOMPARE(after.at(0).toObject().value(QStringLiteral("kid")).toString(), rotated->kid);
}

void TestAssertion::rotationPeriodIsConfigurable()
{
    AssertionOptions options{QStringLiteral("pando"), {}};
    options.keys.rotateAfterMs = Day;
    AssertionService daily(m_dir->filePath(QStringLiteral("daily.json")), *m_clock, options);
    QVERIFY(daily.open());
    auto first = daily.mint(alice(), QStringLiteral("shop"));
    m_clock->advance(Day);
    auto second = daily.mint(alice(), QStringLiteral("shop"));
    QVERIFY(first && second);
    QVERIFY(first->kid != second->kid);
    // And by hand: the key rotates at once, the old one stays published.
    auto third = daily.rotate();
    QVERIFY(third);
    QVERIFY(*third != second->kid);
    QCOMPARE(daily.jwks()->value(QStringLiteral("keys")).toArray().size(), 3);
}

void TestAssertion::keysSurviveARestartInAPrivateFile()
{
    auto minted = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(minted);
    const QString path = m_dir->filePath(QStringLiteral("assertion-keys.json"));
    struct stat info {};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &info), 0);
    QCOMPARE(info.st_mode & 0777, 0600u);
    QVERIFY(!QFile::exists(path + QStringLiteral(".new")));

    m_service.reset();
    AssertionService again(path, *m_clock, AssertionOptions{QStringLiteral("https://pando.example"), {}});
    QVERIFY(again.open());
    auto next = again.mint(alice(), QStringLiteral("shop"));
    QVERIFY(next);
    QCOMPARE(next->kid, minted->kid);
    // An assertion minted before the restart verifies with the keys published after it.
    auto verifier = verifierFor(again);
    QVERIFY(verifier->verify(minted->token, QStringLiteral("shop")));
}

void TestAssertion::damagedKeyFileIsNotReplaced()
{
    const QString path = m_dir->filePath(QStringLiteral("assertion-keys.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"keys\": [{\"pem\": \"not a key\"}]}");
    file.close();
    AssertionService broken(path, *m_clock, AssertionOptions{QStringLiteral("pando"), {}});
    const Status opened = broken.open();
    QVERIFY(!opened);
    QCOMPARE(opened.error().where, path);
    QVERIFY2(opened.error().message.contains(QLatin1String("key 0")), qPrintable(opened.error().message));
    QVERIFY(!broken.mint(alice(), QStringLiteral("shop")));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("{\"keys\": [{\"pem\": \"not a key\"}]}"));
}

void TestAssertion::replayGuardIsBounded()
{
    ReplayGuard guard(3);
    const qint64 now = 1000;
    for (int i = 0; i < 5; ++i)
        QVERIFY(guard.admit(QStringLiteral("id%1").arg(i), now + 60000 + i, now));
    QCOMPARE(guard.size(), 3);
    // The newest are kept; those closest to expiry went first.
    QVERIFY(!guard.admit(QStringLiteral("id4"), now + 60004, now));
    QVERIFY(guard.contains(QStringLiteral("id2"), now));
    QVERIFY(!guard.contains(QStringLiteral("id0"), now));
    // An expired entry is forgotten: the verifier refuses the assertion as expired anyway.
    QVERIFY(!guard.contains(QStringLiteral("id2"), now + 60002));
}

void TestAssertion::incomingHeaderIsNamedForgedOrReplayed()
{
    auto minted = service().mint(alice(), QStringLiteral("shop"));
    QVERIFY(minted);
    const Error replayed = service().refuseIncoming(minted->token, QStringLiteral("shop"));
    QCOMPARE(replayed.code, ErrorCode::Invalid);
    QCOMPARE(replayed.where, QStringLiteral("X-Pando-Assertion"));
    QVERIFY2(replayed.message.contains(QLatin1String("replayed")), qPrintable(replayed.message));

    QByteArray forged = minted->token;
    forged[forged.size() - 5] = forged[forged.size() - 5] == 'A' ? 'B' : 'A';
    const Error refused = service().refuseIncoming(forged, QStringLiteral("shop"));
    QVERIFY2(refused.message.contains(QLatin1String("forged")), qPrintable(refused.message));
}

void TestAssertion::mintsFromManyThreadsWhileTheKeyRotates()
{
    // The edge asks from the server's pool: requests mint at once while a rotation happens.
    AssertionService &shared = service();
    constexpr int Threads = 4;
    constexpr int Each = 100;
    std::vector<QList<MintedAssertion>> minted(Threads);
    std::vector<std::thread> threads;
    for (int t = 0; t < Threads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < Each; ++i)
                if (auto one = shared.mint(alice(), QStringLiteral("shop")))
                    minted[size_t(t)].append(*one);
        });
    for (int r = 0; r < 3; ++r)
        QVERIFY(shared.rotate());
    for (std::thread &thread : threads)
        thread.join();
    auto verifier = verifierFor(shared);
    QSet<QString> ids;
    for (const QList<MintedAssertion> &list : minted) {
        QCOMPARE(list.size(), Each);
        for (const MintedAssertion &one : list) {
            QVERIFY2(verifier->verify(one.token, QStringLiteral("shop")), one.token.constData());
            ids.insert(one.claims.id);
        }
    }
    QCOMPARE(ids.size(), Threads * Each);
}

QTEST_GUILESS_MAIN(TestAssertion)
#include "tst_assertion.moc"
