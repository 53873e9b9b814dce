// Which pipelines may read an install-wide secret (LocalPipelineService): the access list, the
// refusal a pipeline gets for one it may not read, and the one-time listing of the pipelines
// that used each secret stored before access lists existed.

#include "localpipelineservice.h"

#include "core/pipelines/config/instancename.h"
#include "core/pipelines/template/interpolate.h"
#include "core/state/pipelinerepositories.h"

#include <QJsonArray>
#include <QSet>

namespace pando::core::pipelines {

namespace {

QJsonObject accessJson(const SecretAccess &access)
{
    return QJsonObject{{QStringLiteral("all"), access.all},
                       {QStringLiteral("pipelines"), QJsonArray::fromStringList(access.pipelines)}};
}

// The secret names a config's placeholders may mean: `((name))`, `((name.field))`,
// `((secrets:name))`; `((vars:name))` is never a secret.
QSet<QString> secretsNamedIn(const QString &configYaml)
{
    QSet<QString> names;
    for (QString name : placeholderNames(configYaml)) {
        if (name.startsWith(QLatin1String("vars:")))
            continue;
        if (const qsizetype colon = name.indexOf(QLatin1Char(':')); colon >= 0)
            name = name.mid(colon + 1).trimmed();
        names.insert(name.section(QLatin1Char('.'), 0, 0));
    }
    return names;
}

} // namespace

std::optional<Error> LocalPipelineService::secretRefusal(const QString &pipeline, const QString &name)
{
    SecretRepository secrets(m_deps.db);
    // The pipeline's own secret of that name comes first and is always its to read.
    if (secrets.find(pipeline, name))
        return std::nullopt;
    auto access = secrets.access(name);
    if (!access || access->allows(pipeline))
        return std::nullopt;
    return Error{ErrorCode::Invalid,
                 QStringLiteral("the install-wide secret \"%1\" is not granted to pipeline %2").arg(name, pipeline),
                 {},
                 QStringLiteral("an operator or administrator lets it read the secret: pando secrets access %1 %2 "
                                "(the pipelines it lists replace the current ones; see pando secrets list), or sets "
                                "a secret of the pipeline's own: pando secrets set %1 --pipeline %2")
                     .arg(name, pipeline)};
}

void LocalPipelineService::scopeUnscopedSecrets()
{
    SecretRepository secrets(m_deps.db);
    auto unscoped = secrets.unscoped();
    if (!unscoped) {
        qWarning("pipelines: reading the secrets without an access list failed: %s",
                 qPrintable(unscoped.error().text()));
        return;
    }
    if (unscoped->isEmpty())
        return;
    auto pipelines = PipelineRepository(m_deps.db).list();
    if (!pipelines) {
        qWarning("pipelines: listing the pipelines failed: %s", qPrintable(pipelines.error().text()));
        return;
    }
    for (const QString &name : std::as_const(*unscoped)) {
        SecretAccess access;
        for (const PipelineRecord &pipeline : std::as_const(*pipelines))
            if (secretsNamedIn(pipeline.configYaml).contains(name) && !secrets.find(pipeline.name, name))
                access.pipelines << pipeline.name;
        access.pipelines.sort();
        if (auto set = secrets.setAccess(name, access); !set) {
            qWarning("pipelines: giving secret %s its access list failed: %s", qPrintable(name),
                     qPrintable(set.error().text()));
            continue;
        }
        QJsonObject detail = accessJson(access);
        detail.insert(QStringLiteral("reason"), QStringLiteral("stored before access lists: the pipelines that "
                                                               "used it keep it"));
        discardResult(m_audit.record(Actor::system(QStringLiteral("pipelines")), QStringLiteral("secret.access"),
                                     QStringLiteral("secret/") + name, QStringLiteral("success"), detail),
                      "the list is in place; a missing audit line must not undo it");
    }
}

Result<SecretAccess> LocalPipelineService::secretAccess(const QString &name)
{
    return SecretRepository(m_deps.db).access(name);
}

Status LocalPipelineService::setSecretAccess(const QString &name, const SecretAccess &access, const Actor &actor)
{
    SecretAccess checked = access;
    checked.pipelines.removeDuplicates();
    checked.pipelines.sort();
    // A pipeline may be named before it is set, so that its first set can use the secret; the
    // name must be one a pipeline can have.
    for (const QString &pipeline : std::as_const(checked.pipelines))
        if (Status ok = checkPipelineName(pipeline, QStringLiteral("pipelines")); !ok)
            return ok;
    if (auto set = SecretRepository(m_deps.db).setAccess(name, checked); !set)
        return set;
    return m_audit.record(actor, QStringLiteral("secret.access"), QStringLiteral("secret/") + name,
                          QStringLiteral("success"), accessJson(checked));
}

} // namespace pando::core::pipelines
