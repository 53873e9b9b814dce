#pragma once
// JobsModel: the selected pipeline's Jobs and Config tabs. Rows are its jobs in the order of the
// `passed:` graph: each job's stage (0 for jobs nothing feeds, else one more than the latest of
// its upstream jobs), the upstream jobs its gets name in `passed:` (whose output feeds it), its
// inputs, and its last run kept live from the session's run.* events. Trigger goes through it.
// The graph's edges (from each upstream job to the job naming it in passed:) and each job's slot
// (its place among the jobs of its stage) are what the Jobs tab draws.
// It also holds the pipeline's config as set (YAML) and the diff of its last change, from
// GET /api/v1/pipelines/{name}.
//
// Threading: a GUI-thread model like its Session; it never blocks.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/runs/runstate.h"

#include <QStringList>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class JobsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The pipeline to show; empty shows nothing.
    Q_PROPERTY(QString pipeline READ pipeline WRITE setPipeline NOTIFY pipelineChanged)
    // The config version the list shows the pipeline at; setting a newer one (the pipelines
    // list saw a set) reloads.
    Q_PROPERTY(int configVersion READ configVersion WRITE setConfigVersion NOTIFY configChanged)
    // The config as it was set, and a unified diff of its last change (empty when none).
    Q_PROPERTY(QString configYaml READ configYaml NOTIFY configChanged)
    Q_PROPERTY(QStringList configDiff READ configDiff NOTIFY configChanged)
    // How many stages the passed: graph has (1 when no job waits for another).
    Q_PROPERTY(int stageCount READ stageCount NOTIFY countChanged)
    // The most jobs one stage has (the graph's height in jobs).
    Q_PROPERTY(int tallestStage READ tallestStage NOTIFY countChanged)
    // The passed: graph's edges, one per upstream job a job names: {from, to} (rows),
    // {fromName, toName} and span (how many stages it goes forward), ordered by the downstream
    // row, then as its gets name them.
    Q_PROPERTY(QVariantList edges READ edges NOTIFY countChanged)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        StageRole,         // 0, 1, ...: where the job sits in the passed: graph
        UpstreamRole,      // the jobs named in its gets' passed:, in file order
        UpstreamTextRole,  // "after build, lint" / "first: nothing feeds it"
        InputsTextRole,    // "repo (triggers) · image", translated
        LastRunIdRole,     // empty: never run
        LastRunStateRole,  // DisplayState::Value
        LastRunStatusRole, // the API's word
        LastRunTextRole,   // "#3 · succeeded", "never run"
        BusyRole,          // a trigger is on its way
        ActionErrorRole,   // why the last trigger was refused
        SlotRole,          // 0, 1, ...: its place among the jobs of its stage, in file order
        ManualTriggerRole, // false: the job has disable_manual_trigger (only its resources start it)
        PausedRole,        // someone paused the job: its runs wait
        PausedReasonRole,  // "paused by alice"
    };
    Q_ENUM(Role)

    explicit JobsModel(QObject *parent = nullptr);
    ~JobsModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString pipeline() const { return m_pipeline; }
    void setPipeline(const QString &pipeline);
    int configVersion() const { return m_configVersion; }
    void setConfigVersion(int version);
    QString configYaml() const { return m_configYaml; }
    QStringList configDiff() const { return m_configDiff; }
    int stageCount() const;
    int tallestStage() const;
    QVariantList edges() const;

    // The row of the job with this name; -1 when there is none.
    Q_INVOKABLE int rowOf(const QString &job) const;
    Q_INVOKABLE void refresh() override;
    // Queues a run of the job; triggered() names it once the install has queued it. force: the
    // run runs every step, restoring nothing unchanged.
    Q_INVOKABLE void trigger(int row, bool force = false);
    // Pauses or unpauses the job (its runs wait while it is paused); a refusal is the row's
    // actionError.
    Q_INVOKABLE void setPaused(int row, bool paused);

Q_SIGNALS:
    void pipelineChanged();
    void configChanged();
    void triggered(const QString &pipeline, const QString &runId);

private:
    struct Row {
        QString name;
        int stage = 0;
        int slot = 0;
        QStringList upstream;
        QStringList inputs;  // "repo (triggers)"
        QJsonObject lastRun; // RunState::summaryOf
        bool busy = false;
        bool manualTrigger = true; // no disable_manual_trigger
        bool paused = false;
        QString pausedReason;
        QString actionError;
    };
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    // No rows, no config (another pipeline or session).
    void clear();
    void apply(const QJsonObject &pipeline);
    void fetchRuns();
    void setLastRun(int row, const QJsonObject &run);
    void rowChanged(int row);
    // Marks the row busy and runs the call; when it answers, the row is no longer busy and
    // actionError says why it was refused. done gets the answer of a call that succeeded.
    void act(int row, const std::function<void(Session &, const QString &job, Session::ObjectCallback)> &call,
             const std::function<void(int row, const QJsonObject &answer)> &done);

    QList<Row> m_rows; // by stage, then file order
    QString m_pipeline;
    int m_configVersion = 0;
    QString m_configYaml;
    QStringList m_configDiff;
};

} // namespace pando::desktop
