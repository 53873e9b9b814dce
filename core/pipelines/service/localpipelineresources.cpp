// LocalPipelineService's resources: the webhook that asks for a check, the versions checks
// found, pins (a pinned version is the one get steps use) and a check asked for by a person.
#include "localpipelineservice.h"

#include "core/pipelines/config/canonical.h"
#include "core/pipelines/resource/versions.h"
#include "core/state/pipelinerepositories.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <openssl/crypto.h>

namespace pando::core::pipelines {

Status LocalPipelineService::webhook(const QString &pipelineName, const QString &resourceName, const QString &token,
                                     const QString &peer)
{
    // One answer for an unknown pipeline or resource, one without a webhook, a short token and
    // a wrong one: the public route does not tell which pipelines exist.
    const Error refused{ErrorCode::Unauthorized,
                        QStringLiteral("no webhook matches this pipeline, resource and token"),
                        QStringLiteral("webhook_token"),
                        {}};
    if (const qint64 wait = m_webhookThrottle.waitMs({}, peer); wait > 0)
        return fail(ErrorCode::Unauthorized, QStringLiteral("too many failed webhook calls from this address"),
                    QStringLiteral("webhook_token"), QStringLiteral("try again in %1 s").arg((wait + 999) / 1000));
    auto refuse = [&] {
        m_webhookThrottle.recordFailure({}, peer);
        return std::unexpected(refused);
    };
    // The cheap checks first: no secret is unsealed for a token that cannot be right, or for a
    // pipeline or resource that does not exist.
    if (token.size() < MinWebhookTokenChars)
        return refuse();
    auto row = PipelineRepository(m_deps.db).find(pipelineName);
    if (!row)
        return refuse();
    auto parsed = parseForWebhook(*row);
    if (!parsed)
        return refuse();
    const Resource *resource = parsed->resource(resourceName);
    if (!resource || resource->webhookToken.isEmpty())
        return refuse();
    QString expected = resource->webhookToken;
    if (const QString secret = placeholderSecretName(expected); !secret.isEmpty())
        expected = secretValue(pipelineName, secret).value_or(QString());
    if (webhookTokenProblem(expected, {}))
        return refuse();
    // Constant time: digests of equal length, whatever the lengths of the tokens.
    const QByteArray want = QCryptographicHash::hash(expected.toUtf8(), QCryptographicHash::Sha256);
    const QByteArray given = QCryptographicHash::hash(token.toUtf8(), QCryptographicHash::Sha256);
    if (CRYPTO_memcmp(want.constData(), given.constData(), size_t(want.size())) != 0)
        return refuse();
    QMutexLocker lock(&m_mutex);
    if (const QString key = pipelineName + QLatin1Char('/') + resourceName; !m_checkNow.contains(key))
        m_checkNow.insert(key, {}); // a check from a version someone asked for finds the newest too
    m_wake.wakeAll();
    return {};
}

// --- resources

Result<std::pair<Pipeline, Resource>> LocalPipelineService::storedResource(const QString &pipelineName,
                                                                           const QString &resourceName)
{
    auto row = PipelineRepository(m_deps.db).find(pipelineName);
    if (!row)
        return std::unexpected(row.error());
    auto parsed = parseForWebhook(*row);
    if (!parsed)
        return std::unexpected(parsed.error());
    const Resource *resource = parsed->resource(resourceName);
    if (!resource)
        return fail(ErrorCode::NotFound,
                    QStringLiteral("pipeline %1 has no resource named %2").arg(pipelineName, resourceName),
                    QStringLiteral("resource"));
    return std::pair<Pipeline, Resource>{*parsed, *resource};
}

Result<std::pair<Pipeline, Resource>> LocalPipelineService::pinnableResource(const QString &pipelineName,
                                                                             const QString &resourceName)
{
    auto found = storedResource(pipelineName, resourceName);
    if (found && found->second.pinnedVersion)
        return fail(ErrorCode::Conflict,
                    QStringLiteral("resource %1 is pinned in the pipeline's config (version:)").arg(resourceName),
                    found->second.path + QStringLiteral(".version"),
                    QStringLiteral("remove version: from the resource in the config and set the pipeline again"));
    return found;
}

Result<ResourceView> LocalPipelineService::resourceView(const QString &pipelineName, const Resource &resource)
{
    ResourceVersionRepository versions(m_deps.db);
    ResourceView v;
    v.name = resource.name;
    v.type = resource.type;
    v.webhook = !resource.webhookToken.isEmpty();
    auto checked = versions.lastCheck(pipelineName, resource.name);
    if (!checked)
        return std::unexpected(checked.error());
    v.checkedMs = checked->first;
    v.checkError = checked->second;
    if (resource.pinnedVersion) {
        v.pinned = versionToJson(*resource.pinnedVersion);
        v.pinnedInConfig = true;
        return v;
    }
    auto pin = versions.pinned(pipelineName, resource.name);
    if (!pin)
        return std::unexpected(pin.error());
    if (const auto &found = *pin; found.has_value()) {
        v.pinned = QJsonDocument::fromJson(found->versionJson.toUtf8()).object();
        v.pinnedBy = found->actor;
        v.pinnedMs = found->pinnedMs;
    }
    return v;
}

Result<QList<ResourceView>> LocalPipelineService::resources(const QString &pipelineName)
{
    auto row = PipelineRepository(m_deps.db).find(pipelineName);
    if (!row)
        return std::unexpected(row.error());
    auto parsed = parseForWebhook(*row);
    if (!parsed)
        return std::unexpected(parsed.error());
    QList<ResourceView> list;
    for (const Resource &resource : std::as_const(parsed->resources)) {
        auto v = resourceView(pipelineName, resource);
        if (!v)
            return std::unexpected(v.error());
        list.append(*v);
    }
    return list;
}

Result<QList<ResourceVersionView>> LocalPipelineService::resourceVersions(const QString &pipelineName,
                                                                          const QString &resourceName, int limit)
{
    auto found = storedResource(pipelineName, resourceName);
    if (!found)
        return std::unexpected(found.error());
    auto shown = resourceView(pipelineName, found->second);
    if (!shown)
        return std::unexpected(shown.error());
    auto rows = ResourceVersionRepository(m_deps.db).list(pipelineName, resourceName, qBound(1, limit, 1000));
    if (!rows)
        return std::unexpected(rows.error());
    // A config pin may name only some fields: the newest version having them is the one used.
    Version pin;
    if (!shown->pinned.isEmpty())
        pin = *versionFromJson(shown->pinned, QString());
    bool pinnedSeen = false;
    QList<ResourceVersionView> list;
    for (const ResourceVersionRecord &r : std::as_const(*rows)) {
        ResourceVersionView v{r, false};
        if (!pin.isEmpty() && !pinnedSeen) {
            auto version = versionFromJson(QJsonDocument::fromJson(r.versionJson.toUtf8()).object(), QString());
            v.pinned = pinnedSeen = version && versionMatches(*version, pin);
        }
        list.append(v);
    }
    return list;
}

Result<ResourceView> LocalPipelineService::pinResource(const QString &pipelineName, const QString &resourceName,
                                                       const QJsonObject &version, const Actor &actor)
{
    auto found = pinnableResource(pipelineName, resourceName);
    if (!found)
        return std::unexpected(found.error());
    auto wanted = versionFromJson(version, QStringLiteral("version"));
    if (!wanted)
        return std::unexpected(wanted.error());
    if (wanted->isEmpty())
        return fail(ErrorCode::Invalid, QStringLiteral("a version to pin needs at least one field"),
                    QStringLiteral("version"));
    ResourceVersionRepository versions(m_deps.db);
    auto known = versions.list(pipelineName, resourceName, 1000);
    if (!known)
        return std::unexpected(known.error());
    QString match;
    for (const ResourceVersionRecord &r : std::as_const(*known)) {
        auto v = versionFromJson(QJsonDocument::fromJson(r.versionJson.toUtf8()).object(), QString());
        if (v && versionMatches(*v, *wanted)) {
            match = r.versionJson;
            break;
        }
    }
    if (match.isEmpty())
        return fail(ErrorCode::NotFound,
                    QStringLiteral("no version of %1 matches %2").arg(resourceName, versionKey(*wanted)),
                    QStringLiteral("version"),
                    QStringLiteral("list the versions checks found: pando resources versions %1/%2")
                        .arg(pipelineName, resourceName));
    auto before = versions.pinned(pipelineName, resourceName);
    if (!before)
        return std::unexpected(before.error());
    if (auto pinned =
            versions.pin(ResourcePinRecord{pipelineName, resourceName, match, actor.name, m_deps.clock.nowMs()});
        !pinned)
        return std::unexpected(pinned.error());
    auto audited = m_audit.record(
        actor, QStringLiteral("resource.pin"),
        QStringLiteral("pipeline/%1/resource/%2").arg(pipelineName, resourceName), QStringLiteral("success"),
        QJsonObject{{QStringLiteral("version"), QJsonDocument::fromJson(match.toUtf8()).object()}});
    if (!audited) {
        // Taken back: a pin nobody can account for does not decide what runs use.
        const auto &was = *before;
        Status undone = was.has_value() ? versions.pin(*was) : versions.unpin(pipelineName, resourceName);
        if (!undone)
            return std::unexpected(
                unaudited(QStringLiteral("resource %1 was pinned").arg(resourceName), audited.error()));
        return std::unexpected(audited.error());
    }
    return resourceView(pipelineName, found->second);
}

Status LocalPipelineService::unpinResource(const QString &pipelineName, const QString &resourceName, const Actor &actor)
{
    auto found = pinnableResource(pipelineName, resourceName);
    if (!found)
        return std::unexpected(found.error());
    ResourceVersionRepository versions(m_deps.db);
    auto before = versions.pinned(pipelineName, resourceName);
    if (!before)
        return std::unexpected(before.error());
    if (auto unpinned = versions.unpin(pipelineName, resourceName); !unpinned)
        return unpinned;
    auto audited = m_audit.record(actor, QStringLiteral("resource.unpin"),
                                  QStringLiteral("pipeline/%1/resource/%2").arg(pipelineName, resourceName),
                                  QStringLiteral("success"));
    if (const auto &was = *before; !audited && was.has_value())
        if (auto undone = versions.pin(*was); !undone)
            return std::unexpected(
                unaudited(QStringLiteral("resource %1 was unpinned").arg(resourceName), audited.error()));
    return audited;
}

Status LocalPipelineService::checkResource(const QString &pipelineName, const QString &resourceName,
                                           const QJsonObject &from, const Actor &)
{
    auto found = storedResource(pipelineName, resourceName);
    if (!found)
        return std::unexpected(found.error());
    auto start = versionFromJson(from, QStringLiteral("from"));
    if (!start)
        return std::unexpected(start.error());
    QMutexLocker lock(&m_mutex);
    m_checkNow.insert(pipelineName + QLatin1Char('/') + resourceName, *start);
    m_wake.wakeAll();
    return {};
}

Result<Pipeline> LocalPipelineService::parseForWebhook(const PipelineRecord &record)
{
    if (record.archivedMs > 0)
        return std::unexpected(archivedError(record));
    // Secrets stay placeholders and are not even looked up (looking one up unseals it); a file
    // that does not parse that way (a secret where a number goes) is parsed as for a set.
    InterpolationSources sources;
    if (!record.varsYaml.trimmed().isEmpty()) {
        auto vars = readVarsFile(record.varsYaml.toUtf8());
        if (!vars)
            return std::unexpected(vars.error());
        sources.vars = *vars;
    }
    sources.allowUndefined = true;
    if (auto parsed = parsePipeline(record.configYaml.toUtf8(), sources))
        return parsed;
    return parseStored(record, false);
}

} // namespace pando::core::pipelines
