#pragma once
// DeployStepsModel: one deploy's steps as the Deploys tab's timeline — loaded with the deploy's
// detail, then kept live from deploy.step events; a running step's duration ticks while it runs.
// A failed deploy opens with its failing step selected and its reason and hint split for the
// one-line banner; a step waiting for approval carries the approval's id.
//
// Threading: a GUI-thread model like its Session; it never blocks.

#include "qml/deploys/deploysmodel.h"

#include <QTimer>
#include <QtQml/qqmlregistration.h>
#include <functional>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class DeployStepsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString deployId READ deployId WRITE setDeployId NOTIFY deployIdChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The deploy itself: status, state, failedStep, reason, hint, approval (empty strings before it loads).
    Q_PROPERTY(QString status READ status NOTIFY deployChanged)
    Q_PROPERTY(int state READ state NOTIFY deployChanged)
    Q_PROPERTY(QString failedStep READ failedStep NOTIFY deployChanged)
    Q_PROPERTY(QString reason READ reason NOTIFY deployChanged)
    Q_PROPERTY(QString hint READ hint NOTIFY deployChanged)
    Q_PROPERTY(QString approvalId READ approvalId NOTIFY deployChanged)
    // The longest step's duration: the bars are drawn relative to it.
    Q_PROPERTY(qint64 longestMs READ longestMs NOTIFY durationsChanged)
    // What the selected step printed (the build's output, the container's last lines), escape
    // codes removed; followed while the step runs.
    Q_PROPERTY(QStringList selectedLog READ selectedLog NOTIFY selectedLogChanged)
    // Why the selected step's output cannot be shown (removed after the install's retention, the
    // server not answering); empty when it can.
    Q_PROPERTY(QString selectedLogError READ selectedLogError NOTIFY selectedLogChanged)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        TitleRole, // the step as a translated phrase ("building the image")
        StatusRole,
        StateRole, // DisplayState::Value
        StatusTextRole,
        DetailRole,
        StartedMsRole,
        DurationMsRole, // finished - started; for a running step, until now (ticks)
        FractionRole,   // durationMs / longestMs, 0..1, for the bar
        ApprovalIdRole, // the approval a waiting step waits for; empty otherwise
    };
    Q_ENUM(Role)

    explicit DeployStepsModel(QObject *parent = nullptr);
    ~DeployStepsModel() override;

    QString deployId() const { return m_deployId; }
    void setDeployId(const QString &id);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    int selectedRow() const { return m_selected; }
    void setSelectedRow(int row);
    QString status() const { return m_deploy.value(QStringLiteral("status")).toString(); }
    int state() const { return int(DisplayState::ofDeploy(status())); }
    QString failedStep() const { return m_deploy.value(QStringLiteral("failed_step")).toString(); }
    QString reason() const;
    QString hint() const;
    QString approvalId() const;
    qint64 longestMs() const;
    int rowOf(const QString &name) const;
    const QStringList &selectedLog() const { return m_log; }
    const QString &selectedLogError() const { return m_logError; }

    // Where "now" comes from for running steps (tests set a fixed clock).
    void setClock(std::function<qint64()> nowMs) { m_now = std::move(nowMs); }

    Q_INVOKABLE void refresh() override;

Q_SIGNALS:
    void deployIdChanged();
    void selectedChanged();
    void deployChanged();
    void durationsChanged();
    void selectedLogChanged();

private:
    qint64 durationOf(const QJsonObject &step) const;
    void onEvent(const QJsonObject &event) override;
    void applyStep(const QJsonObject &step);
    void tick();
    void updateTicker();
    void selectFailing();
    // The selected step's output from the start (restart) or after what was read. While the
    // step runs its lines come through the deploy's log follow as it prints them; where that
    // cannot be had (a server without it), it is asked again every second.
    void loadLog(bool restart);
    void appendLines(const QJsonArray &lines);
    void followLog();
    void stopFollowingLog();
    bool selectedRunning() const;

    QString m_deployId;
    QJsonObject m_deploy;
    QList<QJsonObject> m_steps; // in seq order
    int m_selected = -1;
    bool m_userSelected = false;
    QTimer m_ticker;
    // Each step's lines read so far (its text, ANSI escapes removed, and its last line's number).
    struct StepLines {
        QStringList text;
        int last = 0;
    };
    QHash<int, StepLines> m_stepLines;
    QStringList m_log;  // the selected step's
    QString m_logError; // why m_log could not be read
    int m_logSeq = -1;  // the step m_log is of
    int m_logAfter = 0; // its last line read
    quint64 m_logGeneration = 0;
    QTimer m_logPoll;
    Subscription *m_logFollow = nullptr;
    bool m_logFollowFailed = false; // poll instead
    std::function<qint64()> m_now;
};

} // namespace pando::desktop
