#include "qml/settings/enginesettingsform.h"

#include <QSettings>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

// The settings' keys, named as pandod's flags.
const QString AppLimitKey = u"engine/app-limit"_s;
const QString MaxRunsKey = u"engine/max-runs"_s;
const QString ApprovalPolicyKey = u"engine/approval-policy"_s;
const QString ApprovalTtlKey = u"engine/approval-ttl"_s;
const QString AuditSinksKey = u"engine/audit-sinks"_s;
const QString EdgeKey = u"engine/edge"_s;
const QString EdgeOptionPrefix = u"engine/"_s;

} // namespace

const QStringList &EngineSettingsForm::edgeOptionNames()
{
    static const QStringList names{u"traefik-dir"_s,           u"traefik-resolver"_s,  u"traefik-certs"_s,
                                   u"cloudflare-account"_s,    u"cloudflare-tunnel"_s, u"cloudflare-zone"_s,
                                   u"cloudflare-token-file"_s, u"cloudflare-api"_s,    u"cloudflared"_s};
    return names;
}

QVariantMap EngineSettingsForm::edgeOptions() const
{
    QVariantMap map;
    if (m_saved.edgeOptions)
        for (auto it = m_saved.edgeOptions->constBegin(); it != m_saved.edgeOptions->constEnd(); ++it)
            map.insert(it.key(), it.value());
    return map;
}

EngineSettingsForm::EngineSettingsForm(QSettings *settings, bool available, QObject *parent)
    : QObject(parent), m_settings(settings), m_available(available)
{
    if (m_settings)
        m_started = m_saved = stored(*m_settings);
}

wiring::EngineSettings EngineSettingsForm::stored(const QSettings &settings)
{
    QMap<QString, QString> edgeOptions;
    for (const QString &name : edgeOptionNames())
        if (const QString value = settings.value(EdgeOptionPrefix + name).toString(); !value.isEmpty())
            edgeOptions.insert(name, value);
    return {settings.value(AppLimitKey).toString(),
            settings.value(MaxRunsKey).toString(),
            settings.value(ApprovalPolicyKey).toString(),
            settings.value(ApprovalTtlKey).toString(),
            settings.value(AuditSinksKey).toString(),
            settings.value(EdgeKey).toString(),
            edgeOptions};
}

bool EngineSettingsForm::isRestartNeeded() const
{
    return m_started != m_saved;
}

bool EngineSettingsForm::save(const QString &appLimit, const QString &maxRuns, const QString &approvalPolicy,
                              const QString &approvalTtl, const QString &auditSinks, const QString &edge,
                              const QVariantMap &edgeOptions)
{
    QMap<QString, QString> options;
    for (const QString &name : edgeOptionNames())
        if (const QString value = edgeOptions.value(name).toString().trimmed(); !value.isEmpty())
            options.insert(name, value);
    const wiring::EngineSettings wanted{appLimit.trimmed(),
                                        maxRuns.trimmed(),
                                        approvalPolicy.trimmed(),
                                        approvalTtl.trimmed(),
                                        auditSinks.trimmed(),
                                        edge.trimmed(),
                                        options};
    if (auto checked = wiring::checkEngineSettings(wanted); !checked) {
        m_error = checked.error().text();
        m_errorSetting = checked.error().where.section(u' ', 0, 0);
        Q_EMIT savedChanged();
        return false;
    }
    m_error.clear();
    m_errorSetting.clear();
    m_saved = wanted;
    if (m_settings) {
        const std::pair<const QString &, const QString &> values[] = {{AppLimitKey, wanted.appLimit},
                                                                      {MaxRunsKey, wanted.maxRuns},
                                                                      {ApprovalPolicyKey, wanted.approvalPolicy},
                                                                      {ApprovalTtlKey, wanted.approvalTtl},
                                                                      {AuditSinksKey, wanted.auditSinks},
                                                                      {EdgeKey, wanted.edge}};
        const auto keep = [this](const QString &key, const QString &value) {
            if (value.isEmpty())
                m_settings->remove(key);
            else
                m_settings->setValue(key, value);
        };
        for (const auto &[key, value] : values)
            keep(key, value);
        for (const QString &name : edgeOptionNames())
            keep(EdgeOptionPrefix + name, options.value(name));
        m_settings->sync();
    }
    Q_EMIT savedChanged();
    return true;
}

} // namespace pando::desktop
