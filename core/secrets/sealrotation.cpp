#include "core/secrets/sealrotation.h"

#include "core/pipelines/sealbox/sealbox.h"
#include "core/secrets/appsecrets.h"
#include "core/state/sql.h"

#include <QFile>
#include <QFileInfo>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::core::secrets {

namespace {

using pipelines::SealBox;
using pipelines::SealKey;

struct Row {
    QString owner; // scope or app
    QString name;
    QString sealed;
};

Status syncDirectory(const QString &dir)
{
    const QByteArray path = QFile::encodeName(dir);
    const int fd = ::open(path.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fail(ErrorCode::Failed, u"cannot open the directory: %1"_s.arg(QString::fromLocal8Bit(strerror(errno))),
                    dir);
    const int rc = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (rc != 0)
        return fail(ErrorCode::Failed, u"cannot sync the directory: %1"_s.arg(QString::fromLocal8Bit(strerror(error))),
                    dir);
    return {};
}

Result<QList<Row>> readRows(core::detail::Transaction &tx, const QString &sql, const QString &what)
{
    auto q = tx.run(sql, {}, what);
    if (!q)
        return std::unexpected(q.error());
    QList<Row> rows;
    while (q->next())
        rows.append(Row{q->value(0).toString(), q->value(1).toString(), q->value(2).toString()});
    q->finish();
    return rows;
}

// Re-seals rows with the newest key of box; returns how many it changed.
Result<int> resealRows(core::detail::Transaction &tx, const SealBox &box, const QList<Row> &rows,
                       const std::function<QByteArray(const Row &)> &context, const QString &updateSql,
                       const QString &kind, QStringList &unopenable)
{
    int changed = 0;
    for (const Row &row : rows) {
        if (!box.needsReseal(row.sealed))
            continue; // sealed with the new key already (a resumed rotation)
        auto resealed = box.reseal(row.sealed, context(row));
        if (!resealed) {
            unopenable << u"%1/%2/%3"_s.arg(kind, row.owner.isEmpty() ? u"-"_s : row.owner, row.name);
            continue;
        }
        auto q = tx.run(updateSql, {*resealed, core::detail::text(row.owner), core::detail::text(row.name)},
                        u"re-seal %1 secret %2"_s.arg(kind, row.name));
        if (!q)
            return std::unexpected(q.error());
        ++changed;
    }
    return changed;
}

} // namespace

QString sealKeyPath(const QString &dataDir)
{
    return dataDir + u"/seal.key"_s;
}

QString nextSealKeyPath(const QString &dataDir)
{
    return dataDir + u"/seal.key.next"_s;
}

Result<SealKey> loadSealKey(const QString &dataDir)
{
    if (QFileInfo::exists(nextSealKeyPath(dataDir)))
        return fail(ErrorCode::Conflict, u"a seal key rotation was interrupted"_s, nextSealKeyPath(dataDir),
                    u"run `pandod --rotate-secrets-key` to finish it"_s);
    return pipelines::keyfile::loadOrCreate(sealKeyPath(dataDir));
}

Result<RotationReport> rotateSealKey(Database &db, const QString &dataDir)
{
    const QString keyPath = sealKeyPath(dataDir);
    const QString nextPath = nextSealKeyPath(dataDir);
    auto oldKey = pipelines::keyfile::load(keyPath);
    if (!oldKey)
        return std::unexpected(oldKey.error());
    RotationReport report;
    report.resumed = QFileInfo::exists(nextPath);
    auto newKey = report.resumed ? pipelines::keyfile::load(nextPath) : pipelines::keyfile::create(nextPath);
    if (!newKey)
        return std::unexpected(newKey.error());
    report.oldKeyId = oldKey->id();
    report.newKeyId = newKey->id();
    const SealBox box(QList<SealKey>{*oldKey, *newKey});

    {
        auto tx = core::detail::Transaction::begin(db, u"rotate the seal key"_s);
        if (!tx)
            return std::unexpected(tx.error());
        // Every sealed column of the install, with the associated data its values were sealed
        // under. A table a newer feature adds but this database lacks is passed over.
        struct Column {
            QString table, owner, name, sealed, kind;
            std::function<QByteArray(const Row &)> context;
            int *count;
        };
        const QList<Column> columns{
            {u"secrets"_s, u"scope"_s, u"name"_s, u"sealed"_s, u"pipeline"_s,
             [](const Row &r) {
                 return SealBox::context({u"secret"_s, r.owner, r.name});
             },
             &report.pipelineSecrets},
            {u"app_secrets"_s, u"app"_s, u"name"_s, u"sealed"_s, u"app"_s,
             [](const Row &r) { return sealContext(r.owner, r.name); }, &report.appSecrets},
            {u"app_services"_s, u"app"_s, u"slot"_s, u"sealed_password"_s, u"service"_s,
             [](const Row &r) {
                 return SealBox::context({u"service"_s, r.owner, r.name});
             },
             &report.serviceCredentials},
            // Keyed by name alone; kind stands in as the second key column the update needs.
            {u"source_connections"_s, u"kind"_s, u"name"_s, u"sealed"_s, u"connection"_s,
             [](const Row &r) {
                 return SealBox::context({u"source-connection"_s, r.name});
             },
             &report.connectionCredentials},
            // Keyed by app alone, named twice for the update's two key columns.
            {u"app_hooks"_s, u"app"_s, u"app"_s, u"sealed"_s, u"hook"_s,
             [](const Row &r) {
                 return SealBox::context({u"app-hook"_s, r.owner});
             },
             &report.hookSecrets},
        };
        const QStringList tables = tx->db().tables();
        for (const Column &c : columns) {
            if (!tables.contains(c.table))
                continue;
            auto rows = readRows(
                *tx,
                u"SELECT %1, %2, %3 FROM %4 WHERE %3 <> '' ORDER BY %1, %2"_s.arg(c.owner, c.name, c.sealed, c.table),
                u"read "_s + c.table);
            if (!rows)
                return std::unexpected(rows.error());
            auto changed =
                resealRows(*tx, box, *rows, c.context,
                           u"UPDATE %1 SET %2 = ? WHERE %3 = ? AND %4 = ?"_s.arg(c.table, c.sealed, c.owner, c.name),
                           c.kind, report.unopenable);
            if (!changed)
                return std::unexpected(changed.error());
            *c.count = *changed;
        }
        if (auto committed = tx->commit(); !committed)
            return std::unexpected(committed.error());
    }

    // The database now needs the new key: put it where the old one was, in one step.
    if (::rename(QFile::encodeName(nextPath).constData(), QFile::encodeName(keyPath).constData()) != 0)
        return fail(ErrorCode::Failed,
                    u"cannot replace the key file: %1"_s.arg(QString::fromLocal8Bit(strerror(errno))), keyPath,
                    u"the database is already sealed with %1; run the rotation again to finish"_s.arg(nextPath));
    if (auto synced = syncDirectory(dataDir); !synced)
        return std::unexpected(synced.error());
    return report;
}

Result<std::optional<RotationReport>> finishInterruptedRotation(Database &db, const QString &dataDir)
{
    if (!QFileInfo::exists(nextSealKeyPath(dataDir)))
        return std::optional<RotationReport>{};
    auto report = rotateSealKey(db, dataDir);
    if (!report)
        return std::unexpected(report.error());
    return std::optional<RotationReport>{*report};
}

} // namespace pando::core::secrets
