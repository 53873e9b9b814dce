#pragma once
// Package shell (QML module Pando.Shell): the pando-desktop window around the views — the
// sidebar, the status line, the tray — and the state they share. DesktopState is the QML
// singleton `Desktop`: the current connection, its apps, the pending approvals and the one
// overall state the tray icon and the sidebar show.
//
// Threading: GUI thread only, with its Session.

#include "app/desktop/shell/palettesearch.h"
#include "app/desktop/shell/runtimesstatus.h"
#include "qml/activity/activitymodel.h"
#include "qml/approvals/approvalsmodel.h"
#include "qml/apps/appsmodel.h"
#include "qml/connections/connectionsmodel.h"
#include "qml/runs/pipelinesmodel.h"
#include "qml/runs/runsmodel.h"
#include "qml/runs/runtreemodel.h"
#include "qml/settings/embeddedserver.h"
#include "qml/settings/enginesettingsform.h"
#include "qml/sources/sourcesmodel.h"

#include <QObject>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

class QQmlEngine;
class QJSEngine;
class QSettings;

namespace pando::desktop {

class DesktopState : public QObject {
    Q_OBJECT
    QML_NAMED_ELEMENT(Desktop)
    QML_SINGLETON
    Q_PROPERTY(QString connectionName READ connectionName NOTIFY connectionChanged)
    Q_PROPERTY(pando::desktop::AppsModel *apps READ apps CONSTANT)
    Q_PROPERTY(pando::desktop::ApprovalsModel *approvals READ approvals CONSTANT)
    // The Activity view: the install's events while the window watched.
    Q_PROPERTY(pando::desktop::ActivityModel *activity READ activity CONSTANT)
    // The Sources view: the source connections that read private repositories.
    Q_PROPERTY(pando::desktop::SourcesModel *sources READ sources CONSTANT)
    // The Pipelines view: the pipelines, the selected one's runs, the selected run's step tree.
    Q_PROPERTY(pando::desktop::PipelinesModel *pipelines READ pipelines CONSTANT)
    Q_PROPERTY(pando::desktop::RunsModel *runs READ runs CONSTANT)
    Q_PROPERTY(pando::desktop::RunTreeModel *runTree READ runTree CONSTANT)
    // The Connections and Settings views: the installs to switch between, serving teammates.
    Q_PROPERTY(pando::desktop::ConnectionsModel *connections READ connections CONSTANT)
    Q_PROPERTY(pando::desktop::EmbeddedServer *embeddedServer READ embeddedServer CONSTANT)
    // This computer's engine's settings (the app limit, approval policy, audit sinks, …).
    Q_PROPERTY(pando::desktop::EngineSettingsForm *engineSettings READ engineSettings CONSTANT)
    // The view the window shows now (Main.qml keeps it in step with the sidebar), so the tray does
    // not announce what the user is already looking at.
    Q_PROPERTY(View currentView READ currentView WRITE setCurrentView NOTIFY currentViewChanged)
    Q_PROPERTY(int pendingApprovals READ pendingApprovals NOTIFY pendingApprovalsChanged)
    // The install's state in the shared vocabulary, most urgent first: offline (stopped), waiting
    // for approval, failed, in progress, healthy.
    Q_PROPERTY(pando::desktop::DisplayState::Value overall READ overall NOTIFY overallChanged)
    Q_PROPERTY(QString overallText READ overallText NOTIFY overallChanged)
    Q_PROPERTY(QString engineText READ engineText NOTIFY connectionChanged)
    // The status line's other parts (DESKTOP.md): whether Docker and Incus answer, and this
    // computer's embedded server with who is connected to it (empty for a remote install).
    Q_PROPERTY(pando::desktop::RuntimesStatus *runtimes READ runtimes CONSTANT)
    Q_PROPERTY(QString serverText READ serverText NOTIFY serverChanged)
    // Ctrl+K: what matches a query among the views, apps, pipelines and actions.
    Q_PROPERTY(pando::desktop::PaletteSearch *palette READ palette CONSTANT)

public:
    // The sidebar's entries, in Sidebar.Page's order.
    enum class View { Apps, Pipelines, Approvals, Activity, Sources, Connections, Settings };
    Q_ENUM(View)

    explicit DesktopState(Session *session, QObject *parent = nullptr);
    ~DesktopState() override;

    // The instance QML gets; main() makes it before loading QML.
    static DesktopState *create(QQmlEngine *qml, QJSEngine *js);
    static void setInstance(DesktopState *state);

    Session *session() const { return m_session; }
    QString connectionName() const;
    AppsModel *apps() { return &m_apps; }
    ApprovalsModel *approvals() { return &m_approvals; }
    ActivityModel *activity() { return &m_activity; }
    SourcesModel *sources() { return &m_sources; }
    PipelinesModel *pipelines() { return &m_pipelines; }
    RunsModel *runs() { return &m_runs; }
    RunTreeModel *runTree() { return &m_runTree; }
    ConnectionsModel *connections() { return m_connections.get(); }
    EmbeddedServer *embeddedServer() { return m_embedded.get(); }
    EngineSettingsForm *engineSettings() { return m_engineSettings.get(); }
    // Shows another install: every model follows the new session. A remote session the state
    // made for a Connections row is its own; the one it was constructed with never is.
    void setSession(Session *session);
    // Switches to the Connections row (0: this computer), as ConnectionsModel::activate asks.
    void switchTo(int row);
    View currentView() const { return m_currentView; }
    void setCurrentView(View view);
    // Selects the approval (when it still waits) and asks the window to show the Approvals view.
    Q_INVOKABLE void showApproval(const QString &id);
    int pendingApprovals() const { return m_pendingApprovals; }
    DisplayState::Value overall() const;
    QString overallText() const;
    QString engineText() const { return m_apps.engineText(); }
    RuntimesStatus *runtimes() { return &m_runtimes; }
    PaletteSearch *palette() { return &m_palette; }
    QString serverText() const;
    // The server part in words: serving or not, and the accounts with a live stream (an account
    // with several streams, or the initial token's empty name, once).
    static QString serverWords(bool serving, const QStringList &accounts);

    Q_INVOKABLE void refresh();

Q_SIGNALS:
    void connectionChanged();
    void pendingApprovalsChanged();
    void overallChanged();
    void serverChanged();
    // Someone (the tray, a second start) asked to see this app.
    void showAppRequested(const QString &name);
    void currentViewChanged();
    // Someone (the tray) asked to see the Approvals view; the approval is selected already.
    void showApprovalsRequested();

private:
    void refreshApprovals();
    void onEvent(const QJsonObject &event);

    Session *m_session;
    AppsModel m_apps;
    ApprovalsModel m_approvals;
    ActivityModel m_activity;
    SourcesModel m_sources;
    RuntimesStatus m_runtimes;
    PipelinesModel m_pipelines;
    RunsModel m_runs;
    RunTreeModel m_runTree;
    PaletteSearch m_palette{&m_apps, &m_pipelines};
    Session *m_initial = nullptr; // the session main() made (this computer's, usually)
    Session *m_remote = nullptr;  // a remote session made for a Connections row, owned here
    std::unique_ptr<QSettings> m_settings;
    std::unique_ptr<ConnectionsModel> m_connections;
    std::unique_ptr<EmbeddedServer> m_embedded;
    std::unique_ptr<EngineSettingsForm> m_engineSettings;
    View m_currentView = View::Apps;
    int m_pendingApprovals = 0;
};

} // namespace pando::desktop
