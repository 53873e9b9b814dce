#pragma once

#include "core/accounts/accounts.h"
#include "core/authz/authz.h"
#include "core/events/eventbus.h"

#include <QHash>
#include <optional>

namespace pando::core {

class Engine;

// Which of the install's events one watcher may see: those about the apps and pipelines its
// grants and role let it read, never which tokens were revoked (that is for the server). The
// grants are read on the first event, again every few seconds (a grant taken away), and when an
// event about an object it does not see comes (a grant just given, an app it just created) unless
// that object was looked up in the last second. A store that cannot be read shows nothing.
class EventFilter {
public:
    EventFilter(Engine &engine, accounts::Principal principal);
    bool sees(const Event &event);

private:
    const authz::Visibility &read(qint64 now);

    Engine &m_engine;
    accounts::Principal m_principal;
    std::optional<authz::Visibility> m_visible;
    qint64 m_readMs = 0;
    QHash<QString, qint64> m_missedMs; // object → when it was last looked up, not seen
};

} // namespace pando::core
