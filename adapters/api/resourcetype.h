#pragma once
// A resource type: how a pipeline finds new versions of something outside (check), fetches
// one into a directory (in), and pushes to it (out), in Concourse's terms. Shell-defined types
// speak Concourse's JSON-on-stdin protocol through a TaskRunner; built-in types (git, time)
// implement this directly.
//
// Threading: calls block and may be made from any thread.

#include "cancel.h"
#include "error.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <functional>

namespace pando::adapters {

// A version is a flat map of strings, as in Concourse ({"ref": "abc123"}).
using Version = QMap<QString, QString>;

struct VersionMetadata {
    Version version;
    QList<QPair<QString, QString>> metadata; // name → value, shown to people
};

using LogSink = std::function<void(const QString &line)>;

// What a get or put is told of the build it runs in, as Concourse tells a resource: BUILD_ID,
// BUILD_NAME, BUILD_JOB_NAME, BUILD_PIPELINE_NAME, BUILD_TEAM_NAME and, for a resource with
// expose_build_created_by, BUILD_CREATED_BY. A type that runs commands hands them over as
// environment variables; a built-in may ignore them. Never part of a step's cache key.
using BuildMetadata = QMap<QString, QString>;

class ResourceType {
public:
    virtual ~ResourceType() = default;
    virtual QString name() const = 0;
    // Versions newer than `from` in order oldest → newest (the latest alone when from is empty).
    virtual Result<QList<Version>> check(const QJsonObject &source, const Version &from, const CancelToken &cancel,
                                         const LogSink &log) = 0;
    // Fetches `version` into the empty directory dir.
    virtual Result<VersionMetadata> in(const QJsonObject &source, const Version &version, const QJsonObject &params,
                                       const QString &dir, const BuildMetadata &build, const CancelToken &cancel,
                                       const LogSink &log) = 0;
    // Pushes from workDir (which holds the step's inputs as subdirectories); returns the new version.
    virtual Result<VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                        const BuildMetadata &build, const CancelToken &cancel, const LogSink &log) = 0;
};

} // namespace pando::adapters
