#include "qml/logs/applogsource.h"

#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace pando::desktop {

AppLogSource::AppLogSource(QObject *parent) : LogSource(parent)
{
    // The follow sends one message per line: gather them so a busy app reaches the view as a
    // few insertions per frame, not one per line.
    m_model->setCoalesceInterval(30);
}

AppLogSource::~AppLogSource() = default;

void AppLogSource::setSessionObject(QObject *session)
{
    auto *typed = qobject_cast<Session *>(session);
    if (session && !typed)
        qWarning("AppLogSource: %s is not a pando::desktop::Session", session->metaObject()->className());
    setSession(typed);
}

void AppLogSource::setSession(Session *session)
{
    if (m_session == session)
        return;
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (m_session)
        connect(m_session, &Session::stateChanged, this, [this](Session::State state) {
            // Back after the link dropped: the follow ended with it, so start again.
            if (state == Session::State::Connected && !isLive())
                restart();
        });
    Q_EMIT sessionChanged();
    restart();
}

void AppLogSource::setApp(const QString &app)
{
    if (app == m_app)
        return;
    m_app = app;
    Q_EMIT appChanged();
    restart();
}

void AppLogSource::setTailLines(int lines)
{
    if (lines == m_tailLines)
        return;
    m_tailLines = lines;
    Q_EMIT tailLinesChanged();
}

void AppLogSource::stop()
{
    m_follow.reset();
    Q_EMIT stateChanged();
}

void AppLogSource::restart()
{
    stop();
    m_model->clear();
    setStatus({});
    if (!m_session || m_app.isEmpty() || m_session->state() != Session::State::Connected)
        return;
    // One stream: the last lines, then the live ones, nothing lost or repeated in between.
    m_follow.reset(m_session->followLogs(m_app, m_tailLines, nullptr));
    Subscription *follow = m_follow.get();
    connect(follow, &Subscription::opened, this, [this] { Q_EMIT stateChanged(); });
    connect(follow, &Subscription::received, this, &AppLogSource::onMessage);
    connect(follow, &Subscription::ended, this, [this, follow] {
        m_model->flush();
        setStatus(follow->result() ? tr("The log stream ended") : follow->result().error().text());
    });
}

void AppLogSource::appendLine(const QJsonObject &line)
{
    const qint64 ms = line.value(u"time_ms"_s).toInteger();
    const LogModel::Stream stream =
        line.value(u"stream"_s).toString() == u"stderr"_s ? LogModel::Stderr : LogModel::Stdout;
    QByteArray bytes = line.value(u"text"_s).toString().toUtf8();
    bytes.append('\n');
    m_model->appendData(bytes, stream, ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms) : QDateTime());
}

void AppLogSource::onMessage(const QJsonObject &message)
{
    if (message.contains(u"ended"_s)) {
        // The container stopped or changed; the server resumes with the next one.
        m_model->flush();
        setStatus(message.value(u"ended"_s).toString());
        return;
    }
    if (!m_status.isEmpty())
        setStatus({});
    appendLine(message);
}

} // namespace pando::desktop
