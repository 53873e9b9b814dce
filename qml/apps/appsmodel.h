#pragma once
// Package apps (QML module Pando.Apps): the Apps view — the install's apps with their live
// status, URL and last deploy, a deploy action that shows its progress in place, and the empty
// state that teaches the first deploy. AppsModel holds every decision; the QML only binds.
//
// Threading: the model lives on the GUI thread with its Session and applies the session's answers
// and events there; it never blocks.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class AppsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadingChanged)
    // Why the last refresh failed; empty when it did not.
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(bool engineReachable READ isEngineReachable NOTIFY engineChanged)
    // One line about the engine for the empty state and the status line.
    Q_PROPERTY(QString engineText READ engineText NOTIFY engineChanged)
    Q_PROPERTY(QString engineHint READ engineHint NOTIFY engineChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The selected row's roles by name (name empty when nothing is selected); follows live changes.
    Q_PROPERTY(QVariantMap selected READ selected NOTIFY selectedChanged)
    Q_PROPERTY(int failingCount READ failingCount NOTIFY summaryChanged)
    Q_PROPERTY(int busyCount READ busyCount NOTIFY summaryChanged)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        StatusRole,           // the API's word: new, deploying, running, unhealthy, failed, stopped, removing
        StateRole,            // DisplayState::Value: what the mark's shape and colour show
        StatusTextRole,       // the status as a translated word
        UrlRole,              // where the app is reached; empty before the first route
        LastDeployIdRole,     // empty when the app was never deployed
        LastDeployStatusRole, // queued, running, awaiting-approval, succeeded, failed, ...
        LastDeployTextRole,   // "succeeded at 14:03 (main)", translated
        LastDeployTimeRole,   // when the last deploy finished (or was queued), ms since the epoch; 0: never
        LastDeployErrorRole,  // the failing step and its reason, when the last deploy failed
        RefRole,              // the spec's source ref
        BusyRole,             // a deploy of this app is in flight
        ProgressRole,         // what the deploy in flight does now ("build: running")
        ActionErrorRole,      // why the last action (deploy, remove) failed to start
        StatusReasonRole,     // why the app is in its status: what its health probe got, its disk limit
        CanStopRole,          // its serving container runs (running or unhealthy): Stop and Restart apply
        CanStartRole,         // it has a serving version that is stopped: Start applies
    };
    Q_ENUM(Role)

    explicit AppsModel(QObject *parent = nullptr);
    ~AppsModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool isEngineReachable() const;
    QString engineText() const;
    QString engineHint() const;
    QVariantMap selected() const;
    int failingCount() const;
    int busyCount() const;
    // The row of the app with this name; -1 when there is none.
    int rowOf(const QString &name) const;

    // Selects the app with this name now, or as soon as it is listed (one just created).
    Q_INVOKABLE void selectApp(const QString &name);
    // Reloads every app from the session.
    Q_INVOKABLE void refresh() override;
    // Deploys the app in this row at its spec's ref; progress arrives in the row's roles.
    Q_INVOKABLE void deploy(int row);
    // Removes the app in this row (its containers, route and history); the row goes when the
    // teardown is done, and stays with the reason when it is refused.
    Q_INVOKABLE void remove(int row);
    // Starts the app in this row again, stops it (it stays stopped until started or deployed),
    // or restarts its container; the row shows the action in progress, then the app as the
    // answer has it, or why the action failed.
    Q_INVOKABLE void start(int row);
    Q_INVOKABLE void stop(int row);
    Q_INVOKABLE void restart(int row);

    static QString stateWord(DisplayState::Value state);

Q_SIGNALS:
    void engineChanged();
    void summaryChanged();

private:
    struct Row {
        QString name; // the app's, kept apart: rows are found by it (sorted)
        QJsonObject app;
        bool busy = false;
        QString progress;
        QString actionError;
    };
    QVariant roleValue(const Row &row, int role) const;
    DisplayState::Value stateOf(const Row &row) const;
    void onEvent(const QJsonObject &event) override;
    void onSessionState(Session::State state) override;
    void sessionReplaced() override;
    void reloadApp(const QString &name);
    void applyApp(const QJsonObject &app);
    void changeRunning(int row, Session::AppAction action);
    void removeApp(const QString &name);
    // An answer asked for before the app's removal was told (its mark is older) must not bring
    // the row back: answers and events travel apart, so one may arrive after app.removed.
    bool removedSince(const QString &name, quint64 mark) const { return m_removedAt.value(name) > mark; }
    void rowChanged(int row);
    void actionFailed(int row, const Error &error);

    QList<Row> m_rows;
    QString m_selectNext;
    bool m_batch = false;                // applying a refresh: the summary is told once, at its end
    quint64 m_removals = 0;              // app.removed events seen: the mark answers are asked at
    QHash<QString, quint64> m_removedAt; // app -> the mark of its last removal
};

} // namespace pando::desktop
