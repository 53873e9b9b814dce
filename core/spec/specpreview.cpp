#include "core/spec/specpreview.h"

#include "core/spec/specservices.h"

#include "core/spec/specrules.h"
#include "core/spec/yamlreader.h"

using namespace Qt::StringLiterals;

namespace pando::core::detail {

namespace {

const QString PreviewPath = u"preview"_s;

// YAML 1.1 readers take on/off/yes/no for booleans: all of them are accepted here.
std::optional<bool> boolean(const DocNode &node)
{
    if (node.kind != DocNode::Kind::Scalar)
        return std::nullopt;
    const QString value = node.text.trimmed().toLower();
    if (value == u"true" || value == u"on" || value == u"yes")
        return true;
    if (value == u"false" || value == u"off" || value == u"no")
        return false;
    return std::nullopt;
}

Status readPreviewResources(const DocNode &node, AppSpec::Preview &preview)
{
    const QString path = PreviewPath + u".resources"_s;
    if (node.kind != DocNode::Kind::Map)
        return invalidAt(node, u"expected a mapping of memory and cpus, got %1"_s.arg(shownValue(node)), path);
    const QStringList known{u"memory"_s, u"memoryBytes"_s, u"cpus"_s};
    // (No structured bindings here: clang-tidy 16's optional-access check crashes on them.)
    for (const auto &entry : node.entries) {
        if (!known.contains(entry.first))
            return invalidAt(node, u"unknown field"_s, path + u'.' + entry.first,
                             u"a preview may change memory and cpus; the rest is the app's"_s);
    }
    for (const QString &key : {u"memory"_s, u"memoryBytes"_s}) {
        const DocNode *memory = node.value(key);
        if (!memory || memory->kind == DocNode::Kind::Null)
            continue;
        const auto bytes = memory->kind == DocNode::Kind::Scalar ? parseMemory(memory->text) : std::nullopt;
        if (!bytes)
            return invalidAt(*memory,
                             u"expected an amount like \"256Mi\" or \"1Gi\", got %1"_s.arg(shownValue(*memory)),
                             path + u'.' + key);
        if (preview.memoryBytes != 0 && preview.memoryBytes != *bytes)
            return invalidAt(*memory, u"does not match memory"_s, path + u'.' + key);
        preview.memoryBytes = *bytes;
    }
    if (const DocNode *cpus = node.value(u"cpus"_s); cpus && cpus->kind != DocNode::Kind::Null) {
        bool ok = false;
        const double n = cpus->kind == DocNode::Kind::Scalar ? cpus->text.trimmed().toDouble(&ok) : 0;
        if (!ok || n <= 0 || n > MaxCpus)
            return invalidAt(
                *cpus, u"expected a number of CPUs greater than 0 and at most 1024, got %1"_s.arg(shownValue(*cpus)),
                path + u".cpus"_s);
        preview.cpus = n;
    }
    return {};
}

Status readPreviewMap(const DocNode &node, AppSpec::Preview &preview)
{
    const QStringList known{u"enabled"_s, u"ttl"_s, u"env"_s, u"resources"_s, u"secrets"_s, u"seed"_s};
    for (const auto &entry : node.entries) {
        if (known.contains(entry.first))
            continue;
        const QString best = closestWord(entry.first, known);
        return invalidAt(node, best.isEmpty() ? u"unknown field"_s : u"unknown field; did you mean \"%1\"?"_s.arg(best),
                         PreviewPath + u'.' + entry.first, u"known fields here: "_s + known.join(u", "_s));
    }
    // A preview section means previews, unless it says otherwise.
    preview.enabled = true;
    if (const DocNode *enabled = node.value(u"enabled"_s); enabled && enabled->kind != DocNode::Kind::Null) {
        const auto on = boolean(*enabled);
        if (!on)
            return invalidAt(*enabled, u"expected true or false, got %1"_s.arg(shownValue(*enabled)),
                             PreviewPath + u".enabled"_s);
        preview.enabled = *on;
    }
    if (const DocNode *ttl = node.value(u"ttl"_s); ttl && ttl->kind != DocNode::Kind::Null) {
        const auto ms = ttl->kind == DocNode::Kind::Scalar ? parseDurationMs(ttl->text.trimmed()) : std::nullopt;
        if (!ms || *ms < MinPreviewTtlMs || *ms > MaxPreviewTtlMs)
            return invalidAt(
                *ttl, u"expected a duration from 1h to 90d like \"72h\" or \"7d\", got %1"_s.arg(shownValue(*ttl)),
                PreviewPath + u".ttl"_s);
        preview.ttlMs = *ms;
    }
    if (const DocNode *env = node.value(u"env"_s); env && env->kind != DocNode::Kind::Null) {
        if (env->kind != DocNode::Kind::Map)
            return invalidAt(*env, u"expected a mapping of variables, got %1"_s.arg(shownValue(*env)),
                             PreviewPath + u".env"_s);
        for (const auto &entry : env->entries) {
            const QString &key = entry.first;
            const DocNode &value = entry.second;
            const QString where = PreviewPath + u".env."_s + key;
            if (auto ok = checkVariableName(key, where); !ok)
                return invalidAt(value, ok.error().message, where, ok.error().hint);
            if (value.kind != DocNode::Kind::Scalar && value.kind != DocNode::Kind::Null)
                return invalidAt(value, u"expected a string, got %1"_s.arg(shownValue(value)), where);
            preview.env.insert(key, value.text);
        }
    }
    if (const DocNode *resources = node.value(u"resources"_s); resources && resources->kind != DocNode::Kind::Null) {
        if (auto ok = readPreviewResources(*resources, preview); !ok)
            return ok;
    }
    if (const DocNode *secrets = node.value(u"secrets"_s); secrets && secrets->kind != DocNode::Kind::Null) {
        const QString value = secrets->kind == DocNode::Kind::Scalar ? secrets->text.trimmed() : QString();
        if (value != u"copy" && value != u"none")
            return invalidAt(*secrets, u"expected \"copy\" or \"none\", got %1"_s.arg(shownValue(*secrets)),
                             PreviewPath + u".secrets"_s,
                             u"copy: previews get the app's secrets; none: they get none of them"_s);
        preview.copySecrets = value == u"copy";
    }
    if (const DocNode *seeds = node.value(u"seed"_s); seeds && seeds->kind != DocNode::Kind::Null) {
        if (seeds->kind != DocNode::Kind::Map)
            return invalidAt(*seeds, u"expected a mapping of service slots to files, got %1"_s.arg(shownValue(*seeds)),
                             PreviewPath + u".seed"_s, u"e.g. seed: {db: db/preview.sql}"_s);
        // Not a structured binding: clang-tidy 16 crashes on one here.
        for (const auto &entry : seeds->entries) {
            const DocNode &path = entry.second;
            if (path.kind != DocNode::Kind::Scalar)
                return invalidAt(path, u"expected a file of the repository, got %1"_s.arg(shownValue(path)),
                                 PreviewPath + u".seed."_s + entry.first);
            preview.seeds.insert(entry.first, path.text.trimmed());
        }
    }
    return {};
}

} // namespace

Status checkPreview(const AppSpec &spec)
{
    const AppSpec::Preview &preview = spec.preview;
    if (preview.ttlMs < MinPreviewTtlMs || preview.ttlMs > MaxPreviewTtlMs)
        return fail(ErrorCode::Invalid, u"must be from 1h to 90d, got %1 ms"_s.arg(preview.ttlMs), u"preview.ttl"_s);
    for (auto it = preview.env.cbegin(); it != preview.env.cend(); ++it) {
        if (auto ok = checkVariableName(it.key(), u"preview.env."_s + it.key()); !ok)
            return ok;
    }
    if (preview.memoryBytes != 0)
        if (auto ok = checkMemory(preview.memoryBytes, u"preview.resources.memory"_s); !ok)
            return ok;
    if (preview.cpus != 0)
        if (auto ok = checkCpus(preview.cpus, u"preview.resources.cpus"_s); !ok)
            return ok;
    for (auto it = preview.seeds.cbegin(); it != preview.seeds.cend(); ++it) {
        const QString where = u"preview.seed."_s + it.key();
        const auto service = spec.services.constFind(it.key());
        if (service == spec.services.cend())
            return fail(ErrorCode::Invalid, u"the app has no service in slot %1"_s.arg(quoted(it.key())), where,
                        u"seed a slot of services"_s);
        if (auto ok = checkSeed(service->kind, it.value(), where); !ok)
            return ok;
    }
    return {};
}

Status readPreview(const DocNode &root, AppSpec &spec)
{
    const DocNode *node = root.value(PreviewPath);
    if (!node || node->kind == DocNode::Kind::Null)
        return {};
    if (node->kind == DocNode::Kind::Scalar) {
        const auto on = boolean(*node);
        if (!on)
            return invalidAt(*node, u"expected true, false or a mapping, got %1"_s.arg(shownValue(*node)), PreviewPath,
                             u"preview: true gives each pull request its own app"_s);
        spec.preview.enabled = *on;
    } else if (node->kind == DocNode::Kind::Map) {
        if (auto read = readPreviewMap(*node, spec.preview); !read)
            return read;
    } else {
        return invalidAt(*node, u"expected true, false or a mapping, got a list"_s, PreviewPath);
    }
    return checkPreview(spec);
}

void insertPreviewJson(const AppSpec::Preview &preview, QJsonObject &json)
{
    if (preview == AppSpec::Preview{})
        return;
    QJsonObject out{{u"enabled"_s, preview.enabled}};
    out.insert(u"ttl"_s, preview.ttlMs % 3600000 == 0 ? u"%1h"_s.arg(preview.ttlMs / 3600000)
                                                      : u"%1s"_s.arg(preview.ttlMs / 1000));
    if (!preview.env.isEmpty()) {
        QJsonObject env;
        for (auto it = preview.env.cbegin(); it != preview.env.cend(); ++it)
            env.insert(it.key(), it.value());
        out.insert(u"env"_s, env);
    }
    QJsonObject resources;
    if (preview.memoryBytes > 0)
        resources.insert(u"memoryBytes"_s, preview.memoryBytes);
    if (preview.cpus > 0)
        resources.insert(u"cpus"_s, preview.cpus);
    if (!resources.isEmpty())
        out.insert(u"resources"_s, resources);
    out.insert(u"secrets"_s, preview.copySecrets ? u"copy"_s : u"none"_s);
    if (!preview.seeds.isEmpty()) {
        QJsonObject seeds;
        for (auto it = preview.seeds.cbegin(); it != preview.seeds.cend(); ++it)
            seeds.insert(it.key(), it.value());
        out.insert(u"seed"_s, seeds);
    }
    json.insert(u"preview"_s, out);
}

} // namespace pando::core::detail
