#pragma once
// Package config reads a Concourse-style pipeline file (resource_types, resources, jobs, groups)
// into the typed model the pipeline engine runs: merkle hashing, the orchestrator, the scheduler
// and triggers all consume these types. Parsing goes through the one YAML reader (size, depth,
// alias and duplicate-key limits), `((var))` placeholders are resolved by the template package
// before typing, and every error is ErrorCode::Invalid with `where` set to the path it was found
// at ("jobs[2].plan[0].task"). It also resolves a task step against its config (the merge both
// plan-time hashing and run-time execution share).
//
// Storage rule: secrets never reach anything persisted. Store the pipeline's raw YAML text (and
// its vars file) as given; parse with secrets resolved only at run time, in memory. A Pipeline
// parsed with SecretMode::Placeholder keeps `((name))` in its strings and may be shown or diffed.
//
// All functions are pure and thread-safe.

#include "adapters/api/error.h"
#include "core/pipelines/template/interpolate.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

namespace pando::core::pipelines {

// A resource version, as in Concourse: a flat map of strings ({"ref": "abc123"}).
using VersionMap = QMap<QString, QString>;

// ---------------------------------------------------------------------------------------------
// Task configuration (inline under a task step's `config:` or read from a `file:` at run time).

// `image_resource` names an image in the local Docker engine; nothing is pulled.
struct ImageResource {
    QString type = QStringLiteral("registry-image");              // "registry-image" or "docker-image"
    QString repository;                                           // source.repository, required
    QString tag = QStringLiteral("latest");                       // source.tag
    QString reference() const { return repository + u':' + tag; } // "repository:tag"
};

struct TaskInput {
    QString name;          // the artifact name the task expects ([a-zA-Z0-9_.-]+)
    QString path;          // where it appears, relative to the work dir; defaults to name
    bool optional = false; // a missing artifact is skipped instead of an error
};

struct TaskOutput {
    QString name; // unique within the task
    QString path; // relative to the work dir; defaults to name
};

struct TaskCache {
    QString path; // relative to the work dir; kept between runs of the same step
};

struct TaskRun {
    QString path;     // the program: looked up on PATH (host) or in the image, or a path
    QStringList args; // passed as argv, never joined into a shell string
    QString dir;      // working directory relative to the task's work dir; empty: the work dir
    QString user;     // container user; container tasks only
    // The user wrote a shell command: path is sh/bash (or /bin/sh, /bin/bash) and args[0] is "-c".
    bool isShell() const;
    QStringList argv() const { return QStringList{path} + args; }
};

struct ContainerLimits {
    double cpus = 0;        // `cpu:` number of CPUs (0: no limit). Concourse uses shares; see docs
    qint64 memoryBytes = 0; // `memory:` bytes or "512Mi"/"1Gi"/"256M" (0: no limit)
};

struct TaskConfig {
    enum class Platform { Linux, Host };
    Platform platform = Platform::Linux;
    std::optional<ImageResource> imageResource; // none: the task runs on the host (see runsOnHost)
    QList<TaskInput> inputs;
    QList<TaskOutput> outputs;
    QList<TaskCache> caches;
    QMap<QString, QString> params; // environment; numbers and booleans in YAML become text
    TaskRun run;
    ContainerLimits limits;

    // platform: host, or no image_resource. (A task step's `image:` overrides this; see
    // ResolvedTask for the final decision.)
    bool runsOnHost() const { return platform == Platform::Host || !imageResource; }
};

// ---------------------------------------------------------------------------------------------
// Steps

enum class StepKind { Get, Put, Task, InParallel, Do, Try, Approve, LoadVar, SetPipeline };
// "get", "put", "task", "in_parallel", "do", "try", "approve", "load_var", "set_pipeline"
QString stepKindName(StepKind kind);

struct Step;
using StepPtr = std::shared_ptr<const Step>;

// on_success: the step succeeded; on_failure: it failed (non-zero exit); on_error: an
// infrastructure error; on_abort: it was cancelled; ensure: always, after the others.
struct Hooks {
    StepPtr onSuccess, onFailure, onError, onAbort, ensure;
    bool isEmpty() const { return !onSuccess && !onFailure && !onError && !onAbort && !ensure; }
};

struct GetStep {
    QString resource;     // `resource:`, defaults to the step's name
    QStringList passed;   // job names the version must have passed through
    bool trigger = false; // a new version starts the job
    enum class Version { Latest, Every, Pinned } version = Version::Latest;
    VersionMap pinned;  // Version::Pinned
    QJsonObject params; // free-form, handed to the resource type's `in`
};

struct PutStep {
    QString resource;                                             // `resource:`, defaults to the step's name
    enum class Inputs { All, Detect, List } inputs = Inputs::All; // Concourse's default is all
    QStringList inputList;                                        // Inputs::List
    QJsonObject params;                                           // handed to `out`
    QJsonObject getParams;                                        // handed to the implicit get's `in`
    bool noGet = false; // skip the implicit get (then the put produces no artifact)
};

struct TaskStep {
    std::optional<TaskConfig> config; // `config:` (inline); exclusive with file
    QString file;                     // `file:` "artifact/path/task.yml", read at run time
    QString image;                    // `image:` an artifact to use as the image; empty: none
    // `privileged:` the container gets every capability of the host. As much as running on the
    // host: only a pipeline allowed host execution runs such a task (hostpolicy.h).
    bool privileged = false;
    QMap<QString, QString> params;        // override the config's params
    QMap<QString, QString> inputMapping;  // task input name → artifact name in the plan
    QMap<QString, QString> outputMapping; // task output name → artifact name in the plan
    // `shared_cache: true`: an unchanged run of this step may be restored from any pipeline's
    // identical container step (content alone decides); otherwise only from this pipeline's.
    bool sharedCache = false;
    // `vars:` fill the ((placeholders)) of the `file:` task's config when it is read at run time
    // (a mapping; null when the step has none). Ignored for an inline config, as in Concourse.
    std::shared_ptr<const core::detail::DocNode> vars;
    QString fileArtifact() const { return file.section(u'/', 0, 0); } // "repo" for "repo/ci/t.yml"
};

// Pando's own step: the run pauses until a person signs off (the approval service, as for
// deploys). Its `timeout:` is how long the request stays open, not the generic step modifier.
struct ApproveStep {
    static constexpr qint64 DefaultTimeoutMs = 24LL * 60 * 60 * 1000;  // 24h
    static constexpr qint64 MaxTimeoutMs = 30LL * 24 * 60 * 60 * 1000; // 720h
    QString message;       // `message:` shown to approvers; empty: a default naming the step
    QStringList approvers; // `approvers:` usernames and "role:<role>"; empty: any person but the requester
    qint64 timeoutMs = DefaultTimeoutMs; // `timeout:` past it the request expires and the step fails
};

// `load_var: NAME` reads a file of an artifact into the run's local var NAME, which later steps
// use as `((.:NAME))` or `((.:NAME.field))`.
struct LoadVarStep {
    QString file; // "artifact/path/in/it"
    // Auto: json for .json, yaml for .yml/.yaml, trim otherwise. Raw keeps the text as it is;
    // trim drops blanks around it.
    enum class Format { Auto, Json, Yaml, Raw, Trim } format = Format::Auto;
    bool reveal = false; // false: the value is masked in the run's output, as a secret is
    QString fileArtifact() const { return file.section(u'/', 0, 0); }
};

// `set_pipeline: NAME` (or `self`) sets a pipeline from a file of an artifact, as the person who
// set this one would with `pando pipelines set`, but only this pipeline or ones it created.
struct SetPipelineStep {
    QString file;                                      // "artifact/path/to/pipeline.yml"
    QStringList varFiles;                              // `var_files:` artifact paths, read in order; later ones win
    std::shared_ptr<const core::detail::DocNode> vars; // `vars:` a mapping; wins over var_files
    // `instance_vars:` the instance of the named pipeline set (instancename.h); vars of it too
    std::shared_ptr<const core::detail::DocNode> instanceVars;
    bool self = false; // `set_pipeline: self`
    QString fileArtifact() const { return file.section(u'/', 0, 0); }
};

// One var of an `across:` modifier: the step runs once for each of its values (and each
// combination with the other vars'), which the step uses as ((.:name)).
struct AcrossVar {
    QString name;
    // A list, or text holding one ((.:name)) placeholder that names a list a load_var step loaded.
    std::shared_ptr<const core::detail::DocNode> values;
    int maxInFlight = 1; // values of this var at once; 0: all
};

struct Step {
    StepKind kind = StepKind::Task;
    // Stable identity and error location: the step's YAML path plus its kind key, e.g.
    // "jobs[2].plan[0].in_parallel.steps[1].task", "jobs[0].plan[3].try.get",
    // "jobs[0].plan[1].on_failure.put", "jobs[0].on_abort.task".
    QString path;
    int line = 0; // 1-based line of the step in the file (0: unknown)
    QString name; // get/put/task/approve name; empty for in_parallel, do, try

    GetStep get;                 // StepKind::Get
    PutStep put;                 // StepKind::Put
    TaskStep task;               // StepKind::Task
    ApproveStep approve;         // StepKind::Approve
    LoadVarStep loadVar;         // StepKind::LoadVar
    SetPipelineStep setPipeline; // StepKind::SetPipeline

    // The step as written when it uses a run's local vars (`((.:name))`): get, put, task,
    // approve and load_var steps are read again from it, those vars filled in, when they run.
    // location is what it was read at ("jobs[0].plan[2]"). Null when it uses none.
    std::shared_ptr<const core::detail::DocNode> written;
    QString location;

    // `across:` the step runs once per combination of these vars' values (then `written` is the
    // whole step, read again for each); `fail_fast:` the first that fails stops the others.
    std::vector<AcrossVar> across;
    bool acrossFailFast = false;

    std::vector<Step> steps; // InParallel, Do: the children in order; Try: exactly one
    int parallelLimit = 0;   // InParallel: at most this many at once (0: all)
    bool failFast = false;   // InParallel: abort the siblings on the first failure

    // `tags:` the workers Concourse would pick; read and kept, and every step runs on this
    // install's engine whatever they say.
    QStringList tags;
    int attempts = 1;     // >= 1; the step runs again on failure or error, not on abort (1 for approve)
    qint64 timeoutMs = 0; // > 0, or 0 for none; covers each attempt (0 for approve: see ApproveStep)
    Hooks hooks;

    // Where one of the step's own keys is written: "jobs[0].plan[1].privileged" for the task
    // step at "jobs[0].plan[1].task" (keys sit beside the kind's key, not under it).
    QString keyPath(const QString &key) const { return path.section(u'.', 0, -2) + u'.' + key; }

    // The artifact this step adds to the plan: a get's name, a put's name unless no_get.
    // (Task outputs are listed by ResolvedTask / taskOutputArtifacts.)
    QString artifact() const;
};

// ---------------------------------------------------------------------------------------------
// Pipeline

// A command of a shell-defined resource type: a list is argv, a string is run as {"sh","-c",s}.
struct Command {
    QStringList argv;
    bool shell = false; // written as a string
    bool isEmpty() const { return argv.isEmpty(); }
};

struct ResourceType {
    QString name;
    QString path; // "resource_types[1]"
    enum class Kind {
        Image,   // type registry-image/docker-image: a Concourse resource image from the local
                 // engine, run as /opt/resource/{check,in,out}
        BuiltIn, // type git or time: the built-in, under another name with `defaults`
        Shell,   // Pando's `commands: {check, in, out}`, JSON on stdin, in `image` or on the host
    } kind = Kind::Shell;
    QString type;            // "registry-image", "docker-image", "git", "time"; empty for Shell
    QJsonObject source;      // Image: {repository, tag}; otherwise empty
    QString image;           // Image: source's "repository:tag"; Shell: `image:`; empty: host
    QJsonObject defaults;    // merged under each resource's source (the resource's keys win)
    Command check, in, out;  // Shell only; check and in are required
    qint64 checkEveryMs = 0; // default for its resources (0: use the resource's/1m)
};

struct Resource {
    QString name;
    QString path;                // "resources[0]"
    QString type;                // a declared resource type or a built-in (builtinResourceTypes())
    QJsonObject source;          // free-form, with the type's defaults already merged in
    qint64 checkEveryMs = 60000; // `check_every:` duration; "never" gives 0 (webhooks only)
    static constexpr qint64 DefaultCheckTimeoutMs = 60LL * 60 * 1000; // Concourse's 1h
    qint64 checkTimeoutMs = DefaultCheckTimeoutMs;                    // `check_timeout:` a check running longer fails
    QString webhookToken;                                             // `webhook_token:`; empty: no webhook
    QString icon;                            // `icon:` a Material Design icon name, for views only
    std::optional<VersionMap> pinnedVersion; // `version:` every get of it uses this version
    bool exposeBuildCreatedBy = false;       // `expose_build_created_by:` its get and put see BUILD_CREATED_BY
    bool isPublic = false;                   // `public:` read as Concourse has it; every view needs a sign-in here
    // `old_name:` the resource was called this; setting the pipeline carries its versions, its
    // pin and the runs' record of what they got over to this name.
    QString oldName;
};

// `build_log_retention:` (or the older `build_logs_to_retain: N`): which finished runs of a job
// keep their logs. A run past the limits keeps its record and status; its log is removed.
struct LogRetention {
    int builds = 0;           // keep the logs of this many newest runs (0: no count limit)
    int days = 0;             // keep the logs of runs finished in this many days (0: no age limit)
    int minimumSucceeded = 0; // always keep this many newest succeeded runs' logs
    bool isEmpty() const { return builds == 0 && days == 0; }
};

struct Job {
    QString name;
    QString path; // "jobs[2]"
    std::vector<Step> plan;
    bool serial = false; // builds run one at a time (max_in_flight 1)
    // Builds of this job at once (0: unlimited). As in Concourse, `serial:` or `serial_groups:`
    // make it 1 whatever `max_in_flight:` says.
    int maxInFlight = 0;
    // `serial_groups:` a build of this job does not start while a build of any job sharing one
    // of these groups runs; queued builds of the group start in the order they were queued.
    QStringList serialGroups;
    LogRetention logRetention;
    // `old_name:` the job was called this; setting the pipeline renames its runs (history kept).
    QString oldName;
    bool isPublic = false; // `public:`
    // `disable_manual_trigger:` nobody starts it by hand (pando jobs trigger, the API, the
    // desktop); its resources' new versions and passed: still do.
    bool disableManualTrigger = false;
    // `interruptible:` read as Concourse has it; Pando retires no workers, so nothing waits on it.
    bool interruptible = false;
    Hooks hooks; // run after the whole plan
};

struct Group {
    QString name;
    QStringList jobs; // declared job names
};

// `display:` how Concourse's web UI draws the pipeline. Read and kept; Pando's views draw no
// background.
struct Display {
    QString backgroundImage;  // a URL
    QString backgroundFilter; // a CSS filter
};

struct Pipeline {
    QList<ResourceType> resourceTypes;
    QList<Resource> resources;
    QList<Job> jobs;
    QList<Group> groups;
    Display display;
    // `var_sources:` in file order; their configs resolved when the file was read for a run.
    QList<VarSourceConfig> varSources;
    QStringList secretNames; // secrets the file used (resolved or left as placeholders)
    QStringList varNames;    // vars-file entries the file used
    // Top-level keys the pipeline does not read, in file order: fly accepts them (they hold
    // anchors) and so does Pando, saying so.
    QStringList ignoredKeys;
    // Placeholders nothing gave a value when the file was read (InterpolationSources::
    // allowUndefined), as written ("db.password"): a run resolves them from the secrets store.
    QStringList undefinedVars;

    const ResourceType *resourceType(const QString &name) const;
    const Resource *resource(const QString &name) const;
    const Job *job(const QString &name) const;
};

// Calls visit for every step of the job: its plan's, nested ones and hooks (the job's too).
void forEachStepOf(const Job &job, const std::function<void(const Step &)> &visit);

// Resource types every pipeline may use without declaring them.
QStringList builtinResourceTypes(); // git, s3, semver, time, mock, registry-image, docker-image

// A webhook token is a credential anyone on the network may guess at: at least 128 bits, which
// is 32 characters of hex (what `pando pipelines webhook-token` prints is 64).
inline constexpr int MinWebhookTokenChars = 32;
// Why value cannot be a webhook token (too short), naming where; empty when it can.
std::optional<Error> webhookTokenProblem(const QString &value, const QString &where);
// The secret name a value that is exactly one ((placeholder)) names ("" otherwise): the
// webhook token's form when it comes from the secret store.
QString placeholderSecretName(const QString &value);

// A var given when a pipeline is set, as fly takes them: `-v NAME=VALUE` (text) or
// `-y NAME=YAML` (any value). A dotted name sets a field ("db.host"), making the mappings it needs.
struct VarFlag {
    QString name;
    QString value;
    bool yaml = false;
};

// The vars file with the flags set on top, in order (a later one wins over the file and earlier
// flags), as one mapping written as JSON (which YAML reads); the file as it is without flags.
// Errors name the flag ("--var a..b: ...").
Result<QByteArray> withVarFlags(const QByteArray &varsYaml, const QList<VarFlag> &flags);

// Parses, interpolates and validates a pipeline file. Without a vars file or secret lookup, any
// `((placeholder))` is an "undefined var" error naming it.
Result<Pipeline> parsePipeline(const QByteArray &yaml, const InterpolationSources &interpolation = {});

// A task config read from an artifact at run time (`file:` tasks). `fileName` prefixes every
// error's `where` ("ci/build.yml: run.path"). Placeholders resolve from `interpolation`.
Result<TaskConfig> parseTaskConfigFile(const QByteArray &yaml, const QString &fileName,
                                       const InterpolationSources &interpolation = {});

// A step that uses a run's local vars (Step::written) read again with their values (a mapping of
// name → value, what load_var steps loaded so far); any other step comes back as it is. An
// error names the placeholder's path ("jobs[0].plan[2].task.params.TAG: undefined local var").
Result<Step> fillLocalVars(const Step &step, const core::detail::DocNode &locals);

// One combination of an across step's values: the step as written, without across:, read with
// `values` (a mapping of var name → value) filled in, at the path `<location>.across[index]`.
// The run's load_var placeholders stay for when it runs.
Result<Step> acrossIteration(const Step &step, const core::detail::DocNode &values, int index);

// ---------------------------------------------------------------------------------------------
// Task resolution: the one merge of a task step with its config that hashing and running share.

struct ResolvedTask {
    QString stepPath;
    TaskConfig config; // params: the config's, overridden by the step's
    enum class Venue { Host, Image, ImageArtifact } venue = Venue::Host;
    QString image; // Image: "repository:tag"; ImageArtifact: the artifact name
    struct Input {
        QString name;     // as the config names it
        QString artifact; // the plan's artifact (input_mapping applied)
        QString path;     // relative to the work dir
        bool optional = false;
    };
    QList<Input> inputs;
    struct Output {
        QString name;
        QString artifact; // output_mapping applied
        QString path;
    };
    QList<Output> outputs;
    QStringList argv;   // run.path + run.args, exactly; never a joined string
    bool shell = false; // the user wrote `sh -c` (TaskRun::isShell)
};

// Merges `step` (a task step) with its config: the inline one, or `fileConfig` for a `file:`
// task (required then). Errors: a host task with run.user, an input_mapping/output_mapping key
// the config does not declare, a file task without its config.
Result<ResolvedTask> resolveTask(const Step &step, const TaskConfig *fileConfig = nullptr);

// The artifact names a task step adds to the plan: its outputs after output_mapping (empty for a
// `file:` task, whose outputs are known only at run time).
QStringList taskOutputArtifacts(const Step &step);

} // namespace pando::core::pipelines
