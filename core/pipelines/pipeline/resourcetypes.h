#pragma once
// The resource types one pipeline can use: the ones it declares (shell commands, Concourse
// resource images from the local engine, built-ins under another name) and the built-ins.
//
// Threading: typeFor() may be called from several step threads at once.

#include "adapters/api/resourcetype.h"
#include "adapters/api/taskrunner.h"
#include "core/pipelines/config/pipelineconfig.h"
#include "core/pipelines/pipeline/hostpolicy.h"

#include <QHash>
#include <QMutex>
#include <functional>
#include <memory>

namespace pando::core::pipelines {

class ResourceTypes {
public:
    using Builtins = std::function<std::shared_ptr<adapters::ResourceType>(const QString &name)>;
    // A shell type without image: runs on the host only where policy allows it.
    ResourceTypes(const Pipeline &pipeline, adapters::TaskRunner &containers, adapters::TaskRunner &host,
                  Builtins builtins, HostPolicy policy);
    Result<std::shared_ptr<adapters::ResourceType>> typeFor(const QString &name);

private:
    const Pipeline &m_pipeline;
    adapters::TaskRunner &m_containers;
    adapters::TaskRunner &m_host;
    Builtins m_builtins;
    HostPolicy m_policy;
    QMutex m_mutex;
    QHash<QString, std::shared_ptr<adapters::ResourceType>> m_made;
};

} // namespace pando::core::pipelines
