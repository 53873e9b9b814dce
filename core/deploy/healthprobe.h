#pragma once
// The health probe a deploy waits on: an HTTP GET of the app's health path on the new
// container's address until it answers 2xx or 3xx. Blocking; for the worker threads.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"

#include <QString>
#include <functional>

namespace pando::core {

struct ProbeResult {
    int status = 0; // the last HTTP status seen; 0 when nothing answered
    int attempts = 0;
    qint64 elapsedMs = 0;
};

// One GET; the status code, or an error when the connection failed or the answer was not HTTP.
Result<int> probeOnce(const QString &host, int port, const QString &path, int timeoutMs);

// Probes every intervalMs until a 2xx/3xx, the deadline, cancel, or stillAlive() returning an
// error (the container exited). A 2xx/3xx counts only when stillAlive() holds after it.
Result<ProbeResult> probeUntilHealthy(const QString &host, int port, const QString &path, int timeoutMs, int intervalMs,
                                      const CancelToken &cancel, const std::function<Status()> &stillAlive);

} // namespace pando::core
