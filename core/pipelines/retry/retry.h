#pragma once
// Package retry runs an operation again after transient failures, waiting a linearly growing
// delay between attempts (delay, delay + step, delay + 2*step, ... capped), until it succeeds,
// fails in a way the predicate says is not worth retrying, runs out of attempts or budget, or is
// cancelled. Waits go through the Sleeper seam and the budget through the Clock seam, so tests
// never sleep.
//
// Threading: retry() runs on the calling thread; cancel may fire from any thread and is looked
// at before every attempt and throughout every wait.

#include "adapters/api/cancel.h"
#include "adapters/api/error.h"
#include "core/common/clock.h"
#include "core/pipelines/retry/sleeper.h"

#include <QString>
#include <algorithm>
#include <functional>
#include <type_traits>
#include <utility>

namespace pando::core::pipelines {

struct RetryPolicy {
    int maxAttempts = 3;        // total tries, the first included (>= 1)
    qint64 delayMs = 1000;      // the wait after the first failed attempt
    qint64 delayStepMs = 1000;  // added to the wait after each further failed attempt
    qint64 maxDelayMs = 30'000; // no single wait is longer
    qint64 maxElapsedMs = 0;    // 0: no budget; else no attempt starts after this much time

    // The wait after attempt number `failedAttempt` (1-based) failed.
    qint64 delayAfter(int failedAttempt) const;
    // Says what is wrong with the numbers, naming the field.
    Status validate() const;
};

// Unavailable and Timeout: a real part did not answer (in time). Everything else, Cancelled
// above all, is not worth a second try.
bool isTransient(const Error &error);

struct RetryOptions {
    RetryPolicy policy;
    std::function<bool(const Error &)> retryable = isTransient;
    // Told before each wait: which attempt failed, with what, and how long the wait is.
    std::function<void(int failedAttempt, const Error &error, qint64 delayMs)> onRetry;
    Sleeper *sleeper = nullptr;   // null: SystemSleeper::instance()
    const Clock *clock = nullptr; // null: SystemClock::instance(); only read for maxElapsedMs
    QString what;                 // names the operation in the errors retry() makes ("docker ping")
};

namespace detail {
Error cancelledError(const RetryOptions &options, int attemptsMade);
Error exhaustedError(const RetryOptions &options, Error last, int attemptsMade, bool budget);
} // namespace detail

// Runs op(attempt) (attempt is 1-based) until it returns a value or a non-retryable error.
// Returns op's value, op's non-retryable error unchanged, op's last error with "(gave up after N
// attempts)" added when attempts or the budget ran out, or a Cancelled error when cancel fired
// before an attempt or during a wait. An invalid policy is an Invalid error and op never runs.
template<class Op>
auto retry(const RetryOptions &options, const CancelToken &cancel, Op &&op) -> std::invoke_result_t<Op &, int>
{
    using R = std::invoke_result_t<Op &, int>;
    if (auto valid = options.policy.validate(); !valid)
        return R(std::unexpected(valid.error()));
    Sleeper &sleeper = options.sleeper ? *options.sleeper : SystemSleeper::instance();
    const Clock &clock = options.clock ? *options.clock : SystemClock::instance();
    const qint64 started = clock.nowMs();
    for (int attempt = 1;; ++attempt) {
        if (cancel.isCancelled())
            return R(std::unexpected(detail::cancelledError(options, attempt - 1)));
        R result = op(attempt);
        if (result)
            return result;
        if (result.error().code == ErrorCode::Cancelled || !options.retryable || !options.retryable(result.error()))
            return result;
        if (attempt >= options.policy.maxAttempts)
            return R(std::unexpected(detail::exhaustedError(options, result.error(), attempt, false)));
        const qint64 delay = options.policy.delayAfter(attempt);
        if (options.policy.maxElapsedMs > 0 && clock.nowMs() - started + delay > options.policy.maxElapsedMs)
            return R(std::unexpected(detail::exhaustedError(options, result.error(), attempt, true)));
        if (options.onRetry)
            options.onRetry(attempt, result.error(), delay);
        if (!sleeper.sleep(delay, cancel))
            return R(std::unexpected(detail::cancelledError(options, attempt)));
    }
}

} // namespace pando::core::pipelines
