#pragma once
// Package approval: sign-off for work the host policy holds back — a deploy stopped at its plan
// boundary, or a pipeline's approve step. A request is settled once (approved, rejected, or
// expired through the clock seam); an approval is used once by the work it unblocks. Requesters
// cannot approve their own requests. Every change goes on the event bus and into the audit log.
//
// Threading: every method may be called from any thread. Settling is a conditional UPDATE
// (WHERE status = 'pending'), so of two approvers racing exactly one wins.

#include "adapters/api/error.h"
#include "core/accounts/accounts.h"
#include "core/audit/auditlog.h"
#include "core/common/clock.h"
#include "core/events/eventbus.h"
#include "core/state/database.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace pando::core {

namespace approval {
inline constexpr QLatin1String KindDeploy{"deploy"};
inline constexpr QLatin1String KindPipelineStep{"pipeline-step"};

inline constexpr QLatin1String Pending{"pending"};
inline constexpr QLatin1String Approved{"approved"};
inline constexpr QLatin1String Rejected{"rejected"};
inline constexpr QLatin1String Expired{"expired"};
inline constexpr QLatin1String Used{"used"};

bool isKnownKind(const QString &kind);
bool isKnownStatus(const QString &status);

// The person an actor name stands for: "user:alice/token:t12" and "user:alice" are both
// "user:alice", so a person cannot approve their own request through one of their tokens.
QString personOf(const QString &actorName);
// An approvers entry: a username ("alice") or a role and every role above it ("role:operator").
// Errors: Invalid naming the entry.
Status validateApprover(const QString &entry);
} // namespace approval

// Who settles a request: the actor for the audit line, and the install role the approvers list
// is checked against (nullopt for automation, which only matches a list that names it).
struct Approver {
    Approver(Actor who, std::optional<accounts::Role> installRole = std::nullopt) // NOLINT: an Actor is an Approver
        : actor(std::move(who)), role(installRole)
    {}
    Actor actor;
    std::optional<accounts::Role> role;
};

struct ApprovalRecord {
    QString id;            // "a" + 16 hex digits
    QString kind;          // approval::KindDeploy, approval::KindPipelineStep
    QString object;        // what waits: "app/hello", "run/r0123…/step/ship"
    QString requester;     // the Actor name that asked
    QString summary;       // one or a few lines for people: why sign-off is needed
    QString planJson;      // the plan shown to approvers (JSON), as the requester made it
    QStringList approvers; // who may approve: usernames and "role:<role>"; empty: any other person
    QString status;        // pending, approved, rejected, expired, used
    QString decidedBy;     // the approver, or "system:approval" for expiry
    QString reason;
    qint64 createdMs = 0;
    qint64 expiresMs = 0; // 0: never expires
    qint64 decidedMs = 0;

    QJsonObject toJson() const;
};

class ApprovalService {
public:
    // The longest reason an approver may give.
    static constexpr int MaxReasonLength = 2000;

    // The bus may be null (no one listening). The clock decides expiry.
    ApprovalService(Database &db, AuditLog &audit, EventBus *bus, Clock &clock = SystemClock::instance())
        : m_db(db), m_audit(audit), m_bus(bus), m_clock(clock)
    {}

    // A pending request. ttlMs 0: until settled by a person. Errors: Invalid for an unknown kind,
    // an empty object or requester, a plan that is not JSON, a negative ttl, a bad approvers entry.
    Result<ApprovalRecord> request(const QString &kind, const QString &object, const Actor &requester,
                                   const QString &summary, const QString &planJson, qint64 ttlMs,
                                   const QStringList &approvers = {});
    // Errors: Invalid for a reason over MaxReasonLength (where "reason"); NotFound; Forbidden when
    // the approver asked for it or is not on its approvers list;
    // Conflict when it is no longer pending (settled by someone else, or past its expiry — which
    // settles it as expired).
    Result<ApprovalRecord> approve(const QString &id, const Approver &approver, const QString &reason);
    // The requester may reject (withdraw) their own request; anyone else must be on the approvers
    // list. Errors as approve().
    Result<ApprovalRecord> reject(const QString &id, const Approver &approver, const QString &reason);
    // May this approver settle the record? Forbidden says why not.
    static Status maySettle(const ApprovalRecord &record, const Approver &approver, bool approve);
    // Settles every pending request past its expiry; returns those it settled.
    Result<QList<ApprovalRecord>> expire();
    // Marks an approved request used; what the waiting work calls when it resumes. Errors:
    // NotFound; Conflict when it is not approved (pending, rejected, expired, or used already).
    Result<ApprovalRecord> consume(const QString &id, const Actor &actor = Actor::system(QStringLiteral("deploy")));

    Result<std::optional<ApprovalRecord>> find(const QString &id);
    // Newest first, from the offset-th; status empty for all. Errors: Invalid for an unknown
    // status.
    Result<QList<ApprovalRecord>> list(const QString &status = {}, int limit = 100, int offset = 0);

private:
    Result<ApprovalRecord> settle(const QString &id, const Approver &approver, const QString &reason, bool approve);
    Result<ApprovalRecord> mustFind(const QString &id);
    // Why a conditional update touched no row, as an error; expires the row when that is why.
    Error notPending(const ApprovalRecord &record, const QString &action);
    // Audits a new or settled record and tells the bus. Without its line, a settled row is put
    // back as before was (record becomes *before) and the audit's error returned; a new one
    // (before null) is the caller's to take back.
    Status announce(ApprovalRecord &record, const Actor &actor, const QString &action, EventType event,
                    const ApprovalRecord *before);
    // Puts a settled row back as it was before, unless it changed since (Conflict).
    Status unsettle(const ApprovalRecord &before, const QString &settledAs);
    void auditRefusal(const Actor &actor, const QString &action, const QString &id, const QString &outcome,
                      const Error &error);

    Database &m_db;
    AuditLog &m_audit;
    EventBus *m_bus = nullptr;
    Clock &m_clock;
};

} // namespace pando::core
