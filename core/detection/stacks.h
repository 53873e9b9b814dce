#pragma once
// A repository without a Dockerfile, recognised by the files its stack's own tools expect, and the
// Dockerfile Pando builds it with (docs/detection.md):
// - Node.js: package.json; npm, Yarn or pnpm by its lockfile; `npm run build` when it has a build
//   script; started by the Procfile's web process, else `npm start`, else package.json's main or
//   server.js / index.js / app.js; engines.node picks the image's major version;
// - Python: requirements.txt, pyproject.toml or Pipfile; started by the Procfile's web process,
//   else app.py or main.py; .python-version or runtime.txt picks the version;
// - Go: go.mod (its `go` line picks the toolchain); the main package at the top or the only one
//   under cmd/; a static binary in a small runtime image;
// - a static site: index.html at the top, or in public/, served by BusyBox httpd.
// Each listens on 8080 and gets PORT=8080. What is found but cannot be built (a Ruby or PHP app, a
// Python app with no way to start it) is an error that says what was found and what to add.
//
// Threading: pure functions over the file system; any thread.

#include "adapters/api/error.h"

#include <QString>
#include <QStringList>

namespace pando::core {

struct GeneratedBuild {
    QString stack;      // "node", "python", "go", "static"
    QString summary;    // "a Node.js app (package.json, package-lock.json: npm ci; start: npm start)"
    QString dockerfile; // the generated Dockerfile's text
};

inline constexpr int GeneratedPort = 8080;
// The name the generated Dockerfile is written under, at the top of the build context.
inline constexpr const char *GeneratedDockerfileName = ".pando.Dockerfile";

// What contextDir holds and how to build it; base, when not empty, is the image the Dockerfile
// starts FROM (the spec's build.base). Errors: Invalid at "build.dockerfile", its message what was
// found ("this Ruby app (Gemfile) is not one Pando builds without a Dockerfile") and its hint what
// to add.
Result<GeneratedBuild> detectStack(const QString &contextDir, const QString &base);

} // namespace pando::core
