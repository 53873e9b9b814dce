// The task step: resolves the task's config (its own, or a file: from an artifact), restores
// its outputs when the same content ran before, else runs it in a container (or, where an
// administrator allowed it, on the host) and keeps its outputs as artifacts and by content.
#include "core/pipelines/pipeline/execution.h"

#include <limits>

namespace pando::core::pipelines::detail {

namespace {

constexpr qint64 MaxArtifactFileBytes = 1024LL * 1024;

// argv is readable by every user of the machine (/proc/<pid>/cmdline, ps), whatever the
// container: a secret goes in through the environment instead.
Status refuseSecretsInArgv(const QStringList &argv, const QStringList &secretValues, const QString &where)
{
    for (qsizetype i = 0; i < argv.size(); ++i) {
        for (const QString &value : secretValues) {
            if (value.size() < Redactor::kMinimumSecretLength || !argv.at(i).contains(value))
                continue;
            return fail(ErrorCode::Invalid,
                        i == 0 ? QStringLiteral("run.path holds a secret's value: it would show in the host's "
                                                "process list")
                               : QStringLiteral("run.args[%1] holds a secret's value: it would show in the host's "
                                                "process list")
                                     .arg(i - 1),
                        where,
                        QStringLiteral("pass it in the environment: params: {TOKEN: ((name))}, and use \"$TOKEN\" in "
                                       "the command"));
        }
    }
    return {};
}

} // namespace

Result<QByteArray> Execution::readArtifactFile(const QString &name, const QString &what, const QString &stepPath) const
{
    const QString artifact = name.section(QLatin1Char('/'), 0, 0);
    if (!artifactDigest(artifact))
        return fail(ErrorCode::Invalid, QStringLiteral("%1 %2: no artifact named %3").arg(what, name, artifact),
                    stepPath);
    const QString artifactDir = m_deps.workspace.artifactDir(m_run.id, artifact);
    const QString root = QDir(artifactDir).canonicalPath();
    const QString path =
        QFileInfo(artifactDir + QLatin1Char('/') + name.section(QLatin1Char('/'), 1)).canonicalFilePath();
    if (path.isEmpty() || !path.startsWith(root + QLatin1Char('/')))
        return fail(ErrorCode::Invalid, QStringLiteral("%1 %2 does not exist inside %3").arg(what, name, artifact),
                    stepPath);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() > MaxArtifactFileBytes)
        return fail(ErrorCode::Invalid, QStringLiteral("%1 %2 cannot be read (or is over 1 MiB)").arg(what, name),
                    stepPath);
    return file.readAll();
}

Result<std::optional<TaskConfig>> Execution::readTaskFile(const Step &step) const
{
    if (step.task.file.isEmpty())
        return std::nullopt;
    auto text = readArtifactFile(step.task.file, QStringLiteral("task file"), step.path);
    if (!text)
        return std::unexpected(text.error());
    // Its ((placeholders)) come from the step's vars: alone. Whoever can push the file wrote it,
    // so it reads no secret the pipeline did not hand it there.
    InterpolationSources sources;
    if (step.task.vars)
        sources.vars = *step.task.vars;
    auto parsed = parseTaskConfigFile(*text, step.task.file, sources);
    if (!parsed) {
        Error error = parsed.error();
        if (error.message.startsWith(QStringLiteral("undefined var"))) {
            error.message = error.message.section(QStringLiteral(": not found"), 0, 0) +
                            QStringLiteral(": the task step's vars: do not give it");
            error.hint = QStringLiteral("add it to the step's vars: (a secret too: vars: {NAME: ((NAME))}); a task "
                                        "file reads no secret by itself");
        }
        return std::unexpected(error);
    }
    return std::optional<TaskConfig>(*parsed);
}

Status Execution::checkTaskVenue(const Step &step, const ResolvedTask &task, bool fromFile) const
{
    if (auto clean = refuseSecretsInArgv(task.argv, m_secretValues, step.path); !clean)
        return clean;
    if (step.task.privileged && !m_hostPolicy.allowed())
        return std::unexpected(m_hostPolicy.privilegedRefusal(step.name, step.keyPath(QStringLiteral("privileged"))));
    if (task.venue != ResolvedTask::Venue::Host)
        return {};
    // What an artifact says never picks the host: anyone who can push to its repository wrote it.
    if (fromFile)
        return std::unexpected(fileTaskOnHost(step.task.file, step.path));
    if (!m_hostPolicy.allowed())
        return std::unexpected(
            m_hostPolicy.refusal(QStringLiteral("task %1 (no image_resource)").arg(step.name), step.path,
                                 QStringLiteral("add image_resource with a local image to the task's config")));
    return {};
}

Result<QString> Execution::artifactImage(const Step &step, const QString &artifact, const CancelToken &cancel)
{
    const auto digest = artifactDigest(artifact);
    if (!digest)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("image: names artifact %1, which no earlier step of the plan made").arg(artifact),
                    step.keyPath(QStringLiteral("image")),
                    QStringLiteral("get it first, e.g. a registry-image resource: - get: %1").arg(artifact));
    // Named by the artifact's content: the same image fetched again is made once.
    const QString tag = QStringLiteral("pando/artifact-image:") + digest->section(QLatin1Char(':'), -1).left(32);
    if (auto known = m_deps.containers.imageDigest(tag); known)
        return tag;
    m_log.note(step.path, QStringLiteral("making artifact %1 into an image").arg(artifact));
    auto image = m_deps.containers.importArtifactImage(m_deps.workspace.artifactDir(m_run.id, artifact), tag, cancel);
    if (!image) {
        Error error = image.error();
        error.where = step.keyPath(QStringLiteral("image"));
        return std::unexpected(error);
    }
    return tag;
}

Result<StepLayout> Execution::taskContent(const Step &step, const ResolvedTask &task, adapters::TaskRunner &runner,
                                          StepContent &content)
{
    content.kind = QStringLiteral("task");
    content.canonicalConfig = hashable(toJson(task));
    content.extra = secretsMarker();
    // A task's outputs are its pipeline's unless the step shares them by content; a host task's
    // depend on the host, never only on its content.
    const bool image = task.venue == ResolvedTask::Venue::Image;
    content.scope =
        step.task.sharedCache && image ? QStringLiteral("shared") : QStringLiteral("pipeline:") + m_run.pipeline;
    if (image) {
        auto digest = imageDigest(runner, task.image);
        if (!digest)
            return std::unexpected(digest.error());
        content.imageDigest = *digest;
    } else {
        content.imageDigest = QStringLiteral("host");
    }
    StepLayout layout;
    for (const ResolvedTask::Input &input : task.inputs) {
        auto digest = artifactDigest(input.artifact);
        if (!digest) {
            if (input.optional)
                continue;
            return fail(ErrorCode::Invalid,
                        QStringLiteral("input %1 (artifact %2) is not in the plan").arg(input.name, input.artifact),
                        step.path);
        }
        content.inputDigests.insert(input.name, *digest);
        layout.inputs.append(WorkspaceInput{input.name, input.path, input.optional});
        layout.inputMapping.insert(input.name, input.artifact);
    }
    for (const ResolvedTask::Output &output : task.outputs) {
        layout.outputs.append(WorkspaceOutput{output.name, output.path});
        layout.outputMapping.insert(output.name, output.artifact);
    }
    return layout;
}

bool Execution::restoreTaskOutputs(const Step &step, RunStepRecord &rec, const ResolvedTask &task,
                                   const CancelToken &cancel)
{
    auto hit = StepCacheRepository(m_deps.db).find(rec.hash);
    if (!hit || !*hit)
        return false;
    const QJsonObject outputs = QJsonDocument::fromJson((*hit)->outputsJson.toUtf8()).object();
    for (const ResolvedTask::Output &output : task.outputs) {
        const QJsonObject o = outputs.value(output.name).toObject();
        auto dir = m_deps.workspace.createArtifact(m_run.id, output.artifact);
        if (!dir || !m_deps.blobs.restoreTree(o.value(QStringLiteral("blob")).toString(), *dir, {}, cancel)) {
            forgetCached(rec.hash);
            return false;
        }
        setArtifact(output.artifact, o.value(QStringLiteral("digest")).toString());
    }
    m_log.note(step.path, QStringLiteral("unchanged since run %1: outputs restored, not run again").arg((*hit)->runId));
    return true;
}

Result<adapters::TaskSpec> Execution::taskSpec(const Step &step, const ResolvedTask &task, const StepDirs &dirs,
                                               qint64 timeoutMs) const
{
    adapters::TaskSpec spec;
    spec.argv = task.argv;
    spec.env = task.config.params;
    spec.timeoutMs = int(qMin<qint64>(timeoutMs, std::numeric_limits<int>::max()));
    spec.memoryBytes = task.config.limits.memoryBytes;
    spec.cpus = task.config.limits.cpus;
    spec.privileged = step.task.privileged;
    const QString cacheDir =
        m_deps.cacheRoot + QLatin1Char('/') +
        secretDigest("pando-task-cache", m_run.pipeline + QLatin1Char('/') + m_run.job + QLatin1Char('/') + step.path)
            .left(32);
    const bool image = task.venue == ResolvedTask::Venue::Image;
    const QString work = image ? QStringLiteral("/tmp/build/work") : dirs.dir;
    for (const TaskCache &c : task.config.caches) {
        // dockerd resolves a bind mount's source itself, following links: a link an earlier run
        // planted in its cache would mount any host path read-write.
        auto dir = makeDirBeneath(cacheDir, c.path, image);
        if (!dir)
            return std::unexpected(dir.error());
        spec.mounts.append(adapters::Mount{*dir, image ? work + QLatin1Char('/') + c.path : c.path, false});
    }
    spec.workDir = task.config.run.dir.isEmpty() ? work : work + QLatin1Char('/') + task.config.run.dir;
    if (!image)
        return spec;
    spec.image = task.image;
    spec.mounts.prepend(adapters::Mount{dirs.dir, work, false});
    spec.user = task.config.run.user;
    spec.labels = {{QStringLiteral("dev.pando.managed"), QStringLiteral("true")},
                   {QStringLiteral("dev.pando.install"), m_deps.installId},
                   {QStringLiteral("dev.pando.kind"), QStringLiteral("task")},
                   {QStringLiteral("dev.pando.run"), m_run.id}};
    return spec;
}

Result<QJsonObject> Execution::keepTaskOutputs(const ResolvedTask &task, const StepDirs &dirs, const StepLayout &layout,
                                               const CancelToken &cancel)
{
    // An output the step swapped for a link is refused before anything reads it.
    if (auto contained = m_deps.workspace.checkOutputs(dirs); !contained)
        return std::unexpected(contained.error());
    QJsonObject cached;
    for (const ResolvedTask::Output &output : task.outputs) {
        const QString dir = dirs.outputs.value(output.name);
        auto digest = treeDigest(dir, cancel);
        if (!digest)
            return std::unexpected(digest.error());
        auto blob = m_deps.blobs.storeTree(dir, cancel);
        if (!blob)
            return std::unexpected(blob.error());
        setArtifact(output.artifact, *digest);
        cached.insert(output.name, QJsonObject{{QStringLiteral("blob"), *blob}, {QStringLiteral("digest"), *digest}});
    }
    if (auto collected = m_deps.workspace.collectOutputs(m_run.id, dirs, layout); !collected)
        return std::unexpected(collected.error());
    return cached;
}

Outcome Execution::runTask(const Step &step, RunStepRecord &rec, const LinkedCancel &link, qint64 timeoutMs)
{
    const CancelToken &cancel = link.token();
    auto fileConfig = readTaskFile(step);
    if (!fileConfig)
        return errored(rec, fileConfig.error());
    auto resolved = resolveTask(step, *fileConfig ? &**fileConfig : nullptr);
    if (!resolved)
        return errored(rec, resolved.error());
    if (auto allowed = checkTaskVenue(step, *resolved, fileConfig->has_value()); !allowed)
        return errored(rec, allowed.error());
    if (resolved->venue == ResolvedTask::Venue::ImageArtifact) {
        auto image = artifactImage(step, resolved->image, cancel);
        if (!image)
            return errored(rec, image.error());
        resolved->venue = ResolvedTask::Venue::Image;
        resolved->image = *image;
    }
    adapters::TaskRunner &runner = resolved->venue == ResolvedTask::Venue::Host ? m_deps.host : m_deps.containers;

    StepContent content;
    auto layout = taskContent(step, *resolved, runner, content);
    if (!layout)
        return errored(rec, layout.error());
    layout->openToTaskUser = resolved->venue == ResolvedTask::Venue::Image;
    rec.hash = stepHash(content);
    if (!m_run.force && restoreTaskOutputs(step, rec, *resolved, cancel)) {
        rec.status = RunStepStatus::Cached;
        rec.exitCode = 0;
        return finish(rec, Outcome::Succeeded);
    }

    const QString stepKey = QStringLiteral("s%1-%2").arg(rec.seq).arg(qMax(1, rec.attempt));
    auto dirs = m_deps.workspace.createStep(m_run.id, stepKey, *layout);
    if (!dirs)
        return errored(rec, dirs.error());
    const auto cleanUp = qScopeGuard([&] { removeStepDir(stepKey); });
    auto spec = taskSpec(step, *resolved, *dirs, timeoutMs);
    if (!spec)
        return errored(rec, spec.error());
    auto result = runner.run(*spec, cancel, [this, &step](const adapters::OutputChunk &chunk) {
        m_log.output(step.path, chunk.stderrStream, chunk.data);
    });
    m_log.flush(step.path);
    Interruption interruption = why(link);
    interruption.timedOut = interruption.timedOut || (result && result->timedOut);
    const Outcome outcome = outcomeOfTask(result, interruption);
    if (!result)
        return finishOnError(rec, outcome, result.error());
    rec.exitCode = result->exitCode;
    if (outcome != Outcome::Succeeded)
        return finish(rec, outcome,
                      interruption.timedOut ? QStringLiteral("timed out after %1 ms").arg(timeoutMs)
                                            : QStringLiteral("exited with %1").arg(result->exitCode));
    // Outputs become the run's artifacts and, by content, the cache's.
    auto kept = keepTaskOutputs(*resolved, *dirs, *layout, cancel);
    if (!kept)
        return errored(rec, kept.error());
    cacheOutputs(step, rec, *kept);
    return Outcome::Succeeded;
}

} // namespace pando::core::pipelines::detail
