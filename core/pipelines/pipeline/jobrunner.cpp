#include "jobrunner.h"

#include "core/pipelines/config/nodereader.h"
#include "core/pipelines/pipeline/execution.h"

namespace pando::core::pipelines {

namespace detail {

Result<QList<adapters::Version>> checkWithin(adapters::ResourceType &type, const Resource &resource,
                                             const adapters::Version &from, const CancelToken &cancel,
                                             const adapters::LogSink &log)
{
    const LinkedCancel deadline(cancel, resource.checkTimeoutMs);
    auto found = type.check(resource.source, from, deadline.token(), log);
    if (deadline.timedOut())
        return fail(ErrorCode::Timeout,
                    QStringLiteral("the check of %1 ran longer than its check_timeout (%2 s) and was stopped")
                        .arg(resource.name)
                        .arg(resource.checkTimeoutMs / 1000),
                    resource.path + QStringLiteral(".check_timeout"),
                    QStringLiteral("raise check_timeout, or look at why the check hangs (pando resources check)"));
    return found;
}

QString versionJson(const adapters::Version &version)
{
    return QString::fromUtf8(canonicalJson(QJsonValue(versionToJson(version))));
}

QByteArray Execution::hashable(const QJsonObject &config) const
{
    QByteArray bytes = canonicalJson(config);
    for (const QString &value : m_secretValues) {
        if (value.isEmpty())
            continue;
        QByteArray escaped = canonicalJson(QJsonValue(value));
        escaped = escaped.mid(1, escaped.size() - 2); // without the quotes
        bytes.replace(escaped, QByteArray("((secret:" + secretDigest(m_deps.secretKey, value).toLatin1() + "))"));
    }
    return bytes;
}

adapters::BuildMetadata Execution::buildMetadata(const Resource &resource) const
{
    // Pando has no teams: Concourse's default team's name, which resources print as it is.
    adapters::BuildMetadata build{{QStringLiteral("BUILD_ID"), m_run.id},
                                  {QStringLiteral("BUILD_NAME"), QString::number(m_run.number)},
                                  {QStringLiteral("BUILD_JOB_NAME"), m_run.job},
                                  {QStringLiteral("BUILD_PIPELINE_NAME"), m_run.pipeline},
                                  {QStringLiteral("BUILD_TEAM_NAME"), QStringLiteral("main")}};
    // Who started the run by hand; a run its resources started has nobody to name.
    if (resource.exposeBuildCreatedBy && m_run.trigger == QLatin1String("manual") && !m_run.actor.isEmpty())
        build.insert(QStringLiteral("BUILD_CREATED_BY"), m_run.actor);
    return build;
}

QString Execution::getScope(const Resource &resource) const
{
    const ResourceType *declared = m_pipeline.resourceType(resource.type);
    if (!declared)
        return QStringLiteral("builtin:") + resource.type; // Pando's own code: content alone decides
    // A type the pipeline declares is that pipeline's code (a `git` of its own, say): its
    // entries are the pipeline's, and change with the definition.
    const QString digest = QString::fromLatin1(
        QCryptographicHash::hash(canonicalJson(toJson(*declared)), QCryptographicHash::Sha256).toHex());
    if (declared->kind == ResourceType::Kind::BuiltIn)
        return QStringLiteral("builtin:%1:%2").arg(declared->type, digest);
    return QStringLiteral("pipeline:%1:%2").arg(m_run.pipeline, digest);
}

RunStepRecord Execution::begin(const Step &step, const QString &parentId, int attempt)
{
    RunStepRecord rec;
    rec.runId = m_run.id;
    rec.stepId = step.path;
    rec.parentId = parentId;
    rec.seq = m_log.nextSeq();
    rec.name = step.name.isEmpty() ? stepKindName(step.kind) : step.name;
    rec.kind = stepKindName(step.kind);
    rec.status = RunStepStatus::Running;
    rec.attempt = step.attempts > 1 ? attempt : 0;
    rec.startedMs = m_log.nowMs();
    m_log.step(rec);
    return rec;
}

Outcome Execution::finish(RunStepRecord &rec, Outcome outcome, const QString &error)
{
    if (rec.status != RunStepStatus::Cached)
        rec.status = stepStatusOf(outcome);
    rec.error = maskText(m_log.redactor(), error);
    rec.finishedMs = m_log.nowMs();
    m_log.step(rec);
    if (outcome == Outcome::Errored && !error.isEmpty()) {
        QMutexLocker lock(&m_mutex);
        if (m_firstError.isEmpty())
            m_firstError = QStringLiteral("%1: %2").arg(rec.name, rec.error);
    }
    return outcome;
}

Outcome Execution::errored(RunStepRecord &rec, const Error &error)
{
    return finishOnError(rec, outcomeOfError(error), error);
}

Outcome Execution::finishOnError(RunStepRecord &rec, Outcome outcome, const Error &error)
{
    if (outcome == Outcome::Errored && isInfrastructureError(error)) {
        QMutexLocker lock(&m_mutex);
        m_infrastructureError = true;
    }
    return finish(rec, outcome, error.text());
}

QString Execution::secretsMarker() const
{
    // Rotating a secret changes the hashes of the steps: the marker lists each used secret's
    // keyed digest (never the value).
    QStringList digests;
    for (const QString &value : m_secretValues)
        digests << secretDigest(m_deps.secretKey, value);
    digests.sort();
    return digests.join(QLatin1Char(','));
}

Outcome Execution::runPlan(const std::vector<Step> &plan, const QString &parentId, const CancelToken &cancel)
{
    for (const Step &step : plan) {
        if (cancel.isCancelled())
            return Outcome::Aborted;
        const Outcome outcome = runStep(step, parentId, cancel);
        if (outcome != Outcome::Succeeded)
            return outcome;
    }
    return Outcome::Succeeded;
}

Outcome Execution::runHooks(const Hooks &hooks, Outcome outcome, const QString &parentId, const CancelToken &cancel)
{
    Outcome result = outcome;
    for (Hook hook : hooksFor(outcome)) {
        StepPtr step;
        switch (hook) {
        case Hook::OnSuccess:
            step = hooks.onSuccess;
            break;
        case Hook::OnFailure:
            step = hooks.onFailure;
            break;
        case Hook::OnError:
            step = hooks.onError;
            break;
        case Hook::OnAbort:
            step = hooks.onAbort;
            break;
        case Hook::Ensure:
            step = hooks.ensure;
            break;
        }
        if (!step)
            continue;
        // on_abort and ensure must still run while the run is being aborted.
        const bool afterAbort = hook == Hook::OnAbort || hook == Hook::Ensure;
        const Outcome hookOutcome = runStep(*step, parentId, afterAbort ? CancelToken() : cancel);
        result = combineWithHook(result, hookOutcome);
    }
    return result;
}

Outcome Execution::runStep(const Step &step, const QString &parentId, const CancelToken &cancel)
{
    if (!step.across.empty())
        return runAcross(step, parentId, cancel); // each combination's step has its own modifiers
    Outcome outcome = Outcome::Errored;
    for (int attempt = 1; attempt <= qMax(1, step.attempts); ++attempt) {
        bool timedOut = false;
        outcome = runOnce(step, parentId, cancel, attempt, &timedOut);
        if (outcome == Outcome::Succeeded || outcome == Outcome::Aborted || cancel.isCancelled())
            break;
    }
    if (cancel.isCancelled() && outcome != Outcome::Succeeded)
        outcome = Outcome::Aborted;
    if (!step.hooks.isEmpty())
        outcome = runHooks(step.hooks, outcome, step.path, cancel);
    return outcome;
}

Outcome Execution::runOnce(const Step &asWritten, const QString &parentId, const CancelToken &cancel, int attempt,
                           bool *timedOut)
{
    // A step that uses the run's local vars is read again with their values now.
    std::optional<Step> filled;
    if (asWritten.written) {
        auto read = withLocalVars(asWritten);
        if (!read) {
            RunStepRecord rec = begin(asWritten, parentId, attempt);
            return errored(rec, read.error());
        }
        filled = std::move(*read);
    }
    const Step &step = filled ? *filled : asWritten;
    LinkedCancel linked(cancel, step.timeoutMs);
    const CancelToken &token = linked.token();
    auto classify = [&](Outcome o) {
        if (linked.timedOut() && !cancel.isCancelled()) {
            *timedOut = true;
            return Outcome::Errored;
        }
        if (cancel.isCancelled() && o != Outcome::Succeeded)
            return Outcome::Aborted;
        return o;
    };

    switch (step.kind) {
    case StepKind::Do:
    case StepKind::Try: {
        RunStepRecord rec = begin(step, parentId, attempt);
        Outcome o = classify(runPlan(step.steps, step.path, token));
        if (step.kind == StepKind::Try)
            o = combineTry(o);
        return finish(rec, o, *timedOut ? QStringLiteral("timed out after %1 ms").arg(step.timeoutMs) : QString());
    }
    case StepKind::InParallel: {
        RunStepRecord rec = begin(step, parentId, attempt);
        const Outcome o = classify(runParallel(step, token));
        return finish(rec, o, *timedOut ? QStringLiteral("timed out after %1 ms").arg(step.timeoutMs) : QString());
    }
    case StepKind::Get: {
        RunStepRecord rec = begin(step, parentId, attempt);
        const Outcome o = runGet(step, rec, linked);
        if (rec.status != RunStepStatus::Running && rec.status != RunStepStatus::Cached)
            return o; // finished inside with its error
        return finish(rec, classify(o), *timedOut ? QStringLiteral("timed out") : QString());
    }
    case StepKind::Put: {
        RunStepRecord rec = begin(step, parentId, attempt);
        const Outcome o = runPut(step, rec, linked);
        if (rec.status != RunStepStatus::Running)
            return o;
        return finish(rec, classify(o), *timedOut ? QStringLiteral("timed out") : QString());
    }
    case StepKind::LoadVar: {
        RunStepRecord rec = begin(step, parentId, attempt);
        return runLoadVar(step, rec);
    }
    case StepKind::SetPipeline: {
        RunStepRecord rec = begin(step, parentId, attempt);
        return runSetPipeline(step, rec);
    }
    case StepKind::Approve: {
        // No LinkedCancel timeout applies (the parser leaves timeoutMs 0): the request's own
        // expiry ends the wait, as a failure rather than an error.
        RunStepRecord rec = begin(step, parentId, attempt);
        return runApprove(step, rec, token);
    }
    case StepKind::Task: {
        RunStepRecord rec = begin(step, parentId, attempt);
        const Outcome o = runTask(step, rec, linked, step.timeoutMs);
        if (rec.status != RunStepStatus::Running && rec.status != RunStepStatus::Cached)
            return o;
        return finish(rec, classify(o),
                      *timedOut ? QStringLiteral("timed out after %1 ms").arg(step.timeoutMs) : QString());
    }
    }
    return Outcome::Errored;
}

Outcome Execution::runParallel(const Step &step, const CancelToken &cancel)
{
    LinkedCancel group(cancel, 0);
    // One slot per branch, written by that branch only.
    std::vector<Outcome> outcomes(step.steps.size(), Outcome::Succeeded);
    std::atomic_bool failedFast = false;
    {
        ParallelGroup branches(m_deps.parallelPool != nullptr ? *m_deps.parallelPool : ParallelPool::shared(),
                               step.parallelLimit);
        for (size_t i = 0; i < step.steps.size(); ++i) {
            branches.run([this, &step, &outcomes, &group, &failedFast, i] {
                outcomes[i] = runStep(step.steps[i], step.path, group.token());
                if (step.failFast && outcomes[i] != Outcome::Succeeded && outcomes[i] != Outcome::Aborted) {
                    failedFast = true;
                    group.cancelAll();
                }
            });
        }
    } // every branch has ended
    QList<Outcome> combined;
    for (Outcome o : outcomes) {
        // Siblings fail_fast cut short show as aborted, but the step failed: its hooks are
        // on_failure's, not on_abort's (as in Concourse). A run's own abort stays an abort.
        if (failedFast && !cancel.isCancelled() && o == Outcome::Aborted)
            continue;
        combined << o;
    }
    return combineParallel(combined);
}

Result<adapters::Version> Execution::chooseVersion(const Step &step, const Resource &resource,
                                                   const std::shared_ptr<adapters::ResourceType> &type,
                                                   const CancelToken &cancel)
{
    // Chosen when the run was queued (a trigger, or passed: constraints).
    if (m_inputs.contains(resource.name))
        return versionFromJson(m_inputs.value(resource.name), resource.name);
    if (step.get.version == GetStep::Version::Pinned)
        return step.get.pinned;
    if (resource.pinnedVersion)
        return *resource.pinnedVersion;
    ResourceVersionRepository versions(m_deps.db);
    // Pinned through the API (pando resources pin): that version, whatever checks found since.
    auto pin = versions.pinned(m_run.pipeline, resource.name);
    if (!pin)
        return std::unexpected(pin.error());
    if (*pin) {
        for (const QString &job : step.get.passed) {
            auto passed = RunRepository(m_deps.db).passedVersions(m_run.pipeline, job, resource.name, 1000);
            if (!passed)
                return std::unexpected(passed.error());
            if (!passed->contains((*pin)->versionJson))
                return fail(ErrorCode::Failed,
                            QStringLiteral("the pinned version %1 of %2 has not passed %3 yet")
                                .arg((*pin)->versionJson, resource.name, job),
                            step.path, QStringLiteral("run %1 with it first, or unpin %2").arg(job, resource.name));
        }
        return versionFromJson(QJsonDocument::fromJson((*pin)->versionJson.toUtf8()).object(), resource.name);
    }
    if (!step.get.passed.isEmpty()) {
        // The newest version that went through every job named in passed:.
        RunRepository runs(m_deps.db);
        std::optional<QSet<QString>> common;
        for (const QString &job : step.get.passed) {
            auto passed = runs.passedVersions(m_run.pipeline, job, resource.name, 100);
            if (!passed)
                return std::unexpected(passed.error());
            const QSet<QString> set(passed->cbegin(), passed->cend());
            common = common ? common->intersect(set) : set;
        }
        auto known = versions.list(m_run.pipeline, resource.name, 1000);
        if (!known)
            return std::unexpected(known.error());
        for (const ResourceVersionRecord &v : std::as_const(*known))
            if (common && common->contains(v.versionJson))
                return versionFromJson(QJsonDocument::fromJson(v.versionJson.toUtf8()).object(), resource.name);
        return fail(ErrorCode::Failed,
                    QStringLiteral("no version of %1 has passed %2 yet")
                        .arg(resource.name, step.get.passed.join(QStringLiteral(", "))),
                    step.path, QStringLiteral("run the jobs it must pass first"));
    }
    auto latest = versions.latest(m_run.pipeline, resource.name);
    if (!latest)
        return std::unexpected(latest.error());
    if (*latest)
        return versionFromJson(QJsonDocument::fromJson((*latest)->versionJson.toUtf8()).object(), resource.name);
    // Never checked: check now.
    auto found = checkWithin(*type, resource, {}, cancel, sinkFor(step.path));
    if (!found)
        return std::unexpected(found.error());
    if (found->isEmpty())
        return fail(ErrorCode::Failed, QStringLiteral("resource %1 has no versions").arg(resource.name), step.path);
    QList<QPair<QString, QString>> rows;
    for (const adapters::Version &v : std::as_const(*found))
        rows.append({versionJson(v), QString()});
    if (auto added = versions.add(m_run.pipeline, resource.name, rows, m_log.nowMs()); !added)
        m_log.note(step.path,
                   QStringLiteral("recording the versions found failed (the next check finds them again): ") +
                       added.error().text());
    return found->last();
}

Outcome Execution::runGet(const Step &step, RunStepRecord &rec, const LinkedCancel &link)
{
    const CancelToken &cancel = link.token();
    const Resource *resource = m_pipeline.resource(step.get.resource);
    if (!resource)
        return errored(
            rec, Error{ErrorCode::Invalid, QStringLiteral("unknown resource %1").arg(step.get.resource), step.path});
    auto type = m_types.typeFor(resource->type);
    if (!type)
        return errored(rec, type.error());
    auto version = chooseVersion(step, *resource, *type, cancel);
    if (!version)
        return finishOnError(rec, outcomeOfError(version.error(), why(link)), version.error());
    // What passed: constraints of later jobs go by; a run whose input is not recorded would pass
    // nothing on, so the get errors instead.
    if (auto recorded = RunRepository(m_deps.db).recordInput(m_run.id, resource->name, versionJson(*version));
        !recorded)
        return errored(rec, recorded.error());
    {
        QMutexLocker lock(&m_mutex);
        m_versions.insert(resource->name, versionToJson(*version));
    }
    return fetch(step, step.artifact(), *version, step.get.params, rec, link, true);
}

Outcome Execution::fetch(const Step &step, const QString &artifact, const adapters::Version &version,
                         const QJsonObject &params, RunStepRecord &rec, const LinkedCancel &link, bool useCache)
{
    const CancelToken &cancel = link.token();
    const Resource *resource = m_pipeline.resource(step.kind == StepKind::Put ? step.put.resource : step.get.resource);
    auto type = m_types.typeFor(resource->type);
    if (!type)
        return errored(rec, type.error());
    StepContent content;
    content.kind = QStringLiteral("get");
    content.canonicalConfig = hashable(QJsonObject{{QStringLiteral("type"), resource->type},
                                                   {QStringLiteral("source"), resource->source},
                                                   {QStringLiteral("params"), params}});
    content.extra = versionJson(version) + QLatin1Char('|') + secretsMarker();
    content.scope = getScope(*resource);
    rec.hash = stepHash(content);
    StepCacheRepository cache(m_deps.db);
    m_log.note(step.path, QStringLiteral("fetching %1 at %2").arg(resource->name, versionKey(version)));

    if (useCache && !m_run.force) {
        auto hit = cache.find(rec.hash);
        if (hit && *hit) {
            const QJsonObject out = QJsonDocument::fromJson((*hit)->outputsJson.toUtf8())
                                        .object()
                                        .value(QStringLiteral("artifact"))
                                        .toObject();
            auto dir = m_deps.workspace.createArtifact(m_run.id, artifact);
            if (dir && m_deps.blobs.restoreTree(out.value(QStringLiteral("blob")).toString(), *dir, {}, cancel)) {
                setArtifact(artifact, out.value(QStringLiteral("digest")).toString());
                rec.status = RunStepStatus::Cached;
                m_log.note(step.path, QStringLiteral("unchanged since run %1: restored").arg((*hit)->runId));
                return finish(rec, Outcome::Succeeded);
            }
            // A cache entry whose blob is gone is forgotten and the step runs.
            forgetCached(rec.hash);
        }
    }
    auto dir = m_deps.workspace.createArtifact(m_run.id, artifact);
    if (!dir)
        return errored(rec, dir.error());
    auto fetched =
        (*type)->in(resource->source, version, params, *dir, buildMetadata(*resource), cancel, sinkFor(step.path));
    if (!fetched)
        return finishOnError(rec, outcomeOfError(fetched.error(), why(link)), fetched.error());
    for (const auto &[name, value] : std::as_const(fetched->metadata))
        m_log.note(step.path, QStringLiteral("%1: %2").arg(name, value));
    auto digest = treeDigest(*dir, cancel);
    if (!digest)
        return errored(rec, digest.error());
    setArtifact(artifact, *digest);
    if (auto blob = m_deps.blobs.storeTree(*dir, cancel)) {
        cacheOutputs(step, rec,
                     QJsonObject{{QStringLiteral("artifact"),
                                  QJsonObject{{QStringLiteral("blob"), *blob}, {QStringLiteral("digest"), *digest}}}});
    }
    return Outcome::Succeeded;
}

Outcome Execution::runPut(const Step &step, RunStepRecord &rec, const LinkedCancel &link)
{
    const CancelToken &cancel = link.token();
    const Resource *resource = m_pipeline.resource(step.put.resource);
    if (!resource)
        return errored(
            rec, Error{ErrorCode::Invalid, QStringLiteral("unknown resource %1").arg(step.put.resource), step.path});
    auto type = m_types.typeFor(resource->type);
    if (!type)
        return errored(rec, type.error());
    // The put sees the run's artifacts as subdirectories of its work dir.
    StepLayout layout;
    QStringList names;
    {
        QMutexLocker lock(&m_mutex);
        names = m_digests.keys();
    }
    if (step.put.inputs == PutStep::Inputs::List)
        names = step.put.inputList;
    for (const QString &name : std::as_const(names))
        layout.inputs.append(WorkspaceInput{name, name, false});
    const QString stepKey = QStringLiteral("s%1").arg(rec.seq);
    auto dirs = m_deps.workspace.createStep(m_run.id, stepKey, layout);
    if (!dirs)
        return errored(rec, dirs.error());
    auto pushed = (*type)->out(resource->source, step.put.params, dirs->dir, buildMetadata(*resource), cancel,
                               sinkFor(step.path));
    removeStepDir(stepKey);
    if (!pushed)
        return finishOnError(rec, outcomeOfError(pushed.error(), why(link)), pushed.error());
    if (auto added = ResourceVersionRepository(m_deps.db).add(
            m_run.pipeline, resource->name, {{versionJson(pushed->version), QString()}}, m_log.nowMs());
        !added)
        m_log.note(step.path, QStringLiteral("recording the pushed version failed (the next check finds it): ") +
                                  added.error().text());
    // As in Concourse, what a job's put made has passed the job: later jobs' passed: take it.
    if (auto recorded = RunRepository(m_deps.db).recordOutput(m_run.id, resource->name, versionJson(pushed->version));
        !recorded)
        return errored(rec, recorded.error());
    m_log.note(step.path, QStringLiteral("pushed %1 as %2").arg(resource->name, versionKey(pushed->version)));
    if (step.put.noGet)
        return Outcome::Succeeded;
    return fetch(step, step.artifact(), pushed->version, step.put.getParams, rec, link, true);
}

} // namespace detail

namespace {

// Parses the pipeline with secrets resolved, remembering every value substituted (a field of a
// secret holding a mapping too) for masking, also when the parse then fails (its error may quote
// what a placeholder expanded to).
Result<Pipeline> parseForRun(JobRunnerDeps &deps, const QString &pipelineName, const QByteArray &configYaml,
                             const QByteArray &varsYaml, QStringList *secretValues, const CancelToken &cancel)
{
    InterpolationSources sources;
    if (!varsYaml.trimmed().isEmpty()) {
        auto vars = readVarsFile(varsYaml);
        if (!vars)
            return std::unexpected(vars.error());
        sources.vars = *vars;
    }
    sources.secrets = [&deps, pipelineName](const QString &name) {
        return deps.secret(pipelineName, name);
    };
    sources.substituted = [secretValues](const QString &value) {
        if (!value.isEmpty() && !secretValues->contains(value))
            secretValues->append(value);
    };
    if (deps.secretRefusal)
        sources.secretRefusal = [&deps, pipelineName](const QString &name) {
            return deps.secretRefusal(pipelineName, name);
        };
    // Each var source is opened (a vault one logs in) when the first var is read from it, once
    // for this reading of the pipeline.
    auto opened = std::make_shared<QHash<QString, std::shared_ptr<adapters::VarSource>>>();
    sources.readVarSource = [&deps, pipelineName, opened,
                             &cancel](const VarSourceConfig &source,
                                      const QString &path) -> Result<std::optional<core::detail::DocNode>> {
        std::shared_ptr<adapters::VarSource> reader = opened->value(source.name);
        if (!reader) {
            if (!deps.openVarSource)
                return fail(ErrorCode::Invalid,
                            QStringLiteral("this install cannot read var sources of type %1").arg(source.type));
            auto config = internal::jsonObject(source.config, source.path + QStringLiteral(".config"));
            if (!config)
                return std::unexpected(config.error());
            auto made = deps.openVarSource(source.type, *config, pipelineName);
            if (!made)
                return std::unexpected(made.error());
            reader = std::move(*made);
            opened->insert(source.name, reader);
        }
        auto value = reader->read(path, cancel);
        if (!value)
            return std::unexpected(value.error());
        if (!*value)
            return std::optional<core::detail::DocNode>();
        // Back into the reader's value tree through JSON: a string stays a string.
        auto tree = core::detail::readJson(QJsonDocument(QJsonArray{**value}).toJson(QJsonDocument::Compact));
        if (!tree || tree->items.size() != 1)
            return fail(ErrorCode::Internal, QStringLiteral("the var source's answer could not be read"));
        return std::optional<core::detail::DocNode>(tree->items.front());
    };
    return parsePipeline(configYaml, sources);
}

} // namespace

using detail::automationFor;
using detail::Execution;
using detail::versionJson;

RunExecutor::Result JobRunner::execute(const RunRecord &run, const CancelToken &cancel)
{
    auto record = PipelineRepository(m_deps.db).find(run.pipeline);
    if (!record)
        return {Outcome::Errored, record.error().text(), isInfrastructureError(record.error())};
    QStringList secretValues;
    auto pipeline = parseForRun(m_deps, run.pipeline, record->configYaml.toUtf8(), record->varsYaml.toUtf8(),
                                &secretValues, cancel);
    if (!pipeline)
        return {Outcome::Errored, QStringLiteral("the pipeline does not parse: ") +
                                      maskText(makeRedactor(secretValues), pipeline.error().text())};
    const Job *job = pipeline->job(run.job);
    if (!job)
        return {Outcome::Errored, QStringLiteral("job %1 is no longer in pipeline %2").arg(run.job, run.pipeline)};

    auto hostPolicy = hostPolicyFor(m_deps.db, run.pipeline);
    if (!hostPolicy)
        return {Outcome::Errored, hostPolicy.error().text(), true};
    RunLog log(m_deps.db, m_deps.clock, m_deps.events, run, makeRedactor(secretValues));
    Execution execution(m_deps, run, *pipeline, secretValues, log, cancel, *hostPolicy);
    Outcome outcome = execution.runPlan(job->plan, {}, cancel);
    if (cancel.isCancelled() && outcome != Outcome::Succeeded)
        outcome = Outcome::Aborted;
    if (!job->hooks.isEmpty())
        outcome = execution.runHooks(job->hooks, outcome, {}, cancel);
    log.flush();
    if (auto removed = m_deps.workspace.removeRun(run.id); !removed)
        qWarning("run %s: removing its directory failed: %s", qPrintable(run.id), qPrintable(removed.error().text()));
    return {outcome, outcome == Outcome::Errored ? execution.firstError() : QString(),
            outcome == Outcome::Errored && execution.infrastructureErrored()};
}

void JobRunner::releaseAbandoned(const RunRecord &run)
{
    if (!m_deps.approvals)
        return;
    RunRepository runs(m_deps.db);
    auto steps = runs.steps(run.id);
    if (!steps) {
        qWarning("run %s: reading its steps to withdraw approvals failed: %s", qPrintable(run.id),
                 qPrintable(steps.error().text()));
        return;
    }
    const QString reason = QStringLiteral("the run was interrupted: Pando stopped while it waited");
    for (RunStepRecord step : std::as_const(*steps)) {
        if (step.kind != approvestep::Kind || step.status != RunStepStatus::Waiting || step.hash.isEmpty())
            continue;
        // Conflict: settled meanwhile (an approval nobody will use now is harmless).
        auto withdrawn = m_deps.approvals->reject(step.hash, Approver{automationFor(run)}, reason);
        if (!withdrawn && withdrawn.error().code != ErrorCode::Conflict)
            qWarning("run %s: withdrawing approval %s failed: %s", qPrintable(run.id), qPrintable(step.hash),
                     qPrintable(withdrawn.error().text()));
        step.status = stepStatusOf(Outcome::Errored);
        step.error = QString(approvestep::WithdrawnPrefix) + reason;
        step.finishedMs = m_deps.clock.nowMs();
        if (auto saved = runs.upsertStep(step); !saved)
            qWarning("run %s: recording step %s failed: %s", qPrintable(run.id), qPrintable(step.stepId),
                     qPrintable(saved.error().text()));
    }
}

namespace {

// When a resource was last checked (and what the check said) is for people; the check's own
// answer goes back either way.
void warnUnrecordedCheck(const QString &resource, const Status &recorded)
{
    if (!recorded)
        qWarning("resource %s: recording its check failed: %s", qPrintable(resource),
                 qPrintable(recorded.error().text()));
}

} // namespace

pando::Result<QList<adapters::Version>> JobRunner::checkResource(JobRunnerDeps &deps, const QString &pipelineName,
                                                                 const QByteArray &configYaml,
                                                                 const QByteArray &varsYaml,
                                                                 const QString &resourceName, const CancelToken &cancel,
                                                                 const adapters::Version &startFrom)
{
    QStringList secretValues;
    auto pipeline = parseForRun(deps, pipelineName, configYaml, varsYaml, &secretValues, cancel);
    if (!pipeline)
        return std::unexpected(pipeline.error());
    const Resource *resource = pipeline->resource(resourceName);
    if (!resource)
        return fail(ErrorCode::NotFound,
                    QStringLiteral("no resource %1 in pipeline %2").arg(resourceName, pipelineName));
    auto hostPolicy = hostPolicyFor(deps.db, pipelineName);
    if (!hostPolicy)
        return std::unexpected(hostPolicy.error());
    ResourceTypes types(*pipeline, deps.containers, deps.host, deps.builtinType, *hostPolicy);
    auto type = types.typeFor(resource->type);
    if (!type)
        return std::unexpected(type.error());
    ResourceVersionRepository versions(deps.db);
    auto latest = versions.latest(pipelineName, resourceName);
    if (!latest)
        return std::unexpected(latest.error());
    adapters::Version from = startFrom;
    if (from.isEmpty() && *latest) {
        auto v = versionFromJson(QJsonDocument::fromJson((*latest)->versionJson.toUtf8()).object(), resourceName);
        if (v)
            from = *v;
    }
    const Redactor redactor = makeRedactor(secretValues);
    auto found = detail::checkWithin(**type, *resource, from, cancel, [](const QString &) {});
    if (!found) {
        Error e = found.error();
        e.message = maskText(redactor, e.message);
        warnUnrecordedCheck(resourceName,
                            versions.recordCheck(pipelineName, resourceName, deps.clock.nowMs(), e.text()));
        return std::unexpected(e);
    }
    QList<QPair<QString, QString>> rows;
    for (const adapters::Version &v : std::as_const(*found))
        rows.append({versionJson(v), QString()});
    auto added = versions.add(pipelineName, resourceName, rows, deps.clock.nowMs());
    warnUnrecordedCheck(resourceName, versions.recordCheck(pipelineName, resourceName, deps.clock.nowMs(), {}));
    if (!added)
        return std::unexpected(added.error());
    QList<adapters::Version> fresh;
    for (const ResourceVersionRecord &r : std::as_const(*added))
        if (auto v = versionFromJson(QJsonDocument::fromJson(r.versionJson.toUtf8()).object(), resourceName))
            fresh.append(*v);
    return fresh;
}

} // namespace pando::core::pipelines
