#pragma once
// What builds leave beside their images: Docker's classic builder keeps another stage's steps,
// and a failed build's finished steps, as untagged images without the build's labels, which
// nothing lists as the install's (adapters::BuildRequest::leftover). They are the build cache:
// the next build of the app reuses them. An app keeps those of its latest build only; removing
// the app removes them; GET /capacity counts them (docs/user-guide.md, "Build cache").

#include "core/deploy/services.h"
#include "core/state/repositories.h"

namespace pando::core {

// Records what deployId's build of app left (images, in the order made), then removes the
// app's older build cache. What cannot be recorded is removed at once: nothing is left untracked.
void keepBuildCache(Services &s, const QString &app, const QString &deployId, const QList<BuildCacheRecord> &images);

// Removes app's build cache (every app's whose app is gone when app is empty), but what
// keepDeploy's build left, newest first. An image the runtime refuses to remove (a later build
// made it an ancestor of its own) stays recorded and is tried again next time. Returns how many
// images went.
int dropBuildCache(Services &s, const QString &app, const QString &keepDeploy = {});

} // namespace pando::core
