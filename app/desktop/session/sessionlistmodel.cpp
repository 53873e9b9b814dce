#include "sessionlistmodel.h"

namespace pando::desktop {

SessionListModel::~SessionListModel() = default;

void SessionListModel::setSessionObject(QObject *session)
{
    auto *typed = qobject_cast<Session *>(session);
    if (session && !typed)
        qWarning("%s: %s is not a pando::desktop::Session", metaObject()->className(),
                 session->metaObject()->className());
    setSession(typed);
}

void SessionListModel::setSession(Session *session)
{
    if (m_session == session)
        return;
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    ++m_generation; // a reload in flight for the old session will not answer here
    setLoading(false);
    setError({});
    if (m_session) {
        connect(m_session, &Session::eventReceived, this, &SessionListModel::onEvent);
        connect(m_session, &Session::stateChanged, this, &SessionListModel::onSessionState);
    }
    sessionReplaced();
    Q_EMIT sessionChanged();
    if (m_session && m_session->state() == Session::State::Connected)
        refresh();
}

void SessionListModel::setSelectedRow(int row)
{
    if (row < -1 || row >= rowCount())
        row = -1;
    if (row == m_selected)
        return;
    m_selected = row;
    selectionMoved();
    Q_EMIT selectedChanged();
}

void SessionListModel::setLoading(bool loading)
{
    if (loading == m_loading)
        return;
    m_loading = loading;
    Q_EMIT loadingChanged();
}

void SessionListModel::setError(const QString &error)
{
    if (error == m_error)
        return;
    m_error = error;
    Q_EMIT errorChanged();
}

void SessionListModel::onSessionState(Session::State state)
{
    if (state == Session::State::Connected)
        refresh();
}

} // namespace pando::desktop
