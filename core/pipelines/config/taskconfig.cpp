// Task configs (inline or from a file) and the merge of a task step with its config.
#include "core/pipelines/config/validate.h"

#include <QRegularExpression>
#include <QSet>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

using namespace internal;

bool TaskRun::isShell() const
{
    static const QStringList shells{u"sh"_s, u"bash"_s, u"/bin/sh"_s, u"/bin/bash"_s, u"/usr/bin/bash"_s};
    return shells.contains(path) && !args.isEmpty() && args.first() == u"-c";
}

namespace internal {

namespace {

Result<ImageResource> parseImageResource(const DocNode &node, const QString &path)
{
    if (node.kind != DocNode::Kind::Map)
        return wrongType(node, path, u"a mapping with type and source"_s);
    PANDO_PIPE_TRY(keys, checkKeys(node, path, {u"type"_s, u"source"_s}));
    ImageResource image;
    if (const DocNode *type = node.value(u"type"_s); !isNull(type)) {
        PANDO_PIPE_TRY(text, string(*type, join(path, u"type"_s)));
        if (*text != u"registry-image" && *text != u"docker-image") {
            return invalid(
                join(path, u"type"_s),
                u"image_resource type \"%1\" is not supported; use registry-image or docker-image"_s.arg(*text));
        }
        image.type = *text;
    }
    const QString sourcePath = join(path, u"source"_s);
    PANDO_PIPE_TRY(source, mapping(node, u"source"_s, path));
    if (!*source)
        return invalid(path, u"\"source\" with a repository is required"_s);
    PANDO_PIPE_TRY(sourceKeys, checkKeys(**source, sourcePath, {u"repository"_s, u"tag"_s}));
    PANDO_PIPE_TRY(repository, requiredString(**source, u"repository"_s, sourcePath));
    image.repository = repository->trimmed();
    if (const DocNode *tag = (*source)->value(u"tag"_s); !isNull(tag)) {
        PANDO_PIPE_TRY(text, string(*tag, join(sourcePath, u"tag"_s)));
        image.tag = text->trimmed();
    }
    static const QRegularExpression reference(uR"(^[a-zA-Z0-9][a-zA-Z0-9_.:/-]*\z)"_s);
    // An image may carry across's and load_var's ((.:vars)) ("python:((.:version))").
    if (!reference.match(withLocalVarsStubbed(image.repository)).hasMatch())
        return invalid(join(sourcePath, u"repository"_s), u"invalid image repository \"%1\""_s.arg(image.repository));
    static const QRegularExpression tagPattern(uR"(^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}\z)"_s);
    if (!tagPattern.match(withLocalVarsStubbed(image.tag)).hasMatch())
        return invalid(join(sourcePath, u"tag"_s), u"invalid image tag \"%1\""_s.arg(image.tag));
    return image;
}

template<class Item, class Read>
Result<QList<Item>> listOf(const DocNode &parent, const QString &key, const QString &path, Read read)
{
    QList<Item> out;
    PANDO_PIPE_TRY(list, sequence(parent, key, path));
    if (!*list)
        return out;
    const QString listPath = join(path, key);
    for (size_t i = 0; i < (*list)->items.size(); ++i) {
        const DocNode &item = (*list)->items[i];
        const QString itemPath = at(listPath, qsizetype(i));
        if (item.kind != DocNode::Kind::Map)
            return wrongType(item, itemPath, u"a mapping"_s);
        PANDO_PIPE_TRY(value, read(item, itemPath));
        out << *value;
    }
    return out;
}

Result<TaskRun> parseRun(const DocNode &node, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path, {u"path"_s, u"args"_s, u"dir"_s, u"user"_s}));
    TaskRun run;
    PANDO_PIPE_TRY(program, requiredString(node, u"path"_s, path));
    run.path = *program;
    if (const DocNode *args = node.value(u"args"_s)) {
        PANDO_PIPE_TRY(list, stringList(*args, join(path, u"args"_s)));
        run.args = *list;
    }
    if (const DocNode *dir = node.value(u"dir"_s); !isNull(dir)) {
        PANDO_PIPE_TRY(text, string(*dir, join(path, u"dir"_s)));
        PANDO_PIPE_TRY(ok, checkRelativePath(*text, join(path, u"dir"_s)));
        run.dir = *text;
    }
    if (const DocNode *user = node.value(u"user"_s); !isNull(user)) {
        PANDO_PIPE_TRY(text, string(*user, join(path, u"user"_s)));
        run.user = *text;
    }
    return run;
}

Result<ContainerLimits> parseLimits(const DocNode &node, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path, {u"cpu"_s, u"memory"_s}));
    ContainerLimits limits;
    if (const DocNode *cpu = node.value(u"cpu"_s); !isNull(cpu)) {
        bool ok = false;
        const double value = cpu->kind == DocNode::Kind::Scalar ? cpu->text.trimmed().toDouble(&ok) : 0;
        if (!ok || value <= 0 || value > 1024)
            return wrongType(*cpu, join(path, u"cpu"_s), u"a number of CPUs above 0 (\"0.5\", \"2\")"_s);
        limits.cpus = value;
    }
    if (const DocNode *memory = node.value(u"memory"_s); !isNull(memory)) {
        const auto bytes = memory->kind == DocNode::Kind::Scalar ? parseMemory(memory->text) : std::nullopt;
        if (!bytes || *bytes < 4LL * 1024 * 1024)
            return wrongType(*memory, join(path, u"memory"_s), u"an amount of at least 4MB (\"512MB\", \"1Gi\")"_s);
        limits.memoryBytes = *bytes;
    }
    return limits;
}

} // namespace

Result<TaskConfig> parseTaskConfig(const DocNode &node, const QString &path)
{
    if (node.kind != DocNode::Kind::Map)
        return wrongType(node, path, u"a task config mapping"_s);
    PANDO_PIPE_TRY(keys, checkKeys(node, path,
                                   {u"platform"_s, u"image_resource"_s, u"inputs"_s, u"outputs"_s, u"caches"_s,
                                    u"params"_s, u"run"_s, u"container_limits"_s}));
    TaskConfig config;
    if (const DocNode *platform = node.value(u"platform"_s); !isNull(platform)) {
        PANDO_PIPE_TRY(text, string(*platform, join(path, u"platform"_s)));
        if (*text == u"linux")
            config.platform = TaskConfig::Platform::Linux;
        else if (*text == u"host")
            config.platform = TaskConfig::Platform::Host;
        else
            return invalid(join(path, u"platform"_s),
                           u"platform \"%1\" is not supported; use linux or host"_s.arg(*text));
    }
    if (const DocNode *image = node.value(u"image_resource"_s); !isNull(image)) {
        if (config.platform == TaskConfig::Platform::Host)
            return invalid(join(path, u"image_resource"_s), u"a task with platform: host runs without an image"_s);
        PANDO_PIPE_TRY(value, parseImageResource(*image, join(path, u"image_resource"_s)));
        config.imageResource = *value;
    }

    QSet<QString> inputNames;
    PANDO_PIPE_TRY(
        inputs,
        listOf<TaskInput>(node, u"inputs"_s, path, [&](const DocNode &item, const QString &p) -> Result<TaskInput> {
            PANDO_PIPE_TRY(k, checkKeys(item, p, {u"name"_s, u"path"_s, u"optional"_s}));
            TaskInput input;
            PANDO_PIPE_TRY(name, requiredString(item, u"name"_s, p));
            PANDO_PIPE_TRY(okName, checkName(*name, join(p, u"name"_s), u"input"_s));
            if (inputNames.contains(*name))
                return invalid(join(p, u"name"_s), u"duplicate input name \"%1\""_s.arg(*name));
            inputNames.insert(*name);
            input.name = *name;
            input.path = *name;
            if (const DocNode *sub = item.value(u"path"_s); !isNull(sub)) {
                PANDO_PIPE_TRY(text, string(*sub, join(p, u"path"_s)));
                PANDO_PIPE_TRY(okPath, checkRelativePath(*text, join(p, u"path"_s)));
                input.path = *text;
            }
            if (const DocNode *optional = item.value(u"optional"_s)) {
                PANDO_PIPE_TRY(flag, boolean(*optional, join(p, u"optional"_s)));
                input.optional = *flag;
            }
            return input;
        }));
    config.inputs = *inputs;

    QSet<QString> outputNames;
    PANDO_PIPE_TRY(
        outputs,
        listOf<TaskOutput>(node, u"outputs"_s, path, [&](const DocNode &item, const QString &p) -> Result<TaskOutput> {
            PANDO_PIPE_TRY(k, checkKeys(item, p, {u"name"_s, u"path"_s}));
            TaskOutput output;
            PANDO_PIPE_TRY(name, requiredString(item, u"name"_s, p));
            PANDO_PIPE_TRY(okName, checkName(*name, join(p, u"name"_s), u"output"_s));
            if (outputNames.contains(*name))
                return invalid(join(p, u"name"_s), u"duplicate output name \"%1\""_s.arg(*name));
            outputNames.insert(*name);
            output.name = *name;
            output.path = *name;
            if (const DocNode *sub = item.value(u"path"_s); !isNull(sub)) {
                PANDO_PIPE_TRY(text, string(*sub, join(p, u"path"_s)));
                PANDO_PIPE_TRY(okPath, checkRelativePath(*text, join(p, u"path"_s)));
                output.path = *text;
            }
            return output;
        }));
    config.outputs = *outputs;

    PANDO_PIPE_TRY(caches, listOf<TaskCache>(
                               node, u"caches"_s, path, [](const DocNode &item, const QString &p) -> Result<TaskCache> {
                                   PANDO_PIPE_TRY(k, checkKeys(item, p, {u"path"_s}));
                                   PANDO_PIPE_TRY(cachePath, requiredString(item, u"path"_s, p));
                                   // Concourse joins an absolute one to the work dir as well.
                                   QString relative = *cachePath;
                                   while (relative.startsWith(u'/'))
                                       relative.remove(0, 1);
                                   PANDO_PIPE_TRY(okPath, checkRelativePath(relative, join(p, u"path"_s)));
                                   return TaskCache{relative};
                               }));
    config.caches = *caches;

    if (const DocNode *params = node.value(u"params"_s)) {
        PANDO_PIPE_TRY(map, stringMap(*params, join(path, u"params"_s)));
        config.params = *map;
    }
    PANDO_PIPE_TRY(run, mapping(node, u"run"_s, path));
    if (!*run)
        return invalid(path, u"\"run\" with a path is required"_s);
    PANDO_PIPE_TRY(runValue, parseRun(**run, join(path, u"run"_s)));
    config.run = *runValue;
    if (config.platform == TaskConfig::Platform::Host && !config.run.user.isEmpty())
        return invalid(join(path, u"run.user"_s), u"run.user is only for container tasks; a host task runs as Pando"_s);
    PANDO_PIPE_TRY(limits, mapping(node, u"container_limits"_s, path));
    if (*limits) {
        PANDO_PIPE_TRY(value, parseLimits(**limits, join(path, u"container_limits"_s)));
        config.limits = *value;
    }
    return config;
}

} // namespace internal

Result<TaskConfig> parseTaskConfigFile(const QByteArray &yaml, const QString &fileName,
                                       const InterpolationSources &interpolation)
{
    auto prefixed = [&](Error error) {
        error.where = error.where.isEmpty() ? fileName : fileName + u": "_s + error.where;
        return std::unexpected(std::move(error));
    };
    detail::ReaderLimits limits;
    limits.document = u"task file"_s;
    limits.aliases = true;
    auto tree = detail::readYaml(yaml, limits);
    if (!tree)
        return prefixed(tree.error());
    auto report = interpolate(*tree, interpolation);
    if (!report)
        return prefixed(report.error());
    auto config = parseTaskConfig(*tree, {});
    if (!config)
        return prefixed(config.error());
    return config;
}

QStringList taskOutputArtifacts(const Step &step)
{
    QStringList out;
    if (step.kind != StepKind::Task || !step.task.config)
        return out;
    for (const auto &output : step.task.config->outputs)
        out << step.task.outputMapping.value(output.name, output.name);
    return out;
}

Result<ResolvedTask> resolveTask(const Step &step, const TaskConfig *fileConfig)
{
    if (step.kind != StepKind::Task)
        return fail(ErrorCode::Internal, u"not a task step"_s, step.path);
    const TaskConfig *config = step.task.config ? &*step.task.config : fileConfig;
    if (!config)
        return fail(ErrorCode::Invalid, u"the task file \"%1\" has not been read"_s.arg(step.task.file), step.path);
    ResolvedTask resolved;
    resolved.stepPath = step.path;
    resolved.config = *config;
    for (auto it = step.task.params.cbegin(); it != step.task.params.cend(); ++it)
        resolved.config.params.insert(it.key(), it.value());

    if (!step.task.image.isEmpty()) {
        resolved.venue = ResolvedTask::Venue::ImageArtifact;
        resolved.image = step.task.image;
    } else if (const auto &image = config->imageResource; image && !config->runsOnHost()) {
        resolved.venue = ResolvedTask::Venue::Image;
        resolved.image = image->reference();
    } else {
        resolved.venue = ResolvedTask::Venue::Host;
    }
    if (resolved.venue == ResolvedTask::Venue::Host && !config->run.user.isEmpty())
        return fail(ErrorCode::Invalid, u"run.user is only for container tasks; a host task runs as Pando"_s,
                    step.path);

    QStringList inputNames;
    for (const auto &input : config->inputs) {
        inputNames << input.name;
        resolved.inputs << ResolvedTask::Input{input.name, step.task.inputMapping.value(input.name, input.name),
                                               input.path, input.optional};
    }
    QStringList outputNames;
    for (const auto &output : config->outputs) {
        outputNames << output.name;
        resolved.outputs << ResolvedTask::Output{output.name, step.task.outputMapping.value(output.name, output.name),
                                                 output.path};
    }
    for (auto it = step.task.inputMapping.cbegin(); it != step.task.inputMapping.cend(); ++it) {
        if (!inputNames.contains(it.key()))
            return fail(ErrorCode::Invalid,
                        u"input_mapping names \"%1\", which the task has no input for"_s.arg(it.key()), step.path);
    }
    for (auto it = step.task.outputMapping.cbegin(); it != step.task.outputMapping.cend(); ++it) {
        if (!outputNames.contains(it.key()))
            return fail(ErrorCode::Invalid,
                        u"output_mapping names \"%1\", which the task has no output for"_s.arg(it.key()), step.path);
    }
    resolved.argv = config->run.argv();
    resolved.shell = config->run.isShell();
    return resolved;
}

} // namespace pando::core::pipelines
