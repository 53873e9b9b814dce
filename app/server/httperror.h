#pragma once
// The one place where Pando's error codes become HTTP statuses and error bodies, so that every
// route answers a failure the same way: {"error":{"code","message","where","hint"}}.

#include "adapters/api/error.h"

#include <QJsonObject>

namespace pando::server {

// The HTTP status an ErrorCode is answered with.
int httpStatus(ErrorCode code);
// {"error":{"code":"invalid","message":"...","where":"...","hint":"..."}}; where and hint only
// when set.
QJsonObject errorBody(const Error &error);

} // namespace pando::server
