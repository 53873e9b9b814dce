#pragma once
// Pulling images from registries that want a login, on a Docker Engine: what a build's
// BuildRequest::pullFirst and a registry connection's test ask (docs/user-guide.md, "Private
// images"). The credential goes to the engine in the X-Registry-Auth header (base64url JSON, as
// the docker CLI sends it); it is never in a path, a query or an error.
//
// Threading: every call blocks and may be made from any thread, as DockerClient's.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "adapters/api/runtime.h"
#include "adapters/kit/dockerapi/dockerclient.h"

#include <functional>

namespace pando::adapters::dockerapi {

// Whether an engine's pull error says the registry wants a login (or refused the one given), as
// Distribution, GHCR, Docker Hub, GitLab and Harbor word it; BuildKit without a client session
// says "no active sessions" when a registry asks it for one.
bool wantsLogin(const QString &message);

// The X-Registry-Auth header's value for credential.
QByteArray registryAuthHeader(const RegistryCredential &credential);

// How long a pull may go without a word of progress from the engine before it is given up.
inline constexpr int PullStallMs = 120000;

// Pulls image with credential (POST /images/create), progress getting each layer's finished
// steps and the outcome ("Status: Downloaded newer image for …"). Unauthorized when the registry
// refuses the credential, NotFound when it has no such image or tag, Timeout when the engine
// reports nothing for stallMs, Failed otherwise, each naming the image.
Status pullImage(const DockerClient &client, const QString &image, const RegistryCredential &credential,
                 const CancelToken &cancel, const std::function<void(const QString &line)> &progress,
                 int stallMs = PullStallMs);

// Runtime::checkRegistry on this engine: image's manifest digest through GET /distribution, or
// with no image the registry's answer to the login (POST /auth).
Result<QString> checkRegistry(const DockerClient &client, const QString &image, const RegistryCredential &credential);

} // namespace pando::adapters::dockerapi
