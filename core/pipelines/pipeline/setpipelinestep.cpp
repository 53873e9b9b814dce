// set_pipeline: a pipeline file (and its vars files) read from an artifact and set as `pando
// pipelines set` would, by the service's rules for what a run may set.
#include "core/pipelines/config/instancename.h"
#include "core/pipelines/config/nodereader.h"
#include "core/pipelines/pipeline/execution.h"
#include "core/pipelines/template/interpolate.h"

#include <QJsonDocument>

namespace pando::core::pipelines::detail {

using core::detail::DocNode;

namespace {

// Each of from's keys set in into, replacing one of the same name.
void overlay(DocNode &into, const DocNode &from)
{
    for (const auto &[key, value] : from.entries) {
        auto same = std::find_if(into.entries.begin(), into.entries.end(),
                                 [&key](const auto &entry) { return entry.first == key; });
        if (same != into.entries.end())
            same->second = value;
        else
            into.entries.emplace_back(key, value);
    }
}

bool holdsAny(const DocNode &node, const QStringList &values)
{
    if (node.kind == DocNode::Kind::Scalar && !node.text.isEmpty() && values.contains(node.text))
        return true;
    for (const DocNode &item : node.items)
        if (holdsAny(item, values))
            return true;
    for (const auto &entry : node.entries)
        if (holdsAny(entry.second, values))
            return true;
    return false;
}

} // namespace

Outcome Execution::runSetPipeline(const Step &step, RunStepRecord &rec)
{
    if (!m_deps.setPipeline)
        return errored(rec,
                       Error{ErrorCode::Invalid, QStringLiteral("this runner cannot set pipelines"), step.path, {}});
    auto config = readArtifactFile(step.setPipeline.file, QStringLiteral("pipeline file"), step.path);
    if (!config)
        return errored(rec, config.error());
    // The vars files in order, then vars:, a later one's key replacing an earlier one's.
    DocNode vars;
    vars.kind = DocNode::Kind::Map;
    for (const QString &file : step.setPipeline.varFiles) {
        auto text = readArtifactFile(file, QStringLiteral("var file"), step.path);
        if (!text)
            return errored(rec, text.error());
        auto read = readVarsFile(*text);
        if (!read) {
            Error error = read.error();
            error.where = file + (error.where.isEmpty() ? QString() : QStringLiteral(": ") + error.where);
            return errored(rec, error);
        }
        overlay(vars, *read);
    }
    if (step.setPipeline.vars)
        overlay(vars, *step.setPipeline.vars);
    // The pipeline set keeps its vars in storage, where no secret may go.
    QStringList secrets;
    {
        QMutexLocker lock(&m_mutex);
        secrets = m_secretValues;
    }
    if (holdsAny(vars, secrets))
        return errored(rec, Error{ErrorCode::Invalid,
                                  QStringLiteral("the vars given to the pipeline hold a secret's value, which it would "
                                                 "store"),
                                  step.path,
                                  QStringLiteral("leave the ((secret)) in the pipeline file instead: the pipeline set "
                                                 "reads it from its own secrets when it runs")});
    QString name = step.setPipeline.self ? m_run.pipeline : step.name;
    if (step.setPipeline.instanceVars) {
        auto instance = instanceName(step.name, internal::toJsonValue(*step.setPipeline.instanceVars).toObject(),
                                     step.path + QStringLiteral(".instance_vars"));
        if (!instance)
            return errored(rec, instance.error());
        name = *instance;
    }
    const QByteArray varsText =
        vars.entries.empty() ? QByteArray()
                             : QJsonDocument(internal::toJsonValue(vars).toObject()).toJson(QJsonDocument::Indented);
    auto set = m_deps.setPipeline(m_run.pipeline, name, *config, varsText, m_run.id);
    if (!set) {
        Error error = set.error();
        if (!error.where.isEmpty())
            error.message = QStringLiteral("%1: %2: %3").arg(step.setPipeline.file, error.where, error.message);
        error.where = step.path;
        return errored(rec, error);
    }
    m_log.note(step.path, *set);
    return finish(rec, Outcome::Succeeded, {});
}

} // namespace pando::core::pipelines::detail
