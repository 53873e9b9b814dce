#pragma once
// What deploy on push keeps in the state store: each app's webhook secret (sealed with the
// install's seal key under ("app-hook", app), never shown again after it was made), the
// deliveries forges made (their ids refuse replays; the newest are shown), and what polling
// found. Rows go with their app.
//
// Threading: a HookStore is a borrowed view over a Database and a SealBox, both safe to use from
// any thread; make one per call.

#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/pipelines/sealbox/sealbox.h"
#include "core/state/database.h"

#include <QList>
#include <QString>
#include <optional>

namespace pando::core::autodeploy {

inline constexpr qsizetype MinSecretChars = 16;
inline constexpr qsizetype MaxSecretChars = 256;
// How long a delivery id is remembered (refused when it comes again) and shown.
inline constexpr qint64 DeliveryRetentionMs = 30LL * 24 * 60 * 60 * 1000;
inline constexpr int MaxDeliveriesPerApp = 500;

// One delivery as the app's hook took it.
struct Delivery {
    QString app;
    QString id; // the forge's delivery id
    QString forge;
    QString event;
    QString ref;
    QString commit;
    QString pusher;
    qint64 receivedMs = 0;
    // accepted (being acted on), deployed (a deploy was queued: deployId), removed (a closed pull
    // request's preview was removed), ignored (detail says why: a branch the app does not follow,
    // a ping, auto-deploy off), failed (detail says why).
    QString outcome;
    QString detail;
    QString deployId;
};

struct HookInfo {
    bool hasSecret = false;
    QString createdBy; // who made or set the secret
    qint64 createdMs = 0;
};

struct PollState {
    qint64 polledMs = 0; // 0: never
    QString commit;      // what the followed ref pointed at
    QString error;       // why the last poll failed; empty when it did not
};

// A secret someone brings (GitLab's token, one already set on the forge): 16-256 visible ASCII
// characters. Invalid, where "secret", never showing it.
Status checkSecret(QByteArrayView secret);

class HookStore {
public:
    HookStore(Database &db, const pipelines::SealBox &seal, Clock &clock) : m_db(db), m_seal(seal), m_clock(clock) {}

    Result<HookInfo> info(const QString &app);
    // A new random secret (40 hex digits) replaces the app's; returned once.
    Result<QByteArray> newSecret(const QString &app, const QString &createdBy);
    // 40 hex digits from the system's random source (the caller wipes them).
    static QByteArray randomSecret();
    // Sets the app's secret to one the caller chose (checkSecret).
    Status setSecret(const QString &app, QByteArrayView secret, const QString &createdBy);
    // The app's secret, opened (the caller wipes it); nullopt when it has none.
    Result<std::optional<QByteArray>> secret(const QString &app);

    // Records a new delivery; Conflict, saying when the first came, for an id the app's hook
    // already took. Deliveries past DeliveryRetentionMs, and past the newest MaxDeliveriesPerApp
    // of the app, are dropped on the way.
    Status recordDelivery(const Delivery &delivery);
    // Sets what became of a recorded delivery.
    Status settleDelivery(const QString &app, const QString &id, const QString &outcome, const QString &detail,
                          const QString &deployId);
    // The app's newest deliveries first.
    Result<QList<Delivery>> deliveries(const QString &app, int limit);

    Result<PollState> pollState(const QString &app);
    Status recordPoll(const QString &app, const QString &commit, const QString &error);

private:
    Database &m_db;
    const pipelines::SealBox &m_seal;
    Clock &m_clock;
};

// The associated data a hook secret is sealed under: "app-hook", app.
QByteArray sealContext(const QString &app);

} // namespace pando::core::autodeploy
