#include "core/secrets/appsecrets.h"

#include "core/state/sql.h"

#include <QRegularExpression>
#include <QStringDecoder>

using namespace Qt::StringLiterals;

namespace pando::core::secrets {

namespace {

Result<QSqlQuery> query(Database &db, const QString &sql, const QVariantList &values, const QString &what)
{
    auto connection = db.connection();
    if (!connection)
        return std::unexpected(connection.error());
    return core::detail::run(*connection, db.isPostgres(), sql, values, what);
}

QString secretPath(const QString &app, const QString &name)
{
    return u"secret %1 of app %2"_s.arg(name, app);
}

} // namespace

Status checkSecretName(const QString &name)
{
    static const QRegularExpression pattern(uR"(^[A-Za-z_][A-Za-z0-9_]*\z)"_s);
    if (name.isEmpty() || name.size() > MaxSecretNameLength || !pattern.match(name).hasMatch())
        return fail(ErrorCode::Invalid,
                    u"\"%1\" is not a secret name: use an environment variable's name, letters, digits and '_', "
                    u"not starting with a digit, at most %2 characters"_s.arg(name.left(MaxSecretNameLength))
                        .arg(MaxSecretNameLength),
                    u"name"_s);
    return {};
}

Status checkSecretValue(const QString &name, QByteArrayView value)
{
    if (value.isEmpty())
        return fail(ErrorCode::Invalid, u"the value of secret %1 is empty"_s.arg(name), u"value"_s);
    if (value.size() > MaxSecretBytes)
        return fail(ErrorCode::TooLarge,
                    u"the value of secret %1 is %2 bytes, more than the limit of %3"_s.arg(name)
                        .arg(value.size())
                        .arg(MaxSecretBytes),
                    u"value"_s);
    if (value.contains('\0'))
        return fail(ErrorCode::Invalid,
                    u"the value of secret %1 contains a NUL byte; secrets are text and neither an environment "
                    u"variable nor Pando's store can carry one"_s.arg(name),
                    u"value"_s, u"encode binary data, e.g. with base64, and decode it in the app"_s);
    QStringDecoder utf8(QStringDecoder::Utf8);
    const QString decoded = utf8(value);
    if (utf8.hasError())
        return fail(ErrorCode::Invalid, u"the value of secret %1 is not valid UTF-8 text"_s.arg(name), u"value"_s,
                    u"encode binary data, e.g. with base64, and decode it in the app"_s);
    return {};
}

Status checkEnvInjectable(const QString &name, QByteArrayView value)
{
    if (value.contains('\n') || value.contains('\r'))
        return fail(ErrorCode::Invalid,
                    u"secret %1 contains a line break, so it cannot be an environment variable"_s.arg(name),
                    u"secrets."_s + name,
                    u"inject it as a file instead: add `secrets: { %1: { file: /run/secrets/%1 } }` to the app's "
                    u"spec"_s.arg(name));
    return {};
}

QByteArray sealContext(const QString &app, const QString &name)
{
    return pipelines::SealBox::context({u"app-secret"_s, app, name});
}

void wipe(QMap<QString, QByteArray> &values)
{
    for (auto it = values.begin(); it != values.end(); ++it)
        pipelines::SealBox::wipe(it.value());
}

Status AppSecretStore::requireApp(const QString &app)
{
    auto q = query(m_db, u"SELECT name FROM apps WHERE name = ?"_s, {core::detail::text(app)}, u"find app "_s + app);
    if (!q)
        return std::unexpected(q.error());
    if (!q->next())
        return fail(ErrorCode::NotFound, u"no app named \"%1\""_s.arg(app), u"app"_s);
    return {};
}

Result<AppSecretInfo> AppSecretStore::set(const QString &app, const QString &name, QByteArrayView value)
{
    if (auto ok = checkSecretName(name); !ok)
        return std::unexpected(ok.error());
    if (auto ok = checkSecretValue(name, value); !ok)
        return std::unexpected(ok.error());
    if (auto ok = requireApp(app); !ok)
        return std::unexpected(ok.error());
    auto sealed = m_seal.seal(value, sealContext(app, name));
    if (!sealed)
        return std::unexpected(sealed.error());

    const QString what = u"store "_s + secretPath(app, name);
    auto tx = core::detail::Transaction::begin(m_db, what);
    if (!tx)
        return std::unexpected(tx.error());
    const qint64 now = m_clock.nowMs();
    auto existing = tx->run(u"SELECT created_ms FROM app_secrets WHERE app = ? AND name = ?"_s,
                            {core::detail::text(app), core::detail::text(name)}, what);
    if (!existing)
        return std::unexpected(existing.error());
    AppSecretInfo info{app, name, now, now, true};
    if (existing->next()) {
        info.createdMs = existing->value(0).toLongLong();
        info.created = false;
        existing->finish();
        auto q = tx->run(u"UPDATE app_secrets SET sealed = ?, updated_ms = ? WHERE app = ? AND name = ?"_s,
                         {*sealed, now, core::detail::text(app), core::detail::text(name)}, what);
        if (!q)
            return std::unexpected(q.error());
    } else {
        existing->finish();
        auto count = tx->run(u"SELECT COUNT(*) FROM app_secrets WHERE app = ?"_s, {core::detail::text(app)}, what);
        if (!count)
            return std::unexpected(count.error());
        const int n = count->next() ? count->value(0).toInt() : 0;
        count->finish();
        if (n >= MaxSecretsPerApp)
            return fail(ErrorCode::Invalid,
                        u"app %1 has %2 secrets, the most an app may have"_s.arg(app).arg(MaxSecretsPerApp), u"name"_s,
                        u"remove one with `pando secrets rm %1 NAME`"_s.arg(app));
        auto q =
            tx->run(u"INSERT INTO app_secrets (app, name, sealed, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?)"_s,
                    {core::detail::text(app), core::detail::text(name), *sealed, now, now}, what);
        if (!q)
            return std::unexpected(q.error());
    }
    if (auto committed = tx->commit(); !committed)
        return std::unexpected(committed.error());
    return info;
}

Result<QList<AppSecretInfo>> AppSecretStore::list(const QString &app)
{
    if (auto ok = requireApp(app); !ok)
        return std::unexpected(ok.error());
    auto q = query(m_db, u"SELECT name, created_ms, updated_ms FROM app_secrets WHERE app = ? ORDER BY name"_s,
                   {core::detail::text(app)}, u"list the secrets of app "_s + app);
    if (!q)
        return std::unexpected(q.error());
    QList<AppSecretInfo> list;
    while (q->next())
        list.append(AppSecretInfo{app, q->value(0).toString(), q->value(1).toLongLong(), q->value(2).toLongLong()});
    q->finish();
    return list;
}

Status AppSecretStore::remove(const QString &app, const QString &name)
{
    if (auto ok = checkSecretName(name); !ok)
        return ok;
    if (auto ok = requireApp(app); !ok)
        return ok;
    auto q = query(m_db, u"DELETE FROM app_secrets WHERE app = ? AND name = ?"_s,
                   {core::detail::text(app), core::detail::text(name)}, u"remove "_s + secretPath(app, name));
    if (!q)
        return std::unexpected(q.error());
    if (q->numRowsAffected() == 0)
        return fail(ErrorCode::NotFound, u"app %1 has no secret named %2"_s.arg(app, name), u"name"_s);
    return {};
}

Result<QMap<QString, QByteArray>> AppSecretStore::open(const QString &app)
{
    auto q = query(m_db, u"SELECT name, sealed FROM app_secrets WHERE app = ? ORDER BY name"_s,
                   {core::detail::text(app)}, u"read the secrets of app "_s + app);
    if (!q)
        return std::unexpected(q.error());
    QMap<QString, QByteArray> values;
    while (q->next()) {
        const QString name = q->value(0).toString();
        auto opened = m_seal.open(q->value(1).toString(), sealContext(app, name));
        if (!opened) {
            wipe(values);
            return fail(ErrorCode::Failed,
                        u"%1 cannot be opened: %2"_s.arg(secretPath(app, name), opened.error().message),
                        u"secrets."_s + name, u"set it again with `pando secrets set %1 %2`"_s.arg(app, name));
        }
        values.insert(name, *opened); // implicitly shared, not copied: no second copy to wipe
    }
    q->finish();
    return values;
}

} // namespace pando::core::secrets
