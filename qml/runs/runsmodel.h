#pragma once
// RunsModel: the runs of one pipeline (or of every pipeline), newest first, for the Pipelines
// view's middle column — status, who or what triggered it, when, and how long it took; a running
// run's duration ticks. Kept live from the session's run.queued, run.started and run.finished
// events; a run is aborted through it.
//
// Threading: a GUI-thread model like its Session; it never blocks.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/runs/runstate.h"

#include <QTimer>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <functional>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class RunsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    // The pipeline whose runs to show; empty: every pipeline's.
    Q_PROPERTY(QString pipeline READ pipeline WRITE setPipeline NOTIFY pipelineChanged)
    // How many of the newest runs to hold.
    Q_PROPERTY(int limit READ limit WRITE setLimit NOTIFY limitChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The selected run's id; empty when nothing is selected.
    Q_PROPERTY(QString selectedId READ selectedId NOTIFY selectedChanged)
    Q_PROPERTY(QVariantMap selected READ selected NOTIFY selectedChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        PipelineRole,
        JobRole,
        NumberRole,
        StatusRole,     // queued, running, succeeded, failed, errored, aborted
        StateRole,      // DisplayState::Value
        StatusTextRole, // translated word
        TriggerRole,    // manual, resource:<name>, webhook:<name>, passed:<job>
        ActorRole,
        ErrorRole,
        CreatedMsRole,
        StartedMsRole,
        FinishedMsRole,
        DurationMsRole, // finished - started; for a running run, until now (ticks)
        DurationTextRole,
        TitleRole,       // "build #3"
        CreatedTextRole, // when it was queued, in the locale's short format
        LiveRole,        // queued or running: may be aborted
        BusyRole,        // an abort is on its way
        ActionErrorRole, // why the last abort was refused
    };
    Q_ENUM(Role)

    explicit RunsModel(QObject *parent = nullptr);
    ~RunsModel() override;

    QString pipeline() const { return m_pipeline; }
    void setPipeline(const QString &pipeline);
    int limit() const { return m_limit; }
    void setLimit(int limit);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Choosing a row ends the wait for a run selectId() asked for before it was listed.
    void setSelectedRow(int row);
    QString selectedId() const;
    QVariantMap selected() const;
    Q_INVOKABLE int rowOf(const QString &id) const;
    // Selects the run; one not listed yet (just triggered) is selected when it arrives.
    Q_INVOKABLE bool selectId(const QString &id);

    Q_INVOKABLE void refresh() override;
    // Asks the install to abort the run; its end arrives as run.finished (aborted).
    Q_INVOKABLE void abort(int row);

    // Where "now" comes from for running runs (tests set a fixed clock).
    void setClock(std::function<qint64()> nowMs) { m_now = std::move(nowMs); }

Q_SIGNALS:
    void pipelineChanged();
    void limitChanged();

private:
    struct Row {
        QJsonObject run; // the API's Run
        bool busy = false;
        QString actionError;
    };
    QVariant roleValue(const Row &row, int role) const;
    qint64 durationOf(const QJsonObject &run) const;
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void apply(const QJsonObject &run);
    void fetch(const QString &id);
    void rowChanged(int row);
    void updateTicker();
    void clear();

    QString m_pipeline;
    int m_limit = 50;
    QList<Row> m_rows;       // newest first
    QString m_pendingSelect; // selectId() of a run not listed yet
    QTimer m_ticker;
    std::function<qint64()> m_now;
};

} // namespace pando::desktop
