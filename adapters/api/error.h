#pragma once
// Expected failures as values. Every layer returns Result<T> / Status; the API maps
// ErrorCode to an HTTP status in one place (app/server/httperror.cpp).

#include <QString>
#include <cstddef>
#include <expected>

namespace pando {

enum class ErrorCode {
    Invalid,      // the caller's input is wrong (400)
    NotFound,     // 404
    Conflict,     // already exists, port taken, deploy in progress (409)
    TooLarge,     // 413
    Unauthorized, // 401
    Forbidden,    // 403
    Unavailable,  // a real part (Docker, git host, database) did not answer (503)
    Timeout,      // 504
    Cancelled,    // the work was cancelled
    Failed,       // the work ran and failed (a build, a health check) (422)
    Internal,     // a bug or an unexpected state (500)
};

struct Error {
    ErrorCode code = ErrorCode::Internal;
    QString message; // for people: what was wrong
    QString where;   // optional: the path or field it was wrong at ("run.port", "line 3, column 5")
    QString hint;    // optional: what to do next

    // "where: message" when there is a place.
    QString text() const { return where.isEmpty() ? message : where + QStringLiteral(": ") + message; }
};

QString errorCodeName(ErrorCode code);

template<class T>
using Result = std::expected<T, Error>;
using Status = std::expected<void, Error>;

// Drops a result that is of no use at this place. `why` is for the reader: it says why
// neither the value nor the error matters here (a best-effort clean-up whose failure the
// next reconcile repairs, an error already reported by a failure being unwound, ...).
template<class T, std::size_t N>
constexpr void discardResult(const std::expected<T, Error> & /*result*/, const char (&/*why*/)[N]) noexcept
{
    static_assert(N > 8, "discardResult(): say why the result does not matter here");
}

inline std::unexpected<Error> fail(ErrorCode code, QString message, QString where = {}, QString hint = {})
{
    return std::unexpected(Error{code, std::move(message), std::move(where), std::move(hint)});
}

} // namespace pando
