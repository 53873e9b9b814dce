#pragma once
// Package deploys (QML module Pando.Deploys): the Deploys tab of an app — its deploy history
// (DeploysModel) and the selected deploy's steps as a timeline (DeployStepsModel), both kept live
// from the session's deploy.* events. A failed deploy's reason and hint are split here so the view
// shows them in one line; the QML only binds.
//
// Threading: GUI-thread models, like their Session; they never block.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// A deploy's or a deploy step's status as the Deploys tab words it ("in progress", "cancelled");
// its state is the shared vocabulary's (DisplayState::ofDeploy, DisplayState::ofDeployStep).
QString deployStatusWord(const QString &status, DisplayState::Value state);
// Splits the engine's "reason (hint: what to do)" into its two parts.
std::pair<QString, QString> splitHint(const QString &error);

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class DeploysModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The selected deploy's id; empty when nothing is selected.
    Q_PROPERTY(QString selectedId READ selectedId NOTIFY selectedChanged)
    // The commit the selected deploy ran; empty when it never got that far.
    Q_PROPERTY(QString selectedCommit READ selectedCommit NOTIFY selectedChanged)
    // Whether the selected deploy has not ended (queued, running, waiting for approval): it can be
    // cancelled.
    Q_PROPERTY(bool selectedCancellable READ selectedCancellable NOTIFY selectedChanged)
    // Why the last redeploy or cancel was refused; empty when it was not.
    Q_PROPERTY(QString actionError READ actionError NOTIFY actionErrorChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        StatusRole,     // the API's word
        StateRole,      // DisplayState::Value
        StatusTextRole, // translated word
        RefRole,
        CommitRole,
        ActorRole,
        CreatedMsRole,
        DurationMsRole,
        FailedStepRole,
        ErrorRole,  // the engine's error as sent
        ReasonRole, // the error without its hint
        HintRole,   // what to do next; empty when the engine has no hint
        WhenTextRole,
    };
    Q_ENUM(Role)

    explicit DeploysModel(QObject *parent = nullptr);
    ~DeploysModel() override;

    QString app() const { return m_app; }
    void setApp(const QString &app);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString selectedId() const;
    QString selectedCommit() const;
    bool selectedCancellable() const;
    int rowOf(const QString &id) const;

    // Reloads the history (newest first); the selection stays on the same deploy.
    Q_INVOKABLE void refresh() override;
    // Deploys the commit of the deploy in this row again (a rollback to a known version); the new
    // deploy is selected once it is listed.
    Q_INVOKABLE void redeploy(int row);
    // Cancels the deploy in this row; the version serving stays. Its row says "cancelled" when the
    // engine has ended it.
    Q_INVOKABLE void cancel(int row);
    QString actionError() const { return m_actionError; }

Q_SIGNALS:
    void appChanged();
    void actionErrorChanged();

private:
    void onEvent(const QJsonObject &event) override;
    void apply(const QJsonArray &deploys);
    void setActionError(const QString &error);

    QString m_app;
    QList<QJsonObject> m_rows;
    QString m_actionError;
    QString m_selectNext; // a deploy asked for here, to select when it appears
};

} // namespace pando::desktop
