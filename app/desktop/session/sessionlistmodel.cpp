#include "sessionlistmodel.h"

#include <QDateTime>
#include <QLocale>

namespace pando::desktop {

SessionListModel::~SessionListModel() = default;

void SessionListModel::setSessionObject(QObject *session)
{
    setSession(sessionOf(session, this));
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

QString SessionListModel::momentText(qint64 ms)
{
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(ms);
    return at.date() == QDate::currentDate() ? QLocale().toString(at.time(), QLocale::ShortFormat)
                                             : QLocale().toString(at, QLocale::ShortFormat);
}

} // namespace pando::desktop
