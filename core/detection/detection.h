#pragma once
// Package detection looks at an app's fetched source and says how it is built: for now, the
// Dockerfile the spec names, which must exist inside the build context.

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QString>

namespace pando::core {

struct Detection {
    QString builder;        // "dockerfile"
    QString contextDir;     // absolute, canonical, inside checkoutDir
    QString dockerfilePath; // absolute, canonical, inside contextDir
    QString dockerfile;     // relative to contextDir
    int exposedPort = 0;    // from an EXPOSE line, when there is one
};

// Errors: ErrorCode::Invalid when the context or Dockerfile escapes the checkout (through
// "..", an absolute path or a symlink), ErrorCode::NotFound when the Dockerfile is missing.
Result<Detection> detect(const AppSpec &spec, const QString &checkoutDir);

} // namespace pando::core
