#pragma once
// Package pipeline orchestrates a job's plan: get steps fetch resource versions, task steps
// run in a container or on the host, put steps push, and in_parallel/do/try with attempts,
// timeouts and hooks shape them as Concourse users expect. Every step is named by its content
// (merkle): a get or task whose hash already succeeded is not run again, its outputs come back
// from the blob store and the step shows as unchanged ("cached"). Puts always run, and so do
// approve steps: they ask the approval service for sign-off and wait ("waiting") until the
// request is approved (used once, the step succeeds), rejected or expired (the step fails), or
// the run is aborted (the request is withdrawn).
//
// Threading: execute() blocks on the calling (scheduler) thread; in_parallel children run on a
// bounded pool (parallelpool.h), or on their parent's thread when the pool has no thread free.
// Dependencies are borrowed and must be thread-safe.

#include "adapters/api/resourcetype.h"
#include "adapters/api/taskrunner.h"
#include "adapters/api/varsource.h"
#include "core/approval/approvalservice.h"
#include "core/pipelines/blobstore/blobstore.h"
#include "core/pipelines/pipeline/parallelpool.h"
#include "core/pipelines/scheduler/scheduler.h"
#include "core/pipelines/workspace/workspace.h"

#include <functional>
#include <memory>
#include <optional>

namespace pando::core::pipelines {

struct JobRunnerDeps {
    Database &db;
    Clock &clock;
    EventBus &events;
    adapters::TaskRunner &containers; // tasks with an image
    adapters::TaskRunner &host;       // tasks on the host
    BlobStore &blobs;                 // step outputs, by content
    Workspace &workspace;             // per-run artifacts and step directories
    // The built-in resource types (git, time); nullptr for a name it does not know.
    std::function<std::shared_ptr<adapters::ResourceType>(const QString &name)> builtinType;
    // A secret's value (scope: the pipeline, then ""), unsealed; nullopt when there is none.
    std::function<std::optional<QString>(const QString &pipeline, const QString &name)> secret;
    QByteArray secretKey; // keys the digests secrets enter hashes as
    QString cacheRoot;    // task caches, kept between runs
    QString installId;    // labels on task containers
    // Sign-off for approve steps; nullptr: an approve step errors. Its events must go on
    // `events` (the step wakes on them; it also looks every few seconds).
    ApprovalService *approvals = nullptr;
    // Where in_parallel branches run; nullptr: the process-wide pool (ParallelPool::shared()).
    ParallelPool *parallelPool = nullptr;
    // Why the pipeline may not read a secret by that name (an install-wide one not granted to
    // it), or nullopt; may be empty.
    std::function<std::optional<Error>(const QString &pipeline, const QString &name)> secretRefusal;
    // Opens the var sources (var_sources:) of types the template package does not read itself
    // (vault); empty: a run that reads from one errors, saying so.
    adapters::VarSourceOpener openVarSource;
    // Sets pipeline `name` from a set_pipeline step of a run (`runId`) of pipeline `by`: config
    // and vars as `pando pipelines set` takes them. Says what it did ("set pipeline x (version
    // 3)"); the rules of who may set what are the service's. Empty: the step errors.
    std::function<Result<QString>(const QString &by, const QString &name, const QByteArray &config,
                                  const QByteArray &vars, const QString &runId)>
        setPipeline;
};

class JobRunner final : public RunExecutor {
public:
    explicit JobRunner(JobRunnerDeps deps) : m_deps(std::move(deps)) {}
    Result execute(const RunRecord &run, const CancelToken &cancel) override;
    // Withdraws the approvals the run's approve steps were waiting on and marks those steps errored.
    void releaseAbandoned(const RunRecord &run) override;

    // Checks a resource now and records the versions found; returns the newly found ones.
    // Used by triggers, webhooks and a get that has no version yet. The check starts from the
    // newest version recorded, or from `from` when it has fields (fly check-resource --from).
    static pando::Result<QList<adapters::Version>> checkResource(JobRunnerDeps &deps, const QString &pipeline,
                                                                 const QByteArray &configYaml,
                                                                 const QByteArray &varsYaml, const QString &resource,
                                                                 const CancelToken &cancel,
                                                                 const adapters::Version &from = {});

private:
    JobRunnerDeps m_deps;
};

} // namespace pando::core::pipelines
