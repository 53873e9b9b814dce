#pragma once
// Which source connections someone may read through (authz::mayUseConnection), for the engine's
// choice of an app's connection, its listing, and a build's base images.

#include "core/sourceconn/sourceconn.h"

namespace pando::core {

// The connections of all that userId may use (every one with the install's authority).
Result<QList<sourceconn::Connection>> usableConnections(Database &db, const QList<sourceconn::Connection> &all,
                                                        const QString &userId, bool installAuthority);

} // namespace pando::core
