#pragma once
// RunTreeModel: one run's step tree as `pando runs show` prints it — steps nested as the plan
// nests them (in_parallel, do, try, hooks), each with its kind, state, duration, attempt, exit
// code and the skipped-as-unchanged mark — loaded from the run's detail and then kept live from
// Session::followRun; a running step's duration ticks. The run's output lines arrive on the same
// follow and StepOutputModel shows those of the selected step (or of the whole run). A run that
// failed selects its first failing step by itself, so its reason is in front.
//
// Threading: GUI-thread models like their Session; they never block.

#include "app/desktop/session/session.h"
#include "qml/runs/runstate.h"

#include <QAbstractItemModel>
#include <QAbstractListModel>
#include <QPointer>
#include <QTimer>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <functional>
#include <memory>
#include <vector>

namespace pando::desktop {

// The output lines of one step of a run (or of all of it), in order.
class StepOutputModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("a run's output comes from RunTreeModel.output")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    struct Line {
        QString step;
        QString stream; // stdout, stderr, pando (a line Pando itself says about the step)
        QString text;   // as a terminal shows it: escape sequences taken out
        QString raw;    // as the step printed it (the log view renders its colours)
    };
    enum Role { TextRole = Qt::UserRole + 1, StreamRole, StepRole, RawTextRole };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void reset(QList<Line> lines);
    void append(const Line &line);

Q_SIGNALS:
    void countChanged();

private:
    QList<Line> m_lines;
};

class RunTreeModel : public QAbstractItemModel {
    Q_OBJECT
    QML_ELEMENT
    // The Session to ask (a pando::desktop::Session; QObject here so QML needs no session type).
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    // The run to show; empty shows nothing.
    Q_PROPERTY(QString runId READ runId WRITE setRunId NOTIFY runIdChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    // Why loading or following failed; empty while all is well.
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    // The run's follow is open: what happens arrives live.
    Q_PROPERTY(bool following READ isFollowing NOTIFY followingChanged)
    // The run itself (empty strings before it loads).
    Q_PROPERTY(QString title READ title NOTIFY runChanged)
    Q_PROPERTY(QString status READ status NOTIFY runChanged)
    Q_PROPERTY(int state READ state NOTIFY runChanged)
    Q_PROPERTY(QString statusText READ statusText NOTIFY runChanged)
    Q_PROPERTY(QString runError READ runError NOTIFY runChanged)
    // Said when the job's build_log_retention removed the run's output; empty otherwise.
    Q_PROPERTY(QString logNote READ logNote NOTIFY runChanged)
    Q_PROPERTY(QString durationText READ durationText NOTIFY runChanged)
    Q_PROPERTY(QString triggerText READ triggerText NOTIFY runChanged)
    // "6 steps · 2 unchanged · 1 failed"
    Q_PROPERTY(QString summaryText READ summaryText NOTIFY runChanged)
    Q_PROPERTY(bool live READ isLive NOTIFY runChanged)
    Q_PROPERTY(int stepCount READ stepCount NOTIFY runChanged)
    Q_PROPERTY(int cachedCount READ cachedCount NOTIFY runChanged)
    Q_PROPERTY(int failedCount READ failedCount NOTIFY runChanged)
    // The step whose output to show (its id); empty: the whole run's output.
    Q_PROPERTY(QString selectedStep READ selectedStep WRITE setSelectedStep NOTIFY selectedStepChanged)
    // The selected step's roles by name (id empty when none is selected).
    Q_PROPERTY(QVariantMap selected READ selected NOTIFY selectedStepChanged)
    Q_PROPERTY(pando::desktop::StepOutputModel *output READ output CONSTANT)
    // Signing off the selected approve step: a decision is on its way; why the last was refused.
    Q_PROPERTY(bool deciding READ isDeciding NOTIFY decisionChanged)
    Q_PROPERTY(QString decisionError READ decisionError NOTIFY decisionChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1, // the step's path in the plan ("plan[1].in_parallel[0].task:unit")
        NameRole,
        KindRole,  // get, put, task, approve, in_parallel, do, try, on_success, ...
        LabelRole, // "task unit", or the kind alone for a step without a name of its own
        StatusRole,
        StateRole, // DisplayState::Value
        StatusTextRole,
        CachedRole, // skipped as unchanged
        DurationMsRole,
        DurationTextRole, // "–" for a cached step: it did not run
        AttemptRole,      // 0: the step has no attempts
        ExitCodeRole,     // -1: none
        ErrorRole,
        HasOutputRole,      // the step printed something
        ApprovalIdRole,     // an approve step's approval; empty for other steps
        ApprovalStatusRole, // pending, approved, rejected, expired, withdrawn; empty for other steps
    };
    Q_ENUM(Role)

    explicit RunTreeModel(QObject *parent = nullptr);
    ~RunTreeModel() override;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Session *session() const { return m_session; }
    void setSession(Session *session);
    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    QString runId() const { return m_runId; }
    void setRunId(const QString &id);

    bool isLoading() const { return m_loading; }
    QString error() const { return m_error; }
    bool isFollowing() const { return m_follow && m_follow->isActive(); }
    QString title() const;
    QString status() const;
    int state() const { return int(DisplayState::ofRun(status())); }
    QString statusText() const { return RunState::word(status()); }
    QString runError() const;
    QString logNote() const;
    QString durationText() const;
    QString triggerText() const;
    QString summaryText() const;
    bool isLive() const { return RunState::isLive(status()); }
    int stepCount() const;
    int cachedCount() const;
    int failedCount() const;
    QString selectedStep() const { return m_selectedStep; }
    void setSelectedStep(const QString &stepId);
    QVariantMap selected() const;
    StepOutputModel *output() { return &m_output; }

    // The index of the step with this id; invalid when the tree has no such step.
    Q_INVOKABLE QModelIndex indexOf(const QString &stepId) const;
    // Loads the run again and reopens its follow.
    Q_INVOKABLE void refresh();
    // Approves or rejects the selected approve step's pending approval, with an optional comment;
    // a refusal (the requester may not decide their own) shows in decisionError.
    Q_INVOKABLE void decide(bool approve, const QString &comment);
    bool isDeciding() const { return m_deciding; }
    QString decisionError() const { return m_decisionError; }

    // Where "now" comes from for running steps (tests set a fixed clock).
    void setClock(std::function<qint64()> nowMs) { m_now = std::move(nowMs); }

Q_SIGNALS:
    void sessionChanged();
    void runIdChanged();
    void loadingChanged();
    void errorChanged();
    void followingChanged();
    void runChanged();
    void selectedStepChanged();
    void decisionChanged();

private:
    struct Node {
        QJsonObject step; // the API's RunStep, without its children
        Node *parent = nullptr;
        std::vector<std::unique_ptr<Node>> children;
    };
    Node *nodeOf(const QModelIndex &index) const;
    QModelIndex indexFor(const Node *node) const;
    QVariant roleValue(const Node *node, int role) const;
    qint64 durationOf(const QJsonObject &step) const;
    void clear();
    void load(bool reset);
    void adopt(const QJsonObject &run, bool reset);
    void build(Node *parent, const QJsonArray &steps);
    void merge(const QString &parentId, const QJsonArray &steps);
    void upsert(const QJsonObject &step, const QString &parentId);
    void follow();
    void onMessage(const QJsonObject &message);
    void onEvent(const QJsonObject &event);
    void setRunField(const QString &key, const QJsonValue &value);
    void setError(const QString &error);
    void selectFailing();
    void tick();
    void updateTicker();

    QPointer<Session> m_session;
    QString m_runId;
    quint64 m_generation = 0; // answers for an older run or session are dropped
    QJsonObject m_run;        // the run's record, without its steps
    Node m_root;
    QHash<QString, Node *> m_byId;
    QList<StepOutputModel::Line> m_lines; // the run's output so far, in order
    StepOutputModel m_output;
    QString m_selectedStep;
    bool m_deciding = false;
    QString m_decisionError;
    bool m_userSelected = false;
    QPointer<Subscription> m_follow;
    bool m_followed = false; // the follow was opened for this run (it ends with the run)
    qint64 m_lastSeq = 0;    // the last event seen: a new follow goes on from there
    bool m_loading = false;
    QString m_error;
    QTimer m_ticker;
    std::function<qint64()> m_now;
};

} // namespace pando::desktop
