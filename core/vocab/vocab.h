#pragma once
// Package vocab: the words Pando's states and events are known by, one table per concept. Each
// enum below is the only place its wire and storage strings live: the SQLite columns, the API's
// JSON and the event bus all get their text through toString() and read it back through the
// parse function, so core compares enum values, never strings. docs/api/openapi.yaml lists the
// same words; tests/core/vocab checks that both say the same.
//
// A table is one X-macro list, X(Enumerator, "wire string"), from which the enum, toString()
// and parse are all generated: adding a value is one line, and the enum and its strings cannot
// drift. Plain values; safe from any thread.

#include <QLatin1StringView>
#include <QString>
#include <QStringView>
#include <array>
#include <cstddef>
#include <optional>

// A deploy: queued → running → succeeded | failed | cancelled; awaiting-approval while the host
// policy's sign-off is pending, then queued again or rejected.
#define PANDO_VOCAB_DEPLOY_STATUS(X)                                                                                   \
    X(Queued, "queued")                                                                                                \
    X(Running, "running")                                                                                              \
    X(AwaitingApproval, "awaiting-approval")                                                                           \
    X(Succeeded, "succeeded")                                                                                          \
    X(Failed, "failed")                                                                                                \
    X(Cancelled, "cancelled")                                                                                          \
    X(Rejected, "rejected")

// An app as the API shows it: derived from its last deploy and its container (never stored);
// unhealthy while its container runs but its health probe has failed (core/health).
#define PANDO_VOCAB_APP_STATUS(X)                                                                                      \
    X(New, "new")                                                                                                      \
    X(Deploying, "deploying")                                                                                          \
    X(AwaitingApproval, "awaiting-approval")                                                                           \
    X(Running, "running")                                                                                              \
    X(Unhealthy, "unhealthy")                                                                                          \
    X(Failed, "failed")                                                                                                \
    X(Stopped, "stopped")                                                                                              \
    X(Removing, "removing")                                                                                            \
    X(Unknown, "unknown")

// A deploy's step: running → succeeded | failed | skipped; the approval step is waiting while
// its sign-off is pending.
#define PANDO_VOCAB_DEPLOY_STEP_STATUS(X)                                                                              \
    X(Running, "running")                                                                                              \
    X(Waiting, "waiting")                                                                                              \
    X(Succeeded, "succeeded")                                                                                          \
    X(Failed, "failed")                                                                                                \
    X(Skipped, "skipped")

// A pipeline run: queued → running → succeeded | failed | errored | aborted.
#define PANDO_VOCAB_RUN_STATUS(X)                                                                                      \
    X(Queued, "queued")                                                                                                \
    X(Running, "running")                                                                                              \
    X(Succeeded, "succeeded")                                                                                          \
    X(Failed, "failed")                                                                                                \
    X(Errored, "errored")                                                                                              \
    X(Aborted, "aborted")

// A run's step: pending → running → succeeded | failed | errored | aborted; or skipped (not run
// because an earlier step ended the plan) and cached (unchanged since a run that succeeded). An
// approve step is waiting while its request is pending.
#define PANDO_VOCAB_RUN_STEP_STATUS(X)                                                                                 \
    X(Pending, "pending")                                                                                              \
    X(Running, "running")                                                                                              \
    X(Waiting, "waiting")                                                                                              \
    X(Succeeded, "succeeded")                                                                                          \
    X(Failed, "failed")                                                                                                \
    X(Errored, "errored")                                                                                              \
    X(Aborted, "aborted")                                                                                              \
    X(Skipped, "skipped")                                                                                              \
    X(Cached, "cached")

// What the event bus carries and GET /api/v1/events sends.
#define PANDO_VOCAB_EVENT_TYPE(X)                                                                                      \
    X(AppCreated, "app.created")                                                                                       \
    X(AppUpdated, "app.updated")                                                                                       \
    X(AppRemoved, "app.removed")                                                                                       \
    X(AppStarted, "app.started")                                                                                       \
    X(AppStopped, "app.stopped")                                                                                       \
    X(AppRestarted, "app.restarted")                                                                                   \
    X(AppUnhealthy, "app.unhealthy")                                                                                   \
    X(AppHealthy, "app.healthy")                                                                                       \
    X(AppDiskExceeded, "app.disk.exceeded")                                                                            \
    X(AppSecretsChanged, "app.secrets.changed")                                                                        \
    X(AppHookDelivered, "app.hook.delivered")                                                                          \
    X(DeployQueued, "deploy.queued")                                                                                   \
    X(DeployStarted, "deploy.started")                                                                                 \
    X(DeployAwaitingApproval, "deploy.awaiting-approval")                                                              \
    X(DeployStep, "deploy.step")                                                                                       \
    X(DeploySucceeded, "deploy.succeeded")                                                                             \
    X(DeployFailed, "deploy.failed")                                                                                   \
    X(ContainerRemoved, "container.removed")                                                                           \
    X(ServiceRemoved, "service.removed")                                                                               \
    X(ApprovalRequested, "approval.requested")                                                                         \
    X(ApprovalApproved, "approval.approved")                                                                           \
    X(ApprovalRejected, "approval.rejected")                                                                           \
    X(ApprovalExpired, "approval.expired")                                                                             \
    X(RunQueued, "run.queued")                                                                                         \
    X(RunStarted, "run.started")                                                                                       \
    X(RunEvent, "run.event")                                                                                           \
    X(RunFinished, "run.finished")                                                                                     \
    X(PipelinePaused, "pipeline.paused")                                                                               \
    X(TokenRevoked, "token.revoked")

namespace pando::core {

// The enums live in their own namespace so that QtTest's QCOMPARE, which looks up toString()
// by argument-dependent lookup and wants a char *, does not find the QString ones below
// (tests/support/vocabtesting.h prints them for QtTest).
namespace vocab {

// The table of E, specialised for each concept: entries[i] is {E(i), its string}.
template<typename E> struct Table;

template<typename E> struct Entry {
    E value;
    QLatin1StringView text;
};

#define PANDO_VOCAB_ENUMERATOR(name, text) name,
#define PANDO_VOCAB_ENTRY(name, text) Entry<E>{E::name, QLatin1StringView(text, sizeof(text) - 1)},
#define PANDO_VOCAB_DECLARE(Type, LIST)                                                                                \
    enum class Type : unsigned char { LIST(PANDO_VOCAB_ENUMERATOR) };                                                  \
    template<> struct Table<Type> {                                                                                    \
        using E = Type;                                                                                                \
        static constexpr auto entries = std::to_array({LIST(PANDO_VOCAB_ENTRY)});                                      \
    };

PANDO_VOCAB_DECLARE(DeployStatus, PANDO_VOCAB_DEPLOY_STATUS)
PANDO_VOCAB_DECLARE(AppStatus, PANDO_VOCAB_APP_STATUS)
PANDO_VOCAB_DECLARE(DeployStepStatus, PANDO_VOCAB_DEPLOY_STEP_STATUS)
PANDO_VOCAB_DECLARE(RunStatus, PANDO_VOCAB_RUN_STATUS)
PANDO_VOCAB_DECLARE(RunStepStatus, PANDO_VOCAB_RUN_STEP_STATUS)
PANDO_VOCAB_DECLARE(EventType, PANDO_VOCAB_EVENT_TYPE)

#undef PANDO_VOCAB_DECLARE
#undef PANDO_VOCAB_ENTRY
#undef PANDO_VOCAB_ENUMERATOR

// Every value of E, in the table's order.
template<typename E> constexpr std::array<E, Table<E>::entries.size()> values()
{
    std::array<E, Table<E>::entries.size()> out{};
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = Table<E>::entries[i].value;
    return out;
}

template<typename E> constexpr bool inOrder()
{
    for (std::size_t i = 0; i < Table<E>::entries.size(); ++i) {
        if (static_cast<std::size_t>(Table<E>::entries[i].value) != i)
            return false;
    }
    return true;
}
static_assert(inOrder<DeployStatus>() && inOrder<AppStatus>() && inOrder<DeployStepStatus>() && inOrder<RunStatus>() &&
              inOrder<RunStepStatus>() && inOrder<EventType>());

// The wire string of value, without a copy.
template<typename E> constexpr QLatin1StringView text(E value)
{
    return Table<E>::entries[static_cast<std::size_t>(value)].text;
}

// The value whose wire string is exactly text; nullopt for anything else (case matters).
template<typename E> std::optional<E> parse(QStringView s)
{
    for (const Entry<E> &entry : Table<E>::entries) {
        if (s == entry.text)
            return entry.value;
    }
    return std::nullopt;
}

} // namespace vocab

using vocab::AppStatus;
using vocab::DeployStatus;
using vocab::DeployStepStatus;
using vocab::EventType;
using vocab::RunStatus;
using vocab::RunStepStatus;

// What an event is about, from its table string's first part: an approval's change (requested,
// approved, rejected, expired), a deploy's, a run's, a pipeline's.
inline bool isApprovalEvent(EventType type)
{
    return vocab::text(type).startsWith(QLatin1StringView("approval."));
}
inline bool isDeployEvent(EventType type)
{
    return vocab::text(type).startsWith(QLatin1StringView("deploy."));
}
inline bool isRunEvent(EventType type)
{
    return vocab::text(type).startsWith(QLatin1StringView("run."));
}
inline bool isPipelineEvent(EventType type)
{
    return vocab::text(type).startsWith(QLatin1StringView("pipeline."));
}

// Whether a deploy has ended: nothing about it changes any more (one awaiting approval has not).
constexpr bool isFinished(DeployStatus status)
{
    return status == DeployStatus::Succeeded || status == DeployStatus::Failed || status == DeployStatus::Cancelled ||
           status == DeployStatus::Rejected;
}

// Whether a run has ended: nothing about it changes any more.
constexpr bool isFinished(RunStatus status)
{
    return status != RunStatus::Queued && status != RunStatus::Running;
}

// The exact string the API, the database and the bus use for each value.
inline QString toString(DeployStatus v)
{
    return QString(vocab::text(v));
}
inline QString toString(AppStatus v)
{
    return QString(vocab::text(v));
}
inline QString toString(DeployStepStatus v)
{
    return QString(vocab::text(v));
}
inline QString toString(RunStatus v)
{
    return QString(vocab::text(v));
}
inline QString toString(RunStepStatus v)
{
    return QString(vocab::text(v));
}
inline QString toString(EventType v)
{
    return QString(vocab::text(v));
}

// The value a wire string names; nullopt for an unknown string, which callers report as an
// error: a string Pando did not write is never taken for some other state.
inline std::optional<DeployStatus> parseDeployStatus(QStringView s)
{
    return vocab::parse<DeployStatus>(s);
}
inline std::optional<AppStatus> parseAppStatus(QStringView s)
{
    return vocab::parse<AppStatus>(s);
}
inline std::optional<DeployStepStatus> parseDeployStepStatus(QStringView s)
{
    return vocab::parse<DeployStepStatus>(s);
}
inline std::optional<RunStatus> parseRunStatus(QStringView s)
{
    return vocab::parse<RunStatus>(s);
}
inline std::optional<RunStepStatus> parseRunStepStatus(QStringView s)
{
    return vocab::parse<RunStepStatus>(s);
}
inline std::optional<EventType> parseEventType(QStringView s)
{
    return vocab::parse<EventType>(s);
}

} // namespace pando::core
