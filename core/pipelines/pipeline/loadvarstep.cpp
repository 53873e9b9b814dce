// The load_var step: a file of an artifact read into the run's local vars, which later steps use
// as ((.:name)); a value not revealed is masked from then on, as a secret is.
#include "core/pipelines/pipeline/execution.h"

#include <QJsonDocument>

namespace pando::core::pipelines::detail {

namespace {

using core::detail::DocNode;

DocNode scalar(const QString &text)
{
    DocNode node;
    node.kind = DocNode::Kind::Scalar;
    node.text = text;
    node.quoted = true;
    return node;
}

// The format the file's name suggests when the step names none, as Concourse picks it.
LoadVarStep::Format formatOf(const LoadVarStep &step)
{
    if (step.format != LoadVarStep::Format::Auto)
        return step.format;
    if (step.file.endsWith(QLatin1String(".json")))
        return LoadVarStep::Format::Json;
    if (step.file.endsWith(QLatin1String(".yml")) || step.file.endsWith(QLatin1String(".yaml")))
        return LoadVarStep::Format::Yaml;
    return LoadVarStep::Format::Trim;
}

Result<DocNode> parseValue(const QByteArray &text, const LoadVarStep &step, const QString &where)
{
    switch (formatOf(step)) {
    case LoadVarStep::Format::Raw:
        return scalar(QString::fromUtf8(text));
    case LoadVarStep::Format::Trim:
    case LoadVarStep::Format::Auto:
        return scalar(QString::fromUtf8(text).trimmed());
    case LoadVarStep::Format::Json: {
        QJsonParseError error{};
        QJsonDocument::fromJson(text, &error);
        if (error.error != QJsonParseError::NoError)
            return fail(ErrorCode::Invalid,
                        QStringLiteral("load_var file %1 is not JSON: %2 at byte %3")
                            .arg(step.file, error.errorString())
                            .arg(error.offset),
                        where, QStringLiteral("write format: raw or trim to load it as text"));
        break; // JSON is YAML: read by the one reader below, which gives the tree the vars use
    }
    case LoadVarStep::Format::Yaml:
        break;
    }
    core::detail::ReaderLimits limits;
    limits.document = QStringLiteral("load_var file");
    auto tree = core::detail::readYaml(text, limits);
    if (!tree) {
        Error error = tree.error();
        error.message = QStringLiteral("load_var file %1: ").arg(step.file) + error.message;
        error.where = where;
        return std::unexpected(error);
    }
    return *tree;
}

void collectScalars(const DocNode &node, QStringList &out)
{
    if (node.kind == DocNode::Kind::Scalar && !node.text.isEmpty())
        out << node.text;
    for (const DocNode &item : node.items)
        collectScalars(item, out);
    for (const auto &[key, value] : node.entries)
        collectScalars(value, out);
}

} // namespace

Outcome Execution::runLoadVar(const Step &step, RunStepRecord &rec)
{
    auto text = readArtifactFile(step.loadVar.file, QStringLiteral("load_var file"), step.path);
    if (!text)
        return errored(rec, text.error());
    auto value = parseValue(*text, step.loadVar, step.path);
    if (!value)
        return errored(rec, value.error());
    QStringList masked;
    {
        QMutexLocker lock(&m_mutex);
        m_locals.kind = DocNode::Kind::Map;
        auto &entries = m_locals.entries;
        const auto same =
            std::find_if(entries.begin(), entries.end(), [&](const auto &entry) { return entry.first == step.name; });
        if (same != entries.end())
            same->second = *value; // loaded again (a retried or repeated step): the newest wins
        else
            entries.emplace_back(step.name, *value);
        if (!step.loadVar.reveal) {
            collectScalars(*value, m_maskedLocalValues);
            masked = m_secretValues + m_maskedLocalValues;
        }
    }
    if (!step.loadVar.reveal) {
        m_log.maskFromNowOn(masked);
        m_log.note(step.path, QStringLiteral("loaded %1 from %2 (masked in the output; reveal: true shows it)")
                                  .arg(step.name, step.loadVar.file));
    } else {
        m_log.note(step.path, QStringLiteral("loaded %1 from %2").arg(step.name, step.loadVar.file));
    }
    return finish(rec, Outcome::Succeeded, {});
}

Result<Step> Execution::withLocalVars(const Step &step) const
{
    DocNode locals;
    {
        QMutexLocker lock(&m_mutex);
        locals = m_locals;
    }
    return fillLocalVars(step, locals);
}

} // namespace pando::core::pipelines::detail
