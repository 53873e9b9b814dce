#pragma once
// Image tags read as versions, as registry-image reads them without a source.tag: "1", "1.2",
// "1.2.3", a leading "v", then "-alpha…", "-beta…" or "-rc…" for a pre-release and any other
// suffix for a variant ("1.2.3-rc.1-alpine"). How they order decides what a check returns.
//
// Threading: values; any thread.

#include <QList>
#include <QString>
#include <optional>

namespace pando::adapters::registryimage {

// A tag read as registry-image reads semver tags; nullopt when it is none.
struct TagVersion {
    QList<int> numbers; // 1 to 3 of major, minor, patch
    QString preRelease; // "rc.1" (starts with alpha, beta or rc)
    QString variant;    // "alpine"
};
std::optional<TagVersion> parseTagVersion(const QString &tag);
// Orders by version alone: missing parts are 0, a pre-release comes before its release.
int compareReleases(const TagVersion &a, const TagVersion &b);
// Orders by version, then the more specific tag ("1.2.0" after "1.2").
int compareTagVersions(const TagVersion &a, const TagVersion &b);

} // namespace pando::adapters::registryimage
