#include "core/pipelines/config/format.h"

#include "core/spec/yamlreader.h"

#include <QHash>
#include <algorithm>
#include <yaml-cpp/yaml.h>

namespace pando::core::pipelines {

using namespace Qt::StringLiterals;
using detail::DocNode;

namespace {

// What a mapping is, which decides its keys' order and what its values are.
enum class Kind {
    Top,
    ResourceType,
    Resource,
    Job,
    Step,
    InParallel,
    TaskConfig,
    ImageResource,
    Run,
    Group,
    VarSource,
    Data // the user's own: kept as written
};

const QStringList &orderOf(Kind kind)
{
    static const QHash<Kind, QStringList> orders{
        {Kind::Top, {u"var_sources"_s, u"resource_types"_s, u"resources"_s, u"jobs"_s, u"groups"_s, u"display"_s}},
        {Kind::ResourceType,
         {u"name"_s, u"type"_s, u"source"_s, u"privileged"_s, u"params"_s, u"check_every"_s, u"tags"_s, u"defaults"_s,
          u"image"_s, u"commands"_s}},
        {Kind::Resource,
         {u"name"_s, u"old_name"_s, u"type"_s, u"icon"_s, u"source"_s, u"version"_s, u"check_every"_s,
          u"check_timeout"_s, u"webhook_token"_s, u"tags"_s, u"public"_s, u"expose_build_created_by"_s}},
        {Kind::Job,
         {u"name"_s, u"old_name"_s, u"public"_s, u"serial"_s, u"serial_groups"_s, u"max_in_flight"_s,
          u"build_log_retention"_s, u"build_logs_to_retain"_s, u"disable_manual_trigger"_s, u"interruptible"_s,
          u"plan"_s, u"on_success"_s, u"on_failure"_s, u"on_error"_s, u"on_abort"_s, u"ensure"_s}},
        {Kind::Step,
         {u"get"_s,      u"put"_s,        u"task"_s,          u"set_pipeline"_s,   u"load_var"_s, u"in_parallel"_s,
          u"do"_s,       u"try"_s,        u"approve"_s,       u"resource"_s,       u"passed"_s,   u"trigger"_s,
          u"version"_s,  u"inputs"_s,     u"file"_s,          u"config"_s,         u"image"_s,    u"privileged"_s,
          u"vars"_s,     u"var_files"_s,  u"instance_vars"_s, u"team"_s,           u"format"_s,   u"reveal"_s,
          u"params"_s,   u"get_params"_s, u"input_mapping"_s, u"output_mapping"_s, u"across"_s,   u"timeout"_s,
          u"attempts"_s, u"tags"_s,       u"on_success"_s,    u"on_failure"_s,     u"on_error"_s, u"on_abort"_s,
          u"ensure"_s}},
        {Kind::InParallel, {u"steps"_s, u"limit"_s, u"fail_fast"_s}},
        {Kind::TaskConfig,
         {u"platform"_s, u"image_resource"_s, u"inputs"_s, u"outputs"_s, u"caches"_s, u"params"_s, u"run"_s,
          u"container_limits"_s, u"rootfs_uri"_s}},
        {Kind::ImageResource, {u"type"_s, u"source"_s, u"params"_s, u"version"_s}},
        {Kind::Run, {u"path"_s, u"args"_s, u"dir"_s, u"user"_s}},
        {Kind::Group, {u"name"_s, u"jobs"_s, u"resources"_s}},
        {Kind::VarSource, {u"name"_s, u"type"_s, u"config"_s}},
        {Kind::Data, {}}};
    return orders.find(kind).value();
}

bool isHook(const QString &key)
{
    return key == u"on_success"_s || key == u"on_failure"_s || key == u"on_error"_s || key == u"on_abort"_s ||
           key == u"ensure"_s;
}

// What the value at key of a mapping of kind is; listed: a sequence of such.
struct Child {
    Kind kind = Kind::Data;
    bool listed = false;
};

Child childOf(Kind parent, const QString &key, const DocNode &value)
{
    switch (parent) {
    case Kind::Top:
        if (key == u"resource_types"_s)
            return {Kind::ResourceType, true};
        if (key == u"resources"_s)
            return {Kind::Resource, true};
        if (key == u"jobs"_s)
            return {Kind::Job, true};
        if (key == u"groups"_s)
            return {Kind::Group, true};
        if (key == u"var_sources"_s)
            return {Kind::VarSource, true};
        break;
    case Kind::Job:
        if (key == u"plan"_s)
            return {Kind::Step, true};
        if (isHook(key))
            return {Kind::Step, false};
        break;
    case Kind::Step:
        if (key == u"in_parallel"_s)
            return value.kind == DocNode::Kind::Map ? Child{Kind::InParallel, false} : Child{Kind::Step, true};
        if (key == u"do"_s)
            return {Kind::Step, true};
        if (key == u"try"_s || isHook(key))
            return {Kind::Step, false};
        if (key == u"config"_s)
            return {Kind::TaskConfig, false};
        break;
    case Kind::InParallel:
        if (key == u"steps"_s)
            return {Kind::Step, true};
        break;
    case Kind::TaskConfig:
        if (key == u"run"_s)
            return {Kind::Run, false};
        if (key == u"image_resource"_s)
            return {Kind::ImageResource, false};
        break;
    default:
        break;
    }
    return {};
}

// Whether text reads back exactly from a literal block as the emitter writes one ("|", which
// keeps one final line break): it ends in exactly one, and its first line does not start with
// blanks (that would need an indentation indicator).
bool fitsLiteralBlock(const QString &text)
{
    if (!text.endsWith(u'\n') || text.endsWith(u"\n\n"_s) || text.startsWith(u' ') || text.startsWith(u'\t'))
        return false;
    return std::ranges::all_of(text, [](QChar c) { return c == u'\n' || c == u'\t' || c.isPrint(); });
}

void emitScalar(YAML::Emitter &out, const DocNode &node)
{
    const std::string text = node.text.toStdString();
    // A script reads best as a block; other text with line breaks is quoted with escapes, which
    // keeps it exactly. A quoted scalar stays quoted so that "true" or "1.10" do not become a
    // boolean or a number; a plain one stays as written.
    if (node.text.contains(u'\n') && fitsLiteralBlock(node.text))
        out << YAML::Literal << text;
    else if (node.quoted || node.text.isEmpty() || node.text.contains(u'\n'))
        out << YAML::DoubleQuoted << text;
    else
        out << text;
}

void emitNode(YAML::Emitter &out, const DocNode &node, Kind kind);

void emitValue(YAML::Emitter &out, const DocNode &node, Child child)
{
    if (child.listed && node.kind == DocNode::Kind::Sequence) {
        out << YAML::BeginSeq;
        for (const DocNode &item : node.items)
            emitNode(out, item, child.kind);
        out << YAML::EndSeq;
        return;
    }
    emitNode(out, node, child.listed ? Kind::Data : child.kind);
}

void emitNode(YAML::Emitter &out, const DocNode &node, Kind kind)
{
    switch (node.kind) {
    case DocNode::Kind::Null:
        out << YAML::Null;
        return;
    case DocNode::Kind::Scalar:
        emitScalar(out, node);
        return;
    case DocNode::Kind::Sequence:
        out << YAML::BeginSeq;
        for (const DocNode &item : node.items)
            emitNode(out, item, Kind::Data);
        out << YAML::EndSeq;
        return;
    case DocNode::Kind::Map:
        break;
    }
    // Known keys in their order, then the others as written.
    const QStringList &order = orderOf(kind);
    std::vector<const std::pair<QString, DocNode> *> entries;
    entries.reserve(node.entries.size());
    for (const auto &entry : node.entries)
        entries.push_back(&entry);
    std::ranges::stable_sort(entries, [&order](const auto *a, const auto *b) {
        const qsizetype x = order.indexOf(a->first);
        const qsizetype y = order.indexOf(b->first);
        return (x < 0 ? order.size() : x) < (y < 0 ? order.size() : y);
    });
    out << YAML::BeginMap;
    for (const auto *entry : entries) {
        out << YAML::Key << entry->first.toStdString() << YAML::Value;
        emitValue(out, entry->second, childOf(kind, entry->first, entry->second));
    }
    out << YAML::EndMap;
}

} // namespace

Result<QByteArray> formatPipeline(const QByteArray &text)
{
    detail::ReaderLimits limits;
    limits.aliases = true;
    limits.document = u"pipeline"_s; // the limits `set` reads a pipeline with
    auto document = detail::readYaml(text, limits);
    if (!document)
        return std::unexpected(document.error());
    if (document->kind != DocNode::Kind::Map)
        return fail(ErrorCode::Invalid, u"a pipeline file is a mapping (jobs:, resources: ...)"_s);
    YAML::Emitter out;
    out.SetIndent(2);
    emitNode(out, *document, Kind::Top);
    if (!out.good())
        return fail(ErrorCode::Internal,
                    u"the pipeline could not be written: "_s + QString::fromStdString(out.GetLastError()));
    return QByteArray(out.c_str()) + '\n';
}

} // namespace pando::core::pipelines
