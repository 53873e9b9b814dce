#pragma once
// KeyRing: the install's assertion signing keys (ES256), kept in one file in the data directory
// (mode 0600, written whole to a temporary file and renamed over the old one). The newest key
// signs; it is replaced once it is rotateAfterMs old, and the key it replaced stays published
// until every assertion it signed has expired, plus a margin for clocks and caches. Rotation is
// done when a key is asked for, by the clock the ring was given: no timer, and tests move time.
//
// Threading: every method may be called from any thread.

#include "adapters/api/jose/es256.h"
#include "core/common/clock.h"

#include <QList>
#include <QMutex>
#include <QString>

namespace pando::core::assertion {

struct KeyRingOptions {
    qint64 rotateAfterMs = 7LL * 24 * 60 * 60 * 1000; // a new signing key every 7 days
    qint64 assertionTtlMs = 60 * 1000;                // the longest an assertion lives
    qint64 marginMs = 5 * 60 * 1000;                  // kept past that for skewed clocks and caches
};

struct SigningKey {
    QString kid;          // the key's RFC 7638 thumbprint
    qint64 createdMs = 0; // when it started signing
    qint64 retiredMs = 0; // when its successor took over; 0 while it signs
    adapters::jose::EcKey key;
};

class KeyRing {
public:
    KeyRing(QString path, Clock &clock, KeyRingOptions options = {});

    // Reads the file, or makes it with a first key. Internal for a file that is not a key ring
    // (naming it): it is never replaced, so that a damaged file is looked at, not lost.
    Status open();
    // The key that signs now, rotated first when it is due.
    Result<SigningKey> signingKey();
    // Every key a verifier may still need, newest first (rotated and pruned first).
    Result<QList<SigningKey>> publishedKeys();
    // A new signing key now, whatever the age of the current one.
    Result<SigningKey> rotate();
    const KeyRingOptions &options() const { return m_options; }
    QString path() const { return m_path; }

private:
    Status rotateIfDue(bool force);
    Status save(const QList<SigningKey> &keys);

    QString m_path;
    Clock &m_clock;
    KeyRingOptions m_options;
    QMutex m_mutex;           // guards m_keys and the file
    QList<SigningKey> m_keys; // newest first
    bool m_open = false;
};

} // namespace pando::core::assertion
