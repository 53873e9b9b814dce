// LocalPipelineService: starting and stopping, setting pipelines (by a person or a set_pipeline
// step), showing, pausing, renaming and removing them, host execution and secrets. Jobs, runs and
// triggers are in localpipelinejobs.cpp, resources in localpipelineresources.cpp.
#include "localpipelineservice.h"

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/instancename.h"
#include "core/pipelines/pipeline/hostpolicy.h"
#include "core/state/pipelinerepositories.h"

#include <QRegularExpression>
#include <limits>

namespace pando::core::pipelines {

namespace {

// "name" for an install-wide secret, "pipeline/name" for one of a pipeline's.
QString qualifiedSecret(const QString &scope, const QString &name)
{
    return scope.isEmpty() ? name : scope + QLatin1Char('/') + name;
}

bool isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,99}$"));
    return re.match(name).hasMatch();
}

Status checkName(const QString &name, const QString &what)
{
    if (isValidName(name))
        return {};
    return fail(ErrorCode::Invalid,
                QStringLiteral("%1 name \"%2\" must be 1-100 of a-z A-Z 0-9 _ . - and not start with . or -")
                    .arg(what, name.left(100)),
                QStringLiteral("name"));
}

} // namespace

LocalPipelineService::LocalPipelineService(JobRunnerDeps deps, AuditLog &audit, const SealKey &sealKey,
                                           LocalPipelineOptions options, std::shared_ptr<void> keepAlive)
    : m_keepAlive(std::move(keepAlive)), m_deps(std::move(deps)), m_audit(audit), m_seal(QList<SealKey>{sealKey}),
      m_options(options),
      // Only the address plane locks: one webhook's failures must not lock its forge out.
      m_webhookThrottle(m_deps.clock, accounts::ThrottlePolicy{std::numeric_limits<int>::max()},
                        accounts::ThrottlePolicy{5, 1000, qint64{15} * 60 * 1000, qint64{60} * 60 * 1000})
{
    m_deps.secret = [this](const QString &pipeline, const QString &name) {
        return secretValue(pipeline, name);
    };
    m_deps.secretRefusal = [this](const QString &pipeline, const QString &name) {
        return secretRefusal(pipeline, name);
    };
    m_deps.setPipeline = [this](const QString &by, const QString &name, const QByteArray &config,
                                const QByteArray &vars, const QString &runId) {
        return setFromRun(by, name, config, vars, runId);
    };
    m_runner = std::make_unique<JobRunner>(m_deps);
    m_scheduler = std::make_unique<Scheduler>(m_deps.db, m_deps.clock, m_deps.events, *m_runner, m_options.scheduler);
    connect(&m_deps.events, &EventBus::published, this, &LocalPipelineService::onEvent, Qt::DirectConnection);
}

LocalPipelineService::~LocalPipelineService()
{
    stop();
}

Status LocalPipelineService::start()
{
    // Task containers a dead process left behind go first, while no run of this process exists
    // yet; the scheduler then settles those runs as interrupted.
    const QMap<QString, QString> ours{{QStringLiteral("dev.pando.managed"), QStringLiteral("true")},
                                      {QStringLiteral("dev.pando.install"), m_deps.installId},
                                      {QStringLiteral("dev.pando.kind"), QStringLiteral("task")}};
    if (auto removed = m_deps.containers.removeLeftovers(ours); !removed)
        qWarning("pipelines: removing task containers left by an earlier process failed: %s",
                 qPrintable(removed.error().text()));
    sweepArtifactImages();
    scopeUnscopedSecrets();
    recordJobSettings();
    if (auto started = m_scheduler->start(); !started)
        return started;
    QMutexLocker lock(&m_mutex);
    m_stopping = false;
    m_triggerThread.reset(QThread::create([this] { triggerLoop(); }));
    m_triggerThread->setObjectName(QStringLiteral("pando-triggers"));
    m_triggerThread->start();
    return {};
}

void LocalPipelineService::sweepArtifactImages()
{
    // Images a task's image: made from an artifact are made again from it when needed: one made
    // over a week ago goes unless a container uses it, so a pipeline in daily use makes its own
    // again once a week, while one no longer run stops holding the disk.
    constexpr qint64 Week = qint64{7} * 24 * 60 * 60 * 1000;
    m_lastImageSweepMs = m_deps.clock.nowMs();
    if (auto swept = m_deps.containers.removeStaleArtifactImages(QStringLiteral("pando/artifact-image"), Week); !swept)
        qWarning("pipelines: removing old artifact images failed: %s", qPrintable(swept.error().text()));
}

void LocalPipelineService::stop()
{
    {
        QMutexLocker lock(&m_mutex);
        m_stopping = true;
        m_wake.wakeAll();
    }
    if (m_triggerThread) {
        m_triggerThread->wait();
        m_triggerThread.reset();
    }
    m_scheduler->shutdown();
}

std::optional<QString> LocalPipelineService::secretValue(const QString &pipeline, const QString &name)
{
    SecretRepository secrets(m_deps.db);
    for (const QString &scope : {pipeline, QString()}) {
        auto row = secrets.find(scope, name);
        if (!row)
            continue;
        // An install-wide secret is read only by the pipelines it is granted to.
        if (scope.isEmpty()) {
            auto access = secrets.access(name);
            if (!access || !access->allows(pipeline))
                return std::nullopt;
        }
        auto opened = m_seal.open(row->sealed, SealBox::context({QStringLiteral("secret"), scope, name}));
        if (!opened) {
            qWarning("pipelines: secret %s cannot be opened: %s", qPrintable(name), qPrintable(opened.error().text()));
            return std::nullopt;
        }
        QString value = QString::fromUtf8(*opened);
        SealBox::wipe(*opened);
        return value;
    }
    return std::nullopt;
}

Error LocalPipelineService::archivedError(const PipelineRecord &record)
{
    return Error{ErrorCode::Conflict,
                 QStringLiteral("pipeline %1 is archived (%2): it has no config and runs nothing")
                     .arg(record.name, record.pausedReason),
                 QStringLiteral("pipeline"),
                 QStringLiteral("set it again to bring it back: pando pipelines set %1 -c FILE").arg(record.name)};
}

Result<Pipeline> LocalPipelineService::parseStored(const PipelineRecord &record, bool resolveSecrets)
{
    if (record.archivedMs > 0)
        return std::unexpected(archivedError(record));
    InterpolationSources sources;
    if (!record.varsYaml.trimmed().isEmpty()) {
        auto vars = readVarsFile(record.varsYaml.toUtf8());
        if (!vars)
            return std::unexpected(vars.error());
        sources.vars = *vars;
    }
    const QString name = record.name;
    sources.secrets = [this, name](const QString &secret) {
        return secretValue(name, secret);
    };
    sources.secretRefusal = [this, name](const QString &secret) {
        return secretRefusal(name, secret);
    };
    sources.secretMode =
        resolveSecrets ? InterpolationSources::SecretMode::Resolve : InterpolationSources::SecretMode::Placeholder;
    // As fly: a var with no value when the pipeline is set stays a placeholder, for the secrets
    // store to give when a run reads the pipeline (a run it is still missing for errors, saying so).
    sources.allowUndefined = !resolveSecrets;
    return parsePipeline(record.configYaml.toUtf8(), sources);
}

Result<PipelineView> LocalPipelineService::view(const PipelineRecord &record)
{
    PipelineView v;
    v.record = record;
    auto paused = PipelineRepository(m_deps.db).pausedJobs(record.name);
    if (!paused)
        return std::unexpected(paused.error());
    v.pausedJobs = *paused;
    if (record.archivedMs > 0)
        return v; // no config, no jobs: what is left is its history
    if (auto parsed = parseStored(record, false)) {
        v.config = toJson(*parsed);
        for (const Job &job : std::as_const(parsed->jobs))
            v.jobs << job.name;
    } else {
        // A secret removed since the set: show what is stored, say why it does not parse.
        v.config = QJsonObject{{QStringLiteral("error"), parsed.error().text()}};
    }
    return v;
}

Result<SetPipelineResult> LocalPipelineService::setPipeline(const QString &name, const QByteArray &configYaml,
                                                            const QByteArray &varsYaml,
                                                            const SetPipelineOptions &options, const Actor &actor)
{
    return setPipelineAs(name, configYaml, varsYaml, options, actor, {});
}

Result<QString> LocalPipelineService::setFromRun(const QString &by, const QString &name, const QByteArray &configYaml,
                                                 const QByteArray &varsYaml, const QString &runId)
{
    if (auto ok = checkPipelineName(name); !ok)
        return std::unexpected(ok.error());
    auto existing = PipelineRepository(m_deps.db).find(name);
    if (!existing && existing.error().code != ErrorCode::NotFound)
        return std::unexpected(existing.error());
    if (existing && name != by && existing->setBy != by)
        return fail(ErrorCode::Forbidden,
                    QStringLiteral("pipeline %1 was not created by pipeline %2: a set_pipeline step sets its own "
                                   "pipeline (self) and the ones it created")
                        .arg(name, by),
                    {},
                    QStringLiteral("set %1 by hand (pando pipelines set %1), or give the step another name").arg(name));
    if (!existing) {
        // Secrets waiting for a pipeline of that name are not for a file someone could push.
        auto waiting = secretsWaitFor(name);
        if (!waiting)
            return std::unexpected(waiting.error());
        if (*waiting)
            return fail(ErrorCode::Forbidden,
                        QStringLiteral("secrets are kept for pipeline %1, which does not exist yet: a set_pipeline "
                                       "step may not be the one to create it")
                            .arg(name),
                        {}, QStringLiteral("set it by hand first (pando pipelines set %1)").arg(name));
    }
    const Actor actor{QStringLiteral("pipeline:%1 run %2").arg(by, runId), QStringLiteral("engine"), {}};
    // Created running, as Concourse's set_pipeline step creates them: the job that sets it is
    // what someone started.
    auto set = setPipelineAs(name, configYaml, varsYaml, {}, actor, existing ? QString() : by);
    if (!set)
        return std::unexpected(set.error());
    // Which job set it, and in which run: a later run of that job that does not set it archives it.
    if (name != by) {
        auto run = RunRepository(m_deps.db).find(runId);
        if (!run)
            return std::unexpected(run.error());
        if (auto linked = PipelineRepository(m_deps.db).setSetByJob(name, run->job, run->number); !linked)
            return std::unexpected(linked.error());
    }
    const int version = set->pipeline.record.configVersion;
    if (!set->changed)
        return QStringLiteral("pipeline %1 is unchanged (version %2)").arg(name).arg(version);
    return QStringLiteral("%1 pipeline %2 (version %3)")
        .arg(set->created ? QStringLiteral("created") : QStringLiteral("set"), name)
        .arg(version);
}

Result<SetPipelineResult> LocalPipelineService::setPipelineAs(const QString &name, const QByteArray &configYaml,
                                                              const QByteArray &varsYaml,
                                                              const SetPipelineOptions &options, const Actor &actor,
                                                              const QString &setBy)
{
    if (auto ok = checkPipelineName(name); !ok)
        return std::unexpected(ok.error());
    // An instance's vars are vars of its config: ((branch)) of preview/branch:feature-1.
    auto identity = parsePipelineName(name);
    if (!identity)
        return std::unexpected(identity.error());
    auto withInstance = withInstanceVars(varsYaml, identity->instanceVars);
    if (!withInstance)
        return std::unexpected(withInstance.error());
    PipelineRecord candidate;
    candidate.name = name;
    candidate.configYaml = QString::fromUtf8(configYaml);
    candidate.varsYaml = QString::fromUtf8(*withInstance);
    auto after = parseStored(candidate, false);
    if (!after)
        return std::unexpected(after.error());
    // A webhook token kept as a secret is checked here, once, in memory.
    for (const Resource &resource : std::as_const(after->resources)) {
        const QString secret = placeholderSecretName(resource.webhookToken);
        if (secret.isEmpty())
            continue;
        const QString where = resource.path + QStringLiteral(".webhook_token");
        const std::optional<QString> token = secretValue(name, secret);
        if (!token)
            return fail(ErrorCode::Invalid,
                        QStringLiteral("the webhook token names the secret %1, which is not set").arg(secret), where,
                        QStringLiteral("set it first (pando secrets set %1 --pipeline %2 reads it from standard "
                                       "input), then set the pipeline again")
                            .arg(secret, name));
        if (auto problem = webhookTokenProblem(*token, where)) {
            problem->message = QStringLiteral("the secret %1: ").arg(secret) + problem->message;
            return std::unexpected(*problem);
        }
    }

    if (auto privileged = refusePrivileged(name, *after); !privileged)
        return std::unexpected(privileged.error());

    PipelineRepository pipelines(m_deps.db);
    auto existing = pipelines.find(name);
    if (!existing && existing.error().code != ErrorCode::NotFound)
        return std::unexpected(existing.error());
    SetPipelineResult result;
    result.created = !existing;
    result.ignoredKeys = after->ignoredKeys;
    result.undefinedVars = after->undefinedVars;
    for (const VarSourceConfig &source : std::as_const(after->varSources))
        result.varSources.append({source.name, source.type});
    // What the user wrote, line by line, as they will recognise it.
    result.diff = existing ? setDiff(existing->configYaml, candidate.configYaml, existing->varsYaml, candidate.varsYaml)
                           : setDiff({}, candidate.configYaml, {}, candidate.varsYaml);
    result.changed =
        !existing || existing->configYaml != candidate.configYaml || existing->varsYaml != candidate.varsYaml;
    // A new pipeline set by someone starts paused (with why, which `pipelines show` and a refused
    // trigger say) so that nothing runs before they have looked at it.
    const bool unarchived = existing && existing->archivedMs > 0;
    if (!existing && options.startPaused) {
        candidate.paused = true;
        candidate.pausedReason = QStringLiteral("set by %1; new pipelines start paused").arg(actor.name);
    } else if (unarchived && options.startPaused) {
        candidate.paused = true;
        candidate.pausedReason = QStringLiteral("set by %1 after it was archived; it starts paused").arg(actor.name);
    }
    if (options.dryRun || !result.changed) {
        PipelineRecord shown = existing ? *existing : candidate;
        shown.configYaml = candidate.configYaml;
        shown.archivedMs = 0;
        result.pipeline = *view(shown);
        return result;
    }
    auto saved = pipelines.set(name, candidate.configYaml, candidate.varsYaml, m_deps.clock.nowMs(),
                               {.jobs = jobSettingsOf(*after),
                                .resourceOldNames = resourceOldNamesOf(*after),
                                .setBy = setBy,
                                .pausedReason = candidate.pausedReason});
    if (!saved)
        return std::unexpected(saved.error());
    QJsonObject details{{QStringLiteral("config_version"), saved->configVersion}};
    if (result.created || unarchived)
        details.insert(QStringLiteral("paused"), saved->paused);
    if (unarchived)
        details.insert(QStringLiteral("unarchived"), true);
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.set"), QStringLiteral("pipeline/") + name,
                                  QStringLiteral("success"), details);
    m_scheduler->wake();
    {
        QMutexLocker lock(&m_mutex);
        m_wake.wakeAll(); // new resources may be due a check
    }
    // What a job that is gone now had set goes to the archive (a job renamed with old_name keeps it).
    archiveOrphans(name, *after);
    if (!audited)
        return std::unexpected(
            unaudited(QStringLiteral("pipeline %1 was set (config version %2)").arg(name).arg(saved->configVersion),
                      audited.error()));
    result.pipeline = *view(*saved);
    return result;
}

QList<PipelineRecord> LocalPipelineService::setByJobsOf(const QString &parent)
{
    QList<PipelineRecord> children;
    auto rows = PipelineRepository(m_deps.db).list();
    if (!rows) {
        qWarning("pipelines: listing what %s set failed: %s", qPrintable(parent), qPrintable(rows.error().text()));
        return children;
    }
    for (const PipelineRecord &row : std::as_const(*rows))
        if (row.setBy == parent && row.name != parent && row.archivedMs == 0)
            children.append(row);
    return children;
}

void LocalPipelineService::archiveQuietly(const QString &name, const QString &reason)
{
    const Actor system{QStringLiteral("pipelines"), QStringLiteral("engine"), {}};
    if (auto archived = archive(name, reason, system); !archived)
        qWarning("pipelines: archiving %s failed: %s", qPrintable(name), qPrintable(archived.error().text()));
}

void LocalPipelineService::archiveOrphans(const QString &parent, const Pipeline &config)
{
    for (const PipelineRecord &child : setByJobsOf(parent)) {
        if (child.setByJob.isEmpty() || config.job(child.setByJob))
            continue;
        const auto renamed = std::find_if(config.jobs.cbegin(), config.jobs.cend(),
                                          [&child](const Job &job) { return job.oldName == child.setByJob; });
        if (renamed != config.jobs.cend()) {
            if (auto linked = PipelineRepository(m_deps.db).setSetByJob(child.name, renamed->name, child.setByRun);
                !linked)
                qWarning("pipelines: %s: %s", qPrintable(child.name), qPrintable(linked.error().text()));
            continue;
        }
        archiveQuietly(child.name,
                       QStringLiteral("job %1 of pipeline %2, which set it, is gone").arg(child.setByJob, parent));
    }
}

void LocalPipelineService::archiveUnset(const QString &parent, const QString &job, int runNumber)
{
    for (const PipelineRecord &child : setByJobsOf(parent))
        if (child.setByJob == job && child.setByRun < runNumber)
            archiveQuietly(child.name, QStringLiteral("run %1 of job %2 of pipeline %3 succeeded without setting it")
                                           .arg(runNumber)
                                           .arg(job, parent));
}

Status LocalPipelineService::archivePipeline(const QString &name, const Actor &actor)
{
    return archive(name, QStringLiteral("archived by ") + actor.name, actor);
}

Status LocalPipelineService::archive(const QString &name, const QString &reason, const Actor &actor)
{
    auto row = PipelineRepository(m_deps.db).find(name);
    if (!row)
        return std::unexpected(row.error());
    if (row->archivedMs > 0)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("pipeline %1 is archived already (%2)").arg(name, row->pausedReason),
                    QStringLiteral("pipeline"),
                    QStringLiteral("set it again to bring it back: pando pipelines set %1 -c FILE").arg(name));
    // No new run, then none of what was queued or runs: without a config nothing of it can go on.
    if (auto paused = m_scheduler->pause(name, reason); !paused)
        return paused;
    abortRunsOf(name, actor);
    if (auto archived = PipelineRepository(m_deps.db).archive(name, reason, m_deps.clock.nowMs()); !archived)
        return archived;
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.archive"), QStringLiteral("pipeline/") + name,
                                  QStringLiteral("success"), QJsonObject{{QStringLiteral("reason"), reason}});
    // What its set_pipeline steps set goes with it, as in Concourse.
    for (const PipelineRecord &child : setByJobsOf(name))
        archiveQuietly(child.name, QStringLiteral("pipeline %1, which set it, was archived").arg(name));
    if (!audited)
        return std::unexpected(unaudited(QStringLiteral("pipeline %1 was archived").arg(name), audited.error()));
    return audited;
}

void LocalPipelineService::abortRunsOf(const QString &name, const Actor &actor)
{
    auto queuedOrRunning = RunRepository(m_deps.db).list(name, {}, 10000);
    if (!queuedOrRunning)
        return;
    for (const RunRecord &run : std::as_const(*queuedOrRunning))
        if (run.status == RunStatus::Queued || run.status == RunStatus::Running)
            if (auto aborted = m_scheduler->abort(run.id, actor.name); !aborted)
                qWarning("pipeline %s: aborting run %s failed: %s", qPrintable(name), qPrintable(run.id),
                         qPrintable(aborted.error().text()));
}

Result<QList<PipelineView>> LocalPipelineService::pipelines(bool includeArchived)
{
    auto rows = PipelineRepository(m_deps.db).list();
    if (!rows)
        return std::unexpected(rows.error());
    QList<PipelineView> views;
    for (const PipelineRecord &r : std::as_const(*rows))
        if (includeArchived || r.archivedMs == 0)
            views.append(*view(r));
    return views;
}

Result<PipelineView> LocalPipelineService::pipeline(const QString &name)
{
    auto row = PipelineRepository(m_deps.db).find(name);
    if (!row)
        return std::unexpected(row.error());
    auto shown = view(*row);
    if (!shown)
        return shown;
    shown->detailed = true;
    // The text as set, line by line: what the user wrote and will recognise, comments included.
    if (!row->previousConfigYaml.isEmpty())
        shown->configDiff =
            diffLines(row->previousConfigYaml.split(QLatin1Char('\n')), row->configYaml.split(QLatin1Char('\n')));
    return shown;
}

Status LocalPipelineService::pause(const QString &name, const Actor &actor)
{
    auto before = PipelineRepository(m_deps.db).find(name);
    if (!before)
        return std::unexpected(before.error());
    if (before->archivedMs > 0)
        return std::unexpected(archivedError(*before));
    if (auto done = m_scheduler->pause(name, QStringLiteral("paused by ") + actor.name); !done)
        return done;
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.pause"), QStringLiteral("pipeline/") + name,
                                  QStringLiteral("success"));
    if (!audited) // taken back: nothing unaudited stays done
        if (auto undone = m_scheduler->unpause(name); !undone)
            return std::unexpected(unaudited(QStringLiteral("pipeline %1 was paused").arg(name), audited.error()));
    return audited;
}

Status LocalPipelineService::unpause(const QString &name, const Actor &actor)
{
    auto before = PipelineRepository(m_deps.db).find(name);
    if (!before)
        return std::unexpected(before.error());
    if (before->archivedMs > 0)
        return std::unexpected(archivedError(*before));
    // No worker starts one of its queued runs before the audit line says who unpaused it, so that
    // an unpause that cannot be audited is taken back with nothing started.
    const auto hold = m_scheduler->holdClaims();
    if (auto done = m_scheduler->unpause(name); !done)
        return done;
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.unpause"), QStringLiteral("pipeline/") + name,
                                  QStringLiteral("success"));
    if (!audited && before->paused)
        if (auto undone = m_scheduler->pause(name, before->pausedReason); !undone)
            return std::unexpected(unaudited(QStringLiteral("pipeline %1 was unpaused").arg(name), audited.error()));
    return audited;
}

Status LocalPipelineService::removePipeline(const QString &name, const Actor &actor)
{
    if (auto row = PipelineRepository(m_deps.db).find(name); !row)
        return std::unexpected(row.error());
    // Stop it taking new runs, then abort what runs, then wait for those to settle.
    if (auto paused = m_scheduler->pause(name, QStringLiteral("being removed")); !paused)
        return paused;
    abortRunsOf(name, actor);
    for (int i = 0; i < 300; ++i) {
        auto running = RunRepository(m_deps.db).list(name, {}, 10000);
        if (!running)
            break;
        if (std::none_of(running->cbegin(), running->cend(),
                         [](const RunRecord &r) { return r.status == RunStatus::Running; }))
            break;
        QThread::msleep(100);
    }
    if (auto removed = PipelineRepository(m_deps.db).remove(name); !removed)
        return removed;
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.remove"), QStringLiteral("pipeline/") + name,
                                  QStringLiteral("success"));
    for (const PipelineRecord &child : setByJobsOf(name))
        archiveQuietly(child.name, QStringLiteral("pipeline %1, which set it, was removed").arg(name));
    if (!audited)
        return std::unexpected(unaudited(QStringLiteral("pipeline %1 was removed").arg(name), audited.error()));
    return audited;
}

Result<PipelineView> LocalPipelineService::renamePipeline(const QString &from, const QString &to, const Actor &actor)
{
    if (auto ok = checkPipelineName(to); !ok)
        return std::unexpected(ok.error());
    PipelineRepository pipelines(m_deps.db);
    if (auto row = pipelines.find(from); !row)
        return std::unexpected(row.error());
    if (from == to)
        return fail(ErrorCode::Invalid, QStringLiteral("the pipeline is called %1 already").arg(to),
                    QStringLiteral("name"));
    // An instance is named by its vars, which its config reads: a new name would say one thing
    // and the config another.
    if (from.contains(QLatin1Char('/')) || to.contains(QLatin1Char('/')))
        return fail(ErrorCode::Invalid,
                    QStringLiteral("%1 is an instance's name: an instance is named by its instance vars")
                        .arg(from.contains(QLatin1Char('/')) ? from : to),
                    QStringLiteral("name"),
                    QStringLiteral("set the instance you want (pando pipelines set GROUP -i KEY=VALUE) and remove "
                                   "this one"));
    auto waiting = secretsWaitFor(to);
    if (!waiting)
        return std::unexpected(waiting.error());
    if (*waiting)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("secrets are kept for a pipeline named %1, which does not exist: they wait for "
                                   "whoever sets it, not for this pipeline")
                        .arg(to),
                    QStringLiteral("name"),
                    QStringLiteral("choose another name, or remove those secrets first (pando secrets list)"));
    {
        // No worker claims a run while the name changes: one running keeps the name it started
        // under, so the rename waits for it; queued ones go with the pipeline.
        const auto claims = m_scheduler->holdClaims();
        auto runs = RunRepository(m_deps.db).list(from, {}, 10000);
        if (!runs)
            return std::unexpected(runs.error());
        for (const RunRecord &run : std::as_const(*runs))
            if (run.status == RunStatus::Running)
                return fail(ErrorCode::Conflict,
                            QStringLiteral("run #%1 of job %2 is running").arg(run.number).arg(run.job),
                            QStringLiteral("pipelines/") + from,
                            QStringLiteral("wait for it to end (pando runs watch %1), or abort it (pando runs abort "
                                           "%1), then rename the pipeline")
                                .arg(run.id));
        if (auto renamed = pipelines.rename(from, to, m_deps.clock.nowMs()); !renamed)
            return std::unexpected(renamed.error());
    }
    {
        // A check someone asked for goes on under the new name.
        QMutexLocker lock(&m_mutex);
        const QString prefix = from + QLatin1Char('/');
        for (const QString &key : m_checkNow.keys())
            if (key.startsWith(prefix))
                m_checkNow.insert(to + QLatin1Char('/') + key.mid(prefix.size()), m_checkNow.take(key));
    }
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.rename"), QStringLiteral("pipeline/") + from,
                                  QStringLiteral("success"), QJsonObject{{QStringLiteral("to"), to}});
    if (!audited) {
        // Taken back: a rename nobody can account for does not happen.
        if (auto undone = pipelines.rename(to, from, m_deps.clock.nowMs()); !undone)
            return std::unexpected(
                unaudited(QStringLiteral("pipeline %1 was renamed to %2").arg(from, to), audited.error()));
        return std::unexpected(audited.error());
    }
    auto row = pipelines.find(to);
    if (!row)
        return std::unexpected(row.error());
    return view(*row);
}

Result<bool> LocalPipelineService::secretsWaitFor(const QString &name)
{
    auto existing = PipelineRepository(m_deps.db).find(name);
    if (existing)
        return false;
    if (existing.error().code != ErrorCode::NotFound)
        return std::unexpected(existing.error());
    SecretRepository secrets(m_deps.db);
    auto own = secrets.list(name);
    if (!own)
        return std::unexpected(own.error());
    if (!own->isEmpty())
        return true;
    auto shared = secrets.list(QString());
    if (!shared)
        return std::unexpected(shared.error());
    for (const SecretRecord &secret : std::as_const(*shared)) {
        auto access = secrets.access(secret.name);
        if (!access)
            return std::unexpected(access.error());
        if (access->pipelines.contains(name))
            return true;
    }
    return false;
}

Result<LocalPipelineService::Stored> LocalPipelineService::stored(const QString &name)
{
    auto row = PipelineRepository(m_deps.db).find(name);
    if (!row)
        return std::unexpected(row.error());
    auto parsed = parseStored(*row, false);
    if (!parsed)
        return std::unexpected(parsed.error());
    return Stored{*row, *parsed};
}

Result<bool> LocalPipelineService::hostExecution()
{
    return hostExecutionEnabled(m_deps.db);
}

Status LocalPipelineService::setHostExecution(bool enabled, const Actor &actor)
{
    auto before = hostExecutionEnabled(m_deps.db);
    if (!before)
        return std::unexpected(before.error());
    InstallSettingRepository settings(m_deps.db);
    const auto save = [&](bool on) {
        return settings.set(QString::fromLatin1(HostExecutionSetting), QString::fromLatin1(on ? SettingOn : SettingOff),
                            actor.name, m_deps.clock.nowMs());
    };
    if (auto saved = save(enabled); !saved)
        return saved;
    auto audited = m_audit.record(
        actor, QStringLiteral("settings.host_execution"), QStringLiteral("install"), QStringLiteral("success"),
        QJsonObject{{QStringLiteral("host_execution"), enabled ? QStringLiteral("on") : QStringLiteral("off")}});
    if (!audited && !save(*before)) // taken back, unless even that failed
        return std::unexpected(unaudited(
            QStringLiteral("host execution was turned %1").arg(enabled ? QStringLiteral("on") : QStringLiteral("off")),
            audited.error()));
    return audited;
}

Status LocalPipelineService::setPipelineHostExecution(const QString &name, bool allowed, const Actor &actor)
{
    PipelineRepository pipelines(m_deps.db);
    auto before = pipelines.find(name);
    if (!before)
        return std::unexpected(before.error());
    if (auto saved = pipelines.setHostExecution(name, allowed, m_deps.clock.nowMs()); !saved)
        return saved;
    auto audited = m_audit.record(actor, QStringLiteral("pipeline.host_execution"), QStringLiteral("pipeline/") + name,
                                  QStringLiteral("success"),
                                  QJsonObject{{QStringLiteral("host_execution"),
                                               allowed ? QStringLiteral("allowed") : QStringLiteral("denied")}});
    if (!audited && !pipelines.setHostExecution(name, before->hostExecution, m_deps.clock.nowMs()))
        return std::unexpected(unaudited(QStringLiteral("host execution was %1 for pipeline %2")
                                             .arg(allowed ? QStringLiteral("allowed") : QStringLiteral("denied"), name),
                                         audited.error()));
    return audited;
}

Status LocalPipelineService::setSecret(const QString &scope, const QString &name, const QString &value,
                                       const Actor &actor)
{
    if (auto ok = checkName(name, QStringLiteral("secret")); !ok)
        return ok;
    if (!scope.isEmpty())
        if (auto row = PipelineRepository(m_deps.db).find(scope); !row)
            return std::unexpected(row.error());
    auto sealed = m_seal.seal(value.toUtf8(), SealBox::context({QStringLiteral("secret"), scope, name}));
    if (!sealed)
        return std::unexpected(sealed.error());
    SecretRepository secrets(m_deps.db);
    const auto before = secrets.find(scope, name);
    if (!before && before.error().code != ErrorCode::NotFound)
        return std::unexpected(before.error());
    const qint64 now = m_deps.clock.nowMs();
    if (auto saved = secrets.put(SecretRecord{scope, name, *sealed, before ? before->createdMs : now, now}); !saved)
        return saved;
    auto audited = m_audit.record(actor, QStringLiteral("secret.set"),
                                  QStringLiteral("secret/") + qualifiedSecret(scope, name), QStringLiteral("success"));
    if (audited)
        return audited;
    // Taken back: the old value, or no secret at all, so that nothing unaudited stays readable.
    const Status undone = before ? secrets.put(*before) : secrets.remove(scope, name);
    if (!undone)
        return std::unexpected(
            unaudited(QStringLiteral("secret %1 was set").arg(qualifiedSecret(scope, name)), audited.error()));
    return audited;
}

Result<QStringList> LocalPipelineService::secretNames(const QString &scope)
{
    auto rows = SecretRepository(m_deps.db).list(scope);
    if (!rows)
        return std::unexpected(rows.error());
    QStringList names;
    for (const SecretRecord &r : std::as_const(*rows))
        names << r.name;
    return names;
}

Status LocalPipelineService::removeSecret(const QString &scope, const QString &name, const Actor &actor)
{
    SecretRepository secrets(m_deps.db);
    const auto before = secrets.find(scope, name);
    if (!before)
        return std::unexpected(before.error());
    // An install-wide secret's access list goes with it, and comes back with it.
    std::optional<SecretAccess> access;
    if (scope.isEmpty()) {
        auto read = secrets.access(name);
        if (!read)
            return std::unexpected(read.error());
        access = *read;
    }
    if (auto removed = secrets.remove(scope, name); !removed)
        return removed;
    auto audited = m_audit.record(actor, QStringLiteral("secret.remove"),
                                  QStringLiteral("secret/") + qualifiedSecret(scope, name), QStringLiteral("success"));
    if (audited)
        return audited;
    Status undone = secrets.put(*before);
    if (undone && access)
        undone = secrets.setAccess(name, *access);
    if (!undone)
        return std::unexpected(
            unaudited(QStringLiteral("secret %1 was removed").arg(qualifiedSecret(scope, name)), audited.error()));
    return audited;
}

} // namespace pando::core::pipelines
