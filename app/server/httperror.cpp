#include "httperror.h"

namespace pando::server {

int httpStatus(ErrorCode code)
{
    switch (code) {
    case ErrorCode::Invalid:
        return 400;
    case ErrorCode::NotFound:
        return 404;
    case ErrorCode::Conflict:
        return 409;
    case ErrorCode::TooLarge:
        return 413;
    case ErrorCode::Unauthorized:
        return 401;
    case ErrorCode::Forbidden:
        return 403;
    case ErrorCode::Unavailable:
        return 503;
    case ErrorCode::Timeout:
        return 504;
    // A cancelled deploy conflicts with what the caller asked for; it is not a server fault.
    case ErrorCode::Cancelled:
        return 409;
    case ErrorCode::Failed:
        return 422;
    case ErrorCode::Internal:
        return 500;
    }
    return 500;
}

QJsonObject errorBody(const Error &error)
{
    QJsonObject inner{{QStringLiteral("code"), errorCodeName(error.code)}, {QStringLiteral("message"), error.message}};
    if (!error.where.isEmpty())
        inner.insert(QStringLiteral("where"), error.where);
    if (!error.hint.isEmpty())
        inner.insert(QStringLiteral("hint"), error.hint);
    return QJsonObject{{QStringLiteral("error"), inner}};
}

} // namespace pando::server
