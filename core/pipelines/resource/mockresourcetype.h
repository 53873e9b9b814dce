#pragma once
// The built-in `mock` resource type, as every Concourse installation has it: versions and files
// made up from its source, for trying a pipeline without the outside world. Versions are
// {"version": "..."}.
//
//   source: initial_version (default "mock"), no_initial_version, force_version, create_files
//           (file name → text), check_delay (Go duration, at most 10m), check_failure (every
//           check fails with this message), metadata ([{name, value}]), log (said by every action)
//   check:  force_version if set; else the version it is asked from (so `pando resources check
//           --from version:foo` makes one); else the initial version, unless no_initial_version
//   in:     writes `version`, `privileged` ("false") and the files of create_files and of the
//           get's params.create_files_via_params (which win); a name may not leave the directory
//   out:    the version params.version says, or the text of params.file (a path in the step's
//           inputs); params.print_env logs the build's metadata
//
// mirror_self (the resource as a task's image) is refused: Pando's mock is no image. Threading:
// calls are stateless and may be made from any thread.

#include "adapters/api/resourcetype.h"

namespace pando::core::pipelines {

class MockResourceType final : public adapters::ResourceType {
public:
    QString name() const override { return QStringLiteral("mock"); }
    Result<QList<adapters::Version>> check(const QJsonObject &source, const adapters::Version &from,
                                           const CancelToken &cancel, const adapters::LogSink &log) override;
    Result<adapters::VersionMetadata> in(const QJsonObject &source, const adapters::Version &version,
                                         const QJsonObject &params, const QString &dir,
                                         const adapters::BuildMetadata &build, const CancelToken &cancel,
                                         const adapters::LogSink &log) override;
    Result<adapters::VersionMetadata> out(const QJsonObject &source, const QJsonObject &params, const QString &workDir,
                                          const adapters::BuildMetadata &build, const CancelToken &cancel,
                                          const adapters::LogSink &log) override;
};

} // namespace pando::core::pipelines
