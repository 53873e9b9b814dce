// A deploy's output after the deploy: read back, compressed once the deploy ended, removed after
// the install's retention (settings deploy_log_days) unless an app still serves that deploy.

#include "core/engine/engineprivate.h"

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {
constexpr int ArchiveBatch = 50; // deploys compressed per sweep, so one sweep stays short
constexpr qint64 DayMs = 24LL * 60 * 60 * 1000;
} // namespace

Result<QList<StepLogLine>> Engine::deployLog(const QString &id, int seq, int afterLine, int limit)
{
    DeployRepository deploys(d->db);
    if (auto record = deploys.find(id); !record)
        return std::unexpected(record.error());
    auto lines = deploys.stepLog(id, seq, afterLine, qBound(1, limit, 5000));
    if (!lines || !lines->isEmpty() || afterLine > 0)
        return lines;
    auto removed = deploys.stepLogRemovedMs(id);
    if (!removed)
        return std::unexpected(removed.error());
    if (*removed == 0)
        return lines;
    auto access = policy::readAppAccess(d->db);
    const int days = access ? access->deployLogDays : 0;
    const QString kept = days == 1  ? u"1 day after it ends"_s
                         : days > 1 ? u"%1 days after it ends"_s.arg(days)
                                    : u"for ever now"_s;
    return fail(ErrorCode::NotFound,
                u"its output was removed on %1 (the install keeps a deploy's output %2)"_s.arg(isoTime(*removed), kept),
                u"deploy "_s + id, u"an administrator keeps it longer with: pando settings set deploy-log-days DAYS"_s);
}

Result<Engine::LogSweep> Engine::sweepDeployLogs()
{
    LogSweep sweep;
    DeployRepository deploys(d->db);
    const qint64 now = d->clock.nowMs();
    // Every deploy that has ended, up to this millisecond.
    auto ended = deploys.outputToArchive(now + 1, ArchiveBatch);
    if (!ended)
        return std::unexpected(ended.error());
    for (const QString &id : std::as_const(*ended)) {
        if (auto archived = deploys.archiveStepLogs(id); !archived)
            return std::unexpected(archived.error());
        ++sweep.archived;
    }
    auto access = policy::readAppAccess(d->db);
    if (!access)
        return std::unexpected(access.error());
    if (access->deployLogDays == 0)
        return sweep;
    auto removed = deploys.pruneStepLogs(now - access->deployLogDays * DayMs, now);
    if (!removed)
        return std::unexpected(removed.error());
    sweep.removed = *removed;
    return sweep;
}

} // namespace pando::core
