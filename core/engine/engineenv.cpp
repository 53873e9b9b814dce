// Engine: an app's environment (`pando apps env list|set|unset`): run.env changed as a new
// revision of the spec that keeps the rest of its text, and what the app's container finds in
// its environment, from where.
#include "core/engine/engineprivate.h"

#include <QJsonArray>

using namespace Qt::StringLiterals;

namespace pando::core {

namespace {

QString fromName(Engine::EnvVariable::From from)
{
    switch (from) {
    case Engine::EnvVariable::From::Spec:
        return u"spec"_s;
    case Engine::EnvVariable::From::Pando:
        return u"pando"_s;
    case Engine::EnvVariable::From::Service:
        return u"service"_s;
    case Engine::EnvVariable::From::Secret:
        return u"secret"_s;
    }
    return {};
}

// The app's row and the spec it holds.
Result<std::pair<AppRecord, AppSpec>> storedSpec(Database &db, const QString &name)
{
    auto row = AppRepository(db).find(name);
    if (!row)
        return std::unexpected(row.error());
    auto spec = parseAppSpec(row->specYaml.toUtf8());
    if (!spec)
        return std::unexpected(spec.error());
    return std::pair{*row, *spec};
}

} // namespace

QJsonObject Engine::EnvVariable::toJson() const
{
    QJsonObject out{{u"name"_s, name}, {u"from"_s, fromName(from)}};
    if (value)
        out.insert(u"value"_s, *value);
    if (!detail.isEmpty())
        out.insert(u"detail"_s, detail);
    return out;
}

Result<Engine::EnvUpdate> Engine::changeAppEnv(const QString &name, const EnvEdit &edit, const Actor &actor)
{
    auto stored = storedSpec(d->db, name);
    if (!stored)
        return std::unexpected(stored.error());
    const AppRecord &row = stored->first;
    const AppSpec &spec = stored->second;
    EnvUpdate update;
    update.changes = envChanges(spec.run.env, edit);
    if (update.changes.isEmpty()) {
        auto view = d->view(row);
        if (!view)
            return std::unexpected(view.error());
        update.app = *view;
        return update;
    }
    auto text = editRunEnv(row.specYaml.toUtf8(), edit);
    if (!text)
        return std::unexpected(text.error());
    // Names only: a value in run.env is not secret, but the audit log is not where it is read.
    QJsonArray set, unset;
    for (const EnvChange &change : update.changes)
        (change.after ? set : unset).append(change.name);
    const QJsonObject detail{{u"env"_s, QJsonObject{{u"set"_s, set}, {u"unset"_s, unset}}}};
    auto view = reviseSpec(name, *text, actor, row.specYaml, detail);
    if (!view)
        return std::unexpected(view.error());
    update.app = *view;
    return update;
}

Result<QList<Engine::EnvVariable>> Engine::appEnvironment(const QString &name)
{
    auto stored = storedSpec(d->db, name);
    if (!stored)
        return std::unexpected(stored.error());
    const AppRecord &row = stored->first;
    const AppSpec &spec = stored->second;
    // In the order a deploy layers them (core/deploy): run.env and PORT, the services', then
    // the secrets', each over what came before.
    QMap<QString, EnvVariable> variables;
    for (auto it = spec.run.env.cbegin(); it != spec.run.env.cend(); ++it)
        variables.insert(it.key(), {it.key(), it.value(), EnvVariable::From::Spec, {}});
    if (!variables.contains(u"PORT"_s)) {
        // run.port, else the port the serving version's image exposes.
        int port = spec.run.port;
        if (port == 0 && !row.currentDeploy.isEmpty())
            if (auto current = DeployRepository(d->db).find(row.currentDeploy))
                port = current->port;
        if (port > 0)
            variables.insert(u"PORT"_s, {u"PORT"_s, QString::number(port), EnvVariable::From::Pando,
                                         spec.run.port > 0 ? u"run.port"_s : u"the port the image exposes"_s});
    }
    for (auto it = spec.services.cbegin(); it != spec.services.cend(); ++it)
        for (const QString &variable : connectionEnvNames(it.key(), *it))
            variables.insert(variable, {variable, std::nullopt, EnvVariable::From::Service, it.key()});
    auto secrets = appSecrets(name);
    if (!secrets && secrets.error().code != ErrorCode::Unavailable)
        return std::unexpected(secrets.error());
    for (const secrets::AppSecretInfo &secret : secrets.value_or(QList<secrets::AppSecretInfo>())) {
        // A secret the spec's `secrets:` places is a file, not a variable.
        if (spec.secrets.contains(secret.name))
            continue;
        QString detail;
        if (const auto previous = variables.constFind(secret.name); previous != variables.cend())
            // A deploy refuses a secret named as a run.env variable (core/deploy/secretinjection).
            detail = previous->from == EnvVariable::From::Spec ? u"also in run.env: a deploy refuses both"_s
                                                               : u"overrides the %1's"_s.arg(fromName(previous->from));
        variables.insert(secret.name, {secret.name, std::nullopt, EnvVariable::From::Secret, detail});
    }
    return variables.values();
}

} // namespace pando::core
