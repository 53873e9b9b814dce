#pragma once
// A deploy of a commit this app has built before, with the same build settings on the same
// runtime, uses that image again instead of building: a redeploy or a rollback then costs what
// starting the container costs. The image must still exist (old versions' images are removed,
// see untagImages), and it gets this deploy's tag so that it lives as long as this deploy needs it.

#include "core/deploy/services.h"
#include "core/spec/appspec.h"
#include "core/state/records.h"

#include <optional>

namespace pando::core {

struct ReusedImage {
    QString imageId;
    QString fromDeploy; // the deploy that built it
};

// The image to use for deploy (whose commit is known), tagged for it; nullopt when it must be
// built (nothing matches, the image is gone, or the runtime cannot tag).
std::optional<ReusedImage> reuseImage(const Services &s, const DeployRecord &deploy, const AppSpec &spec);

} // namespace pando::core
