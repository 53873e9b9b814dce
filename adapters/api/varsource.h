#pragma once
// A credential manager a pipeline names under `var_sources:` (Concourse's vault): a run asks it
// for each `((source:path.field))` the pipeline uses when it reads the pipeline. The dummy type
// needs no adapter: its vars are in the pipeline file.
//
// Threading: one source is used by one run's reading of its pipeline, on one thread.

#include "cancel.h"
#include "error.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <memory>
#include <optional>

namespace pando::adapters {

class VarSource {
public:
    virtual ~VarSource() = default;
    // The var at path ("github/deploy"): its value (a string, or a mapping of fields), or nullopt
    // when the source has none. Errors say why the source could not be asked, never a secret.
    virtual Result<std::optional<QJsonValue>> read(const QString &path, const CancelToken &cancel) = 0;
};

// Opens a var source of `type` from its config (resolved: its ((vars)) filled in) for a run of
// `pipeline`; an error for a type or config it cannot use.
using VarSourceOpener = std::function<Result<std::unique_ptr<VarSource>>(const QString &type, const QJsonObject &config,
                                                                         const QString &pipeline)>;

} // namespace pando::adapters
