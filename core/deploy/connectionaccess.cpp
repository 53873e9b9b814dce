#include "core/deploy/connectionaccess.h"

#include "core/authz/authz.h"

namespace pando::core {

Result<QList<sourceconn::Connection>> usableConnections(Database &db, const QList<sourceconn::Connection> &all,
                                                        const QString &userId, bool installAuthority)
{
    QList<sourceconn::Connection> usable;
    for (const sourceconn::Connection &c : all) {
        auto may = authz::mayUseConnection(db, userId, installAuthority, c.name);
        if (!may)
            return std::unexpected(may.error());
        if (*may)
            usable << c;
    }
    return usable;
}

} // namespace pando::core
