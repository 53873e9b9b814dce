#pragma once
// Package activity (QML module Pando.Activity): the Activity view — what happened on the install
// while the desktop watched, newest first: deploys, runs, approvals, apps and pipelines, one line
// each with its state in the shared vocabulary, from the session's live event stream. Step-level
// events (deploy.step, run.event) stay in their own views.
//
// Threading: GUI-thread model, like its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QtQml/qqmlregistration.h>
#include <deque>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class ActivityModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Role {
        TimeMsRole = Qt::UserRole + 1,
        TimeTextRole, // the time of day, or the date and time for an older entry
        KindRole,     // deploy, run, approval, app, pipeline
        StateRole,    // DisplayState::Value
        TitleRole,    // "hello: deploy succeeded", translated
        DetailRole,   // the reason, the job, the ref: what the line needs to be understood
        AppRole,      // the app it is about; empty for runs and pipelines
        TargetRole,   // the deploy, run or approval id, for the view to open it
    };
    Q_ENUM(Role)

    // The oldest lines go beyond this many.
    static constexpr int Limit = 1000;

    explicit ActivityModel(QObject *parent = nullptr);
    ~ActivityModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // The feed is what happened while it watched: there is nothing to reload.
    Q_INVOKABLE void refresh() override {}
    Q_INVOKABLE void clear();

private:
    struct Entry {
        qint64 timeMs = 0;
        QString kind;
        DisplayState::Value state = DisplayState::Neutral;
        QString title;
        QString detail;
        QString app;
        QString target;
    };
    void onEvent(const QJsonObject &event) override;
    void onSessionState(Session::State) override {}
    void sessionReplaced() override { clear(); }
    static std::optional<Entry> describe(const QJsonObject &event);

    std::deque<Entry> m_entries; // newest first
};

} // namespace pando::desktop
