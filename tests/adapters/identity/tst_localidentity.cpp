// The local identity adapter against the real libargon2: OWASP's floor for the parameters,
// encoded argon2id hashes, right and wrong passwords, and the rehash check when parameters rise.
#include "adapters/identity/local/localidentity.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::adapters;
using namespace pando::adapters::local;

class TestLocalIdentity : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void defaultsAreOwaspMinimum()
    {
        const Argon2Params p;
        QCOMPARE(p.memoryKiB, 19456u);
        QCOMPARE(p.iterations, 2u);
        QCOMPARE(p.lanes, 1u);
    }

    void parametersBelowTheFloorAreRefused_data()
    {
        QTest::addColumn<quint32>("memoryKiB");
        QTest::addColumn<quint32>("iterations");
        QTest::addColumn<quint32>("lanes");
        QTest::addColumn<bool>("ok");
        QTest::newRow("owasp") << 19456u << 2u << 1u << true;
        QTest::newRow("stronger") << 65536u << 3u << 2u << true;
        QTest::newRow("too little memory") << 19455u << 2u << 1u << false;
        QTest::newRow("one iteration") << 19456u << 1u << 1u << false;
        QTest::newRow("no lanes") << 19456u << 2u << 0u << false;
        QTest::newRow("absurd memory") << 8u * 1024 * 1024 << 2u << 1u << false;
        QTest::newRow("absurd iterations") << 19456u << 1000u << 1u << false;
    }

    void parametersBelowTheFloorAreRefused()
    {
        QFETCH(quint32, memoryKiB);
        QFETCH(quint32, iterations);
        QFETCH(quint32, lanes);
        QFETCH(bool, ok);
        auto identity = LocalIdentity::create({memoryKiB, iterations, lanes});
        QCOMPARE(bool(identity), ok);
        if (!ok)
            QCOMPARE(identity.error().code, ErrorCode::Invalid);
    }

    void hashAndVerify()
    {
        auto identity = LocalIdentity::create().value();
        QCOMPARE(identity.kind(), u"local"_s);
        QVERIFY(identity.supportsPasswords());
        const QString password = u"correct horse battery staple ✓"_s;
        auto hash = identity.hashPassword(password);
        QVERIFY2(hash, qPrintable(hash ? QString() : hash.error().text()));
        QVERIFY2(hash->startsWith(u"$argon2id$v=19$m=19456,t=2,p=1$"_s), qPrintable(*hash));
        QVERIFY(!hash->contains(password));
        const auto params = parseArgon2idParams(*hash);
        QVERIFY(params);
        QCOMPARE(*params, Argon2Params{});

        // A fresh salt each time.
        QVERIFY(identity.hashPassword(password).value() != *hash);

        auto right = identity.verifyPassword(password, *hash);
        QVERIFY(right);
        QVERIFY(right->matches);
        QVERIFY(!right->needsRehash);
        QVERIFY(!identity.needsRehash(*hash));

        for (const QString &wrong : {u"correct horse battery stapl"_s, u"Correct horse battery staple ✓"_s, u"x"_s,
                                     QString(), QString(2000, u'a')}) {
            auto check = identity.verifyPassword(wrong, *hash);
            QVERIFY(check);
            QVERIFY(!check->matches);
        }
    }

    void badInput()
    {
        auto identity = LocalIdentity::create().value();
        QCOMPARE(identity.hashPassword(QString()).error().code, ErrorCode::Invalid);
        QCOMPARE(identity.hashPassword(QString(LocalIdentity::MaxPasswordBytes + 1, u'a')).error().code,
                 ErrorCode::Invalid);
        for (const QString &garbage : {QString(), u"plain"_s, u"$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA"_s,
                                       u"$argon2id$v=16$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA"_s,
                                       u"$argon2id$v=19$m=99999999999,t=2,p=1$c2FsdHNhbHQ$aGFzaA"_s}) {
            QCOMPARE(identity.verifyPassword(u"password"_s, garbage).error().code, ErrorCode::Invalid);
            QVERIFY(identity.needsRehash(garbage));
        }
    }

    void rehashWhenParametersRise()
    {
        auto weak = LocalIdentity::create().value();
        auto strong = LocalIdentity::create({19456, 3, 1}).value();
        const QString old = weak.hashPassword(u"s3cret-passw0rd"_s).value();
        QVERIFY(strong.needsRehash(old));
        auto check = strong.verifyPassword(u"s3cret-passw0rd"_s, old);
        QVERIFY(check);
        QVERIFY(check->matches);
        QVERIFY(check->needsRehash);
        QVERIFY(!strong.verifyPassword(u"wrong-password"_s, old)->matches);

        const QString fresh = strong.hashPassword(u"s3cret-passw0rd"_s).value();
        QVERIFY(fresh.startsWith(u"$argon2id$v=19$m=19456,t=3,p=1$"_s));
        QVERIFY(!strong.needsRehash(fresh));
        // Going back down also counts as different: the configured parameters win.
        QVERIFY(weak.needsRehash(fresh));
        QVERIFY(weak.verifyPassword(u"s3cret-passw0rd"_s, fresh)->matches);
    }
};

QTEST_GUILESS_MAIN(TestLocalIdentity)
#include "tst_localidentity.moc"
