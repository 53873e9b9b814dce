// The pipeline file's top level: resource_types, resources, jobs, groups.
#include "core/pipelines/config/validate.h"

#include <QRegularExpression>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

using namespace internal;

namespace {

template<class Read> Status eachMapping(const DocNode &root, const QString &key, Read read)
{
    PANDO_PIPE_TRY(list, sequence(root, key, {}));
    if (!*list)
        return {};
    for (size_t i = 0; i < (*list)->items.size(); ++i) {
        const DocNode &item = (*list)->items[i];
        const QString path = at(key, qsizetype(i));
        if (item.kind != DocNode::Kind::Map)
            return wrongType(item, path, u"a mapping"_s);
        if (auto ok = read(item, path); !ok)
            return ok;
    }
    return {};
}

Result<Command> parseCommand(const DocNode &node, const QString &path)
{
    Command command;
    if (node.kind == DocNode::Kind::Scalar) {
        if (node.text.trimmed().isEmpty())
            return invalid(path, u"must not be empty"_s);
        command.argv = QStringList{u"sh"_s, u"-c"_s, node.text};
        command.shell = true;
        return command;
    }
    if (node.kind == DocNode::Kind::Sequence) {
        PANDO_PIPE_TRY(argv, stringList(node, path));
        if (argv->isEmpty() || argv->first().isEmpty())
            return invalid(path, u"an argv list needs at least the program"_s);
        command.argv = *argv;
        return command;
    }
    return wrongType(node, path, u"an argv list or a shell command string"_s);
}

// `old_name:` of a job or resource: a name, or "" when absent or the same as its own.
Result<QString> parseOldName(const DocNode &node, const QString &path, const QString &name, const QString &what)
{
    const DocNode *old = node.value(u"old_name"_s);
    if (isNull(old))
        return QString();
    PANDO_PIPE_TRY(text, string(*old, join(path, u"old_name"_s)));
    PANDO_PIPE_TRY(okOld, checkName(*text, join(path, u"old_name"_s), what));
    return *text == name ? QString() : *text;
}

Result<ResourceType> parseResourceType(const DocNode &node, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path,
                                   {u"name"_s, u"type"_s, u"source"_s, u"defaults"_s, u"commands"_s, u"image"_s,
                                    u"check_every"_s, u"params"_s, u"privileged"_s, u"tags"_s}));
    ResourceType type;
    type.path = path;
    PANDO_PIPE_TRY(name, requiredString(node, u"name"_s, path));
    PANDO_PIPE_TRY(okName, checkName(*name, join(path, u"name"_s), u"resource type"_s));
    type.name = *name;
    if (const DocNode *defaults = node.value(u"defaults"_s)) {
        PANDO_PIPE_TRY(object, jsonObject(*defaults, join(path, u"defaults"_s)));
        type.defaults = *object;
    }
    if (const DocNode *every = node.value(u"check_every"_s); !isNull(every)) {
        PANDO_PIPE_TRY(ms, duration(*every, join(path, u"check_every"_s)));
        type.checkEveryMs = *ms;
    }
    // Concourse's params fetch the type's image, which here is in the local engine already; its
    // tags pick workers. Both are read and checked, and change nothing.
    if (const DocNode *params = node.value(u"params"_s); !isNull(params)) {
        PANDO_PIPE_TRY(object, jsonObject(*params, join(path, u"params"_s)));
    }
    if (const DocNode *tags = node.value(u"tags"_s); !isNull(tags)) {
        PANDO_PIPE_TRY(list, stringList(*tags, join(path, u"tags"_s)));
    }
    bool privileged = false;
    PANDO_PIPE_TRY(flags, booleans(node, path, {{u"privileged"_s, &privileged}}));
    if (privileged)
        return invalid(join(path, u"privileged"_s), u"privileged resource types are not supported yet"_s,
                       u"leave privileged out; a task can be privileged where host execution is allowed"_s);
    const DocNode *commands = node.value(u"commands"_s);
    const DocNode *image = node.value(u"image"_s);
    if (!isNull(commands)) {
        type.kind = ResourceType::Kind::Shell;
        if (!isNull(node.value(u"type"_s)) || !isNull(node.value(u"source"_s))) {
            return invalid(path, u"a resource type with commands: takes no type: or source:"_s,
                           u"name the image the commands run in with image: (none: on the host)"_s);
        }
        const QString commandsPath = join(path, u"commands"_s);
        if (commands->kind != DocNode::Kind::Map)
            return wrongType(*commands, commandsPath, u"a mapping with check, in and out"_s);
        PANDO_PIPE_TRY(commandKeys, checkKeys(*commands, commandsPath, {u"check"_s, u"in"_s, u"out"_s}));
        const std::pair<QString, Command *> slots[] = {
            {u"check"_s, &type.check}, {u"in"_s, &type.in}, {u"out"_s, &type.out}};
        for (const auto &[key, slot] : slots) {
            const DocNode *command = commands->value(key);
            if (isNull(command)) {
                if (key == u"out")
                    continue; // a type that is only read from needs no out
                return invalid(commandsPath, u"\"%1\" is required"_s.arg(key));
            }
            PANDO_PIPE_TRY(value, parseCommand(*command, join(commandsPath, key)));
            *slot = *value;
        }
        if (!isNull(image)) {
            PANDO_PIPE_TRY(text, string(*image, join(path, u"image"_s)));
            type.image = text->trimmed();
        }
        return type;
    }
    if (!isNull(image))
        return invalid(join(path, u"image"_s), u"image: is for resource types defined by commands:"_s);
    PANDO_PIPE_TRY(kind, requiredString(node, u"type"_s, path));
    type.type = *kind;
    if (*kind == u"git" || *kind == u"time" || *kind == u"mock" || *kind == u"s3" || *kind == u"semver") {
        type.kind = ResourceType::Kind::BuiltIn;
        if (!isNull(node.value(u"source"_s)))
            return invalid(join(path, u"source"_s), u"a built-in type takes defaults:, not source:"_s);
        return type;
    }
    if (*kind != u"registry-image" && *kind != u"docker-image") {
        return invalid(
            join(path, u"type"_s),
            u"resource type \"%1\" has type \"%2\"; use registry-image, docker-image, git, s3, semver, time, mock, or "
            "commands:"_s.arg(type.name, *kind));
    }
    type.kind = ResourceType::Kind::Image;
    const QString sourcePath = join(path, u"source"_s);
    PANDO_PIPE_TRY(source, mapping(node, u"source"_s, path));
    if (!*source)
        return invalid(path, u"\"source\" with a repository is required"_s);
    PANDO_PIPE_TRY(sourceKeys, checkKeys(**source, sourcePath, {u"repository"_s, u"tag"_s}));
    PANDO_PIPE_TRY(repository, requiredString(**source, u"repository"_s, sourcePath));
    QString tag = u"latest"_s;
    if (const DocNode *t = (*source)->value(u"tag"_s); !isNull(t)) {
        PANDO_PIPE_TRY(text, string(*t, join(sourcePath, u"tag"_s)));
        tag = *text;
    }
    type.source = QJsonObject{{u"repository"_s, *repository}, {u"tag"_s, tag}};
    type.image = *repository + u':' + tag;
    return type;
}

Result<Resource> parseResource(const DocNode &node, const QString &path, const Pipeline &pipeline)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path,
                                   {u"name"_s, u"old_name"_s, u"type"_s, u"source"_s, u"check_every"_s,
                                    u"check_timeout"_s, u"webhook_token"_s, u"icon"_s, u"version"_s,
                                    u"expose_build_created_by"_s, u"public"_s, u"tags"_s}));
    Resource resource;
    resource.path = path;
    PANDO_PIPE_TRY(name, requiredString(node, u"name"_s, path));
    PANDO_PIPE_TRY(okName, checkName(*name, join(path, u"name"_s), u"resource"_s));
    resource.name = *name;
    PANDO_PIPE_TRY(type, requiredString(node, u"type"_s, path));
    resource.type = *type;
    const ResourceType *declared = pipeline.resourceType(*type);
    // The types a Concourse installation ships that Pando has no built-in for yet.
    static const QStringList concourseOnly{u"github-release"_s,   u"pool"_s,   u"hg"_s, u"cf"_s, u"bosh-io-release"_s,
                                           u"bosh-io-stemcell"_s, u"tracker"_s};
    if (!declared && concourseOnly.contains(*type))
        return invalid(join(path, u"type"_s),
                       u"resource type \"%1\" ships with Concourse, and Pando has no built-in %1 yet"_s.arg(*type),
                       u"declare it under resource_types: a Concourse resource image of it in the local engine "
                       "(type: registry-image, source: {repository: …}), or commands: that do its check, in and out"_s);
    if (!declared && !builtinResourceTypes().contains(*type)) {
        return invalid(join(path, u"type"_s),
                       u"resource type \"%1\" is not declared; declare it under resource_types or use one of %2"_s.arg(
                           *type, builtinResourceTypes().join(u", "_s)));
    }
    if (const DocNode *source = node.value(u"source"_s)) {
        PANDO_PIPE_TRY(object, jsonObject(*source, join(path, u"source"_s)));
        resource.source = *object;
    }
    if (declared) {
        // The type's defaults sit under the resource's own keys, as in Concourse.
        for (auto it = declared->defaults.begin(); it != declared->defaults.end(); ++it) {
            if (!resource.source.contains(it.key()))
                resource.source.insert(it.key(), it.value());
        }
        if (declared->checkEveryMs > 0)
            resource.checkEveryMs = declared->checkEveryMs;
    }
    if (const DocNode *every = node.value(u"check_every"_s); !isNull(every)) {
        if (every->kind == DocNode::Kind::Scalar && every->text == u"never") {
            resource.checkEveryMs = 0;
        } else {
            PANDO_PIPE_TRY(ms, duration(*every, join(path, u"check_every"_s)));
            resource.checkEveryMs = *ms;
        }
    }
    if (const DocNode *timeout = node.value(u"check_timeout"_s); !isNull(timeout)) {
        PANDO_PIPE_TRY(ms, duration(*timeout, join(path, u"check_timeout"_s)));
        resource.checkTimeoutMs = *ms;
    }
    if (const DocNode *token = node.value(u"webhook_token"_s); !isNull(token)) {
        PANDO_PIPE_TRY(text, string(*token, join(path, u"webhook_token"_s)));
        // A ((secret)) left in place is checked by whoever resolves it (setting the pipeline does).
        // A webhook is answered from Pando's own secrets: a token from a var source (or any other
        // placeholder) would be compared as the text written.
        const QString secret = placeholderSecretName(*text);
        const QString prefix = text->section(u':', 0, 0).remove(u'(').trimmed();
        const bool shadowed = std::any_of(pipeline.varSources.cbegin(), pipeline.varSources.cend(),
                                          [&](const VarSourceConfig &source) { return source.name == prefix; });
        if (text->contains(u"((") && (secret.isEmpty() || shadowed))
            return invalid(join(path, u"webhook_token"_s),
                           u"a webhook token is a literal token or one ((name)) from Pando's secrets"_s,
                           u"store it with pando secrets set and write webhook_token: ((name))"_s);
        if (secret.isEmpty())
            if (auto problem = webhookTokenProblem(*text, join(path, u"webhook_token"_s)))
                return std::unexpected(*problem);
        resource.webhookToken = *text;
    }
    PANDO_PIPE_TRY(flags, booleans(node, path,
                                   {{u"expose_build_created_by"_s, &resource.exposeBuildCreatedBy},
                                    {u"public"_s, &resource.isPublic}}));
    if (const DocNode *icon = node.value(u"icon"_s); !isNull(icon)) {
        PANDO_PIPE_TRY(text, string(*icon, join(path, u"icon"_s)));
        resource.icon = *text;
    }
    PANDO_PIPE_TRY(oldName, parseOldName(node, path, resource.name, u"resource"_s));
    resource.oldName = *oldName;
    if (const DocNode *tags = node.value(u"tags"_s); !isNull(tags)) { // workers, as a step's tags
        PANDO_PIPE_TRY(list, stringList(*tags, join(path, u"tags"_s)));
    }
    if (const DocNode *version = node.value(u"version"_s); !isNull(version)) {
        PANDO_PIPE_TRY(map, stringMap(*version, join(path, u"version"_s)));
        if (map->isEmpty())
            return invalid(join(path, u"version"_s), u"a pinned version must name at least one field"_s);
        resource.pinnedVersion = *map;
    }
    return resource;
}

// `build_log_retention: {builds, days, minimum_succeeded_builds}`, or the older
// `build_logs_to_retain: N` (the same as `builds: N`); not both.
Result<LogRetention> parseLogRetention(const DocNode &job, const QString &path)
{
    LogRetention retention;
    const DocNode *old = job.value(u"build_logs_to_retain"_s);
    const DocNode *node = job.value(u"build_log_retention"_s);
    if (!isNull(old)) {
        if (!isNull(node))
            return invalid(join(path, u"build_logs_to_retain"_s),
                           u"build_logs_to_retain and build_log_retention say the same thing"_s,
                           u"keep build_log_retention: {builds: N}"_s);
        PANDO_PIPE_TRY(builds, integer(*old, join(path, u"build_logs_to_retain"_s), 0, 1000000));
        retention.builds = *builds;
        return retention;
    }
    if (isNull(node))
        return retention;
    const QString where = join(path, u"build_log_retention"_s);
    if (node->kind != DocNode::Kind::Map)
        return wrongType(*node, where, u"a mapping with builds, days or minimum_succeeded_builds"_s);
    PANDO_PIPE_TRY(keys, checkKeys(*node, where, {u"builds"_s, u"days"_s, u"minimum_succeeded_builds"_s}));
    const std::pair<QString, int *> fields[] = {{u"builds"_s, &retention.builds},
                                                {u"days"_s, &retention.days},
                                                {u"minimum_succeeded_builds"_s, &retention.minimumSucceeded}};
    for (const auto &[key, slot] : fields) {
        if (const DocNode *value = node->value(key); !isNull(value)) {
            PANDO_PIPE_TRY(number, integer(*value, join(where, key), 0, 1000000));
            *slot = *number;
        }
    }
    return retention;
}

Result<Job> parseJob(const DocNode &node, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path,
                                   {u"name"_s, u"old_name"_s, u"plan"_s, u"serial"_s, u"serial_groups"_s,
                                    u"max_in_flight"_s, u"build_log_retention"_s, u"build_logs_to_retain"_s,
                                    u"public"_s, u"disable_manual_trigger"_s, u"interruptible"_s, u"on_success"_s,
                                    u"on_failure"_s, u"on_error"_s, u"on_abort"_s, u"ensure"_s}));
    Job job;
    job.path = path;
    PANDO_PIPE_TRY(name, requiredString(node, u"name"_s, path));
    PANDO_PIPE_TRY(okName, checkName(*name, join(path, u"name"_s), u"job"_s));
    job.name = *name;
    const DocNode *plan = node.value(u"plan"_s);
    if (isNull(plan))
        return invalid(path, u"\"plan\" is required: a list of steps"_s);
    if (plan->kind != DocNode::Kind::Sequence)
        return wrongType(*plan, join(path, u"plan"_s), u"a list of steps"_s);
    if (plan->items.empty())
        return invalid(join(path, u"plan"_s), u"a plan needs at least one step"_s);
    for (size_t i = 0; i < plan->items.size(); ++i) {
        PANDO_PIPE_TRY(step, parseStep(plan->items[i], at(join(path, u"plan"_s), qsizetype(i))));
        job.plan.push_back(std::move(*step));
    }
    if (const DocNode *serial = node.value(u"serial"_s)) {
        PANDO_PIPE_TRY(flag, boolean(*serial, join(path, u"serial"_s)));
        job.serial = *flag;
    }
    if (const DocNode *groups = node.value(u"serial_groups"_s); !isNull(groups)) {
        const QString groupsPath = join(path, u"serial_groups"_s);
        PANDO_PIPE_TRY(list, stringList(*groups, groupsPath));
        for (qsizetype i = 0; i < list->size(); ++i) {
            PANDO_PIPE_TRY(okGroup, checkName(list->at(i), at(groupsPath, i), u"serial group"_s));
            if (!job.serialGroups.contains(list->at(i)))
                job.serialGroups << list->at(i);
        }
    }
    if (const DocNode *max = node.value(u"max_in_flight"_s); !isNull(max)) {
        PANDO_PIPE_TRY(number, integer(*max, join(path, u"max_in_flight"_s), 1, 1000));
        job.maxInFlight = *number;
    }
    // Concourse lets serial and serial_groups win over max_in_flight, so a file may say both.
    if (job.serial || !job.serialGroups.isEmpty())
        job.maxInFlight = 1;
    PANDO_PIPE_TRY(retention, parseLogRetention(node, path));
    job.logRetention = *retention;
    PANDO_PIPE_TRY(oldName, parseOldName(node, path, job.name, u"job"_s));
    job.oldName = *oldName;
    PANDO_PIPE_TRY(flags, booleans(node, path,
                                   {{u"public"_s, &job.isPublic},
                                    {u"disable_manual_trigger"_s, &job.disableManualTrigger},
                                    {u"interruptible"_s, &job.interruptible}}));
    PANDO_PIPE_TRY(hooks, parseHooksOf(node, path));
    job.hooks = std::move(*hooks);
    return job;
}

Result<Group> parseGroup(const DocNode &node, const QString &path)
{
    PANDO_PIPE_TRY(keys, checkKeys(node, path, {u"name"_s, u"jobs"_s}));
    Group group;
    PANDO_PIPE_TRY(name, requiredString(node, u"name"_s, path));
    PANDO_PIPE_TRY(okName, checkName(*name, join(path, u"name"_s), u"group"_s));
    group.name = *name;
    if (const DocNode *jobs = node.value(u"jobs"_s)) {
        PANDO_PIPE_TRY(list, stringList(*jobs, join(path, u"jobs"_s)));
        group.jobs = *list;
    }
    return group;
}

// Takes the top-level keys a pipeline does not read out of tree and returns them. fly accepts
// any (people keep anchors under them) and leaves them out of what it sends; so does Pando, once
// the aliases are expanded.
Result<QStringList> dropUnreadKeys(DocNode &tree)
{
    static const QStringList read{u"resource_types"_s, u"resources"_s, u"jobs"_s,
                                  u"groups"_s,         u"display"_s,   u"var_sources"_s};
    QStringList ignored;
    for (auto it = tree.entries.begin(); it != tree.entries.end();) {
        if (read.contains(it->first)) {
            ++it;
            continue;
        }
        // A near miss of a key the file lacks is a typo, not a place for anchors.
        if (const QString meant = closest(it->first, read); !meant.isEmpty() && !tree.value(meant))
            return invalid(QString(), u"unknown key \"%1\"; did you mean \"%2\"?"_s.arg(it->first, meant),
                           u"a top-level key that only holds anchors may have any name not this close to %1"_s.arg(
                               read.join(u", "_s)));
        ignored << it->first;
        it = tree.entries.erase(it);
    }
    return ignored;
}

} // namespace

Result<Pipeline> parsePipeline(const QByteArray &yaml, const InterpolationSources &interpolation)
{
    detail::ReaderLimits limits;
    limits.document = u"pipeline"_s;
    limits.aliases = true;
    auto tree = detail::readYaml(yaml, limits);
    if (!tree)
        return std::unexpected(tree.error());
    if (tree->kind != DocNode::Kind::Map)
        return wrongType(*tree, tree->location(), u"a mapping with resource_types, resources, jobs and groups"_s);
    auto ignored = dropUnreadKeys(*tree);
    if (!ignored)
        return std::unexpected(ignored.error());
    // Var sources first: the rest of the file reads from them, and their configs may read from
    // each other.
    auto declared = takeVarSources(*tree);
    if (!declared)
        return std::unexpected(declared.error());
    InterpolationReport used;
    auto varSources = resolveVarSources(*declared, interpolation, used);
    if (!varSources)
        return std::unexpected(varSources.error());
    InterpolationSources sources = interpolation;
    sources.varSources = *varSources;
    auto report = interpolate(*tree, sources);
    if (!report)
        return std::unexpected(report.error());
    mergeReport(*report, used);

    Pipeline pipeline;
    pipeline.varSources = *varSources;
    pipeline.ignoredKeys = *ignored;
    pipeline.undefinedVars = report->undefined;
    pipeline.secretNames = report->secretsUsed;
    pipeline.varNames = report->varsUsed;
    PANDO_PIPE_TRY(
        types, eachMapping(*tree, u"resource_types"_s, [&](const DocNode &item, const QString &path) -> Status {
            PANDO_PIPE_TRY(type, parseResourceType(item, path));
            if (const ResourceType *other = pipeline.resourceType(type->name)) {
                return invalid(join(path, u"name"_s),
                               u"resource type \"%1\" is already declared at %2"_s.arg(type->name, other->path));
            }
            pipeline.resourceTypes << *type;
            return {};
        }));
    PANDO_PIPE_TRY(
        resources, eachMapping(*tree, u"resources"_s, [&](const DocNode &item, const QString &path) -> Status {
            PANDO_PIPE_TRY(resource, parseResource(item, path, pipeline));
            if (const Resource *other = pipeline.resource(resource->name))
                return invalid(join(path, u"name"_s),
                               u"resource \"%1\" is already declared at %2"_s.arg(resource->name, other->path));
            pipeline.resources << *resource;
            return {};
        }));
    PANDO_PIPE_TRY(jobs, eachMapping(*tree, u"jobs"_s, [&](const DocNode &item, const QString &path) -> Status {
                       PANDO_PIPE_TRY(job, parseJob(item, path));
                       if (const Job *other = pipeline.job(job->name))
                           return invalid(join(path, u"name"_s),
                                          u"job \"%1\" is already declared at %2"_s.arg(job->name, other->path));
                       pipeline.jobs << std::move(*job);
                       return {};
                   }));
    if (pipeline.jobs.isEmpty())
        return invalid(u"jobs"_s, u"a pipeline needs at least one job"_s);
    PANDO_PIPE_TRY(groups, eachMapping(*tree, u"groups"_s, [&](const DocNode &item, const QString &path) -> Status {
                       PANDO_PIPE_TRY(group, parseGroup(item, path));
                       for (const auto &other : pipeline.groups) {
                           if (other.name == group->name)
                               return invalid(join(path, u"name"_s),
                                              u"group \"%1\" is already declared"_s.arg(group->name));
                       }
                       for (qsizetype i = 0; i < group->jobs.size(); ++i) {
                           const QString &entry = group->jobs[i];
                           // Concourse takes glob patterns too ("deploy-*", "*").
                           if (entry.contains(u'*') || entry.contains(u'?') || entry.contains(u'[')) {
                               const QRegularExpression glob(QRegularExpression::wildcardToRegularExpression(entry));
                               if (!glob.isValid() ||
                                   std::none_of(pipeline.jobs.cbegin(), pipeline.jobs.cend(),
                                                [&](const Job &job) { return glob.match(job.name).hasMatch(); }))
                                   return invalid(at(join(path, u"jobs"_s), i),
                                                  u"group pattern \"%1\" matches no job"_s.arg(entry));
                               continue;
                           }
                           if (!pipeline.job(entry))
                               return invalid(at(join(path, u"jobs"_s), i),
                                              u"group names job \"%1\", which is not declared"_s.arg(entry));
                       }
                       pipeline.groups << *group;
                       return {};
                   }));
    if (const DocNode *display = tree->value(u"display"_s); !isNull(display)) {
        if (display->kind != DocNode::Kind::Map)
            return wrongType(*display, u"display"_s, u"a mapping with background_image and background_filter"_s);
        PANDO_PIPE_TRY(keys, checkKeys(*display, u"display"_s, {u"background_image"_s, u"background_filter"_s}));
        const std::pair<QString, QString *> fields[] = {{u"background_image"_s, &pipeline.display.backgroundImage},
                                                        {u"background_filter"_s, &pipeline.display.backgroundFilter}};
        for (const auto &[key, slot] : fields) {
            if (const DocNode *value = display->value(key); !isNull(value)) {
                PANDO_PIPE_TRY(text, string(*value, join(u"display"_s, key)));
                *slot = *text;
            }
        }
    }
    PANDO_PIPE_TRY(valid, validatePipeline(pipeline));
    return pipeline;
}

} // namespace pando::core::pipelines
