#pragma once
// The repositories over Database: one per table family. Each call is one statement or one
// transaction; failures come back as Error (a duplicate key is ErrorCode::Conflict, a missing
// row ErrorCode::NotFound, a database that does not answer ErrorCode::Unavailable).

#include "database.h"
#include "records.h"

#include <QList>
#include <QSet>
#include <optional>

namespace pando::core {

class AppRepository {
public:
    explicit AppRepository(Database &db) : m_db(db) {}
    Status create(const AppRecord &app);
    Result<AppRecord> find(const QString &name);
    Result<QList<AppRecord>> list();
    Status setSpec(const QString &name, const QString &specYaml, qint64 nowMs);
    Status setRoutePort(const QString &name, int port, qint64 nowMs);
    // Whose authority the source is read with, and through which connection
    // and who wrote the spec (AppRecord::sourceTrusted, sourceConnection, specWriter).
    Status setSourceReader(const QString &name, bool trusted, const QString &connection, const QString &writer,
                           qint64 nowMs);
    // The apps a user made, whoever owns them now (the member app limit).
    Result<int> countCreatedBy(const QString &userId);
    Status setCurrentDeploy(const QString &name, const QString &deployId, qint64 nowMs);
    // Holds deploy deployId of the app stopped at a person's word (AppRecord::stoppedDeploy);
    // an empty deployId lets it run again.
    Status setStopped(const QString &name, const QString &deployId, const QString &by, qint64 nowMs);
    // Removes the app row; its deploys and steps go with it.
    Status remove(const QString &name);

private:
    Database &m_db;
};

// An image a build made that its result does not keep (adapters::BuildRequest::leftover).
struct BuildCacheRecord {
    QString imageId;
    QString app;
    QString deployId;
    int position = 0; // its order in its build
    qint64 bytes = 0; // what it adds (its own layer)
    qint64 madeMs = 0;
};

// The images builds left (core/deploy/buildcache.h removes them); buildcache.cpp.
class BuildCacheRepository {
public:
    explicit BuildCacheRepository(Database &db) : m_db(db) {}
    // One build's, in one transaction; an image told before keeps its first row.
    Status add(const QList<BuildCacheRecord> &images);
    // app's (every app's when empty), newest first: the order they can be removed in.
    Result<QList<BuildCacheRecord>> list(const QString &app = {});
    Status remove(const QString &imageId);
    // How many images are kept and the bytes they add.
    struct Totals {
        int images = 0;
        qint64 bytes = 0;
    };
    Result<Totals> totals();

private:
    Database &m_db;
};

class DeployRepository {
public:
    explicit DeployRepository(Database &db) : m_db(db) {}
    Status create(const DeployRecord &deploy);
    Result<DeployRecord> find(const QString &id);
    // Newest first.
    Result<QList<DeployRecord>> listForApp(const QString &app, int limit);
    // Deploys whose status is queued or running.
    Result<QList<DeployRecord>> unfinished();
    // Deploys held at their plan boundary until someone approves them, oldest first.
    Result<QList<DeployRecord>> awaitingApproval();
    // Writes every field but id, app and createdMs.
    Status update(const DeployRecord &deploy);

    Status addStep(const StepRecord &step);
    Status updateStep(const StepRecord &step); // by (deployId, seq)
    Result<QList<StepRecord>> steps(const QString &deployId);

    // A step's output: appended in one transaction; read in order, from after `afterLine` of
    // step `seq` (-1: every step's, afterLine unused), at most limit lines.
    Status appendStepLog(const QString &deployId, const QList<StepLogLine> &lines);
    Result<QList<StepLogLine>> stepLog(const QString &deployId, int seq, int afterLine, int limit);

    // Finished deploys' output (deploylogs.cpp): the deploys that ended before a moment and
    // still have their lines as rows, oldest first; those lines put into one compressed row per
    // step (stepLog reads either); the output of deploys that ended before a moment removed,
    // but for those an app serves now (the number of deploys whose output went); when a deploy's
    // output was removed (0: it was not).
    Result<QStringList> outputToArchive(qint64 finishedBeforeMs, int limit);
    Status archiveStepLogs(const QString &deployId);
    Result<int> pruneStepLogs(qint64 finishedBeforeMs, qint64 nowMs);
    Result<qint64> stepLogRemovedMs(const QString &deployId);
    // What the store holds of a deploy's output: lines, their text's bytes, and the bytes stored
    // for them (the text's while they are rows, the compressed data's once archived).
    struct OutputSize {
        qint64 lines = 0;
        qint64 rawBytes = 0;
        qint64 storedBytes = 0;
    };
    Result<OutputSize> outputSize(const QString &deployId);

private:
    Database &m_db;
};

class JobRepository {
public:
    explicit JobRepository(Database &db) : m_db(db) {}
    Result<qint64> enqueue(const QString &kind, const QString &key, const QString &payload, qint64 nowMs);
    // Atomically claims the oldest queued job whose key no running job holds; nullopt when none.
    Result<std::optional<JobRecord>> claimNext(const QString &owner, qint64 nowMs);
    Status finish(qint64 id, bool ok, const QString &error, qint64 nowMs);
    // Jobs left running by a process that is gone: put back to queued (attempts incremented).
    Result<QList<JobRecord>> requeueAbandoned(const QString &currentOwner, qint64 nowMs);
    Result<JobRecord> find(qint64 id);

private:
    Database &m_db;
};

class AuditRepository {
public:
    explicit AuditRepository(Database &db) : m_db(db) {}
    // Appends one line in its own transaction, filling seq, prevHash and hash; returns it once
    // it is committed.
    Result<AuditRecord> append(AuditRecord line);
    // Appends lines in order in one transaction (group commit); returns them with seq and
    // hashes filled once committed.
    Result<QList<AuditRecord>> appendBatch(QList<AuditRecord> lines);
    // The last line's seq and hash (0 and "" for an empty log): where the next line links on.
    struct Head {
        qint64 seq = 0;
        QString hash;
    };
    Result<Head> head();
    // Appends lines after `after` in one statement (committed when it returns), without reading
    // the log first: Conflict when `after` is no longer the last line (another writer appended),
    // and then nothing was written. At most kMaxAppendAfter lines.
    static constexpr int kMaxAppendAfter = 64;
    Result<QList<AuditRecord>> appendAfter(const Head &after, QList<AuditRecord> lines);
    struct Filter {
        QString actor, action, object;
        qint64 sinceMs = 0, untilMs = 0;
        int limit = 100;
    };
    // Newest first.
    Result<QList<AuditRecord>> list(const Filter &filter);
    // The seq of the first line whose hash or link does not match; nullopt when the chain holds.
    Result<std::optional<qint64>> verify();
    static QString hashOf(const AuditRecord &line); // hex SHA-256 over prevHash and the fields

private:
    Database &m_db;
};

class TokenRepository {
public:
    explicit TokenRepository(Database &db) : m_db(db) {}
    Status create(const TokenRecord &token);
    // Takes back a token create() just made, before anyone had its secret.
    Status remove(const QString &id);
    // The valid (not revoked) token with this digest.
    Result<TokenRecord> findByDigest(const QString &digest);
    Result<int> count();

private:
    Database &m_db;
};

} // namespace pando::core
