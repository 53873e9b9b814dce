#include "core/pipelines/retry/retry.h"

namespace pando::core::pipelines {

qint64 RetryPolicy::delayAfter(int failedAttempt) const
{
    const qint64 n = std::max(failedAttempt, 1) - 1;
    // Saturate instead of overflowing for absurd attempt counts.
    if (delayStepMs > 0 && n > (maxDelayMs - delayMs) / delayStepMs + 1)
        return std::max<qint64>(maxDelayMs, 0);
    return std::clamp<qint64>(delayMs + n * delayStepMs, 0, std::max<qint64>(maxDelayMs, 0));
}

Status RetryPolicy::validate() const
{
    if (maxAttempts < 1)
        return fail(ErrorCode::Invalid, QStringLiteral("must be at least 1, got %1").arg(maxAttempts),
                    QStringLiteral("retry.maxAttempts"));
    if (delayMs < 0)
        return fail(ErrorCode::Invalid, QStringLiteral("must not be negative, got %1").arg(delayMs),
                    QStringLiteral("retry.delayMs"));
    if (delayStepMs < 0)
        return fail(ErrorCode::Invalid, QStringLiteral("must not be negative, got %1").arg(delayStepMs),
                    QStringLiteral("retry.delayStepMs"));
    if (maxDelayMs < delayMs)
        return fail(ErrorCode::Invalid,
                    QStringLiteral("must be at least delayMs (%1), got %2").arg(delayMs).arg(maxDelayMs),
                    QStringLiteral("retry.maxDelayMs"));
    if (maxElapsedMs < 0)
        return fail(ErrorCode::Invalid, QStringLiteral("must not be negative, got %1").arg(maxElapsedMs),
                    QStringLiteral("retry.maxElapsedMs"));
    return {};
}

bool isTransient(const Error &error)
{
    return error.code == ErrorCode::Unavailable || error.code == ErrorCode::Timeout;
}

namespace detail {

static QString named(const RetryOptions &options)
{
    return options.what.isEmpty() ? QStringLiteral("the operation") : options.what;
}

Error cancelledError(const RetryOptions &options, int attemptsMade)
{
    return Error{ErrorCode::Cancelled,
                 QStringLiteral("%1 was cancelled after %2 attempt(s)").arg(named(options)).arg(attemptsMade),
                 QString(), QString()};
}

Error exhaustedError(const RetryOptions &options, Error last, int attemptsMade, bool budget)
{
    last.message += budget ? QStringLiteral(" (gave up after %1 attempt(s): the retry budget of %2 ms would run out)")
                                 .arg(attemptsMade)
                                 .arg(options.policy.maxElapsedMs)
                           : QStringLiteral(" (gave up after %1 attempt(s))").arg(attemptsMade);
    if (!options.what.isEmpty() && last.where.isEmpty())
        last.where = options.what;
    return last;
}

} // namespace detail

} // namespace pando::core::pipelines
