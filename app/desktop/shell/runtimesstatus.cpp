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
    m_runtimes = m_edge = {};
    show();
    applyAssertionKeys(QJsonObject{});
    if (!session)
        return;
    connect(session, &Session::stateChanged, this, [this](Session::State state) {
        if (state == Session::State::Connected) {
            refresh();
            m_poll.start();
        } else {
            m_poll.stop();
            m_runtimes = m_edge = {};
            show();
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
    m_session->edge([self, generation](const Result<QJsonObject> &edge) {
        if (self && self->m_generation == generation)
            self->applyEdge(edge);
    });
    m_session->assertionKeys([self, generation](const Result<QJsonObject> &jwks) {
        if (self && self->m_generation == generation)
            self->applyAssertionKeys(jwks);
    });
}

void RuntimesStatus::apply(const Result<QJsonObject> &capacity)
{
    if (!capacity) {
        m_runtimes = {tr("Runtimes: cannot tell"), capacity.error().text(), DisplayState::Neutral};
        return show();
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
    if (parts.isEmpty())
        m_runtimes = {tr("No runtime"), {}, DisplayState::Neutral};
    else
        m_runtimes = {parts.join(u" · "_s), why.join(u'\n'),
                      allReachable ? DisplayState::Healthy : DisplayState::Failed};
    show();
}

void RuntimesStatus::applyEdge(const Result<QJsonObject> &edge)
{
    if (!edge) {
        // An install older than the edge route says nothing about it: nothing to show.
        m_edge = edge.error().code == ErrorCode::NotFound
                     ? Part{}
                     : Part{tr("Edge: cannot tell"), edge.error().text(), DisplayState::Neutral};
        return show();
    }
    const QString problem = edge->value(u"problem"_s).toString();
    if (!edge->value(u"running"_s).toBool())
        m_edge = {tr("Edge down"), problem, DisplayState::Failed};
    else if (edge->value(u"kind"_s).toString() == u"in-process"_s)
        m_edge = {tr("Apps served by Pando"),
                  problem.isEmpty() ? tr("Apps stop answering while Pando is stopped; with Caddy installed they "
                                         "would not (see the user guide, The edge).")
                                    : problem,
                  DisplayState::Healthy};
    else
        m_edge = {tr("Edge serving"), problem, DisplayState::Healthy};
    // A name whose certificate the edge could not get does not answer over HTTPS: said here, with
    // each name and why on hover.
    QStringList failing;
    for (const QJsonValue v : edge->value(u"certificates"_s).toArray())
        if (const QJsonObject c = v.toObject(); !c.value(u"error"_s).toString().isEmpty())
            failing << tr("%1: %2").arg(c.value(u"host"_s).toString(), c.value(u"error"_s).toString());
    if (!failing.isEmpty()) {
        m_edge.text = tr("%1 · failing certificates: %n", nullptr, int(failing.size())).arg(m_edge.text);
        m_edge.detail = (QStringList(m_edge.detail) + failing).join(u'\n').trimmed();
        m_edge.state = DisplayState::Failed;
    }
    show();
}

void RuntimesStatus::applyAssertionKeys(const Result<QJsonObject> &jwks)
{
    QString text;
    if (!jwks) {
        // An install older than identity assertions has no keys to show.
        if (jwks.error().code != ErrorCode::NotFound)
            text = tr("cannot tell: %1").arg(jwks.error().text());
    } else if (jwks->contains(u"keys"_s)) {
        QStringList kids;
        for (const QJsonValue key : jwks->value(u"keys"_s).toArray())
            kids << key.toObject().value(u"kid"_s).toString();
        text = tr("%n signing keys, newest first: %1", nullptr, int(kids.size())).arg(kids.join(u", "_s));
    }
    if (text == m_assertionKeysText)
        return;
    m_assertionKeysText = text;
    Q_EMIT assertionKeysChanged();
}

void RuntimesStatus::show()
{
    QStringList text;
    QStringList detail;
    bool failed = false;
    bool allHealthy = true;
    for (const Part *part : {&m_runtimes, &m_edge}) {
        if (part->text.isEmpty())
            continue;
        text << part->text;
        if (!part->detail.isEmpty())
            detail << part->detail;
        failed = failed || part->state == DisplayState::Failed;
        allHealthy = allHealthy && part->state == DisplayState::Healthy;
    }
    const DisplayState::Value state = failed                          ? DisplayState::Failed
                                      : allHealthy && !text.isEmpty() ? DisplayState::Healthy
                                                                      : DisplayState::Neutral;
    const QString joined = text.join(u" · "_s);
    const QString why = detail.join(u'\n');
    if (joined == m_text && why == m_detail && state == m_state)
        return;
    m_text = joined;
    m_detail = why;
    m_state = state;
    Q_EMIT changed();
}

} // namespace pando::desktop
