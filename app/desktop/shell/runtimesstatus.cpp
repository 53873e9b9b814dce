#include "app/desktop/shell/runtimesstatus.h"

#include <QJsonArray>
#include <QStringList>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

QString runtimeName(const QString &kind)
{
    if (kind == u"docker"_s)
        return u"Docker"_s;
    if (kind == u"incus"_s)
        return u"Incus"_s;
    return kind;
}

} // namespace

RuntimesStatus::RuntimesStatus(QObject *parent) : QObject(parent)
{
    m_poll.setInterval(PollMs);
    connect(&m_poll, &QTimer::timeout, this, &RuntimesStatus::refresh);
}

void RuntimesStatus::setSession(Session *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    ++m_generation;
    m_poll.stop();
    set({}, {}, DisplayState::Neutral);
    if (!session)
        return;
    connect(session, &Session::stateChanged, this, [this](Session::State state) {
        if (state == Session::State::Connected) {
            refresh();
            m_poll.start();
        } else {
            m_poll.stop();
            set({}, {}, DisplayState::Neutral);
        }
    });
    if (session->state() == Session::State::Connected) {
        refresh();
        m_poll.start();
    }
}

void RuntimesStatus::refresh()
{
    if (!m_session)
        return;
    const quint64 generation = m_generation;
    QPointer<RuntimesStatus> self(this);
    m_session->capacity([self, generation](const Result<QJsonObject> &capacity) {
        if (self && self->m_generation == generation)
            self->apply(capacity);
    });
}

void RuntimesStatus::apply(const Result<QJsonObject> &capacity)
{
    if (!capacity) {
        set(tr("Runtimes: cannot tell"), capacity.error().text(), DisplayState::Neutral);
        return;
    }
    QStringList parts;
    QStringList why;
    bool allReachable = true;
    for (const QJsonValue value : capacity->value(u"runtimes"_s).toArray()) {
        const QJsonObject runtime = value.toObject();
        const QString name = runtimeName(runtime.value(u"kind"_s).toString());
        if (runtime.value(u"reachable"_s).toBool(true)) {
            parts << tr("%1 reachable").arg(name);
        } else {
            allReachable = false;
            parts << tr("%1 unreachable").arg(name);
            why << tr("%1: %2").arg(name, runtime.value(u"note"_s).toString());
        }
    }
    if (parts.isEmpty()) {
        set(tr("No runtime"), {}, DisplayState::Neutral);
        return;
    }
    set(parts.join(u" · "_s), why.join(u'\n'), allReachable ? DisplayState::Healthy : DisplayState::Failed);
}

void RuntimesStatus::set(const QString &text, const QString &detail, DisplayState::Value state)
{
    if (text == m_text && detail == m_detail && state == m_state)
        return;
    m_text = text;
    m_detail = detail;
    m_state = state;
    Q_EMIT changed();
}

} // namespace pando::desktop
