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

} // namespace

EngineSettingsForm::EngineSettingsForm(QSettings *settings, bool available, QObject *parent)
    : QObject(parent), m_settings(settings), m_available(available)
{
    if (m_settings)
        m_started = m_saved = stored(*m_settings);
}

wiring::EngineSettings EngineSettingsForm::stored(const QSettings &settings)
{
    return {settings.value(AppLimitKey).toString(),       settings.value(MaxRunsKey).toString(),
            settings.value(ApprovalPolicyKey).toString(), settings.value(ApprovalTtlKey).toString(),
            settings.value(AuditSinksKey).toString(),     settings.value(EdgeKey).toString()};
}

bool EngineSettingsForm::isRestartNeeded() const
{
    return m_started != m_saved;
}

bool EngineSettingsForm::save(const QString &appLimit, const QString &maxRuns, const QString &approvalPolicy,
                              const QString &approvalTtl, const QString &auditSinks, const QString &edge)
{
    const wiring::EngineSettings wanted{appLimit.trimmed(),    maxRuns.trimmed(),    approvalPolicy.trimmed(),
                                        approvalTtl.trimmed(), auditSinks.trimmed(), edge.trimmed()};
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
        for (const auto &[key, value] : values) {
            if (value.isEmpty())
                m_settings->remove(key);
            else
                m_settings->setValue(key, value);
        }
        m_settings->sync();
    }
    Q_EMIT savedChanged();
    return true;
}

} // namespace pando::desktop
