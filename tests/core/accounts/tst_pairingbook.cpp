// PairingBook over a real AccountService on both drivers: a code yields one named token for its
// account with the account's scopes and is spent by that; wrong, spent and expired codes are
// refused alike; failures are throttled per address on a ManualClock; every step is audited.
#include "adapters/identity/local/localidentity.h"
#include "core/accounts/accountservice.h"
#include "core/accounts/pairingbook.h"
#include "core/accounts/tokenkey.h"
#include "core/audit/auditlog.h"
#include "core/state/repositories.h"
#include "tests/support/component.h"
#include "tests/support/drivers.h"
#include "tests/support/pgharness.h"

#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace Qt::StringLiterals;
using namespace pando;
using namespace pando::core;
using namespace pando::core::accounts;

namespace {
const QByteArray Key = QByteArray(32, 'k');
} // namespace

class TestPairingBook : public QObject {
    Q_OBJECT

    test::PostgresHarness m_pg;
    bool m_pgStarted = false;
    std::unique_ptr<QTemporaryDir> m_tmp;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<ManualClock> m_clock;
    std::unique_ptr<AuditLog> m_audit;
    std::shared_ptr<adapters::local::LocalIdentity> m_identity;
    std::unique_ptr<AccountService> m_accounts;
    const Actor m_actor{u"user:admin"_s, u"127.0.0.1"_s, u"req-1"_s};

    QStringList auditActions()
    {
        QStringList actions;
        const auto lines = AuditRepository(*m_db).list({.limit = 1000}).value();
        for (const AuditRecord &line : lines)
            actions.prepend(line.action + u' ' + line.object + u' ' + line.outcome);
        return actions;
    }

    PairingBook &book() { return m_accounts->pairings(); }

private Q_SLOTS:
    void initTestCase_data() { test::addDriverRows(); }

    void initTestCase()
    {
        m_pgStarted = m_pg.start();
        m_identity = std::make_shared<adapters::local::LocalIdentity>(adapters::local::LocalIdentity::create().value());
    }

    void init()
    {
        PANDO_FRESH_DATABASE(url, m_pg, m_pgStarted, m_tmp);
        m_db = std::make_unique<Database>(DatabaseConfig::fromUrl(url).value());
        auto opened = m_db->open();
        QVERIFY2(opened, qPrintable(opened ? QString() : opened.error().text()));
        m_clock = std::make_unique<ManualClock>();
        m_audit = std::make_unique<AuditLog>(*m_db, *m_clock);
        m_accounts = std::make_unique<AccountService>(*m_db, *m_audit, m_identity, Key, *m_clock);
        const QString initial = detail::newTokenSecret();
        QVERIFY(TokenRepository(*m_db).create(TokenRecord{u"t00000000000000aa"_s, u"initial-admin"_s,
                                                          detail::tokenDigest(Key, initial), u"admin"_s,
                                                          m_clock->nowMs(), 0}));
        QVERIFY(m_accounts->createFirstAdmin(initial, u"admin"_s, u"admin-password-1"_s, m_actor));
        QVERIFY(m_accounts->createUser({u"alice"_s, {}, Role::Member, u"alice-password"_s}, m_actor));
    }

    void cleanup()
    {
        m_accounts.reset();
        m_audit.reset();
        m_db.reset();
        m_tmp.reset();
    }

    void redeemOnceForANamedToken()
    {
        auto code = book().create(u"alice"_s, m_actor);
        QVERIFY2(code, qPrintable(code ? QString() : code.error().text()));
        QVERIFY(code->secret.startsWith(u"pandopair_"_s));
        QCOMPARE(code->secret.size(), 10 + 32);
        QCOMPARE(code->expiresMs, m_clock->nowMs() + PairingOptions{}.ttlMs);
        QCOMPARE(book().openCount(), 1);

        auto redeemed = book().redeem(code->secret, u"alice's laptop"_s, u"10.0.0.7"_s, u"req-2"_s);
        QVERIFY2(redeemed, qPrintable(redeemed ? QString() : redeemed.error().text()));
        QCOMPARE(redeemed->username, u"alice"_s);
        QCOMPARE(redeemed->token.token.name, u"paired: alice's laptop"_s);
        QVERIFY(!redeemed->token.token.scopes.contains(u"admin"_s));
        QVERIFY(redeemed->token.token.scopes.contains(u"apps:write"_s));
        auto principal = m_accounts->authenticate(redeemed->token.secret);
        QVERIFY(principal);
        QCOMPARE(principal->username, u"alice"_s);
        QCOMPARE(principal->kind, Principal::Kind::Token);
        QCOMPARE(book().openCount(), 0);

        // Spent: the same code again is refused like any wrong code.
        auto again = book().redeem(code->secret, u"x"_s, u"10.0.0.8"_s);
        QVERIFY(!again);
        QCOMPARE(again.error().code, ErrorCode::Unauthorized);
        QCOMPARE(again.error().message, u"the pairing code is unknown, spent or expired"_s);

        const QStringList actions = auditActions();
        QVERIFY2(actions.contains(u"pairing.create user/alice success"_s), qPrintable(actions.join(u'\n')));
        QVERIFY2(actions.contains(u"token.create token/"_s + redeemed->token.token.id + u" success"_s),
                 qPrintable(actions.join(u'\n')));
        QVERIFY2(actions.contains(u"pairing.redeem user/alice success"_s), qPrintable(actions.join(u'\n')));
        QVERIFY2(actions.contains(u"pairing.failed pairing denied"_s), qPrintable(actions.join(u'\n')));
    }

    void pairedTokensExpire()
    {
        // A paired desktop's token works for 90 days, not for ever.
        auto code = book().create(u"alice"_s, m_actor).value();
        auto redeemed = book().redeem(code.secret, u"laptop"_s, u"10.0.0.7"_s).value();
        const qint64 lifetime = 90LL * 24 * 60 * 60 * 1000;
        QCOMPARE(redeemed.token.token.expiresMs, m_clock->nowMs() + lifetime);
        auto principal = m_accounts->authenticate(redeemed.token.secret);
        QVERIFY(principal);
        QCOMPARE(principal->expiresMs, m_clock->nowMs() + lifetime);
        m_clock->advance(lifetime);
        QCOMPARE(m_accounts->authenticate(redeemed.token.secret).error().message, u"the token has expired"_s);
    }

    void adminGetsTheAdminScope()
    {
        auto code = book().create(u"admin"_s, m_actor);
        QVERIFY(code);
        auto redeemed = book().redeem(code->secret, {}, u"10.0.0.7"_s);
        QVERIFY(redeemed);
        QCOMPARE(redeemed->token.token.scopes, QStringList{u"admin"_s});
        QCOMPARE(redeemed->token.token.name, u"paired: desktop"_s);
    }

    void unknownOrDisabledUsers()
    {
        QCOMPARE(book().create(u"nobody"_s, m_actor).error().code, ErrorCode::NotFound);
        QVERIFY(m_accounts->setDisabled(u"alice"_s, true, m_actor));
        QCOMPARE(book().create(u"alice"_s, m_actor).error().code, ErrorCode::Conflict);
        QCOMPARE(book().openCount(), 0);
    }

    void expiredCodesAreRefused()
    {
        auto code = book().create(u"alice"_s, m_actor);
        QVERIFY(code);
        m_clock->advance(PairingOptions{}.ttlMs);
        QCOMPARE(book().openCount(), 0);
        auto late = book().redeem(code->secret, u"late"_s, u"10.0.0.7"_s);
        QVERIFY(!late);
        QCOMPARE(late.error().code, ErrorCode::Unauthorized);
        QCOMPARE(m_accounts->tokens(u"alice"_s)->size(), 0);
    }

    void guessesAreThrottledPerAddress()
    {
        auto code = book().create(u"alice"_s, m_actor);
        QVERIFY(code);
        const int free = PairingOptions{}.perAddress.freeFailures;
        for (int i = 0; i < free + 1; ++i)
            QCOMPARE(book().redeem(u"pandopair_"_s + QString(32, u'0'), {}, u"10.6.6.6"_s).error().code,
                     ErrorCode::Unauthorized);
        // Locked now, even with the right code; another address is not.
        auto locked = book().redeem(code->secret, {}, u"10.6.6.6"_s);
        QVERIFY(!locked);
        QVERIFY2(locked.error().hint.startsWith(u"try again in"_s), qPrintable(locked.error().text()));
        QCOMPARE(book().openCount(), 1);
        // The first lock is the base delay; the code is still in time after it.
        m_clock->advance(PairingOptions{}.perAddress.baseDelayMs);
        auto later = book().redeem(code->secret, {}, u"10.6.6.6"_s);
        QVERIFY2(later, qPrintable(later ? QString() : later.error().text()));
        // Malformed codes count as failures too, and are never looked up.
        QCOMPARE(book().redeem(u"not a code"_s, {}, u"10.0.0.9"_s).error().code, ErrorCode::Unauthorized);
        QCOMPARE(book().redeem(u"x"_s, QString(61, u'n'), u"10.0.0.9"_s).error().code, ErrorCode::Invalid);
    }

    void oldestCodesMakeRoom()
    {
        auto first = book().create(u"alice"_s, m_actor);
        QVERIFY(first);
        for (int i = 0; i < PairingOptions{}.maxOpen; ++i)
            QVERIFY(book().create(u"alice"_s, m_actor));
        QCOMPARE(book().openCount(), PairingOptions{}.maxOpen);
        QCOMPARE(book().redeem(first->secret, {}, u"10.0.0.7"_s).error().code, ErrorCode::Unauthorized);
    }
};

QTEST_GUILESS_MAIN(TestPairingBook)
#include "tst_pairingbook.moc"
