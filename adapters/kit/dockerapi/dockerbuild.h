#pragma once
// Building an image on a Docker Engine from a context directory: what the Docker runtime's builds
// and the Incus runtime's (which converts what Docker built) share.
//
// The context goes to POST /build as a tar, without its .git and what its .dockerignore excludes.
// By default the engine builds with BuildKit (version=2), as `docker build` does since Docker 23:
// RUN --mount (cache, bind, tmpfs), what `docker init` writes and parallel stages work, and base
// images are taken from the engine's own image store first (pulled only when it lacks them, or
// always with BuildRequest::pull). BuildRequest::pullFirst's images are pulled before the build,
// with their registries' credentials (dockerpull.h), and not asked of the registry again.
// BuildKit's progress (buildkittrace.h) is said as `docker build --progress=plain` says it. An
// engine that cannot build with BuildKit builds with the classic builder instead, and says so in
// the output.
//
// A Dockerfile's `# syntax=` directive names a frontend image that BuildKit would pull. When that
// image is docker/dockerfile (Docker's own) and the engine does not have it, the line is left out
// of what is sent (the line count kept), the output says so, and the engine's built-in Dockerfile
// frontend builds it; a syntax only a newer frontend knows then fails with a hint that says how
// to provide the image. Another frontend image the engine does not have fails, naming it.
//
// Threading: every call blocks and may be made from any thread, as DockerClient's.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <functional>

namespace pando::adapters::dockerapi {

enum class Builder {
    Auto,     // BuildKit where the engine has it, the classic builder where it does not
    BuildKit, // BuildKit or fail
    Classic,  // the legacy builder (deprecated by Docker; leaves intermediate images)
};

// What DOCKER_BUILDKIT asks for, as the docker CLI reads it: 0 or false the classic builder, 1 or
// true BuildKit, unset (or anything else) Auto.
Builder builderFromEnvironment();

// Builds the image and returns its id; progress gets the builder's output line by line. A
// cancelled build fails with Cancelled; a refused context, .dockerignore or Dockerfile, and a
// failed step, with Failed, naming the instruction and, for a missing base image, how to
// provide it. Only the classic builder leaves images beside the built one
// (BuildRequest::leftover).
Result<QString> buildImage(const DockerClient &client, const BuildRequest &request, const CancelToken &cancel,
                           const std::function<void(const QString &line)> &progress, Builder builder = Builder::Auto);

} // namespace pando::adapters::dockerapi
