#pragma once
// The start of a JobRunner test: the pipeline stored as "app", and one run of its job "ship"
// queued by alice and claimed, as the scheduler hands runs to the runner.

#include "core/common/clock.h"
#include "core/state/database.h"
#include "core/state/pipelinerepositories.h"

#include <QtGlobal>

namespace pando::test {

// Host tasks run only where an administrator allowed them: the install's setting and the
// pipeline's mark. Tests of plans run on a fake "host" runner say so explicitly.
inline void allowHostExecution(core::Database &db, const QString &pipeline = QStringLiteral("app"))
{
    if (!core::InstallSettingRepository(db).set(QStringLiteral("pipelines.host_execution"), QStringLiteral("on"),
                                                QStringLiteral("test"), 0) ||
        !core::PipelineRepository(db).setHostExecution(pipeline, true, 0))
        qFatal("allowing host execution failed");
}

inline core::RunRecord queueShipRun(core::Database &db, const core::Clock &clock, const QByteArray &yaml,
                                    const QString &varsYaml = {}, const QString &owner = QStringLiteral("test-owner"))
{
    auto set =
        core::PipelineRepository(db).set(QStringLiteral("app"), QString::fromUtf8(yaml), varsYaml, clock.nowMs());
    if (!set)
        qFatal("storing the pipeline failed: %s", qPrintable(set.error().text()));
    core::RunRecord run;
    run.pipeline = QStringLiteral("app");
    run.job = QStringLiteral("ship");
    run.trigger = QStringLiteral("manual");
    run.actor = QStringLiteral("user:alice");
    run.inputsJson = QStringLiteral("{}");
    run.configVersion = set->configVersion;
    run.createdMs = clock.nowMs();
    core::RunRepository runs(db);
    if (auto queued = runs.enqueue(run); !queued)
        qFatal("queueing failed: %s", qPrintable(queued.error().text()));
    auto claimed = runs.claimNext(QStringLiteral("app"), 0, owner, clock.nowMs());
    if (!claimed || !claimed->has_value())
        qFatal("claiming the run failed");
    return **claimed;
}

} // namespace pando::test
