#include "core/deploy/buildcache.h"

#include <QSet>
#include <ranges>

namespace pando::core {

void keepBuildCache(Services &s, const QString &app, const QString &deployId, const QList<BuildCacheRecord> &images)
{
    if (auto kept = BuildCacheRepository(s.db).add(images); !kept) {
        qWarning("deploy %s: recording its build cache failed, so it is removed: %s", qPrintable(deployId),
                 qPrintable(kept.error().text()));
        for (const BuildCacheRecord &image : images | std::views::reverse) // newest first
            discardResult(s.runtime.removeImage(image.imageId), "a cache entry left is disk, not harm");
    }
    dropBuildCache(s, app, deployId);
}

int dropBuildCache(Services &s, const QString &app, const QString &keepDeploy)
{
    BuildCacheRepository cache(s.db);
    auto images = cache.list(app);
    if (!images)
        return 0;
    QSet<QString> apps;
    if (app.isEmpty()) {
        auto rows = AppRepository(s.db).list();
        if (!rows)
            return 0;
        for (const AppRecord &row : std::as_const(*rows))
            apps.insert(row.name);
    }
    int removed = 0;
    for (const BuildCacheRecord &image : std::as_const(*images)) {
        if (image.deployId == keepDeploy || apps.contains(image.app))
            continue;
        if (auto gone = s.runtime.removeImage(image.imageId); !gone)
            continue;
        if (cache.remove(image.imageId))
            ++removed;
    }
    return removed;
}

} // namespace pando::core
