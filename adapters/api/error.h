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

// Result<T> and Status are classes, not aliases of std::expected, so that they can be
// [[nodiscard]]: an alias cannot carry the attribute, and marking every function that returns
// one is a rule the next function written forgets (core alone had dropped 61 results that way).
// On the type, every function returning one is covered, including lambdas and virtuals.
// They add nothing else: std::expected's constructors, assignments and accessors are inherited,
// and a std::expected<T, Error> converts implicitly, so `return fail(...)`, `return {}`,
// `return value` and code written against std::expected keep working.
//
// A result dropped on purpose goes through discardResult(result, "why"), never a bare (void) cast,
// so that every such place states its reason and can be found with one grep.
template<class T> class [[nodiscard]] Result : public std::expected<T, Error> {
public:
    using Base = std::expected<T, Error>;
    using Base::Base;
    using Base::operator=;

    constexpr Result() = default;
    constexpr Result(const Base &other) : Base(other) {}
    constexpr Result(Base &&other) : Base(std::move(other)) {}
};

using Status = Result<void>;

// Drops a result that is of no use at this place. `why` is for the reader: it says why
// neither the value nor the error matters here (a best-effort clean-up whose failure the
// next reconcile repairs, an error already reported by a failure being unwound, ...).
template<class T, std::size_t N>
constexpr void discardResult(const Result<T> & /*result*/, const char (&/*why*/)[N]) noexcept
{
    static_assert(N > 8, "discardResult(): say why the result does not matter here");
}

inline std::unexpected<Error> fail(ErrorCode code, QString message, QString where = {}, QString hint = {})
{
    return std::unexpected(Error{code, std::move(message), std::move(where), std::move(hint)});
}

} // namespace pando
