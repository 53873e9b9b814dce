#pragma once
// The REST handlers of the pipeline runner: pipelines, jobs, runs, their events, webhooks and
// secrets, over the engine's PipelineService. With no service installed every one of them
// answers 503. The route table in handlers.cpp registers them.

#include "routes.h"

#include "adapters/api/error.h"
#include "core/state/pipelinerecords.h"

#include <QJsonObject>

namespace pando::server::pipelineapi {

Reply listPipelines(Call &call);
Reply setPipeline(Call &call);
Reply showPipeline(Call &call);
Reply removePipeline(Call &call);
Reply renamePipeline(Call &call);
Reply pausePipeline(Call &call);
Reply unpausePipeline(Call &call);
Reply archivePipeline(Call &call);
Reply listJobs(Call &call);
Reply pauseJob(Call &call);
Reply unpauseJob(Call &call);
Reply triggerJob(Call &call);
Reply listPipelineRuns(Call &call);
Reply listRuns(Call &call);
Reply showRun(Call &call);
Reply runEvents(Call &call);
Reply abortRun(Call &call);
Reply webhook(Call &call);
Reply setSecret(Call &call);
Reply setSecretAccess(Call &call);
Reply listSecrets(Call &call);
Reply removeSecret(Call &call);
// Host execution: the install's setting and an administrator's mark on a pipeline.
Reply showSettings(Call &call);
Reply updateSettings(Call &call);
Reply setPipelineHostExecution(Call &call);

// {"seq", "time_ms", "step", "type", "data"}: one run event as the API and the follow stream
// show it.
QJsonObject eventJson(const core::RunEventRecord &event);

// The answer when the engine has no pipeline runner.
Error notEnabled();

} // namespace pando::server::pipelineapi
