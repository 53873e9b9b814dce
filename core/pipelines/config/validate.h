#pragma once
// The parser's internal pieces, shared by its source files: the tree-to-model readers of a task
// config and a step, and the cross-reference checks run on a whole pipeline once it is typed.

#include "core/pipelines/config/nodereader.h"
#include "core/pipelines/config/pipelineconfig.h"

namespace pando::core::pipelines::internal {

// `path` is the config mapping's YAML path ("jobs[0].plan[1].config").
Result<TaskConfig> parseTaskConfig(const DocNode &node, const QString &path);
// `location` is the step mapping's YAML path ("jobs[0].plan[1]").
Result<Step> parseStep(const DocNode &node, const QString &location);
// The on_success/on_failure/on_error/on_abort/ensure keys of a step or job mapping.
Result<Hooks> parseHooksOf(const DocNode &node, const QString &location);
// Takes `var_sources:` out of the pipeline's tree and reads it (configs as written).
Result<QList<VarSourceConfig>> takeVarSources(DocNode &tree);
// The sources' configs interpolated in the order they read from each other (a cycle is an
// error), what each used added to report.
Result<QList<VarSourceConfig>> resolveVarSources(QList<VarSourceConfig> declared,
                                                 const InterpolationSources &interpolation,
                                                 InterpolationReport &report);
// Adds what `from` used to `into` (each list sorted, unique).
void mergeReport(InterpolationReport &into, const InterpolationReport &from);
// Names, uniqueness, resource references, passed: (jobs, resources, cycles), task inputs.
Status validatePipeline(const Pipeline &pipeline);

} // namespace pando::core::pipelines::internal
