#include "core/services/servicestore.h"

#include "core/state/sql.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

QByteArray sealContext(const QString &app, const QString &slot)
{
    return pipelines::SealBox::context({u"service"_s, app, slot});
}

ServiceRecord fromRow(const QSqlQuery &q)
{
    ServiceRecord r;
    r.app = q.value(0).toString();
    r.slot = q.value(1).toString();
    r.kind = q.value(2).toString();
    r.version = q.value(3).toString();
    r.user = q.value(4).toString();
    r.database = q.value(5).toString();
    r.createdMs = q.value(7).toLongLong();
    r.updatedMs = q.value(8).toLongLong();
    return r;
}

// What a kept seed is checked against when it is read back.
QString seedDigest(const QByteArray &data)
{
    return QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex());
}

const QString Columns = u"app, slot, kind, version, username, database_name, sealed_password, created_ms, updated_ms"_s;

} // namespace

QString generateServicePassword()
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    QString out;
    out.reserve(32);
    auto *random = QRandomGenerator::system();
    for (int i = 0; i < 32; ++i)
        out += QLatin1Char(alphabet[random->bounded(62)]);
    return out;
}

Result<ServiceRecord> ServiceStore::find(const QString &app, const QString &slot)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        detail::run(*db, m_db.isPostgres(), u"SELECT "_s + Columns + u" FROM app_services WHERE app = ? AND slot = ?"_s,
                    {detail::text(app), detail::text(slot)}, u"find service "_s + app + u'/' + slot);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"app %1 has no service in slot %2"_s.arg(app, slot), u"services."_s + slot);
    ServiceRecord r = fromRow(*q);
    const QString sealed = q->value(6).toString();
    q->finish();
    auto opened = m_seal.open(sealed, sealContext(app, slot));
    if (!opened)
        return fail(ErrorCode::Internal,
                    u"the credentials of service %1 of app %2 do not open: %3"_s.arg(slot, app, opened.error().message),
                    u"services."_s + slot, u"was the seal key replaced? The service's data needs those credentials"_s);
    r.password = QString::fromUtf8(*opened);
    pipelines::SealBox::wipe(*opened);
    return r;
}

Result<ServiceRecord> ServiceStore::obtain(const QString &app, const QString &slot, const QString &kind,
                                           const QString &version, const adapters::ServiceCredentials &wanted)
{
    auto found = find(app, slot);
    if (found && found->kind == kind) {
        // The service's data was made for its credentials: the spec may not name others.
        const QString path = u"services."_s + slot;
        const auto differs = [&](const QString &asked, const QString &made, const QString &field,
                                 const QString &shown) -> Status {
            if (asked.isEmpty() || asked == made)
                return {};
            return fail(
                ErrorCode::Conflict,
                u"the %1 service of %2 was made with %3; its data cannot follow a new one"_s.arg(kind, slot, shown),
                path + u'.' + field,
                u"keep %1 as it was, or rename the slot to start a new service (the old one's data stays "
                u"until pando services rm %2 %3 --delete-data)"_s.arg(field, app, slot));
        };
        Status same = differs(wanted.user, found->user, u"user"_s, u"user "_s + found->user);
        if (same)
            same = differs(wanted.database, found->database, u"database"_s, u"database "_s + found->database);
        if (same)
            same = differs(wanted.password, found->password, u"password"_s, u"another password"_s);
        if (!same) {
            found->password.fill(u'\0');
            return std::unexpected(same.error());
        }
        if (found->version != version) {
            auto db = m_db.connection();
            if (!db)
                return std::unexpected(db.error());
            auto q = detail::run(*db, m_db.isPostgres(),
                                 u"UPDATE app_services SET version = ?, updated_ms = ? WHERE app = ? AND slot = ?"_s,
                                 {detail::text(version), m_clock.nowMs(), detail::text(app), detail::text(slot)},
                                 u"update service "_s + app + u'/' + slot);
            if (!q)
                return std::unexpected(q.error());
            found->version = version;
        }
        return found;
    }
    if (!found && found.error().code != ErrorCode::NotFound)
        return std::unexpected(found.error());

    ServiceRecord r;
    r.app = app;
    r.slot = slot;
    r.kind = kind;
    r.version = version;
    r.user = wanted.user.isEmpty() ? u"app"_s : wanted.user;
    r.database = kind == u"redis" ? QString() : (wanted.database.isEmpty() ? slot : wanted.database);
    r.password = wanted.password.isEmpty() ? generateServicePassword() : wanted.password;
    r.createdMs = r.updatedMs = m_clock.nowMs();
    auto sealed = m_seal.seal(r.password.toUtf8(), sealContext(app, slot));
    if (!sealed)
        return std::unexpected(sealed.error());
    auto tx = detail::Transaction::begin(m_db, u"record service "_s + app + u'/' + slot);
    if (!tx)
        return std::unexpected(tx.error());
    if (auto gone = tx->run(u"DELETE FROM app_services WHERE app = ? AND slot = ?"_s,
                            {detail::text(app), detail::text(slot)}, u"replace service"_s);
        !gone)
        return std::unexpected(gone.error());
    if (auto added =
            tx->run(u"INSERT INTO app_services ("_s + Columns + u") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"_s,
                    {detail::text(app), detail::text(slot), detail::text(kind), detail::text(version),
                     detail::text(r.user), detail::text(r.database), detail::text(*sealed), r.createdMs, r.updatedMs},
                    u"record service"_s);
        !added)
        return std::unexpected(added.error());
    if (auto done = tx->commit(); !done)
        return std::unexpected(done.error());
    return r;
}

Result<QList<ServiceRecord>> ServiceStore::list(const QString &app)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = app.isEmpty() ? detail::run(*db, m_db.isPostgres(),
                                         u"SELECT "_s + Columns + u" FROM app_services ORDER BY app, slot"_s, {},
                                         u"list services"_s)
                           : detail::run(*db, m_db.isPostgres(),
                                         u"SELECT "_s + Columns + u" FROM app_services WHERE app = ? ORDER BY slot"_s,
                                         {detail::text(app)}, u"list services of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    QList<ServiceRecord> out;
    while (q->next())
        out.append(fromRow(*q));
    q->finish();
    return out;
}

Status ServiceStore::remove(const QString &app, const QString &slot)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(*db, m_db.isPostgres(), u"DELETE FROM app_services WHERE app = ? AND slot = ?"_s,
                         {detail::text(app), detail::text(slot)}, u"remove service "_s + app + u'/' + slot);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Status ServiceStore::keepSeed(const QString &app, const QString &slot, const QString &seedPath, const QByteArray &data)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    const QString digest = seedPath.isEmpty() ? QString() : seedDigest(data);
    const QString base64 = seedPath.isEmpty() ? QString() : QString::fromLatin1(data.toBase64());
    auto q = detail::run(*db, m_db.isPostgres(),
                         u"UPDATE app_services SET seed_path = ?, seed_digest = ?, seed_data = ? "
                         u"WHERE app = ? AND slot = ? AND (seed_path <> ? OR seed_digest <> ?)"_s,
                         {detail::text(seedPath), detail::text(digest), detail::text(base64), detail::text(app),
                          detail::text(slot), detail::text(seedPath), detail::text(digest)},
                         u"keep the seed of service "_s + app + u'/' + slot);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<QByteArray> ServiceStore::keptSeed(const QString &app, const QString &slot, const QString &seedPath)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        detail::run(*db, m_db.isPostgres(),
                    u"SELECT seed_data, seed_digest FROM app_services WHERE app = ? AND slot = ? AND seed_path = ? "
                    u"AND seed_path <> ''"_s,
                    {detail::text(app), detail::text(slot), detail::text(seedPath)},
                    u"the kept seed of service "_s + app + u'/' + slot);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no copy of %1 was kept for service %2 of %3"_s.arg(seedPath, slot, app),
                    u"services.%1.seed"_s.arg(slot), u"deploy %1 again: the deploy loads the seed"_s.arg(app));
    const QByteArray data = QByteArray::fromBase64(q->value(0).toString().toLatin1());
    const QString digest = q->value(1).toString();
    q->finish();
    if (seedDigest(data) != digest)
        return fail(ErrorCode::Internal,
                    u"the kept copy of %1 for service %2 of %3 is damaged"_s.arg(seedPath, slot, app),
                    u"services.%1.seed"_s.arg(slot), u"deploy %1 again: the deploy loads the seed"_s.arg(app));
    return data;
}

Status ServiceStore::markKept(const QString &app, const QStringList &owners)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q = detail::run(
        *db, m_db.isPostgres(), u"UPDATE app_services SET kept_ms = ?, kept_owners = ? WHERE app = ?"_s,
        {m_clock.nowMs(), detail::text(owners.join(u' ')), detail::text(app)}, u"keep the services of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    return {};
}

Result<QStringList> ServiceStore::keptOwners(const QString &app)
{
    auto db = m_db.connection();
    if (!db)
        return std::unexpected(db.error());
    auto q =
        detail::run(*db, m_db.isPostgres(), u"SELECT kept_owners FROM app_services WHERE app = ? AND kept_ms > 0"_s,
                    {detail::text(app)}, u"the owners of the kept services of "_s + app);
    if (!q)
        return std::unexpected(q.error());
    QStringList owners;
    while (q->next())
        for (const QString &owner : q->value(0).toString().split(u' ', Qt::SkipEmptyParts))
            if (!owners.contains(owner))
                owners.append(owner);
    q->finish();
    return owners;
}

} // namespace pando::core
