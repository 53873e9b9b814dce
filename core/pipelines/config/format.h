#pragma once
// `pando pipelines format` (fly format-pipeline): a pipeline file written again in one layout, so
// that two people's files diff by what they mean. What it does, as fly does: anchors, aliases and
// merge keys are expanded and comments dropped; block style, two-space indentation. Keys of the
// pipeline's own objects come in one order (a step's kind first: `get:`, `task:`..., then what
// Concourse documents for it, hooks last; a job's settings before its plan); maps that hold the
// user's data (source, params, vars, env) keep the order they were written in, and keys the
// order does not know come after the known ones, as written. Scalars keep their text and whether
// they were quoted, so every value reads back the same; text with line breaks becomes a literal
// block. ((vars)) are left as they are.
//
// Threading: stateless.

#include "adapters/api/error.h"

#include <QByteArray>

namespace pando::core::pipelines {

// The formatted text of a pipeline file; errors as reading the file gives them (with line and
// column), or Invalid when it is not a mapping.
Result<QByteArray> formatPipeline(const QByteArray &text);

} // namespace pando::core::pipelines
