#include "resourcetypes.h"

#include "core/pipelines/resource/shellresourcetype.h"

namespace pando::core::pipelines {

ResourceTypes::ResourceTypes(const Pipeline &pipeline, adapters::TaskRunner &containers, adapters::TaskRunner &host,
                             Builtins builtins, HostPolicy policy)
    : m_pipeline(pipeline), m_containers(containers), m_host(host), m_builtins(std::move(builtins)),
      m_policy(std::move(policy))
{}

Result<std::shared_ptr<adapters::ResourceType>> ResourceTypes::typeFor(const QString &name)
{
    QMutexLocker lock(&m_mutex);
    if (auto made = m_made.constFind(name); made != m_made.constEnd())
        return *made;
    std::shared_ptr<adapters::ResourceType> type;
    if (const ResourceType *declared = m_pipeline.resourceType(name)) {
        switch (declared->kind) {
        case ResourceType::Kind::BuiltIn:
            type = m_builtins ? m_builtins(declared->type) : nullptr;
            break;
        case ResourceType::Kind::Image:
            // A Concourse resource image: its scripts live in /opt/resource.
            type = std::make_shared<ShellResourceType>(name, m_containers, declared->image,
                                                       ShellCommands{{QStringLiteral("/opt/resource/check")},
                                                                     {QStringLiteral("/opt/resource/in")},
                                                                     {QStringLiteral("/opt/resource/out")}});
            break;
        case ResourceType::Kind::Shell:
            if (declared->image.isEmpty() && !m_policy.allowed())
                return std::unexpected(m_policy.refusal(QStringLiteral("resource type %1 (no image:)").arg(name),
                                                        QStringLiteral("resource_types.") + name,
                                                        QStringLiteral("give the resource type an image:")));
            type = std::make_shared<ShellResourceType>(
                name, declared->image.isEmpty() ? m_host : m_containers, declared->image,
                ShellCommands{declared->check.argv, declared->in.argv, declared->out.argv});
            break;
        }
    } else if (m_builtins) {
        type = m_builtins(name);
    }
    if (!type)
        return fail(ErrorCode::Invalid, QStringLiteral("resource type %1 is not available here").arg(name), {},
                    QStringLiteral("built-in types: git, time; or declare it under resource_types"));
    m_made.insert(name, type);
    return type;
}

} // namespace pando::core::pipelines
