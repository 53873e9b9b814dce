#pragma once
// Package assertion: mints the identity assertions the edge passes to apps, and publishes the
// keys that verify them. An assertion is a compact JWS (JWT, ES256, one minute long) naming the
// user, the app it is for (aud) and the user's grants on that app; the keys are published as a
// JWKS document and rotate (keyring.h), so an app verifies a request with any JWT library.
// AssertionVerifier is the same check in C++: the edge's refusal of a forged or replayed header
// and the tests use it.
//
// Threading: AssertionService, AssertionVerifier and ReplayGuard may be used from any thread.

#include "core/assertion/keyring.h"

#include <QHash>
#include <QJsonObject>
#include <QMutex>
#include <QStringList>
#include <deque>

namespace pando::core::assertion {

// The header an assertion travels in, edge to app.
inline constexpr QLatin1StringView HeaderName("X-Pando-Assertion");

// What an assertion says (its claims). Times are in seconds since the epoch, as JWT has them.
struct Claims {
    QString issuer;       // iss: the install
    QString subject;      // sub: the user's id
    QString name;         // name: the user's username
    QString audience;     // aud: the app's name
    QString role;         // role: the user's install role (admin, operator, member, viewer)
    QStringList grants;   // grants: the user's grant roles on the app (owner, deployer, viewer)
    qint64 issuedAt = 0;  // iat
    qint64 notBefore = 0; // nbf
    qint64 expires = 0;   // exp
    QString id;           // jti: random, unique per assertion
    QJsonObject toJson() const;
    static Claims fromJson(const QJsonObject &json);
};

// The assertion IDs seen while they are still valid, so that one is taken once. Bounded: past
// capacity the entries closest to expiry go first (docs/security.md says what that allows).
class ReplayGuard {
public:
    explicit ReplayGuard(qsizetype capacity = 100'000) : m_capacity(capacity) {}
    // False when id was seen before and has not expired; records it otherwise.
    bool admit(const QString &id, qint64 expiresMs, qint64 nowMs);
    // Whether id was recorded and has not expired (without recording it).
    bool contains(const QString &id, qint64 nowMs);
    qsizetype size() const;

private:
    void prune(qint64 nowMs);
    mutable QMutex m_mutex;
    qsizetype m_capacity;
    QHash<QString, qint64> m_expiry;                // id → expiry (ms)
    std::deque<std::pair<qint64, QString>> m_order; // (expiry, id), oldest first
};

// Which check an assertion failed, and in words (what follows "the identity assertion is refused: ").
struct Refusal {
    enum class Kind { None, Malformed, Algorithm, UnknownKey, Signature, Expired, NotYetValid, Audience, Replayed };
    Kind kind = Kind::None;
    QString reason;
    // Whether the issuer did not make it: no valid ES256 signature by a key it published.
    bool forged() const
    {
        return kind == Kind::Malformed || kind == Kind::Algorithm || kind == Kind::UnknownKey ||
               kind == Kind::Signature;
    }
};

// Checks assertions against a JWKS document, as an app would: the signature (ES256 only, "none"
// and every other alg refused), a known kid, the times (with leewayMs), the audience and, with a
// guard, that the assertion was not seen before. Errors are Unauthorized, saying which check
// failed, where "X-Pando-Assertion".
class AssertionVerifier {
public:
    explicit AssertionVerifier(Clock &clock = SystemClock::instance(), qint64 leewayMs = 0)
        : m_clock(clock), m_leewayMs(leewayMs)
    {}
    // The keys to trust (GET /.well-known/jwks.json); Invalid naming the key that is not an EC
    // P-256 JWK with a kid.
    Status setKeys(const QJsonObject &jwks);
    // replay: the guard that remembers what was taken (nullptr: no replay check). refusal, when
    // given, gets which check failed.
    Result<Claims> verify(QByteArrayView token, const QString &audience, ReplayGuard *replay = nullptr,
                          Refusal *refusal = nullptr) const;

private:
    Clock &m_clock;
    qint64 m_leewayMs;
    mutable QMutex m_mutex;                       // guards m_keys
    QHash<QString, adapters::jose::EcKey> m_keys; // kid → public key
};

struct AssertionOptions {
    QString issuer; // iss: the install's URL or name
    KeyRingOptions keys;
};

// What the edge is given for a request: the assertion and what it says.
struct MintedAssertion {
    QByteArray token; // the compact JWS, for the X-Pando-Assertion header
    Claims claims;
    QString kid;
};

// The subject of an assertion, as the engine found it (a signed-in user and their grants).
struct Subject {
    QString userId;
    QString username;
    QString role;
    QStringList grants;
};

class AssertionService {
public:
    // keyPath: the key ring's file (in the data directory).
    AssertionService(QString keyPath, Clock &clock, AssertionOptions options);

    Status open();
    // A new assertion of subject for app, signed with the current key; its ID is remembered for
    // its lifetime, so that the edge can tell a replayed one (wasMinted()).
    Result<MintedAssertion> mint(const Subject &subject, const QString &app);
    // {keys: [...]}: every key that may have signed an assertion still valid, newest first.
    Result<QJsonObject> jwks();
    // Why a request that arrived with its own assertion header is refused: only the edge sets
    // it. Checked the way an app would, for app, to say what it is: forged (no key of this
    // install signed it), expired, for another app, or replayed (minted here for an earlier
    // request). Always an error (Invalid, where "X-Pando-Assertion").
    Error refuseIncoming(QByteArrayView token, const QString &app);
    // A new signing key now (the old one stays published until what it signed has expired).
    Result<QString> rotate();
    const AssertionOptions &options() const { return m_options; }

private:
    Clock &m_clock;
    AssertionOptions m_options;
    KeyRing m_ring;
    ReplayGuard m_minted; // IDs minted, while valid
};

} // namespace pando::core::assertion
