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

void SessionListModel::reloadWith(bool ask, const std::function<void(Session &, Session::ObjectCallback)> &read,
                                  const std::function<void(const QJsonObject &)> &show)
{
    const quint64 generation = ++m_generation;
    if (!m_session || !ask) {
        setLoading(false);
        return;
    }
    setLoading(true);
    QPointer<SessionListModel> self(this);
    read(*m_session, [self, generation, show](const Result<QJsonObject> &answer) {
        if (!self || generation != self->m_generation)
            return;
        self->m_loaded = true;
        self->setLoading(false);
        if (!answer) {
            self->setError(answer.error().text());
            return;
        }
        self->setError({});
        show(*answer);
    });
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
