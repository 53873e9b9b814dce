#include "eventfilter.h"

#include "engine.h"

#include <QDateTime>

namespace pando::core {

namespace {

constexpr qint64 RereadMs = 5000;
constexpr qint64 MissedLookupMs = 1000;

} // namespace

EventFilter::EventFilter(Engine &engine, accounts::Principal principal)
    : m_engine(engine), m_principal(std::move(principal))
{}

bool EventFilter::sees(const Event &event)
{
    if (event.type == EventType::TokenRevoked)
        return false;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const authz::Visibility &visible = !m_visible || now - m_readMs >= RereadMs ? read(now) : *m_visible;
    const authz::ObjectRef subject = m_engine.subjectOf(event);
    if (visible.sees(subject))
        return true;
    if (subject.kind == authz::ObjectKind::None || subject.name.isEmpty())
        return false;
    const QString key = subject.text();
    if (now - m_missedMs.value(key, 0) < MissedLookupMs)
        return false;
    m_missedMs.insert(key, now);
    return read(now).sees(subject);
}

const authz::Visibility &EventFilter::read(qint64 now)
{
    auto visible = m_engine.visibility(m_principal);
    m_readMs = now;
    if (m_missedMs.size() > 1000)
        m_missedMs.clear();
    return m_visible.emplace(visible ? *visible : authz::Visibility{});
}

} // namespace pando::core
