#include "core/autodeploy/hookstore.h"

#include "core/state/sql.h"

#include <QDateTime>
#include <QRandomGenerator>

using namespace Qt::StringLiterals;

namespace pando::core::autodeploy {

using core::detail::text;

QByteArray sealContext(const QString &app)
{
    return pipelines::SealBox::context({u"app-hook"_s, app});
}

Status checkSecret(QByteArrayView secret)
{
    if (secret.size() < MinSecretChars || secret.size() > MaxSecretChars)
        return fail(ErrorCode::Invalid,
                    u"a webhook secret has 16 to 256 characters; this one has %1"_s.arg(secret.size()), u"secret"_s,
                    u"leave it out and Pando makes one"_s);
    for (const char c : secret) {
        if (c <= ' ' || c > '~')
            return fail(ErrorCode::Invalid,
                        u"a webhook secret is visible ASCII without spaces; this one has another character"_s,
                        u"secret"_s);
    }
    return {};
}

namespace {

// Replaces the app's sealed secret in one statement pair under a transaction.
Status storeSealed(Database &db, const QString &app, const QString &sealed, const QString &createdBy, qint64 nowMs)
{
    const QString what = u"set the webhook secret of "_s + app;
    auto tx = core::detail::Transaction::begin(db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto updated = tx->run(u"UPDATE app_hooks SET sealed = ?, created_by = ?, created_ms = ? WHERE app = ?"_s,
                           {sealed, text(createdBy), nowMs, text(app)}, what);
    if (!updated)
        return std::unexpected(updated.error());
    if (updated->numRowsAffected() == 0) {
        auto inserted = tx->run(u"INSERT INTO app_hooks (app, sealed, created_by, created_ms) VALUES (?, ?, ?, ?)"_s,
                                {text(app), sealed, text(createdBy), nowMs}, what);
        if (!inserted) {
            if (inserted.error().code == ErrorCode::NotFound)
                return fail(ErrorCode::NotFound, u"no app named %1"_s.arg(app), u"app"_s);
            return std::unexpected(inserted.error());
        }
    }
    return tx->commit();
}

Delivery readDelivery(const QSqlQuery &q)
{
    Delivery d;
    d.app = q.value(0).toString();
    d.id = q.value(1).toString();
    d.forge = q.value(2).toString();
    d.event = q.value(3).toString();
    d.ref = q.value(4).toString();
    d.commit = q.value(5).toString();
    d.pusher = q.value(6).toString();
    d.receivedMs = q.value(7).toLongLong();
    d.outcome = q.value(8).toString();
    d.detail = q.value(9).toString();
    d.deployId = q.value(10).toString();
    return d;
}

const QString DeliveryColumns =
    u"app, delivery_id, forge, event, ref, commit_id, pusher, received_ms, outcome, detail, deploy_id"_s;

} // namespace

Result<HookInfo> HookStore::info(const QString &app)
{
    auto q = core::detail::run(m_db, u"SELECT created_by, created_ms FROM app_hooks WHERE app = ?"_s, {text(app)},
                               u"read the webhook of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    HookInfo info;
    if (q->next()) {
        info.hasSecret = true;
        info.createdBy = q->value(0).toString();
        info.createdMs = q->value(1).toLongLong();
    }
    return info;
}

QByteArray HookStore::randomSecret()
{
    QByteArray random(20, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(random.data()), random.size() / 4);
    QByteArray secret = random.toHex();
    pipelines::SealBox::wipe(random);
    return secret;
}

Result<QByteArray> HookStore::newSecret(const QString &app, const QString &createdBy)
{
    QByteArray secret = randomSecret();
    if (auto set = setSecret(app, secret, createdBy); !set) {
        pipelines::SealBox::wipe(secret);
        return std::unexpected(set.error());
    }
    return secret;
}

Status HookStore::setSecret(const QString &app, QByteArrayView secret, const QString &createdBy)
{
    if (auto ok = checkSecret(secret); !ok)
        return ok;
    auto sealed = m_seal.seal(secret, sealContext(app));
    if (!sealed)
        return std::unexpected(sealed.error());
    return storeSealed(m_db, app, *sealed, createdBy, m_clock.nowMs());
}

Result<std::optional<QByteArray>> HookStore::secret(const QString &app)
{
    auto q = core::detail::run(m_db, u"SELECT sealed FROM app_hooks WHERE app = ?"_s, {text(app)},
                               u"read the webhook secret of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return std::optional<QByteArray>();
    auto opened = m_seal.open(q->value(0).toString(), sealContext(app));
    if (!opened)
        return std::unexpected(opened.error());
    return std::optional<QByteArray>(*opened);
}

Status HookStore::recordDelivery(const Delivery &d)
{
    const QString what = u"record webhook delivery %1 of %2"_s.arg(d.id, d.app);
    auto tx = core::detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    auto earlier = tx->run(u"SELECT received_ms, outcome FROM hook_deliveries WHERE app = ? AND delivery_id = ?"_s,
                           {text(d.app), text(d.id)}, what);
    if (!earlier)
        return std::unexpected(earlier.error());
    if (earlier->next()) {
        const QString when =
            QDateTime::fromMSecsSinceEpoch(earlier->value(0).toLongLong(), Qt::UTC).toString(Qt::ISODate);
        return fail(ErrorCode::Conflict,
                    u"delivery %1 was already received at %2 (%3); a delivery is acted on once"_s.arg(
                        d.id, when, earlier->value(1).toString()),
                    u"headers"_s, u"to deploy again, push again or run `pando deploy %1`"_s.arg(d.app));
    }
    earlier->finish();
    const qint64 cutoff = m_clock.nowMs() - DeliveryRetentionMs;
    if (auto pruned = tx->run(u"DELETE FROM hook_deliveries WHERE app = ? AND (received_ms < ? OR delivery_id IN"
                              " (SELECT delivery_id FROM hook_deliveries WHERE app = ?"
                              " ORDER BY received_ms DESC LIMIT -1 OFFSET ?))"_s.replace(
                                  u"LIMIT -1"_s, tx->isPostgres() ? u"LIMIT ALL"_s : u"LIMIT -1"_s),
                              {text(d.app), cutoff, text(d.app), MaxDeliveriesPerApp - 1}, what);
        !pruned)
        return std::unexpected(pruned.error());
    auto inserted =
        tx->run(u"INSERT INTO hook_deliveries (%1) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s.arg(DeliveryColumns),
                {text(d.app), text(d.id), text(d.forge), text(d.event), text(d.ref), text(d.commit), text(d.pusher),
                 d.receivedMs, text(d.outcome), text(d.detail), text(d.deployId)},
                what);
    if (!inserted) {
        if (inserted.error().code == ErrorCode::NotFound)
            return fail(ErrorCode::NotFound, u"no app named %1"_s.arg(d.app), u"app"_s);
        return std::unexpected(inserted.error());
    }
    return tx->commit();
}

Status HookStore::settleDelivery(const QString &app, const QString &id, const QString &outcome, const QString &detail,
                                 const QString &deployId)
{
    auto q = core::detail::run(
        m_db, u"UPDATE hook_deliveries SET outcome = ?, detail = ?, deploy_id = ? WHERE app = ? AND delivery_id = ?"_s,
        {text(outcome), text(detail), text(deployId), text(app), text(id)},
        u"settle webhook delivery %1 of %2"_s.arg(id, app));
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<QList<Delivery>> HookStore::deliveries(const QString &app, int limit)
{
    auto q = core::detail::run(m_db,
                               u"SELECT %1 FROM hook_deliveries WHERE app = ? ORDER BY received_ms DESC, delivery_id"
                               " LIMIT ?"_s.arg(DeliveryColumns),
                               {text(app), qBound(1, limit, MaxDeliveriesPerApp)},
                               u"list the webhook deliveries of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    QList<Delivery> out;
    while (q->next())
        out << readDelivery(*q);
    return out;
}

Result<PollState> HookStore::pollState(const QString &app)
{
    auto q = core::detail::run(m_db, u"SELECT polled_ms, commit_id, error FROM autodeploy_polls WHERE app = ?"_s,
                               {text(app)}, u"read the poll state of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    PollState state;
    if (q->next()) {
        state.polledMs = q->value(0).toLongLong();
        state.commit = q->value(1).toString();
        state.error = q->value(2).toString();
    }
    return state;
}

Status HookStore::recordPoll(const QString &app, const QString &commit, const QString &error)
{
    const QString what = u"record the poll of "_s + app;
    auto tx = core::detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    const qint64 now = m_clock.nowMs();
    auto updated = tx->run(u"UPDATE autodeploy_polls SET polled_ms = ?, commit_id = ?, error = ? WHERE app = ?"_s,
                           {now, text(commit), text(error), text(app)}, what);
    if (!updated)
        return std::unexpected(updated.error());
    if (updated->numRowsAffected() == 0) {
        auto inserted =
            tx->run(u"INSERT INTO autodeploy_polls (app, polled_ms, commit_id, error) VALUES (?, ?, ?, ?)"_s,
                    {text(app), now, text(commit), text(error)}, what);
        if (!inserted)
            return std::unexpected(inserted.error());
    }
    return tx->commit();
}

} // namespace pando::core::autodeploy
