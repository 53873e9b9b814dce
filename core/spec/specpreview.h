#pragma once
// The AppSpec's preview section: whether each pull (merge) request to the app's branch gets an
// app of its own built from its head (core/autodeploy/previews.h), and what such a preview runs
// with besides the app's own spec (docs/autodeploy.md):
//
//   preview:
//     enabled: true
//     ttl: 72h               # removed when nothing was pushed to the pull request for that long
//     env: {LOG_LEVEL: debug} # over run.env
//     resources: {memory: 256Mi, cpus: 0.5}
//     secrets: copy          # copy the app's secrets (the default) or none; a fork's never get them
//
// `preview: true` is `enabled: true` with the rest left as it is.

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QJsonObject>

namespace pando::core::detail {

struct DocNode;

inline constexpr qint64 MinPreviewTtlMs = 60LL * 60 * 1000;           // an hour
inline constexpr qint64 MaxPreviewTtlMs = 90LL * 24 * 60 * 60 * 1000; // ninety days

// Reads the top-level preview field (when present) into spec; errors name the field and its line.
Status readPreview(const DocNode &root, AppSpec &spec);
// Field rules for a spec built in code.
Status checkPreview(const AppSpec &spec);
// preview as toJson() writes it (nothing while it is left as the default).
void insertPreviewJson(const AppSpec::Preview &preview, QJsonObject &json);

} // namespace pando::core::detail
