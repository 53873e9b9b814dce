#pragma once
// PipelinesModel: the install's pipelines for the Pipelines view's left column — name, jobs,
// paused (and why), and the last run's status — kept live from the session's run.* and
// pipeline.paused events. Trigger a job, pause and unpause go through it; an install without
// the pipeline runner shows as unavailable with the install's own words.
//
// Threading: a GUI-thread model like its Session; it never blocks.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/runs/runstate.h"

#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class PipelinesModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadingChanged)
    // Why the last refresh failed; empty while all is well.
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    // The install runs without the pipeline runner (error says so, with what to do).
    Q_PROPERTY(bool unavailable READ isUnavailable NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The install's host-execution setting in words ("off", "on for pipelines an administrator
    // allowed"); empty until known.
    Q_PROPERTY(QString hostExecutionText READ hostExecutionText NOTIFY hostExecutionChanged)
    // What apps whose spec a member writes may use of the install (file:// repositories, the
    // ssh-agent, internal hosts, the ports they may pick), in words; empty until known.
    Q_PROPERTY(QString appAccessText READ appAccessText NOTIFY hostExecutionChanged)
    // The selected row's roles by name (name empty when nothing is selected); follows live changes.
    Q_PROPERTY(QVariantMap selected READ selected NOTIFY selectedChanged)
    Q_PROPERTY(QString selectedName READ selectedName NOTIFY selectedChanged)
    // Archived pipelines are listed too (hidden by default, as fly pipelines hides them).
    Q_PROPERTY(bool showArchived READ showArchived WRITE setShowArchived NOTIFY showArchivedChanged)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        PausedRole,
        PausedReasonRole, // "paused by admin", "circuit breaker: …"
        JobsRole,         // job names in file order
        ConfigVersionRole,
        LastRunIdRole, // empty: never run
        LastRunJobRole,
        LastRunNumberRole,
        LastRunStatusRole, // the API's word
        LastRunStateRole,  // DisplayState::Value
        LastRunTextRole,   // "build #3 · succeeded", "never run", translated
        BusyRole,          // a trigger or pause of this pipeline is on its way
        ActionErrorRole,   // why the last trigger/pause was refused
        HostExecutionRole, // an administrator allowed its tasks on the host
        SetByRole,         // the pipeline whose set_pipeline step created it; empty: a person
        // An instanced pipeline ("preview/branch:feature-1"): its group ("preview") and instance
        // vars ("branch:feature-1"); both empty for a pipeline that is no instance.
        InstanceGroupRole,
        InstanceVarsRole,
        ArchivedRole, // archived: no config, runs nothing; set again to bring back
    };
    Q_ENUM(Role)

    explicit PipelinesModel(QObject *parent = nullptr);
    ~PipelinesModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool isUnavailable() const { return m_unavailable; }
    // Pipelines whose last run failed or errored (the status line and the tray count them).
    int failingCount() const;
    QString hostExecutionText() const { return m_hostExecutionText; }
    QString appAccessText() const { return m_appAccessText; }
    QVariantMap selected() const;
    QString selectedName() const;
    // The row of the pipeline with this name; -1 when there is none.
    Q_INVOKABLE int rowOf(const QString &name) const;
    Q_INVOKABLE bool selectName(const QString &name);

    // Reloads the pipelines (and each one's last run) from the session.
    Q_INVOKABLE void refresh() override;
    // Queues a run of the job; triggered() names it once the install has queued it.
    Q_INVOKABLE void triggerJob(int row, const QString &job);
    Q_INVOKABLE void setPaused(int row, bool paused);
    // Renames the pipeline in this row; it stays selected under its new name.
    Q_INVOKABLE void rename(int row, const QString &to);
    // Archives the pipeline in this row; it leaves the list unless archived ones are shown.
    Q_INVOKABLE void archive(int row);
    // Concourse's instance-group actions: every instance of the group the list shows (the
    // archived ones left out), paused, unpaused or archived, one request each; an instance whose
    // request fails says why on its row, as one action on it would.
    Q_INVOKABLE QStringList instancesOf(const QString &group) const;
    Q_INVOKABLE void setGroupPaused(const QString &group, bool paused);
    Q_INVOKABLE void archiveGroup(const QString &group);
    bool showArchived() const { return m_showArchived; }
    void setShowArchived(bool show);

Q_SIGNALS:
    // A run this model asked for was queued.
    void triggered(const QString &pipeline, const QString &runId);
    void hostExecutionChanged();
    void showArchivedChanged();

private:
    struct Row {
        QJsonObject pipeline; // the API's Pipeline
        QJsonObject lastRun;  // {id, job, number, status}; empty: never run
        bool busy = false;
        QString actionError;
    };
    QVariant roleValue(const Row &row, int role) const;
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void apply(const QJsonObject &pipeline);
    void setLastRun(int row, const QJsonObject &run);
    // Marks the row busy for an action on its pipeline; its name, or "" when it cannot start one.
    QString beginAction(int row);
    void fetchLastRun(const QString &name);
    void rowChanged(int row);
    // The base's error, and whether it means the install has no pipeline runner.
    void setError(const QString &error, bool unavailable = false);
    void actionDone(const QString &name, const Error *error);

    QList<Row> m_rows; // sorted by name
    bool m_unavailable = false;
    bool m_showArchived = false;
    // The app settings of GET /api/v1/settings in words (appAccessText).
    static QString appAccessWords(const QJsonObject &settings);
    QString m_hostExecutionText;
    QString m_appAccessText;
};

} // namespace pando::desktop
