#pragma once
// Small helpers the handler files share: an Error as a Reply (through the one status mapping in
// httperror.h), bounded query parameters, and JSON request bodies with a fixed set of fields.

#include "routes.h"

#include "adapters/api/error.h"
#include "core/accounts/accountservice.h"

#include <QJsonObject>
#include <QStringList>

namespace pando::server {

Reply errorReply(const Error &error);
// The install's accounts, or Unavailable (naming the request's path) when it has none.
Result<core::accounts::AccountService *> accountService(Call &call);
Reply invalid(const QString &message, const QString &where, const QString &hint = {});

// A bounded whole-number query parameter; absent gives fallback. Errors name "query.<name>".
Result<qint64> int64Param(const RequestData &request, const QString &name, qint64 fallback, qint64 min, qint64 max);
Result<int> intParam(const RequestData &request, const QString &name, int fallback, int min, int max);
// A yes/no query parameter: true or false (absent: false). Errors name "query.<name>".
Result<bool> boolParam(const RequestData &request, const QString &name);
// A query parameter, percent-decoded; empty when absent.
QString queryParam(const RequestData &request, const QString &name);

// The body as a JSON object whose fields are all in allowed; an empty body is an empty object.
// example goes into the hint of every error.
Result<QJsonObject> jsonObjectBody(const RequestData &request, const QStringList &allowed, const QString &example);

} // namespace pando::server
