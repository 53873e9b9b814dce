#pragma once
// EngineSettingsForm (QML, Pando.Settings; DesktopState's engineSettings): the settings of this
// computer's engine that pandod takes as flags — the app limit, pipeline runs at once, the
// approval policy file and how long an approval waits, the audit sinks file, the edge and the
// Traefik or Cloudflare edge's own settings — edited in the
// Settings view and kept in the desktop's settings under "engine/". save() checks them as pandod
// checks its flags (app/wiring/enginesettings.h) and keeps nothing when one is wrong; the engine
// reads them when it starts, so a saved change says that a restart applies it.
//
// Threading: GUI thread.

#include "app/wiring/enginesettings.h"

#include <QObject>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

class QSettings;

namespace pando::desktop {

class EngineSettingsForm : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.engineSettings")
    // Only this computer's engine takes them here; a remote install's are its pandod's flags.
    Q_PROPERTY(bool available READ isAvailable CONSTANT)
    Q_PROPERTY(QString appLimit READ appLimit NOTIFY savedChanged)
    Q_PROPERTY(QString maxRuns READ maxRuns NOTIFY savedChanged)
    Q_PROPERTY(QString approvalPolicy READ approvalPolicy NOTIFY savedChanged)
    Q_PROPERTY(QString approvalTtl READ approvalTtl NOTIFY savedChanged)
    Q_PROPERTY(QString auditSinks READ auditSinks NOTIFY savedChanged)
    // "" (auto), "caddy", "in-process", "traefik" or "cloudflare": what serves the apps (docs/edge.md).
    Q_PROPERTY(QString edge READ edge NOTIFY savedChanged)
    // The Traefik and Cloudflare edges' settings by pandod's flag names ("traefik-dir",
    // "cloudflare-account", ...: edgeOptionNames).
    Q_PROPERTY(QVariantMap edgeOptions READ edgeOptions NOTIFY savedChanged)
    // The last save's refusal ("approval-ttl: expected a duration …"); empty after a good one.
    Q_PROPERTY(QString error READ error NOTIFY savedChanged)
    // The setting the refusal is about: app-limit, max-runs, approval-policy, approval-ttl,
    // audit-sinks, edge, or one of edgeOptionNames.
    Q_PROPERTY(QString errorSetting READ errorSetting NOTIFY savedChanged)
    // What is saved differs from what the running engine started with.
    Q_PROPERTY(bool restartNeeded READ isRestartNeeded NOTIFY savedChanged)

public:
    // settings is kept, not owned; available: the session is this computer's engine.
    EngineSettingsForm(QSettings *settings, bool available, QObject *parent = nullptr);

    // What the settings hold now (every field empty for one never set).
    static wiring::EngineSettings stored(const QSettings &settings);

    bool isAvailable() const { return m_available; }
    QString appLimit() const { return m_saved.appLimit; }
    QString maxRuns() const { return m_saved.maxRuns; }
    QString approvalPolicy() const { return m_saved.approvalPolicy; }
    QString approvalTtl() const { return m_saved.approvalTtl; }
    QString auditSinks() const { return m_saved.auditSinks; }
    QString edge() const { return m_saved.edge; }
    QVariantMap edgeOptions() const;
    // The names edgeOptions may hold.
    static const QStringList &edgeOptionNames();
    const QString &error() const { return m_error; }
    const QString &errorSetting() const { return m_errorSetting; }
    bool isRestartNeeded() const;

    // Checks and keeps them all; false (error and errorSetting say why) when one is wrong. Only
    // the chosen edge's options are checked; the others are kept as they are.
    Q_INVOKABLE bool save(const QString &appLimit, const QString &maxRuns, const QString &approvalPolicy,
                          const QString &approvalTtl, const QString &auditSinks, const QString &edge,
                          const QVariantMap &edgeOptions = {});

Q_SIGNALS:
    void savedChanged();

private:
    QSettings *m_settings;
    bool m_available;
    wiring::EngineSettings m_started; // what the engine read at its start
    wiring::EngineSettings m_saved;
    QString m_error;
    QString m_errorSetting;
};

} // namespace pando::desktop
