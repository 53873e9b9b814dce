#include "core/deploy/imagereuse.h"

#include "core/state/repositories.h"

namespace pando::core {

namespace {

bool sameBuild(const AppSpec &a, const AppSpec &b)
{
    return a.build.context == b.build.context && a.build.dockerfile == b.build.dockerfile &&
           a.build.args == b.build.args && a.runtime == b.runtime;
}

} // namespace

std::optional<ReusedImage> reuseImage(const Services &s, const DeployRecord &deploy, const AppSpec &spec)
{
    if (deploy.commit.isEmpty())
        return std::nullopt;
    auto previous = DeployRepository(s.db).listForApp(deploy.app, 50);
    if (!previous)
        return std::nullopt;
    // Listed once, when a candidate turns up. (Not an optional: clang-tidy's optional-access
    // check does not finish on one of a list here.)
    QList<adapters::ImageInfo> images;
    bool listed = false;
    for (const DeployRecord &d : std::as_const(*previous)) {
        if (d.id == deploy.id || d.status != DeployStatus::Succeeded || d.commit != deploy.commit ||
            d.imageId.isEmpty() || d.specYaml.isEmpty())
            continue;
        auto built = parseAppSpec(d.specYaml.toUtf8());
        if (!built || !sameBuild(*built, spec))
            continue;
        if (!listed) {
            auto found = s.runtime.images(s.labels());
            if (!found)
                return std::nullopt;
            images = *found;
            listed = true;
        }
        for (const adapters::ImageInfo &image : std::as_const(images)) {
            if (image.id != d.imageId)
                continue;
            if (!s.runtime.tagImage(image.id, imageTag(deploy.app, deploy.id)))
                return std::nullopt;
            return ReusedImage{image.id, d.id};
        }
    }
    return std::nullopt;
}

} // namespace pando::core
