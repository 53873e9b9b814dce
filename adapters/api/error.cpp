#include "error.h"

namespace pando {

QString errorCodeName(ErrorCode code)
{
    switch (code) {
    case ErrorCode::Invalid:
        return QStringLiteral("invalid");
    case ErrorCode::NotFound:
        return QStringLiteral("not_found");
    case ErrorCode::Conflict:
        return QStringLiteral("conflict");
    case ErrorCode::TooLarge:
        return QStringLiteral("too_large");
    case ErrorCode::Unauthorized:
        return QStringLiteral("unauthorized");
    case ErrorCode::Forbidden:
        return QStringLiteral("forbidden");
    case ErrorCode::Unavailable:
        return QStringLiteral("unavailable");
    case ErrorCode::Timeout:
        return QStringLiteral("timeout");
    case ErrorCode::Cancelled:
        return QStringLiteral("cancelled");
    case ErrorCode::Failed:
        return QStringLiteral("failed");
    case ErrorCode::Internal:
        return QStringLiteral("internal");
    }
    return QStringLiteral("internal");
}

} // namespace pando
