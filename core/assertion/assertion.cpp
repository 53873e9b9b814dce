#include "core/assertion/assertion.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>

namespace pando::core::assertion {

namespace {

const QString Where = QString(HeaderName);

std::unexpected<Error> refused(Refusal *out, Refusal::Kind kind, const QString &why)
{
    if (out)
        *out = Refusal{kind, why};
    return fail(ErrorCode::Unauthorized, QStringLiteral("the identity assertion is refused: %1").arg(why), Where);
}

QString randomId()
{
    QByteArray bytes(16, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), 4);
    return QString::fromLatin1(adapters::jose::base64Url(bytes));
}

QByteArray compactJson(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

} // namespace

QJsonObject Claims::toJson() const
{
    QJsonArray grantList;
    for (const QString &grant : grants)
        grantList.append(grant);
    return QJsonObject{{QStringLiteral("iss"), issuer},       {QStringLiteral("sub"), subject},
                       {QStringLiteral("name"), name},        {QStringLiteral("aud"), audience},
                       {QStringLiteral("iat"), issuedAt},     {QStringLiteral("nbf"), notBefore},
                       {QStringLiteral("exp"), expires},      {QStringLiteral("jti"), id},
                       {QStringLiteral("grants"), grantList}, {QStringLiteral("role"), role}};
}

Claims Claims::fromJson(const QJsonObject &json)
{
    Claims claims;
    claims.issuer = json.value(QStringLiteral("iss")).toString();
    claims.subject = json.value(QStringLiteral("sub")).toString();
    claims.name = json.value(QStringLiteral("name")).toString();
    claims.audience = json.value(QStringLiteral("aud")).toString();
    claims.role = json.value(QStringLiteral("role")).toString();
    for (const QJsonValue grant : json.value(QStringLiteral("grants")).toArray())
        claims.grants.append(grant.toString());
    claims.issuedAt = qint64(json.value(QStringLiteral("iat")).toDouble());
    claims.notBefore = qint64(json.value(QStringLiteral("nbf")).toDouble());
    claims.expires = qint64(json.value(QStringLiteral("exp")).toDouble());
    claims.id = json.value(QStringLiteral("jti")).toString();
    return claims;
}

// ReplayGuard

void ReplayGuard::prune(qint64 nowMs)
{
    while (!m_order.empty() && (m_order.front().first <= nowMs || qsizetype(m_order.size()) > m_capacity)) {
        const auto &[expiry, id] = m_order.front();
        // An ID recorded again later has a newer entry behind; only its own entry removes it.
        if (m_expiry.value(id) == expiry)
            m_expiry.remove(id);
        m_order.pop_front();
    }
}

bool ReplayGuard::admit(const QString &id, qint64 expiresMs, qint64 nowMs)
{
    QMutexLocker lock(&m_mutex);
    prune(nowMs);
    if (m_expiry.contains(id))
        return false;
    m_expiry.insert(id, expiresMs);
    // Assertions share one lifetime, so expiries arrive in order; one that does not is put in
    // its place, keeping the front the next to expire.
    auto at = m_order.end();
    while (at != m_order.begin() && std::prev(at)->first > expiresMs)
        --at;
    m_order.insert(at, {expiresMs, id});
    prune(nowMs);
    return true;
}

bool ReplayGuard::contains(const QString &id, qint64 nowMs)
{
    QMutexLocker lock(&m_mutex);
    prune(nowMs);
    return m_expiry.contains(id);
}

qsizetype ReplayGuard::size() const
{
    QMutexLocker lock(&m_mutex);
    return m_expiry.size();
}

// AssertionVerifier

Status AssertionVerifier::setKeys(const QJsonObject &jwks)
{
    QHash<QString, adapters::jose::EcKey> keys;
    const QJsonArray list = jwks.value(QStringLiteral("keys")).toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QJsonObject jwk = list.at(i).toObject();
        const QString where = QStringLiteral("keys[%1]").arg(i);
        const QString kid = jwk.value(QStringLiteral("kid")).toString();
        if (kid.isEmpty())
            return fail(ErrorCode::Invalid, QStringLiteral("has no kid"), where);
        auto key = adapters::jose::EcKey::fromJwk(jwk);
        if (!key)
            return fail(ErrorCode::Invalid, key.error().message, where + u'.' + key.error().where);
        keys.insert(kid, *key);
    }
    QMutexLocker lock(&m_mutex);
    m_keys = keys;
    return {};
}

Result<Claims> AssertionVerifier::verify(QByteArrayView token, const QString &audience, ReplayGuard *replay,
                                         Refusal *refusal) const
{
    const QList<QByteArrayView> parts = [&] {
        QList<QByteArrayView> out;
        qsizetype start = 0;
        for (qsizetype dot = token.indexOf('.'); dot >= 0; dot = token.indexOf('.', start)) {
            out.append(token.sliced(start, dot - start));
            start = dot + 1;
        }
        out.append(token.sliced(start));
        return out;
    }();
    if (parts.size() != 3)
        return refused(refusal, Refusal::Kind::Malformed,
                       QStringLiteral("it is not a compact JWS (three base64url parts)"));
    const auto headerBytes = adapters::jose::fromBase64Url(parts[0]);
    const auto payloadBytes = adapters::jose::fromBase64Url(parts[1]);
    const auto signature = adapters::jose::fromBase64Url(parts[2]);
    if (!headerBytes || !payloadBytes || !signature)
        return refused(refusal, Refusal::Kind::Malformed, QStringLiteral("a part is not base64url"));
    const QJsonDocument header = QJsonDocument::fromJson(*headerBytes);
    const QJsonDocument payload = QJsonDocument::fromJson(*payloadBytes);
    if (!header.isObject() || !payload.isObject())
        return refused(refusal, Refusal::Kind::Malformed, QStringLiteral("its header or claims are not a JSON object"));
    // The algorithm is fixed, never taken from the token: "none", HS256 with the public key as
    // secret and the like are refused before any key is looked at.
    const QString alg = header.object().value(QStringLiteral("alg")).toString();
    if (alg != QLatin1String("ES256"))
        return refused(refusal, Refusal::Kind::Algorithm,
                       QStringLiteral("its alg is \"%1\"; only ES256 is accepted").arg(alg.left(20)));
    const QString kid = header.object().value(QStringLiteral("kid")).toString();
    adapters::jose::EcKey key;
    {
        QMutexLocker lock(&m_mutex);
        key = m_keys.value(kid);
    }
    if (key.isNull())
        return refused(refusal, Refusal::Kind::UnknownKey,
                       QStringLiteral("no published key has the kid \"%1\"").arg(kid.left(64)));
    const qsizetype signedLength = parts[0].size() + 1 + parts[1].size();
    if (!key.verify(token.first(signedLength), *signature))
        return refused(refusal, Refusal::Kind::Signature, QStringLiteral("the signature does not verify"));

    const Claims claims = Claims::fromJson(payload.object());
    const qint64 now = m_clock.nowMs();
    if (claims.expires <= 0 || claims.expires * 1000 + m_leewayMs <= now)
        return refused(refusal, Refusal::Kind::Expired, QStringLiteral("it has expired"));
    if (claims.notBefore * 1000 - m_leewayMs > now)
        return refused(refusal, Refusal::Kind::NotYetValid, QStringLiteral("it is not valid yet"));
    if (claims.audience != audience)
        return refused(refusal, Refusal::Kind::Audience,
                       QStringLiteral("it is for \"%1\", not \"%2\"").arg(claims.audience.left(64), audience));
    if (claims.id.isEmpty())
        return refused(refusal, Refusal::Kind::Malformed, QStringLiteral("it has no jti"));
    if (replay && !replay->admit(claims.id, claims.expires * 1000 + m_leewayMs, now))
        return refused(refusal, Refusal::Kind::Replayed, QStringLiteral("it was used before (replayed)"));
    return claims;
}

// AssertionService

AssertionService::AssertionService(QString keyPath, Clock &clock, AssertionOptions options)
    : m_clock(clock), m_options(std::move(options)), m_ring(std::move(keyPath), clock, m_options.keys)
{}

Status AssertionService::open()
{
    return m_ring.open();
}

Result<MintedAssertion> AssertionService::mint(const Subject &subject, const QString &app)
{
    auto key = m_ring.signingKey();
    if (!key)
        return std::unexpected(key.error());
    const qint64 nowMs = m_clock.nowMs();
    Claims claims;
    claims.issuer = m_options.issuer;
    claims.subject = subject.userId;
    claims.name = subject.username;
    claims.audience = app;
    claims.role = subject.role;
    claims.grants = subject.grants;
    claims.issuedAt = nowMs / 1000;
    claims.notBefore = claims.issuedAt;
    claims.expires = claims.issuedAt + m_options.keys.assertionTtlMs / 1000;
    claims.id = randomId();
    const QJsonObject header{{QStringLiteral("alg"), QStringLiteral("ES256")},
                             {QStringLiteral("typ"), QStringLiteral("JWT")},
                             {QStringLiteral("kid"), key->kid}};
    const QByteArray signingInput =
        adapters::jose::base64Url(compactJson(header)) + '.' + adapters::jose::base64Url(compactJson(claims.toJson()));
    const QByteArray signature = key->key.sign(signingInput);
    if (signature.isEmpty())
        return fail(ErrorCode::Internal, QStringLiteral("OpenSSL could not sign the identity assertion"));
    // A random 128-bit jti is new: the guard is only asked later whether a header is a replay.
    m_minted.admit(claims.id, claims.expires * 1000, nowMs);
    return MintedAssertion{signingInput + '.' + adapters::jose::base64Url(signature), claims, key->kid};
}

Result<QJsonObject> AssertionService::jwks()
{
    auto keys = m_ring.publishedKeys();
    if (!keys)
        return std::unexpected(keys.error());
    QJsonArray list;
    for (const SigningKey &key : std::as_const(*keys)) {
        QJsonObject jwk = key.key.publicJwk();
        jwk.insert(QStringLiteral("kid"), key.kid);
        jwk.insert(QStringLiteral("use"), QStringLiteral("sig"));
        jwk.insert(QStringLiteral("alg"), QStringLiteral("ES256"));
        list.append(jwk);
    }
    return QJsonObject{{QStringLiteral("keys"), list}};
}

Error AssertionService::refuseIncoming(QByteArrayView token, const QString &app)
{
    const QString hint = QStringLiteral("the edge sets X-Pando-Assertion itself; send the request without it");
    auto keys = jwks();
    AssertionVerifier verifier(m_clock);
    if (keys)
        discardResult(verifier.setKeys(*keys), "this install's own keys; none left means every token is forged");
    Refusal refusal;
    auto claims = verifier.verify(token, app, nullptr, &refusal);
    QString why;
    if (!claims)
        why = refusal.forged() ? QStringLiteral("it is forged: %1").arg(refusal.reason) : refusal.reason;
    else if (m_minted.contains(claims->id, m_clock.nowMs()))
        why = QStringLiteral("it is replayed: the edge minted it for an earlier request");
    else
        why = QStringLiteral("it was not minted for this request");
    return Error{ErrorCode::Invalid, QStringLiteral("the request carries its own identity assertion, and %1").arg(why),
                 Where, hint};
}

Result<QString> AssertionService::rotate()
{
    auto key = m_ring.rotate();
    if (!key)
        return std::unexpected(key.error());
    return key->kid;
}

} // namespace pando::core::assertion
