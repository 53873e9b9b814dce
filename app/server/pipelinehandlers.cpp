// The pipeline runner's REST handlers. Like the deploy handlers they run on the server's worker
// pool and call the service's methods, which only touch the database and return quickly; runs
// execute on the scheduler's threads.

#include "pipelinehandlers.h"

#include "replies.h"

#include "core/engine/engine.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/service/pipelineservice.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <limits>

namespace pando::server::pipelineapi {

using core::pipelines::PipelineService;

namespace {

constexpr int DefaultRunLimit = 20;
constexpr int MaxRunLimit = 1000;
constexpr int DefaultEventLimit = 1000;
constexpr int MaxEventLimit = 10000;

Result<QString> stringField(const QJsonObject &object, const QString &key, bool required)
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || value.isNull()) {
        if (required)
            return fail(ErrorCode::Invalid, QStringLiteral("is required"), key);
        return QString();
    }
    if (!value.isString())
        return fail(ErrorCode::Invalid, QStringLiteral("must be a string"), key);
    return value.toString();
}

Result<bool> boolField(const QJsonObject &object, const QString &key, bool fallback, const QString &example = {})
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined())
        return fallback;
    if (!value.isBool())
        return fail(ErrorCode::Invalid, QStringLiteral("must be true or false"), key,
                    example.isEmpty() ? QString() : QStringLiteral("send ") + example);
    return value.toBool();
}

QJsonObject runsJson(const QList<core::RunRecord> &runs, const core::authz::Visibility &visible)
{
    QJsonArray list;
    for (const core::RunRecord &run : runs)
        if (visible.seesPipeline(run.pipeline))
            list.append(core::pipelines::toJson(run));
    return QJsonObject{{QStringLiteral("runs"), list}};
}

// The newest runs of the pipelines the caller sees: all of them, or the newest of each pipeline
// it holds a grant on, merged (so another pipeline's runs do not crowd the caller's out).
Result<QList<core::RunRecord>> visibleRuns(PipelineService &s, const core::authz::Visibility &visible, int limit)
{
    if (visible.allPipelines)
        return s.runs({}, {}, limit);
    QList<core::RunRecord> merged;
    for (const QString &pipeline : visible.pipelines) {
        auto runs = s.runs(pipeline, {}, limit);
        if (!runs && runs.error().code == ErrorCode::NotFound)
            continue; // a grant left on a pipeline that is gone
        if (!runs)
            return std::unexpected(runs.error());
        merged.append(*runs);
    }
    std::sort(merged.begin(), merged.end(), [](const core::RunRecord &a, const core::RunRecord &b) {
        return a.createdMs != b.createdMs ? a.createdMs > b.createdMs : a.id > b.id;
    });
    if (merged.size() > limit)
        merged.resize(limit);
    return merged;
}

// pause/unpause/archive answer the pipeline as it is now; the change itself already succeeded.
Reply pipelineAfterChange(PipelineService &s, const QString &name, bool paused)
{
    auto view = s.pipeline(name);
    if (!view)
        return Reply{200, QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("paused"), paused}}};
    return Reply{200, view->toJson()};
}

Reply noContent()
{
    return Reply{204, {}};
}

// {"<key>": true|false} (with allowed, other keys may stand beside it); the body's boolean.
Result<bool> boolBody(const Call &call, const QString &key, const QStringList &allowed = {})
{
    const QString example = QStringLiteral("{\"%1\": true}").arg(key);
    auto body = jsonObjectBody(call.request, allowed.isEmpty() ? QStringList{key} : allowed, example);
    if (!body)
        return std::unexpected(body.error());
    const QJsonValue value = body->value(key);
    if (!value.isBool())
        return fail(ErrorCode::Invalid, QStringLiteral("must be true or false"), key,
                    QStringLiteral("send ") + example);
    return value.toBool();
}

} // namespace

Error notEnabled()
{
    return Error{ErrorCode::Unavailable, QStringLiteral("the pipeline runner is not enabled"),
                 QStringLiteral("pipelines"),
                 QStringLiteral("this install runs without the pipeline runner; enable it in pandod's configuration")};
}

QJsonObject eventJson(const core::RunEventRecord &event)
{
    return QJsonObject{{QStringLiteral("seq"), event.seq},
                       {QStringLiteral("time_ms"), event.timeMs},
                       {QStringLiteral("step"), event.stepId},
                       {QStringLiteral("type"), event.type},
                       {QStringLiteral("data"), QJsonDocument::fromJson(event.dataJson.toUtf8()).object()}};
}

Reply listPipelines(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    // ?include_archived=true: archived pipelines too (fly pipelines --include-archived).
    auto archivedToo = boolParam(call.request, QStringLiteral("include_archived"));
    if (!archivedToo)
        return errorReply(archivedToo.error());
    auto pipelines = s->pipelines(*archivedToo);
    if (!pipelines)
        return errorReply(pipelines.error());
    // Members and viewers see the pipelines they hold a grant on (core/authz decides).
    auto visible = call.engine.visibility(call.principal);
    if (!visible)
        return errorReply(visible.error());
    QJsonArray list;
    for (const core::pipelines::PipelineView &view : *pipelines)
        if (visible->seesPipeline(view.record.name))
            list.append(view.toJson());
    return Reply{200, QJsonObject{{QStringLiteral("pipelines"), list}}};
}

Reply setPipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    const QString example = QStringLiteral("{\"config\": \"<pipeline YAML>\", \"vars\": \"<vars YAML>\", "
                                           "\"var_flags\": [{\"name\": \"branch\", \"value\": \"main\"}], "
                                           "\"dry_run\": false, \"paused\": true}");
    auto body = jsonObjectBody(call.request,
                               {QStringLiteral("config"), QStringLiteral("vars"), QStringLiteral("var_flags"),
                                QStringLiteral("dry_run"), QStringLiteral("paused")},
                               example);
    if (!body)
        return errorReply(body.error());
    auto config = stringField(*body, QStringLiteral("config"), true);
    if (!config)
        return invalid(config.error().message, config.error().where, QStringLiteral("send ") + example);
    if (config->trimmed().isEmpty())
        return invalid(QStringLiteral("the pipeline config is empty"), QStringLiteral("config"));
    auto vars = stringField(*body, QStringLiteral("vars"), false);
    if (!vars)
        return errorReply(vars.error());
    auto dryRun = boolField(*body, QStringLiteral("dry_run"), false);
    if (!dryRun)
        return errorReply(dryRun.error());
    // A pipeline this creates starts paused unless told otherwise, as fly's set-pipeline makes it.
    auto paused = boolField(*body, QStringLiteral("paused"), true);
    if (!paused)
        return errorReply(paused.error());
    const core::pipelines::SetPipelineOptions options{.dryRun = *dryRun, .startPaused = *paused};
    // -v and -y of `pando pipelines set`, set on top of the vars file by the pipeline config's rule.
    const QJsonValue flagsValue = body->value(QStringLiteral("var_flags"));
    if (!flagsValue.isUndefined() && !flagsValue.isArray())
        return invalid(QStringLiteral("must be a list of {name, value, yaml}"), QStringLiteral("var_flags"));
    QList<core::pipelines::VarFlag> flags;
    const QJsonArray flagList = flagsValue.toArray();
    for (qsizetype i = 0; i < flagList.size(); ++i) {
        const QJsonObject flag = flagList.at(i).toObject();
        const QString where = QStringLiteral("var_flags[%1]").arg(i);
        if (!flag.value(QStringLiteral("name")).isString() || !flag.value(QStringLiteral("value")).isString() ||
            (flag.contains(QStringLiteral("yaml")) && !flag.value(QStringLiteral("yaml")).isBool()))
            return invalid(QStringLiteral("needs name and value (strings) and, for a YAML value, yaml: true"), where);
        flags.append({flag.value(QStringLiteral("name")).toString(), flag.value(QStringLiteral("value")).toString(),
                      flag.value(QStringLiteral("yaml")).toBool()});
    }
    auto merged = core::pipelines::withVarFlags(vars->toUtf8(), flags);
    if (!merged)
        return errorReply(merged.error());

    // Through the engine, which gives the caller the owner grant on a pipeline it first sets.
    auto result = call.engine.setPipeline(call.args.value(0), config->toUtf8(), *merged, options, call.actor);
    if (!result)
        return errorReply(result.error());
    const bool created = result->created && !options.dryRun;
    return Reply{created ? 201 : 200, result->toJson()};
}

Reply showPipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto view = s->pipeline(call.args.value(0));
    if (!view)
        return errorReply(view.error());
    return Reply{200, view->toJson()};
}

Reply removePipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    // Through the engine, which clears the pipeline's grants with it.
    if (auto removed = call.engine.removePipeline(call.args.value(0), call.actor); !removed)
        return errorReply(removed.error());
    return noContent();
}

Reply archivePipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    if (auto archived = s->archivePipeline(call.args.value(0), call.actor); !archived)
        return errorReply(archived.error());
    return pipelineAfterChange(*s, call.args.value(0), true);
}

Reply renamePipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    const QString example = QStringLiteral("{\"name\": \"new-name\"}");
    auto body = jsonObjectBody(call.request, {QStringLiteral("name")}, example);
    if (!body)
        return errorReply(body.error());
    const QJsonValue to = body->value(QStringLiteral("name"));
    if (!to.isString() || to.toString().isEmpty())
        return errorReply(Error{ErrorCode::Invalid, QStringLiteral("the new name is missing"), QStringLiteral("name"),
                                QStringLiteral("send ") + example});
    // Through the engine, which also asks whether the caller may make a new pipeline.
    auto renamed = call.engine.renamePipeline(call.principal, call.args.value(0), to.toString(), call.actor);
    if (!renamed)
        return errorReply(renamed.error());
    return Reply{200, renamed->toJson()};
}

Reply pausePipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    if (auto paused = s->pause(call.args.value(0), call.actor); !paused)
        return errorReply(paused.error());
    return pipelineAfterChange(*s, call.args.value(0), true);
}

Reply unpausePipeline(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    if (auto unpaused = s->unpause(call.args.value(0), call.actor); !unpaused)
        return errorReply(unpaused.error());
    return pipelineAfterChange(*s, call.args.value(0), false);
}

Reply listJobs(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto jobs = s->jobs(call.args.value(0));
    if (!jobs)
        return errorReply(jobs.error());
    QJsonArray list;
    for (const core::pipelines::JobView &job : std::as_const(*jobs))
        list.append(job.toJson());
    return Reply{200, QJsonObject{{QStringLiteral("jobs"), list}}};
}

namespace {

Reply setJobPaused(Call &call, bool paused)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto job = s->setJobPaused(call.args.value(0), call.args.value(1), paused, call.actor);
    if (!job)
        return errorReply(job.error());
    return Reply{200, job->toJson()};
}

} // namespace

Reply pauseJob(Call &call)
{
    return setJobPaused(call, true);
}

Reply unpauseJob(Call &call)
{
    return setJobPaused(call, false);
}

Reply triggerJob(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    // No body (or {}) is a plain trigger; {"force": true} runs every step.
    core::pipelines::TriggerOptions options;
    const QString example = QStringLiteral("{\"force\": true}");
    auto body = jsonObjectBody(call.request, {QStringLiteral("force")}, example);
    if (!body)
        return errorReply(body.error());
    auto force = boolField(*body, QStringLiteral("force"), false, example);
    if (!force)
        return errorReply(force.error());
    options.force = *force;
    auto triggered = s->triggerJob(call.args.value(0), call.args.value(1), call.actor, options);
    if (!triggered)
        return errorReply(triggered.error());
    return Reply{201, triggered->toJson()};
}

Reply listPipelineRuns(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto limit = intParam(call.request, QStringLiteral("limit"), DefaultRunLimit, 1, MaxRunLimit);
    if (!limit)
        return errorReply(limit.error());
    // An unknown pipeline is 404 rather than an empty list.
    if (auto known = s->pipeline(call.args.value(0)); !known)
        return errorReply(known.error());
    auto runs = s->runs(call.args.value(0), queryParam(call.request, QStringLiteral("job")), *limit);
    if (!runs)
        return errorReply(runs.error());
    // Authorized for this pipeline: its runs are all seen.
    core::authz::Visibility visible;
    visible.pipelines.insert(call.args.value(0));
    return Reply{200, runsJson(*runs, visible)};
}

Reply listRuns(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto limit = intParam(call.request, QStringLiteral("limit"), DefaultRunLimit, 1, MaxRunLimit);
    if (!limit)
        return errorReply(limit.error());
    auto visible = call.engine.visibility(call.principal);
    if (!visible)
        return errorReply(visible.error());
    auto runs = visibleRuns(*s, *visible, *limit);
    if (!runs)
        return errorReply(runs.error());
    return Reply{200, runsJson(*runs, *visible)};
}

Reply showRun(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto tree = s->runTree(call.args.value(0));
    if (!tree)
        return errorReply(tree.error());
    return Reply{200, tree->toJson()};
}

Reply runEvents(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto after = int64Param(call.request, QStringLiteral("after"), 0, 0, std::numeric_limits<qint64>::max());
    if (!after)
        return errorReply(after.error());
    auto limit = intParam(call.request, QStringLiteral("limit"), DefaultEventLimit, 1, MaxEventLimit);
    if (!limit)
        return errorReply(limit.error());
    auto events = s->runEvents(call.args.value(0), *after, *limit);
    if (!events)
        return errorReply(events.error());
    QJsonArray list;
    for (const core::RunEventRecord &event : *events)
        list.append(eventJson(event));
    return Reply{200, QJsonObject{{QStringLiteral("events"), list}}};
}

Reply abortRun(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    if (auto aborted = s->abortRun(call.args.value(0), call.actor); !aborted)
        return errorReply(aborted.error());
    return Reply{202, QJsonObject{{QStringLiteral("status"), QStringLiteral("aborting")}}};
}

Reply webhook(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    // Public route: the resource's own token is the authorization, checked by the service in
    // constant time. It is never echoed back.
    const QString token = queryParam(call.request, QStringLiteral("webhook_token"));
    if (token.isEmpty())
        return errorReply(Error{ErrorCode::Unauthorized, QStringLiteral("the webhook needs its token"),
                                QStringLiteral("query.webhook_token"),
                                QStringLiteral("add ?webhook_token=<the resource's webhook_token> to the URL")});
    if (auto checked = s->webhook(call.args.value(0), call.args.value(1), token, call.request.peer); !checked) {
        Error error = checked.error();
        if (error.code == ErrorCode::Unauthorized)
            error.where = QStringLiteral("query.webhook_token");
        return errorReply(error);
    }
    return Reply{202, QJsonObject{{QStringLiteral("status"), QStringLiteral("checking")}}};
}

// {"all": true} or {"pipelines": ["a", "b"]}: who may read an install-wide secret; nullopt
// when the body names neither.
Result<std::optional<core::SecretAccess>> accessFields(const QJsonObject &body)
{
    const QJsonValue all = body.value(QStringLiteral("all"));
    const QJsonValue pipelines = body.value(QStringLiteral("pipelines"));
    if (all.isUndefined() && pipelines.isUndefined())
        return std::optional<core::SecretAccess>();
    if (!all.isUndefined() && !all.isBool())
        return fail(ErrorCode::Invalid, QStringLiteral("must be true or false"), QStringLiteral("all"));
    core::SecretAccess access;
    access.all = all.toBool(false);
    if (!pipelines.isUndefined() && !pipelines.isArray())
        return fail(ErrorCode::Invalid, QStringLiteral("must be a list of pipeline names"),
                    QStringLiteral("pipelines"));
    const QJsonArray list = pipelines.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        if (!list.at(i).isString())
            return fail(ErrorCode::Invalid, QStringLiteral("must be a pipeline name"),
                        QStringLiteral("pipelines[%1]").arg(i));
        access.pipelines << list.at(i).toString();
    }
    if (access.all && !access.pipelines.isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("give all or pipelines, not both"), QStringLiteral("pipelines"));
    return std::optional<core::SecretAccess>(access);
}

Reply setSecret(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    const QString example = QStringLiteral("{\"value\": \"...\", \"scope\": \"<pipeline, or empty for the install>\", "
                                           "\"pipelines\": [\"<pipelines that may read an install-wide one>\"]}");
    auto body = jsonObjectBody(
        call.request,
        {QStringLiteral("value"), QStringLiteral("scope"), QStringLiteral("pipelines"), QStringLiteral("all")},
        example);
    if (!body)
        return errorReply(body.error());
    auto value = stringField(*body, QStringLiteral("value"), true);
    if (!value)
        return invalid(value.error().message, value.error().where, QStringLiteral("send ") + example);
    if (value->isEmpty())
        return invalid(QStringLiteral("the secret's value is empty"), QStringLiteral("value"));
    auto scope = stringField(*body, QStringLiteral("scope"), false);
    if (!scope)
        return errorReply(scope.error());
    auto access = accessFields(*body);
    if (!access)
        return errorReply(access.error());
    if (*access && !scope->isEmpty())
        return invalid(QStringLiteral("only an install-wide secret has a list of pipelines; a pipeline's own is its "
                                      "alone"),
                       QStringLiteral("pipelines"));
    if (auto set = s->setSecret(*scope, call.args.value(0), *value, call.actor); !set)
        return errorReply(set.error());
    if (const auto &granting = *access)
        if (auto granted = s->setSecretAccess(call.args.value(0), *granting, call.actor); !granted)
            return errorReply(granted.error());
    return noContent();
}

Reply setSecretAccess(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    const QString example = QStringLiteral("{\"pipelines\": [\"ci\"]} or {\"all\": true}");
    auto body = jsonObjectBody(call.request, {QStringLiteral("pipelines"), QStringLiteral("all")}, example);
    if (!body)
        return errorReply(body.error());
    auto access = accessFields(*body);
    if (!access)
        return errorReply(access.error());
    const auto &granting = *access;
    if (!granting)
        return invalid(QStringLiteral("the body names no pipelines"), QStringLiteral("body"),
                       QStringLiteral("send ") + example + QStringLiteral("; {\"pipelines\": []} lets none read it"));
    if (auto set = s->setSecretAccess(call.args.value(0), *granting, call.actor); !set)
        return errorReply(set.error());
    auto now = s->secretAccess(call.args.value(0));
    if (!now)
        return errorReply(now.error());
    return Reply{200, QJsonObject{{QStringLiteral("name"), call.args.value(0)},
                                  {QStringLiteral("all"), now->all},
                                  {QStringLiteral("pipelines"), QJsonArray::fromStringList(now->pipelines)}}};
}

Reply listSecrets(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    const QString scope = queryParam(call.request, QStringLiteral("scope"));
    // A pipeline's secret names are read like the pipeline: with a grant on it (core/authz).
    if (!scope.isEmpty()) {
        auto decision = call.engine.authorize(call.principal, permission::PipelinesRead,
                                              {core::authz::ObjectKind::Pipeline, scope, {}}, call.actor,
                                              QStringLiteral("GET /api/v1/secrets?scope=") + scope);
        if (!decision)
            return errorReply(decision.error());
        if (!*decision)
            return errorReply(Error{ErrorCode::Forbidden, decision->reason, QStringLiteral("query.scope")});
    }
    auto visible = call.engine.visibility(call.principal);
    if (!visible)
        return errorReply(visible.error());
    auto names = s->secretNames(scope);
    if (!names)
        return errorReply(names.error());
    QStringList shown;
    QJsonArray access;
    for (const QString &name : std::as_const(*names)) {
        if (!scope.isEmpty()) {
            shown << name;
            continue;
        }
        // An install-wide name is shown to whoever sees a pipeline that may read it.
        auto readers = s->secretAccess(name);
        if (!readers)
            return errorReply(readers.error());
        const bool seen = visible->allPipelines || readers->all ||
                          std::any_of(readers->pipelines.cbegin(), readers->pipelines.cend(),
                                      [&](const QString &p) { return visible->seesPipeline(p); });
        if (!seen)
            continue;
        shown << name;
        access.append(QJsonObject{{QStringLiteral("name"), name},
                                  {QStringLiteral("all"), readers->all},
                                  {QStringLiteral("pipelines"), QJsonArray::fromStringList(readers->pipelines)}});
    }
    QJsonObject answer{{QStringLiteral("scope"), scope},
                       {QStringLiteral("secrets"), QJsonArray::fromStringList(shown)}};
    if (scope.isEmpty())
        answer.insert(QStringLiteral("access"), access);
    return Reply{200, answer};
}

Reply removeSecret(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    if (auto removed =
            s->removeSecret(queryParam(call.request, QStringLiteral("scope")), call.args.value(0), call.actor);
        !removed)
        return errorReply(removed.error());
    return noContent();
}

namespace {

// The install's settings: host execution (the pipeline runner's, false without one) and what
// members' apps may use (core/policy/sourceaccess.h).
Result<QJsonObject> settingsJson(Call &call)
{
    bool hostExecution = false;
    if (PipelineService *s = call.engine.pipelines()) {
        auto host = s->hostExecution();
        if (!host)
            return std::unexpected(host.error());
        hostExecution = *host;
    }
    auto access = call.engine.appAccess();
    if (!access)
        return std::unexpected(access.error());
    auto domains = call.engine.domainPolicy();
    if (!domains)
        return std::unexpected(domains.error());
    return QJsonObject{{QStringLiteral("host_execution"), hostExecution},
                       {QStringLiteral("base_domain"), domains->baseDomain},
                       {QStringLiteral("allowed_domains"), QJsonArray::fromStringList(domains->allowed)},
                       {QStringLiteral("wildcard_domains"), domains->wildcards},
                       {QStringLiteral("local_repositories"), access->localRepositories},
                       {QStringLiteral("ssh_agent"), access->sshAgent},
                       {QStringLiteral("internal_hosts"), access->internalHosts},
                       {QStringLiteral("preview_forks"), access->previewForks},
                       {QStringLiteral("member_ports"), access->memberPorts.text()},
                       {QStringLiteral("deploy_log_days"), access->deployLogDays}};
}

// The app settings a PUT body names, over the current ones.
Result<core::policy::AppAccess> appAccessBody(const QJsonObject &body, core::policy::AppAccess access)
{
    const QList<std::pair<QString, bool *>> flags = {{QStringLiteral("local_repositories"), &access.localRepositories},
                                                     {QStringLiteral("ssh_agent"), &access.sshAgent},
                                                     {QStringLiteral("internal_hosts"), &access.internalHosts},
                                                     {QStringLiteral("preview_forks"), &access.previewForks}};
    for (const auto &[key, field] : flags) {
        if (!body.contains(key))
            continue;
        if (!body.value(key).isBool())
            return fail(ErrorCode::Invalid, QStringLiteral("must be true or false"), key,
                        QStringLiteral("send {\"%1\": true}").arg(key));
        *field = body.value(key).toBool();
    }
    if (body.contains(QStringLiteral("member_ports"))) {
        auto range = core::policy::PortRange::parse(body.value(QStringLiteral("member_ports")).toString(),
                                                    QStringLiteral("member_ports"));
        if (!range)
            return std::unexpected(range.error());
        access.memberPorts = *range;
    }
    if (body.contains(QStringLiteral("deploy_log_days"))) {
        auto days = core::policy::AppAccess::parseDeployLogDays(body.value(QStringLiteral("deploy_log_days")),
                                                                QStringLiteral("deploy_log_days"));
        if (!days)
            return std::unexpected(days.error());
        access.deployLogDays = *days;
    }
    return access;
}

// The domain settings a PUT body names, over the current ones: allowed_domains as a list of
// names or one comma-separated string.
Result<core::policy::DomainPolicy> domainPolicyBody(const QJsonObject &body, core::policy::DomainPolicy domains)
{
    const QString base = QStringLiteral("base_domain");
    const QString allowed = QStringLiteral("allowed_domains");
    const QString wildcards = QStringLiteral("wildcard_domains");
    if (body.contains(base)) {
        if (!body.value(base).isString())
            return fail(ErrorCode::Invalid, QStringLiteral("must be a domain name, or \"\" for none"), base);
        auto name = core::policy::parseBaseDomain(body.value(base).toString(), base);
        if (!name)
            return std::unexpected(name.error());
        domains.baseDomain = *name;
    }
    if (body.contains(allowed)) {
        QStringList names;
        const QJsonValue value = body.value(allowed);
        if (value.isString())
            names = value.toString().split(QLatin1Char(','));
        else if (value.isArray())
            for (const QJsonValue item : value.toArray()) {
                if (!item.isString())
                    return fail(ErrorCode::Invalid, QStringLiteral("must be a list of domain names"), allowed);
                names << item.toString();
            }
        else
            return fail(ErrorCode::Invalid, QStringLiteral("must be a list of domain names"), allowed,
                        QStringLiteral("send {\"allowed_domains\": [\"example.com\"]}, or [] for any name"));
        auto parsed = core::policy::parseAllowedDomains(names, allowed);
        if (!parsed)
            return std::unexpected(parsed.error());
        domains.allowed = *parsed;
    }
    if (body.contains(wildcards)) {
        if (!body.value(wildcards).isBool())
            return fail(ErrorCode::Invalid, QStringLiteral("must be true or false"), wildcards);
        domains.wildcards = body.value(wildcards).toBool();
    }
    return domains;
}

} // namespace

Reply showSettings(Call &call)
{
    auto settings = settingsJson(call);
    if (!settings)
        return errorReply(settings.error());
    return Reply{200, *settings};
}

Reply updateSettings(Call &call)
{
    const QStringList keys = {QStringLiteral("host_execution"),  QStringLiteral("local_repositories"),
                              QStringLiteral("ssh_agent"),       QStringLiteral("internal_hosts"),
                              QStringLiteral("preview_forks"),   QStringLiteral("member_ports"),
                              QStringLiteral("deploy_log_days"), QStringLiteral("base_domain"),
                              QStringLiteral("allowed_domains"), QStringLiteral("wildcard_domains")};
    auto body = jsonObjectBody(call.request, keys, QStringLiteral("{\"ssh_agent\": false}"));
    if (!body)
        return errorReply(body.error());
    if (body->isEmpty())
        return errorReply(Error{ErrorCode::Invalid, QStringLiteral("names no setting"), QStringLiteral("body"),
                                QStringLiteral("send one or more of ") + keys.join(QStringLiteral(", "))});
    auto current = call.engine.appAccess();
    if (!current)
        return errorReply(current.error());
    auto access = appAccessBody(*body, *current);
    if (!access)
        return errorReply(access.error());
    auto currentDomains = call.engine.domainPolicy();
    if (!currentDomains)
        return errorReply(currentDomains.error());
    auto domains = domainPolicyBody(*body, *currentDomains);
    if (!domains)
        return errorReply(domains.error());
    if (body->contains(QStringLiteral("host_execution"))) {
        auto enabled = boolBody(call, QStringLiteral("host_execution"), keys);
        if (!enabled)
            return errorReply(enabled.error());
        PipelineService *s = call.engine.pipelines();
        if (!s)
            return errorReply(notEnabled());
        if (auto set = s->setHostExecution(*enabled, call.actor); !set)
            return errorReply(set.error());
    }
    if (auto set = call.engine.setAppAccess(*access, call.actor); !set)
        return errorReply(set.error());
    if (auto set = call.engine.setDomainPolicy(*domains, call.actor); !set)
        return errorReply(set.error());
    return showSettings(call);
}

Reply setPipelineHostExecution(Call &call)
{
    PipelineService *s = call.engine.pipelines();
    if (!s)
        return errorReply(notEnabled());
    auto allowed = boolBody(call, QStringLiteral("allowed"));
    if (!allowed)
        return errorReply(allowed.error());
    if (auto set = s->setPipelineHostExecution(call.args.value(0), *allowed, call.actor); !set)
        return errorReply(set.error());
    auto view = s->pipeline(call.args.value(0));
    if (!view)
        return errorReply(view.error());
    return Reply{200, view->toJson()};
}

} // namespace pando::server::pipelineapi
