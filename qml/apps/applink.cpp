#include "applink.h"

#include <QDesktopServices>

using namespace Qt::StringLiterals;

namespace pando::desktop {

AppLink::AppLink(QObject *parent) : QObject(parent)
{}

void AppLink::setSessionObject(QObject *session)
{
    setSession(sessionOf(session, this));
}

void AppLink::setSession(Session *session)
{
    if (m_session == session)
        return;
    m_session = session;
    forget();
    Q_EMIT sessionChanged();
}

void AppLink::setApp(const QString &app)
{
    if (m_app == app)
        return;
    m_app = app;
    forget();
    Q_EMIT appChanged();
}

void AppLink::setUrl(const QString &url)
{
    if (m_url == url)
        return;
    m_url = url;
    Q_EMIT urlChanged();
    Q_EMIT textChanged();
}

void AppLink::forget()
{
    ++m_generation;
    m_openedUrl.clear();
    m_error.clear();
    m_opening = false;
    Q_EMIT openingChanged();
    Q_EMIT textChanged();
}

QString AppLink::through() const
{
    return m_session ? m_session->linksThrough() : QString();
}

QString AppLink::text() const
{
    if (m_url.isEmpty())
        return tr("not routed yet");
    if (!isForwarded())
        return m_url;
    // The app's own URL names the other machine's loopback: what is shown is where it opens here.
    if (m_openedUrl.isEmpty())
        return tr("Open through %1").arg(through());
    return tr("%1 through %2").arg(m_openedUrl, through());
}

QString AppLink::toolTip() const
{
    if (m_url.isEmpty())
        return tr("The app is reached once it was deployed");
    if (!isForwarded())
        return tr("Open %1 in the browser").arg(m_url);
    return tr("Opens the app on this computer through a tunnel to %1, over the connection's TLS; on that "
              "machine it answers at %2")
        .arg(through(), m_url);
}

void AppLink::open()
{
    if (!m_session || m_app.isEmpty() || m_url.isEmpty() || m_opening)
        return;
    m_opening = true;
    m_error.clear();
    Q_EMIT openingChanged();
    const quint64 generation = m_generation;
    QPointer<AppLink> self(this);
    m_session->appLink(m_app, [self, generation](const Result<QJsonObject> &link) {
        if (!self || self->m_generation != generation)
            return;
        self->m_opening = false;
        if (!link) {
            const Error &error = link.error();
            self->m_error = error.hint.isEmpty() ? error.message : tr("%1 (%2)").arg(error.message, error.hint);
            Q_EMIT self->openingChanged();
            return;
        }
        const QUrl url(link->value(u"url"_s).toString());
        self->m_openedUrl = url.toString();
        Q_EMIT self->openingChanged();
        Q_EMIT self->textChanged();
        QDesktopServices::openUrl(url);
        Q_EMIT self->opened(url);
    });
}

} // namespace pando::desktop
