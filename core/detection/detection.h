#pragma once
// Package detection looks at an app's fetched source and says how it is built: with the Dockerfile
// the spec names, which must exist inside the build context, or, when the context has no
// Dockerfile at all, with one generated for the stack it holds (stacks.h).

#include "adapters/api/error.h"
#include "core/spec/appspec.h"

#include <QString>
#include <QStringList>

namespace pando::core {

struct Detection {
    QString builder;        // "dockerfile", or "generated" for a repository without one (stacks.h)
    QString contextDir;     // absolute, canonical, inside checkoutDir
    QString dockerfilePath; // absolute, canonical, inside contextDir
    QString dockerfile;     // relative to contextDir
    int exposedPort = 0;    // from an EXPOSE line, when there is one
    QStringList baseImages; // what its build pulls (baseimages.h), with the spec's build.args
    // builder "generated": what was found, and the Dockerfile to write at dockerfilePath (which
    // does not exist yet) before the build.
    QString stack;
    QString summary;
    QString generated;
};

// Errors: ErrorCode::Invalid when the context or Dockerfile escapes the checkout (through
// "..", an absolute path or a symlink), or when the Dockerfile is missing and the context holds
// Dockerfile-like files, Dockerfiles further down or nothing Pando builds without one.
Result<Detection> detect(const AppSpec &spec, const QString &checkoutDir);

} // namespace pando::core
