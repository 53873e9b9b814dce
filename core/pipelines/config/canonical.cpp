#include "core/pipelines/config/canonical.h"
#include "core/pipelines/config/nodereader.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace Qt::StringLiterals;

namespace pando::core::pipelines {

namespace {

QJsonObject stringMapJson(const QMap<QString, QString> &map)
{
    QJsonObject out;
    for (auto it = map.cbegin(); it != map.cend(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

QJsonValue hookJson(const StepPtr &hook)
{
    return hook ? QJsonValue(toJson(*hook)) : QJsonValue();
}

void insertHooks(QJsonObject &out, const Hooks &hooks)
{
    const std::pair<QString, StepPtr> slots[] = {
        {u"on_success"_s, hooks.onSuccess}, {u"on_failure"_s, hooks.onFailure}, {u"on_error"_s, hooks.onError},
        {u"on_abort"_s, hooks.onAbort},     {u"ensure"_s, hooks.ensure},
    };
    for (const auto &[key, hook] : slots) {
        if (hook)
            out.insert(key, hookJson(hook));
    }
}

QJsonObject commandJson(const Command &command)
{
    return QJsonObject{{u"argv"_s, QJsonArray::fromStringList(command.argv)}, {u"shell"_s, command.shell}};
}

void appendString(QByteArray &out, const QString &text)
{
    out += '"';
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        switch (u) {
        case u'"':
            out += "\\\"";
            break;
        case u'\\':
            out += "\\\\";
            break;
        case u'\n':
            out += "\\n";
            break;
        case u'\r':
            out += "\\r";
            break;
        case u'\t':
            out += "\\t";
            break;
        case u'\b':
            out += "\\b";
            break;
        case u'\f':
            out += "\\f";
            break;
        default:
            if (u < 0x20)
                out += "\\u" + QByteArray::number(int(u), 16).rightJustified(4, '0');
            else
                out += QString(c).toUtf8();
        }
    }
    out += '"';
}

void appendCanonical(QByteArray &out, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        out += "null";
        return;
    case QJsonValue::Bool:
        out += value.toBool() ? "true" : "false";
        return;
    case QJsonValue::Double: {
        const double d = value.toDouble();
        if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9007199254740992.0)
            out += QByteArray::number(qint64(d));
        else if (std::isfinite(d))
            out += QByteArray::number(d, 'g', 17);
        else
            out += "null";
        return;
    }
    case QJsonValue::String:
        appendString(out, value.toString());
        return;
    case QJsonValue::Array: {
        out += '[';
        const QJsonArray array = value.toArray();
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (i)
                out += ',';
            appendCanonical(out, array.at(i));
        }
        out += ']';
        return;
    }
    case QJsonValue::Object: {
        const QJsonObject object = value.toObject();
        QStringList keys = object.keys();
        // By UTF-16 code unit, so that the order never depends on a locale.
        std::sort(keys.begin(), keys.end(), [](const QString &a, const QString &b) {
            return QStringView(a).compare(QStringView(b), Qt::CaseSensitive) < 0;
        });
        out += '{';
        for (qsizetype i = 0; i < keys.size(); ++i) {
            if (i)
                out += ',';
            appendString(out, keys[i]);
            out += ':';
            appendCanonical(out, object.value(keys[i]));
        }
        out += '}';
        return;
    }
    }
}

} // namespace

QJsonObject toJson(const TaskConfig &config)
{
    QJsonObject out;
    out.insert(u"platform"_s, config.platform == TaskConfig::Platform::Host ? u"host"_s : u"linux"_s);
    if (config.imageResource) {
        out.insert(u"image_resource"_s,
                   QJsonObject{{u"type"_s, config.imageResource->type},
                               {u"source"_s, QJsonObject{{u"repository"_s, config.imageResource->repository},
                                                         {u"tag"_s, config.imageResource->tag}}}});
    }
    QJsonArray inputs;
    for (const auto &input : config.inputs)
        inputs.append(QJsonObject{{u"name"_s, input.name}, {u"path"_s, input.path}, {u"optional"_s, input.optional}});
    out.insert(u"inputs"_s, inputs);
    QJsonArray outputs;
    for (const auto &output : config.outputs)
        outputs.append(QJsonObject{{u"name"_s, output.name}, {u"path"_s, output.path}});
    out.insert(u"outputs"_s, outputs);
    QJsonArray caches;
    for (const auto &cache : config.caches)
        caches.append(QJsonObject{{u"path"_s, cache.path}});
    out.insert(u"caches"_s, caches);
    out.insert(u"params"_s, stringMapJson(config.params));
    out.insert(u"run"_s, QJsonObject{{u"path"_s, config.run.path},
                                     {u"args"_s, QJsonArray::fromStringList(config.run.args)},
                                     {u"dir"_s, config.run.dir},
                                     {u"user"_s, config.run.user}});
    out.insert(u"container_limits"_s,
               QJsonObject{{u"cpu"_s, config.limits.cpus}, {u"memory"_s, double(config.limits.memoryBytes)}});
    return out;
}

QJsonObject toJson(const Step &step)
{
    QJsonObject out;
    const QString kind = stepKindName(step.kind);
    switch (step.kind) {
    case StepKind::Get: {
        out.insert(kind, step.name);
        out.insert(u"resource"_s, step.get.resource);
        out.insert(u"passed"_s, QJsonArray::fromStringList(step.get.passed));
        out.insert(u"trigger"_s, step.get.trigger);
        if (step.get.version == GetStep::Version::Pinned)
            out.insert(u"version"_s, stringMapJson(step.get.pinned));
        else
            out.insert(u"version"_s, step.get.version == GetStep::Version::Every ? u"every"_s : u"latest"_s);
        out.insert(u"params"_s, step.get.params);
        break;
    }
    case StepKind::Put: {
        out.insert(kind, step.name);
        out.insert(u"resource"_s, step.put.resource);
        if (step.put.inputs == PutStep::Inputs::List)
            out.insert(u"inputs"_s, QJsonArray::fromStringList(step.put.inputList));
        else
            out.insert(u"inputs"_s, step.put.inputs == PutStep::Inputs::All ? u"all"_s : u"detect"_s);
        out.insert(u"params"_s, step.put.params);
        out.insert(u"get_params"_s, step.put.getParams);
        out.insert(u"no_get"_s, step.put.noGet);
        break;
    }
    case StepKind::Task: {
        out.insert(kind, step.name);
        if (step.task.config)
            out.insert(u"config"_s, toJson(*step.task.config));
        else
            out.insert(u"file"_s, step.task.file);
        if (!step.task.image.isEmpty())
            out.insert(u"image"_s, step.task.image);
        out.insert(u"params"_s, stringMapJson(step.task.params));
        out.insert(u"input_mapping"_s, stringMapJson(step.task.inputMapping));
        out.insert(u"output_mapping"_s, stringMapJson(step.task.outputMapping));
        if (step.task.sharedCache)
            out.insert(u"shared_cache"_s, true);
        if (step.task.privileged)
            out.insert(u"privileged"_s, true);
        if (step.task.vars)
            out.insert(u"vars"_s, internal::toJsonValue(*step.task.vars));
        break;
    }
    case StepKind::InParallel: {
        QJsonArray steps;
        for (const auto &child : step.steps)
            steps.append(toJson(child));
        out.insert(kind,
                   QJsonObject{{u"steps"_s, steps}, {u"limit"_s, step.parallelLimit}, {u"fail_fast"_s, step.failFast}});
        break;
    }
    case StepKind::Do: {
        QJsonArray steps;
        for (const auto &child : step.steps)
            steps.append(toJson(child));
        out.insert(kind, steps);
        break;
    }
    case StepKind::Try:
        out.insert(kind, step.steps.empty() ? QJsonValue() : QJsonValue(toJson(step.steps.front())));
        break;
    case StepKind::LoadVar: {
        static const char *const formats[] = {"auto", "json", "yaml", "raw", "trim"};
        out.insert(kind, step.name);
        out.insert(u"file"_s, step.loadVar.file);
        out.insert(u"format"_s, QString::fromLatin1(formats[int(step.loadVar.format)]));
        out.insert(u"reveal"_s, step.loadVar.reveal);
        break;
    }
    case StepKind::SetPipeline:
        out.insert(kind, step.name);
        out.insert(u"file"_s, step.setPipeline.file);
        if (!step.setPipeline.varFiles.isEmpty())
            out.insert(u"var_files"_s, QJsonArray::fromStringList(step.setPipeline.varFiles));
        if (step.setPipeline.vars)
            out.insert(u"vars"_s, internal::toJsonValue(*step.setPipeline.vars));
        if (step.setPipeline.instanceVars)
            out.insert(u"instance_vars"_s, internal::toJsonValue(*step.setPipeline.instanceVars));
        break;
    case StepKind::Approve:
        // One timeout_ms, the request's lifetime: the generic modifier does not apply here.
        out.insert(kind, step.name);
        out.insert(u"message"_s, step.approve.message);
        out.insert(u"approvers"_s, QJsonArray::fromStringList(step.approve.approvers));
        out.insert(u"timeout_ms"_s, double(step.approve.timeoutMs));
        insertHooks(out, step.hooks);
        return out;
    }
    out.insert(u"attempts"_s, step.attempts);
    out.insert(u"timeout_ms"_s, double(step.timeoutMs));
    if (!step.across.empty()) {
        QJsonArray across;
        for (const AcrossVar &var : step.across)
            across.append(QJsonObject{{u"var"_s, var.name},
                                      {u"values"_s, internal::toJsonValue(*var.values)},
                                      {u"max_in_flight"_s, var.maxInFlight}});
        out.insert(u"across"_s, across);
        out.insert(u"fail_fast"_s, step.acrossFailFast);
    }
    insertHooks(out, step.hooks);
    return out;
}

QJsonObject toJson(const ResolvedTask &task)
{
    static const QString venues[] = {u"host"_s, u"image"_s, u"image_artifact"_s};
    QJsonArray inputs;
    for (const auto &input : task.inputs) {
        inputs.append(QJsonObject{{u"name"_s, input.name},
                                  {u"artifact"_s, input.artifact},
                                  {u"path"_s, input.path},
                                  {u"optional"_s, input.optional}});
    }
    QJsonArray outputs;
    for (const auto &output : task.outputs)
        outputs.append(
            QJsonObject{{u"name"_s, output.name}, {u"artifact"_s, output.artifact}, {u"path"_s, output.path}});
    return QJsonObject{
        {u"config"_s, toJson(task.config)},
        {u"venue"_s, venues[int(task.venue)]},
        {u"image"_s, task.image},
        {u"inputs"_s, inputs},
        {u"outputs"_s, outputs},
        {u"argv"_s, QJsonArray::fromStringList(task.argv)},
        {u"shell"_s, task.shell},
    };
}

QJsonObject toJson(const ResourceType &type)
{
    static const QString kinds[] = {u"image"_s, u"builtin"_s, u"shell"_s};
    QJsonObject out{{u"name"_s, type.name}, {u"kind"_s, kinds[int(type.kind)]}, {u"defaults"_s, type.defaults}};
    if (!type.type.isEmpty())
        out.insert(u"type"_s, type.type);
    if (!type.source.isEmpty())
        out.insert(u"source"_s, type.source);
    if (!type.image.isEmpty())
        out.insert(u"image"_s, type.image);
    if (type.kind == ResourceType::Kind::Shell) {
        QJsonObject commands{{u"check"_s, commandJson(type.check)}, {u"in"_s, commandJson(type.in)}};
        if (!type.out.isEmpty())
            commands.insert(u"out"_s, commandJson(type.out));
        out.insert(u"commands"_s, commands);
    }
    if (type.checkEveryMs > 0)
        out.insert(u"check_every_ms"_s, double(type.checkEveryMs));
    return out;
}

QJsonObject toJson(const Resource &resource)
{
    QJsonObject out{{u"name"_s, resource.name},
                    {u"type"_s, resource.type},
                    {u"source"_s, resource.source},
                    {u"check_every_ms"_s, double(resource.checkEveryMs)}};
    // The webhook token is a credential: only whether there is one is shown.
    out.insert(u"webhook"_s, !resource.webhookToken.isEmpty());
    if (!resource.icon.isEmpty())
        out.insert(u"icon"_s, resource.icon);
    // Only when set, so that a pipeline set before these were read keeps its digest and diff.
    if (resource.exposeBuildCreatedBy)
        out.insert(u"expose_build_created_by"_s, true);
    if (resource.isPublic)
        out.insert(u"public"_s, true);
    if (!resource.oldName.isEmpty())
        out.insert(u"old_name"_s, resource.oldName);
    if (resource.checkTimeoutMs != Resource::DefaultCheckTimeoutMs)
        out.insert(u"check_timeout_ms"_s, double(resource.checkTimeoutMs));
    if (resource.pinnedVersion)
        out.insert(u"version"_s, stringMapJson(*resource.pinnedVersion));
    return out;
}

QJsonObject toJson(const Job &job)
{
    QJsonArray plan;
    for (const auto &step : job.plan)
        plan.append(toJson(step));
    QJsonObject out{{u"name"_s, job.name},
                    {u"plan"_s, plan},
                    {u"serial"_s, job.serial},
                    {u"max_in_flight"_s, job.maxInFlight},
                    {u"public"_s, job.isPublic}};
    // Only when set, so that a pipeline set before these were read keeps its digest and diff.
    if (job.disableManualTrigger)
        out.insert(u"disable_manual_trigger"_s, true);
    if (job.interruptible)
        out.insert(u"interruptible"_s, true);
    if (!job.serialGroups.isEmpty())
        out.insert(u"serial_groups"_s, QJsonArray::fromStringList(job.serialGroups));
    if (!job.logRetention.isEmpty() || job.logRetention.minimumSucceeded > 0)
        out.insert(u"build_log_retention"_s,
                   QJsonObject{{u"builds"_s, job.logRetention.builds},
                               {u"days"_s, job.logRetention.days},
                               {u"minimum_succeeded_builds"_s, job.logRetention.minimumSucceeded}});
    if (!job.oldName.isEmpty())
        out.insert(u"old_name"_s, job.oldName);
    insertHooks(out, job.hooks);
    return out;
}

QJsonObject toJson(const Pipeline &pipeline)
{
    QJsonArray types;
    for (const auto &type : pipeline.resourceTypes)
        types.append(toJson(type));
    QJsonArray resources;
    for (const auto &resource : pipeline.resources)
        resources.append(toJson(resource));
    QJsonArray jobs;
    for (const auto &job : pipeline.jobs)
        jobs.append(toJson(job));
    QJsonArray groups;
    for (const auto &group : pipeline.groups)
        groups.append(QJsonObject{{u"name"_s, group.name}, {u"jobs"_s, QJsonArray::fromStringList(group.jobs)}});
    QJsonObject out{
        {u"resource_types"_s, types}, {u"resources"_s, resources}, {u"jobs"_s, jobs}, {u"groups"_s, groups}};
    if (!pipeline.display.backgroundImage.isEmpty() || !pipeline.display.backgroundFilter.isEmpty())
        out.insert(u"display"_s, QJsonObject{{u"background_image"_s, pipeline.display.backgroundImage},
                                             {u"background_filter"_s, pipeline.display.backgroundFilter}});
    if (!pipeline.varSources.isEmpty()) {
        QJsonArray sources;
        for (const VarSourceConfig &source : pipeline.varSources)
            sources.append(QJsonObject{{u"name"_s, source.name},
                                       {u"type"_s, source.type},
                                       {u"config"_s, internal::toJsonValue(source.config)}});
        out.insert(u"var_sources"_s, sources);
    }
    return out;
}

QByteArray canonicalJson(const QJsonValue &value)
{
    QByteArray out;
    appendCanonical(out, value);
    return out;
}

QStringList diffLines(const QStringList &before, const QStringList &after, int context)
{
    struct Line {
        char op; // ' ', '-', '+'
        QString text;
        int afterLine; // 1-based line in `after` (for '-': the next line there)
    };
    std::vector<Line> script;
    // The lines both begin and end with are unchanged: the longest common subsequence is looked
    // for only between them, which for the usual edit of a file is a few lines.
    qsizetype head = 0;
    while (head < before.size() && head < after.size() && before[head] == after[head])
        ++head;
    qsizetype tail = 0;
    while (tail < before.size() - head && tail < after.size() - head &&
           before[before.size() - 1 - tail] == after[after.size() - 1 - tail])
        ++tail;
    for (qsizetype k = 0; k < head; ++k)
        script.push_back({' ', after[k], int(k + 1)});
    const auto n = size_t(before.size() - head - tail);
    const auto m = size_t(after.size() - head - tail);
    const auto was = [&](size_t i) -> const QString & {
        return before[head + qsizetype(i)];
    };
    const auto now = [&](size_t j) -> const QString & {
        return after[head + qsizetype(j)];
    };
    // The table is quadratic: past a bound (a rewrite of a large file) every old line is shown
    // removed and every new one added, which is true if not the shortest.
    constexpr size_t MaxCells = size_t(16) << 20;
    if (n > 0 && m > 0 && n * m > MaxCells) {
        for (size_t i = 0; i < n; ++i)
            script.push_back({'-', was(i), int(head + 1)});
        for (size_t j = 0; j < m; ++j)
            script.push_back({'+', now(j), int(head + qsizetype(j) + 1)});
    } else {
        std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
        for (size_t i = n; i-- > 0;)
            for (size_t j = m; j-- > 0;)
                lcs[i][j] = was(i) == now(j) ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
        size_t i = 0;
        size_t j = 0;
        while (i < n || j < m) {
            const int line = int(head + qsizetype(j) + 1);
            if (i < n && j < m && was(i) == now(j)) {
                script.push_back({' ', was(i), line});
                ++i, ++j;
            } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
                script.push_back({'-', was(i), line}); // a replaced line: the old one first
                ++i;
            } else {
                script.push_back({'+', now(j), line});
                ++j;
            }
        }
    }
    for (qsizetype k = after.size() - tail; k < after.size(); ++k)
        script.push_back({' ', after[k], int(k + 1)});
    QStringList out;
    const auto total = qsizetype(script.size());
    qsizetype k = 0;
    while (k < total) {
        if (script[size_t(k)].op == ' ') {
            ++k;
            continue;
        }
        // One hunk: from `context` lines before this change to `context` lines after the last
        // change that is within 2*context of the previous one.
        const qsizetype start = std::max<qsizetype>(0, k - context);
        qsizetype end = k;
        qsizetype quiet = 0;
        for (qsizetype e = k; e < total; ++e) {
            if (script[size_t(e)].op != ' ') {
                end = e;
                quiet = 0;
            } else if (++quiet > 2 * qsizetype(context)) {
                break;
            }
        }
        const qsizetype stop = std::min(total, end + context + 1);
        out << u"@@ line %1 @@"_s.arg(script[size_t(start)].afterLine);
        for (qsizetype e = start; e < stop; ++e) {
            const Line &line = script[size_t(e)];
            out << QString(QLatin1Char(line.op)) + u' ' + line.text;
        }
        k = stop;
    }
    return out;
}

QStringList setDiff(const QString &configBefore, const QString &configAfter, const QString &varsBefore,
                    const QString &varsAfter)
{
    const auto lines = [](const QString &text) {
        return text.isEmpty() ? QStringList() : text.split(u'\n');
    };
    QStringList out = diffLines(lines(configBefore), lines(configAfter));
    if (varsBefore == varsAfter)
        return out;
    const auto vars = [](const QString &text) -> std::optional<QJsonObject> {
        if (text.trimmed().isEmpty())
            return QJsonObject();
        auto root = readVarsFile(text.toUtf8());
        if (!root)
            return std::nullopt;
        return internal::toJsonValue(*root).toObject();
    };
    const std::optional<QJsonObject> was = vars(varsBefore);
    const std::optional<QJsonObject> now = vars(varsAfter);
    out << u"@@ vars @@"_s;
    if (!was || !now)
        return out << u"~ (the vars file)"_s;
    QStringList names = was->keys() + now->keys();
    names.sort();
    names.removeDuplicates();
    for (const QString &name : std::as_const(names)) {
        if (!was->contains(name))
            out << u"+ "_s + name;
        else if (!now->contains(name))
            out << u"- "_s + name;
        else if (was->value(name) != now->value(name))
            out << u"~ "_s + name;
    }
    return out;
}

} // namespace pando::core::pipelines
