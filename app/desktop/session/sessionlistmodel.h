#pragma once
// A list model that shows what one Session answers: the binding every view model of the desktop
// shares. It holds the session (as a QObject for QML, which needs no session type), forwards the
// session's events and connection changes to the model, reloads when the session connects, and
// keeps a generation counter so answers meant for a replaced session, or an older reload, are
// dropped.
//
// Threading: GUI-thread models, like their Session; nothing here blocks.

#include "app/desktop/session/session.h"

#include <QAbstractListModel>
#include <QJsonObject>
#include <QPointer>

namespace pando::desktop {

class SessionListModel : public QAbstractListModel {
    Q_OBJECT
    // The Session to show (a pando::desktop::Session; QObject here so QML needs no session type).
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    using QAbstractListModel::QAbstractListModel;
    ~SessionListModel() override;

    Session *session() const { return m_session; }
    void setSession(Session *session);
    QObject *sessionObject() const { return m_session; }
    // Warns, and shows no session, for an object that is not a Session.
    void setSessionObject(QObject *session);

    // Reloads the rows from the session.
    Q_INVOKABLE virtual void refresh() = 0;

    // A moment as the lists show it: the time of day when it is today, else the date and time.
    static QString momentText(qint64 ms);

    // A reload is under way; loaded: one has answered since the session was set.
    bool isLoading() const { return m_loading; }
    bool isLoaded() const { return m_loaded; }
    // Why the last reload (or action) failed; empty when it did not.
    QString error() const { return m_error; }

    // The selected row; -1 when none. A row out of range selects none.
    int selectedRow() const { return m_selected; }
    void setSelectedRow(int row);

Q_SIGNALS:
    void sessionChanged();
    void countChanged();
    void loadingChanged();
    void errorChanged();
    void selectedChanged();

protected:
    // One event of the session's live stream.
    virtual void onEvent(const QJsonObject &event) = 0;
    // The session's connection changed; by default the model reloads once it is connected.
    virtual void onSessionState(Session::State state);
    // The session was replaced: drop what the old one showed. Runs before sessionChanged().
    virtual void sessionReplaced() {}

    // One reload through the session: read asks it (given the session and where to answer),
    // show gets a good answer; a failure is said in error(). Answers for an older reload or a
    // replaced session are dropped; without a session, or while the model has nothing to ask
    // about (ask false: no app chosen), nothing is asked.
    void reloadWith(bool ask, const std::function<void(Session &, Session::ObjectCallback)> &read,
                    const std::function<void(const QJsonObject &)> &show);
    // Both say so only when they change.
    void setLoading(bool loading);
    void setError(const QString &error);
    // The selection moved to m_selected (a model fetching the selected row's detail does it
    // here); selectedChanged() follows.
    virtual void selectionMoved() {}
    // Removes one row of the model's list, the selection staying on the row it was on (none when
    // that row goes). The caller says countChanged()/selectedChanged() when it is done.
    template<typename Row> void removeListRow(QList<Row> &rows, int row)
    {
        beginRemoveRows({}, row, row);
        rows.removeAt(row);
        endRemoveRows();
        if (m_selected == row)
            m_selected = -1;
        else if (m_selected > row)
            --m_selected;
    }

    QPointer<Session> m_session;
    quint64 m_generation = 0; // answers for an older session or reload are dropped
    int m_selected = -1;
    bool m_loaded = false;

private:
    bool m_loading = false;
    QString m_error;
};

} // namespace pando::desktop
