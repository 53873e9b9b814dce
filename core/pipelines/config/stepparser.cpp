// One step of a plan, recursively: get, put, task, approve, in_parallel, do, try and their modifiers.
#include "core/pipelines/config/validate.h"

#include "core/approval/approvalservice.h"

#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines::internal {

namespace {

const QStringList &kindKeys()
{
    static const QStringList keys{u"get"_s,          u"put"_s,         u"task"_s, u"approve"_s, u"load_var"_s,
                                  u"set_pipeline"_s, u"in_parallel"_s, u"do"_s,   u"try"_s};
    return keys;
}

const QStringList &hookKeys()
{
    static const QStringList keys{u"on_success"_s, u"on_failure"_s, u"on_error"_s, u"on_abort"_s, u"ensure"_s};
    return keys;
}

const QStringList &modifierKeys()
{
    static const QStringList keys =
        QStringList{u"attempts"_s, u"timeout"_s, u"tags"_s, u"across"_s, u"fail_fast"_s} + hookKeys();
    return keys;
}

Result<std::vector<Step>> parseStepList(const DocNode &node, const QString &path)
{
    if (node.kind != DocNode::Kind::Sequence)
        return wrongType(node, path, u"a list of steps"_s);
    std::vector<Step> steps;
    for (size_t i = 0; i < node.items.size(); ++i) {
        PANDO_PIPE_TRY(step, parseStep(node.items[i], at(path, qsizetype(i))));
        steps.push_back(std::move(*step));
    }
    return steps;
}

Status parseGet(const DocNode &node, const QString &location, Step &step)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, step.path,
                                   modifierKeys() + QStringList{u"get"_s, u"resource"_s, u"passed"_s, u"trigger"_s,
                                                                u"version"_s, u"params"_s}));
    step.get.resource = step.name;
    if (const DocNode *resource = node.value(u"resource"_s); !isNull(resource)) {
        PANDO_PIPE_TRY(text, string(*resource, join(location, u"resource"_s)));
        step.get.resource = *text;
    }
    if (const DocNode *passed = node.value(u"passed"_s)) {
        PANDO_PIPE_TRY(list, stringList(*passed, join(location, u"passed"_s)));
        step.get.passed = *list;
    }
    if (const DocNode *trigger = node.value(u"trigger"_s)) {
        PANDO_PIPE_TRY(flag, boolean(*trigger, join(location, u"trigger"_s)));
        step.get.trigger = *flag;
    }
    if (const DocNode *version = node.value(u"version"_s); !isNull(version)) {
        const QString versionPath = join(location, u"version"_s);
        if (version->kind == DocNode::Kind::Map) {
            PANDO_PIPE_TRY(map, stringMap(*version, versionPath));
            if (map->isEmpty())
                return invalid(versionPath, u"a pinned version must name at least one field"_s);
            step.get.version = GetStep::Version::Pinned;
            step.get.pinned = *map;
        } else if (version->kind == DocNode::Kind::Scalar && version->text == u"latest") {
            step.get.version = GetStep::Version::Latest;
        } else if (version->kind == DocNode::Kind::Scalar && version->text == u"every") {
            step.get.version = GetStep::Version::Every;
        } else {
            return wrongType(*version, versionPath, u"\"latest\", \"every\" or a version mapping"_s);
        }
    }
    if (const DocNode *params = node.value(u"params"_s)) {
        PANDO_PIPE_TRY(object, jsonObject(*params, join(location, u"params"_s)));
        step.get.params = *object;
    }
    return {};
}

Status parsePut(const DocNode &node, const QString &location, Step &step)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, step.path,
                                   modifierKeys() + QStringList{u"put"_s, u"resource"_s, u"inputs"_s, u"params"_s,
                                                                u"get_params"_s, u"no_get"_s}));
    step.put.resource = step.name;
    if (const DocNode *resource = node.value(u"resource"_s); !isNull(resource)) {
        PANDO_PIPE_TRY(text, string(*resource, join(location, u"resource"_s)));
        step.put.resource = *text;
    }
    if (const DocNode *inputs = node.value(u"inputs"_s); !isNull(inputs)) {
        const QString inputsPath = join(location, u"inputs"_s);
        if (inputs->kind == DocNode::Kind::Scalar && inputs->text == u"all") {
            step.put.inputs = PutStep::Inputs::All;
        } else if (inputs->kind == DocNode::Kind::Scalar && inputs->text == u"detect") {
            step.put.inputs = PutStep::Inputs::Detect;
        } else if (inputs->kind == DocNode::Kind::Sequence) {
            PANDO_PIPE_TRY(list, stringList(*inputs, inputsPath));
            step.put.inputs = PutStep::Inputs::List;
            step.put.inputList = *list;
        } else {
            return wrongType(*inputs, inputsPath, u"\"all\", \"detect\" or a list of artifact names"_s);
        }
    }
    if (const DocNode *params = node.value(u"params"_s)) {
        PANDO_PIPE_TRY(object, jsonObject(*params, join(location, u"params"_s)));
        step.put.params = *object;
    }
    if (const DocNode *params = node.value(u"get_params"_s)) {
        PANDO_PIPE_TRY(object, jsonObject(*params, join(location, u"get_params"_s)));
        step.put.getParams = *object;
    }
    if (const DocNode *noGet = node.value(u"no_get"_s)) {
        PANDO_PIPE_TRY(flag, boolean(*noGet, join(location, u"no_get"_s)));
        step.put.noGet = *flag;
    }
    return {};
}

// A `file:` of an artifact, "artifact/path/to/<example>": relative, inside it, naming it first.
Result<QString> artifactFile(const DocNode &node, const QString &where, const QString &example)
{
    PANDO_PIPE_TRY(text, string(node, where));
    PANDO_PIPE_TRY(relative, checkRelativePath(*text, where));
    if (!text->contains(u'/'))
        return invalid(where, u"file: is \"artifact/path/to/%1\", starting with an artifact's name"_s.arg(example));
    return *text;
}

Status parseTask(const DocNode &node, const QString &location, Step &step)
{
    PANDO_PIPE_TRY(keys,
                   checkKeys(node, step.path,
                             modifierKeys() + QStringList{u"task"_s, u"config"_s, u"file"_s, u"image"_s,
                                                          u"privileged"_s, u"params"_s, u"vars"_s, u"input_mapping"_s,
                                                          u"output_mapping"_s, u"shared_cache"_s}));
    if (const DocNode *privileged = node.value(u"privileged"_s); !isNull(privileged)) {
        PANDO_PIPE_TRY(flag, boolean(*privileged, join(location, u"privileged"_s)));
        step.task.privileged = *flag;
    }
    const DocNode *config = node.value(u"config"_s);
    const DocNode *file = node.value(u"file"_s);
    if (!isNull(config) && !isNull(file))
        return invalid(step.path, u"a task takes config: or file:, not both"_s);
    if (isNull(config) && isNull(file))
        return invalid(step.path, u"a task needs config: (inline) or file: (a task file in an input)"_s);
    if (!isNull(config)) {
        PANDO_PIPE_TRY(value, parseTaskConfig(*config, join(location, u"config"_s)));
        step.task.config = std::move(*value);
    } else {
        PANDO_PIPE_TRY(text, artifactFile(*file, join(location, u"file"_s), u"task.yml"_s));
        step.task.file = *text;
    }
    if (const DocNode *image = node.value(u"image"_s); !isNull(image)) {
        PANDO_PIPE_TRY(text, string(*image, join(location, u"image"_s)));
        PANDO_PIPE_TRY(ok, checkName(*text, join(location, u"image"_s), u"artifact"_s));
        step.task.image = *text;
    }
    if (const DocNode *params = node.value(u"params"_s)) {
        PANDO_PIPE_TRY(map, stringMap(*params, join(location, u"params"_s)));
        step.task.params = *map;
    }
    if (const DocNode *vars = node.value(u"vars"_s); !isNull(vars)) {
        if (vars->kind != DocNode::Kind::Map)
            return wrongType(*vars, join(location, u"vars"_s), u"a mapping of names to values"_s);
        step.task.vars = std::make_shared<const DocNode>(*vars);
    }
    if (const DocNode *shared = node.value(u"shared_cache"_s)) {
        PANDO_PIPE_TRY(flag, boolean(*shared, join(location, u"shared_cache"_s)));
        step.task.sharedCache = *flag;
    }
    for (const auto &[key, member] : {std::pair{u"input_mapping"_s, &step.task.inputMapping},
                                      std::pair{u"output_mapping"_s, &step.task.outputMapping}}) {
        if (const DocNode *mapping = node.value(key)) {
            const QString mappingPath = join(location, key);
            PANDO_PIPE_TRY(map, stringMap(*mapping, mappingPath));
            for (auto it = map->cbegin(); it != map->cend(); ++it) {
                PANDO_PIPE_TRY(ok, checkName(it.value(), join(mappingPath, it.key()), u"artifact"_s));
            }
            *member = *map;
        }
    }
    if (step.task.config) {
        // Mapping a name the task does not declare is a typo that would otherwise pass silently.
        Step probe = step;
        PANDO_PIPE_TRY(resolved, resolveTask(probe));
        QStringList seen;
        for (const auto &output : resolved->outputs) {
            if (seen.contains(output.artifact))
                return invalid(step.path, u"two outputs map to the same name \"%1\""_s.arg(output.artifact));
            seen << output.artifact;
        }
    }
    return {};
}

// An approve step's `timeout:` is the request's lifetime: past it the request expires and the
// step fails (nobody said yes). The generic `timeout:` modifier (which errors a step) would
// measure the same wait, so it is not applied; `attempts:` is refused, since asking again after
// a rejection would overrule the person who rejected.
Status parseApprove(const DocNode &node, const QString &location, Step &step)
{
    if (node.value(u"attempts"_s)) {
        return invalid(join(location, u"attempts"_s), u"an approve step takes no attempts: a rejection is a decision"_s,
                       u"to go on after a rejection or an expiry, wrap the step in try:"_s);
    }
    // "approvers" before "approve": a stray "approver" means the list (closest() keeps the first of a tie).
    PANDO_PIPE_TRY(keys, checkKeys(node, step.path,
                                   QStringList{u"approvers"_s, u"message"_s, u"timeout"_s, u"approve"_s} + hookKeys()));
    if (const DocNode *message = node.value(u"message"_s); !isNull(message)) {
        PANDO_PIPE_TRY(text, string(*message, join(location, u"message"_s)));
        if (text->size() > 2000)
            return invalid(join(location, u"message"_s), u"a message is at most 2000 characters"_s);
        step.approve.message = text->trimmed();
    }
    if (const DocNode *approvers = node.value(u"approvers"_s); !isNull(approvers)) {
        const QString approversPath = join(location, u"approvers"_s);
        if (approvers->kind != DocNode::Kind::Sequence)
            return wrongType(*approvers, approversPath, u"a list of usernames and role:<role> entries"_s);
        PANDO_PIPE_TRY(list, stringList(*approvers, approversPath));
        if (list->isEmpty()) {
            return invalid(approversPath, u"an empty approvers list lets nobody approve"_s,
                           u"leave approvers: out to let any person but the requester approve"_s);
        }
        for (qsizetype i = 0; i < list->size(); ++i) {
            const QString entryPath = at(approversPath, i);
            if (auto valid = approval::validateApprover(list->at(i)); !valid)
                return invalid(entryPath, valid.error().message,
                               u"a username (alice) or role:<role> (role:operator)"_s);
            if (list->indexOf(list->at(i)) < i)
                return invalid(entryPath, u"\"%1\" is listed twice"_s.arg(list->at(i)));
        }
        step.approve.approvers = *list;
    }
    if (const DocNode *timeout = node.value(u"timeout"_s); !isNull(timeout)) {
        const QString timeoutPath = join(location, u"timeout"_s);
        PANDO_PIPE_TRY(ms, duration(*timeout, timeoutPath));
        if (*ms > ApproveStep::MaxTimeoutMs)
            return invalid(timeoutPath, u"an approval stays open at most 720h (30 days)"_s,
                           u"a waiting run holds its run slot; ask for a shorter decision"_s);
        step.approve.timeoutMs = *ms;
    }
    return {};
}

Status parseLoadVar(const DocNode &node, const QString &location, Step &step)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, step.path,
                                   modifierKeys() + QStringList{u"load_var"_s, u"file"_s, u"format"_s, u"reveal"_s}));
    const DocNode *file = node.value(u"file"_s);
    if (isNull(file))
        return invalid(step.path, u"a load_var step needs file: (\"artifact/path/to/file\")"_s);
    PANDO_PIPE_TRY(text, artifactFile(*file, join(location, u"file"_s), u"file"_s));
    step.loadVar.file = *text;
    if (const DocNode *format = node.value(u"format"_s); !isNull(format)) {
        PANDO_PIPE_TRY(word, string(*format, join(location, u"format"_s)));
        static const QMap<QString, LoadVarStep::Format> formats{{u"json"_s, LoadVarStep::Format::Json},
                                                                {u"yaml"_s, LoadVarStep::Format::Yaml},
                                                                {u"yml"_s, LoadVarStep::Format::Yaml},
                                                                {u"raw"_s, LoadVarStep::Format::Raw},
                                                                {u"trim"_s, LoadVarStep::Format::Trim}};
        if (!formats.contains(*word))
            return invalid(join(location, u"format"_s),
                           u"format \"%1\" is not one of json, yaml, yml, raw, trim"_s.arg(*word));
        step.loadVar.format = formats.value(*word);
    }
    if (const DocNode *reveal = node.value(u"reveal"_s); !isNull(reveal)) {
        PANDO_PIPE_TRY(flag, boolean(*reveal, join(location, u"reveal"_s)));
        step.loadVar.reveal = *flag;
    }
    return {};
}

Status parseSetPipeline(const DocNode &node, const QString &location, Step &step)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, step.path,
                                   modifierKeys() + QStringList{u"set_pipeline"_s, u"file"_s, u"vars"_s, u"var_files"_s,
                                                                u"instance_vars"_s, u"team"_s}));
    step.setPipeline.self = step.name == u"self";
    const DocNode *file = node.value(u"file"_s);
    if (isNull(file))
        return invalid(step.path, u"a set_pipeline step needs file: (\"artifact/path/to/pipeline.yml\")"_s);
    PANDO_PIPE_TRY(text, artifactFile(*file, join(location, u"file"_s), u"pipeline.yml"_s));
    step.setPipeline.file = *text;
    if (const DocNode *files = node.value(u"var_files"_s); !isNull(files)) {
        PANDO_PIPE_TRY(list, stringList(*files, join(location, u"var_files"_s)));
        for (qsizetype i = 0; i < list->size(); ++i) {
            DocNode one;
            one.kind = DocNode::Kind::Scalar;
            one.text = list->at(i);
            PANDO_PIPE_TRY(path, artifactFile(one, at(join(location, u"var_files"_s), i), u"vars.yml"_s));
            step.setPipeline.varFiles << *path;
        }
    }
    if (const DocNode *vars = node.value(u"vars"_s); !isNull(vars)) {
        if (vars->kind != DocNode::Kind::Map)
            return wrongType(*vars, join(location, u"vars"_s), u"a mapping of var names to values"_s);
        step.setPipeline.vars = std::make_shared<const DocNode>(*vars);
    }
    if (const DocNode *instance = node.value(u"instance_vars"_s); !isNull(instance)) {
        const QString where = join(location, u"instance_vars"_s);
        if (instance->kind != DocNode::Kind::Map)
            return wrongType(*instance, where, u"a mapping of var names to values"_s);
        if (step.setPipeline.self)
            return invalid(where, u"set_pipeline: self sets the pipeline running it, which has its own instance vars"_s,
                           u"name the pipeline (set_pipeline: NAME) to set an instance of it"_s);
        step.setPipeline.instanceVars = std::make_shared<const DocNode>(*instance);
    }
    if (const DocNode *team = node.value(u"team"_s); !isNull(team))
        return invalid(join(location, u"team"_s), u"Pando has one team: a set_pipeline step sets pipelines of it"_s,
                       u"leave team: out"_s);
    return {};
}

// `across: [{var, values, max_in_flight}]`, Concourse's form.
Status parseAcross(const DocNode &node, const QString &where, Step &step)
{
    if (node.kind != DocNode::Kind::Sequence || node.items.empty())
        return wrongType(node, where, u"a list of {var, values, max_in_flight}"_s);
    for (size_t i = 0; i < node.items.size(); ++i) {
        const DocNode &item = node.items[i];
        const QString itemPath = at(where, qsizetype(i));
        if (item.kind != DocNode::Kind::Map)
            return wrongType(item, itemPath, u"a mapping with var and values"_s);
        PANDO_PIPE_TRY(keys, checkKeys(item, itemPath, {u"var"_s, u"values"_s, u"max_in_flight"_s}));
        AcrossVar var;
        PANDO_PIPE_TRY(name, requiredString(item, u"var"_s, itemPath));
        PANDO_PIPE_TRY(okName, checkName(*name, join(itemPath, u"var"_s), u"var"_s));
        for (const AcrossVar &other : step.across)
            if (other.name == *name)
                return invalid(join(itemPath, u"var"_s),
                               u"var \"%1\" is already an across var of this step"_s.arg(*name));
        var.name = *name;
        const DocNode *values = item.value(u"values"_s);
        if (isNull(values))
            return invalid(itemPath, u"\"values\" is required: a list, or ((.:name)) of a list a load_var loaded"_s);
        if (values->kind != DocNode::Kind::Sequence &&
            !(values->kind == DocNode::Kind::Scalar && values->text.contains(u"((.:"_s)))
            return wrongType(*values, join(itemPath, u"values"_s), u"a list, or ((.:name)) of a loaded list"_s);
        var.values = std::make_shared<const DocNode>(*values);
        if (const DocNode *max = item.value(u"max_in_flight"_s); !isNull(max)) {
            if (max->kind == DocNode::Kind::Scalar && max->text == u"all") {
                var.maxInFlight = 0;
            } else {
                PANDO_PIPE_TRY(number, integer(*max, join(itemPath, u"max_in_flight"_s), 1, 1000));
                var.maxInFlight = *number;
            }
        }
        step.across.push_back(std::move(var));
    }
    return {};
}

// Whether a value of the step, at any depth, holds a `((.:name))` placeholder.
bool mentionsLocalVar(const DocNode &node)
{
    static const QRegularExpression local(uR"(\(\(\s*\.:)"_s);
    if (node.kind == DocNode::Kind::Scalar)
        return node.text.contains(u"(("_s) && local.match(node.text).hasMatch();
    for (const DocNode &item : node.items)
        if (mentionsLocalVar(item))
            return true;
    for (const auto &[key, value] : node.entries)
        if (mentionsLocalVar(value))
            return true;
    return false;
}

Status parseParallel(const DocNode &value, Step &step)
{
    if (value.kind == DocNode::Kind::Sequence) {
        PANDO_PIPE_TRY(steps, parseStepList(value, step.path));
        step.steps = std::move(*steps);
        return {};
    }
    if (value.kind != DocNode::Kind::Map)
        return wrongType(value, step.path, u"a list of steps or a mapping with steps, limit and fail_fast"_s);
    PANDO_PIPE_TRY(keys, checkKeys(value, step.path, {u"steps"_s, u"limit"_s, u"fail_fast"_s}));
    const DocNode *steps = value.value(u"steps"_s);
    if (isNull(steps))
        return invalid(step.path, u"\"steps\" is required"_s);
    PANDO_PIPE_TRY(list, parseStepList(*steps, join(step.path, u"steps"_s)));
    step.steps = std::move(*list);
    if (const DocNode *limit = value.value(u"limit"_s); !isNull(limit)) {
        PANDO_PIPE_TRY(number, integer(*limit, join(step.path, u"limit"_s), 1, 1000));
        step.parallelLimit = *number;
    }
    if (const DocNode *failFast = value.value(u"fail_fast"_s)) {
        PANDO_PIPE_TRY(flag, boolean(*failFast, join(step.path, u"fail_fast"_s)));
        step.failFast = *flag;
    }
    return {};
}

Result<Hooks> parseHooks(const DocNode &node, const QString &location)
{
    Hooks hooks;
    const std::pair<QString, StepPtr *> slots[] = {
        {u"on_success"_s, &hooks.onSuccess}, {u"on_failure"_s, &hooks.onFailure}, {u"on_error"_s, &hooks.onError},
        {u"on_abort"_s, &hooks.onAbort},     {u"ensure"_s, &hooks.ensure},
    };
    for (const auto &[key, slot] : slots) {
        const DocNode *hook = node.value(key);
        if (isNull(hook))
            continue;
        PANDO_PIPE_TRY(step, parseStep(*hook, join(location, key)));
        *slot = std::make_shared<const Step>(std::move(*step));
    }
    return hooks;
}

} // namespace

Result<Hooks> parseHooksOf(const DocNode &node, const QString &location)
{
    return parseHooks(node, location);
}

Result<Step> parseStep(const DocNode &node, const QString &location)
{
    if (node.kind != DocNode::Kind::Map)
        return wrongType(node, location, u"a step (a mapping with get, put, task, approve, in_parallel, do or try)"_s);
    QStringList kinds;
    for (const auto &[key, value] : node.entries) {
        if (kindKeys().contains(key))
            kinds << key;
    }
    if (kinds.isEmpty()) {
        return invalid(location,
                       u"a step needs one of get, put, task, approve, load_var, set_pipeline, in_parallel, do or try"_s,
                       node.entries.empty() ? QString() : u"this step has: %1"_s.arg([&] {
                           QStringList keys;
                           for (const auto &[key, value] : node.entries)
                               keys << key;
                           return keys.join(u", "_s);
                       }()));
    }
    if (kinds.size() > 1) {
        return invalid(
            join(location, kinds.first()),
            u"a step has exactly one of get, put, task, approve, load_var, set_pipeline, in_parallel, do or try; this one has %1"_s
                .arg(kinds.join(u" and "_s)));
    }
    const QString kind = kinds.first();
    const DocNode &value = *node.value(kind);
    Step step;
    step.path = join(location, kind);
    step.line = node.line;

    if (kind == u"get" || kind == u"put" || kind == u"task" || kind == u"approve" || kind == u"load_var" ||
        kind == u"set_pipeline") {
        step.kind = kind == u"get"        ? StepKind::Get
                    : kind == u"put"      ? StepKind::Put
                    : kind == u"task"     ? StepKind::Task
                    : kind == u"approve"  ? StepKind::Approve
                    : kind == u"load_var" ? StepKind::LoadVar
                                          : StepKind::SetPipeline;
        PANDO_PIPE_TRY(name, string(value, step.path));
        // A task's name may carry across's and load_var's ((.:vars)), as Concourse allows
        // ("compile-((.:arch))"): the name each run gets is checked when they are filled in.
        const QString checkedName = kind == u"task" || kind == u"set_pipeline" ? withLocalVarsStubbed(*name) : *name;
        PANDO_PIPE_TRY(okName, checkName(checkedName, step.path,
                                         kind == u"task"           ? u"task"_s
                                         : kind == u"load_var"     ? u"var"_s
                                         : kind == u"set_pipeline" ? u"pipeline"_s
                                                                   : u"step"_s));
        step.name = *name;
        Status parsed = step.kind == StepKind::Get       ? parseGet(node, location, step)
                        : step.kind == StepKind::Put     ? parsePut(node, location, step)
                        : step.kind == StepKind::Task    ? parseTask(node, location, step)
                        : step.kind == StepKind::Approve ? parseApprove(node, location, step)
                        : step.kind == StepKind::LoadVar ? parseLoadVar(node, location, step)
                                                         : parseSetPipeline(node, location, step);
        if (!parsed)
            return std::unexpected(parsed.error());
        if (mentionsLocalVar(node)) {
            step.written = std::make_shared<const DocNode>(node);
            step.location = location;
        }
    } else {
        PANDO_PIPE_TRY(keys, checkKeys(node, step.path, modifierKeys() + QStringList{kind}));
        if (kind == u"in_parallel") {
            step.kind = StepKind::InParallel;
            PANDO_PIPE_TRY(ok, parseParallel(value, step));
        } else if (kind == u"do") {
            step.kind = StepKind::Do;
            PANDO_PIPE_TRY(steps, parseStepList(value, step.path));
            step.steps = std::move(*steps);
        } else {
            step.kind = StepKind::Try;
            PANDO_PIPE_TRY(inner, parseStep(value, step.path));
            step.steps.push_back(std::move(*inner));
        }
    }

    if (const DocNode *attempts = node.value(u"attempts"_s); !isNull(attempts)) {
        PANDO_PIPE_TRY(number, integer(*attempts, join(location, u"attempts"_s), 1, 100));
        step.attempts = *number;
    }
    if (const DocNode *timeout = node.value(u"timeout"_s); !isNull(timeout) && step.kind != StepKind::Approve) {
        PANDO_PIPE_TRY(ms, duration(*timeout, join(location, u"timeout"_s)));
        step.timeoutMs = *ms;
    }
    if (const DocNode *across = node.value(u"across"_s); !isNull(across)) {
        PANDO_PIPE_TRY(ok, parseAcross(*across, join(location, u"across"_s), step));
        if (const DocNode *failFast = node.value(u"fail_fast"_s); !isNull(failFast)) {
            PANDO_PIPE_TRY(flag, boolean(*failFast, join(location, u"fail_fast"_s)));
            step.acrossFailFast = *flag;
        }
        step.written = std::make_shared<const DocNode>(node);
        step.location = location;
    } else if (!isNull(node.value(u"fail_fast"_s))) {
        return invalid(join(location, u"fail_fast"_s), u"fail_fast: here goes with across:"_s,
                       u"in_parallel takes it inside its mapping: in_parallel: {steps: [...], fail_fast: true}"_s);
    }
    if (const DocNode *tags = node.value(u"tags"_s); !isNull(tags)) {
        PANDO_PIPE_TRY(list, stringList(*tags, join(location, u"tags"_s)));
        step.tags = *list;
    }
    PANDO_PIPE_TRY(hooks, parseHooks(node, location));
    step.hooks = std::move(*hooks);
    return step;
}

} // namespace pando::core::pipelines::internal

namespace pando::core::pipelines {

Result<Step> acrossIteration(const Step &step, const core::detail::DocNode &values, int index)
{
    if (!step.written)
        return fail(ErrorCode::Internal, u"the across step was not kept as written"_s, step.path);
    core::detail::DocNode node = *step.written;
    std::erase_if(node.entries,
                  [](const auto &entry) { return entry.first == u"across" || entry.first == u"fail_fast"; });
    InterpolationSources sources;
    sources.locals = &values;
    sources.otherLocalsStay = true;
    sources.allowUndefined = true;
    if (auto report = interpolate(node, sources, step.location); !report)
        return std::unexpected(report.error());
    return internal::parseStep(node, u"%1.across[%2]"_s.arg(step.location).arg(index));
}

Result<Step> fillLocalVars(const Step &step, const core::detail::DocNode &locals)
{
    if (!step.written || !step.across.empty())
        return step;
    core::detail::DocNode node = *step.written;
    InterpolationSources sources;
    sources.locals = &locals;
    // Every other ((var)) got its value when the pipeline was read; what is left stays as text.
    sources.allowUndefined = true;
    if (auto report = interpolate(node, sources, step.location); !report)
        return std::unexpected(report.error());
    return internal::parseStep(node, step.location);
}

} // namespace pando::core::pipelines
