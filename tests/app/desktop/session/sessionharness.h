#pragma once
// Waiting for a Session's asynchronous answers in tests: each helper spins the event loop until
// the callback ran (or the time is up, which comes back as a Timeout error).

#include "app/desktop/session/session.h"

#include <QList>

namespace pando::test {

inline constexpr int AnswerTimeoutMs = 20000;

Result<QJsonObject> awaitObject(const std::function<void(desktop::Session::ObjectCallback)> &call);
Result<QJsonArray> awaitList(const std::function<void(desktop::Session::ListCallback)> &call);
Status awaitDone(const std::function<void(desktop::Session::DoneCallback)> &call);
// Waits until the session is Connected; false (with why) when it failed or timed out.
bool awaitConnected(desktop::Session &session, QString *why, int timeoutMs = 60000);

// Collects the session's event stream.
class EventLog : public QObject {
public:
    explicit EventLog(desktop::Session &session);
    // The first event of this type (and deploy id / run id in data.run, when given) seen so far
    // or arriving within timeoutMs; an empty object if none.
    QJsonObject waitFor(const QString &type, const QString &id = {}, int timeoutMs = AnswerTimeoutMs);
    QStringList types(const QString &deployId) const;

private:
    QList<QJsonObject> m_events;
};

// "where: message (hint)" for failure messages.
QString describe(const Error &error);

} // namespace pando::test
