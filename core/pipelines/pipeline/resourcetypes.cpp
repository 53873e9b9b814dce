#include "resourcetypes.h"

#include "core/pipelines/resource/shellresourcetype.h"

namespace pando::core::pipelines {

namespace {

// The runner appends in's and out's directory to the argv. A command written as a string runs
// as `sh -c "<string>" <type name> <dir>`: the name is the shell's $0, so the directory is $1,
// as docs/pipelines.md promises (without it the directory was $0).
QStringList shellArgv(const Command &command, const QString &typeName)
{
    if (!command.shell || command.argv.isEmpty())
        return command.argv;
    return command.argv + QStringList{typeName};
}

} // namespace

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
                ShellCommands{shellArgv(declared->check, name), shellArgv(declared->in, name),
                              shellArgv(declared->out, name)});
            break;
        }
    } else if (m_builtins) {
        type = m_builtins(name);
    }
    if (!type)
        return fail(
            ErrorCode::Invalid, QStringLiteral("resource type %1 is not available here").arg(name), {},
            QStringLiteral("built-in types: git, s3, semver, registry-image, docker-image, time, mock; or declare it "
                           "under resource_types"));
    m_made.insert(name, type);
    return type;
}

} // namespace pando::core::pipelines
