// Engine: app secrets, and opening the install's seal key at start.

#include "core/engine/engineprivate.h"

#include "core/secrets/sealrotation.h"

using namespace Qt::StringLiterals;

namespace pando::core {

Status Engine::Private::openSecrets()
{
    // Before anything opens a secret: a rotation cut off halfway is finished with its key.
    auto finished = secrets::finishInterruptedRotation(db, options.dataDir);
    if (!finished)
        return std::unexpected(finished.error());
    if (const auto &rotation = *finished)
        qInfo("engine: finished an interrupted seal key rotation (%d pipeline and %d app secrets re-sealed)",
              rotation->pipelineSecrets, rotation->appSecrets);
    auto key = secrets::loadSealKey(options.dataDir);
    if (!key)
        return std::unexpected(key.error());
    seal.emplace(QList<pipelines::SealKey>{*key});
    services.seal = &*seal;
    return {};
}

Result<secrets::AppSecretStore> Engine::Private::appSecretStore()
{
    const std::optional<pipelines::SealBox> &opened = seal; // one name the checker can follow
    if (!opened)
        return fail(ErrorCode::Unavailable, u"the secret store is not open"_s);
    return secrets::AppSecretStore(db, *opened, clock);
}

Status Engine::Private::copyAppSecrets(const QString &from, const QString &to)
{
    auto store = appSecretStore();
    if (!store)
        return std::unexpected(store.error());
    auto values = store->open(from);
    if (!values)
        return std::unexpected(values.error());
    Status copied;
    for (auto it = values->cbegin(); it != values->cend() && copied; ++it) {
        if (auto set = store->set(to, it.key(), it.value()); !set)
            copied = std::unexpected(set.error());
    }
    secrets::wipe(*values);
    return copied;
}

Result<secrets::AppSecretInfo> Engine::setAppSecret(const QString &app, const QString &name, QByteArrayView value,
                                                    const Actor &actor)
{
    auto store = d->appSecretStore();
    if (!store)
        return std::unexpected(store.error());
    // Refused now rather than at the next deploy: a secret the spec does not ask for as a file is
    // injected as a variable, which not every value can be.
    if (auto row = AppRepository(d->db).find(app); row && secrets::checkSecretName(name)) {
        auto spec = parseAppSpec(row->specYaml.toUtf8());
        if (spec && !spec->secrets.contains(name))
            if (auto ok = secrets::checkEnvInjectable(name, value); !ok)
                return std::unexpected(ok.error());
    }
    auto set = store->set(app, name, value);
    if (!set)
        return std::unexpected(set.error());
    // Names only: the value is in no line, event or answer.
    auto audited = d->audit.record(actor, u"app.secret.set"_s, u"app/"_s + app, u"success"_s,
                                   QJsonObject{{u"name"_s, name}, {u"created"_s, set->created}});
    d->services.publish(EventType::AppSecretsChanged, app, {}, QJsonObject{{u"name"_s, name}, {u"change"_s, u"set"_s}});
    if (!audited)
        return std::unexpected(unaudited(u"secret %1 of app %2 was set"_s.arg(name, app), audited.error()));
    return set;
}

Result<QList<secrets::AppSecretInfo>> Engine::appSecrets(const QString &app)
{
    auto store = d->appSecretStore();
    if (!store)
        return std::unexpected(store.error());
    return store->list(app);
}

Status Engine::removeAppSecret(const QString &app, const QString &name, const Actor &actor)
{
    auto store = d->appSecretStore();
    if (!store)
        return std::unexpected(store.error());
    if (auto removed = store->remove(app, name); !removed)
        return removed;
    auto audited =
        d->audit.record(actor, u"app.secret.remove"_s, u"app/"_s + app, u"success"_s, QJsonObject{{u"name"_s, name}});
    d->services.publish(EventType::AppSecretsChanged, app, {},
                        QJsonObject{{u"name"_s, name}, {u"change"_s, u"removed"_s}});
    if (!audited)
        return std::unexpected(unaudited(u"secret %1 of app %2 was removed"_s.arg(name, app), audited.error()));
    return {};
}

} // namespace pando::core
