#pragma once
// Puts a pipeline runner into an engine: the task runners (the local Docker engine and the
// host), the built-in resource types, the blob store and workspaces in the data directory, the
// sealed secret store, and the service that schedules and triggers runs. pandod and the
// desktop's in-process session share it.

#include "adapters/api/error.h"
#include "core/engine/engine.h"
#include "core/pipelines/service/localpipelineservice.h"

namespace pando::wiring {

struct PipelineWiringOptions {
    QString dockerSocket; // empty: DOCKER_HOST or /var/run/docker.sock
    core::pipelines::LocalPipelineOptions service;
};

// Creates the service, starts it and installs it in the engine (which then owns it).
Status installPipelines(core::Engine &engine, const PipelineWiringOptions &options = {});

} // namespace pando::wiring
