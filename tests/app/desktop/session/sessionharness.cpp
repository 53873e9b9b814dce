#include "sessionharness.h"

#include <QDeadlineTimer>
#include <QTest>
#include <optional>

using namespace Qt::StringLiterals;

namespace pando::test {

namespace {

template<class T, class Callback> Result<T> await(const std::function<void(Callback)> &call)
{
    auto answer = std::make_shared<std::optional<Result<T>>>();
    call([answer](const Result<T> &result) { *answer = result; });
    QDeadlineTimer deadline(AnswerTimeoutMs);
    while (!answer->has_value() && !deadline.hasExpired())
        QTest::qWait(5);
    if (!answer->has_value())
        return fail(ErrorCode::Timeout, u"no answer within %1 ms"_s.arg(AnswerTimeoutMs));
    return **answer;
}

} // namespace

Result<QJsonObject> awaitObject(const std::function<void(desktop::Session::ObjectCallback)> &call)
{
    return await<QJsonObject>(call);
}

Result<QJsonArray> awaitList(const std::function<void(desktop::Session::ListCallback)> &call)
{
    return await<QJsonArray>(call);
}

Status awaitDone(const std::function<void(desktop::Session::DoneCallback)> &call)
{
    auto answer = std::make_shared<std::optional<Status>>();
    call([answer](const Status &result) { *answer = result; });
    QDeadlineTimer deadline(AnswerTimeoutMs);
    while (!answer->has_value() && !deadline.hasExpired())
        QTest::qWait(5);
    if (!answer->has_value())
        return fail(ErrorCode::Timeout, u"no answer within %1 ms"_s.arg(AnswerTimeoutMs));
    return **answer;
}

bool awaitConnected(desktop::Session &session, QString *why, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (session.state() != desktop::Session::State::Connected && !deadline.hasExpired()) {
        if (session.state() == desktop::Session::State::Failed)
            break;
        QTest::qWait(5);
    }
    if (session.state() == desktop::Session::State::Connected)
        return true;
    if (why)
        *why = session.failure().message.isEmpty() ? u"not connected within %1 ms"_s.arg(timeoutMs)
                                                   : describe(session.failure());
    return false;
}

EventLog::EventLog(desktop::Session &session) : QObject(&session)
{
    connect(&session, &desktop::Session::eventReceived, this, [this](const QJsonObject &event) { m_events << event; });
}

QJsonObject EventLog::waitFor(const QString &type, const QString &id, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        for (const QJsonObject &event : std::as_const(m_events)) {
            if (event.value(u"type"_s).toString() != type)
                continue;
            if (id.isEmpty() || event.value(u"deploy"_s).toString() == id ||
                event.value(u"data"_s).toObject().value(u"run"_s).toString() == id)
                return event;
        }
        if (deadline.hasExpired())
            return {};
        QTest::qWait(5);
    }
}

QStringList EventLog::types(const QString &deployId) const
{
    QStringList list;
    for (const QJsonObject &event : m_events)
        if (event.value(u"deploy"_s).toString() == deployId)
            list << event.value(u"type"_s).toString();
    return list;
}

QString describe(const Error &error)
{
    QString text = errorCodeName(error.code) + u" "_s + error.text();
    if (!error.hint.isEmpty())
        text += u" (hint: "_s + error.hint + u")"_s;
    return text;
}

} // namespace pando::test
