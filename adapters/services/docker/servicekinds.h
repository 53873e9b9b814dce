#pragma once
// What differs between the service kinds: the port, where the data lives, the variables that
// initialise it (the official images' names, so their images fit too), and the client commands
// that check readiness and dump the data. Passwords go into the commands' environment only.

#include "adapters/api/services.h"

#include <QMap>
#include <QStringList>

namespace pando::adapters::docker::detail {

struct ServiceKind {
    int port = 0;
    QString dataPath;           // the volume's mount point
    QStringList command;        // empty: the image's own
    QMap<QString, QString> env; // for the server's first start
    QStringList readyCommand;   // exit 0 (and readyOutput in stdout, when set) = ready
    QString readyOutput;
    QStringList dumpCommand;        // the dump on stdout
    QMap<QString, QString> toolEnv; // for readyCommand and dumpCommand
    QString dumpSuffix;             // ".sql", ".rdb"
    QStringList seedCommand;        // loads SeedPath into the database; empty: the kind takes no seed
};

// Where a seed file is put in the service's container for seedCommand, and removed after.
inline constexpr QLatin1String SeedPath("/tmp/pando-seed.sql");

// nullopt-like: port 0 for an unknown kind.
ServiceKind serviceKind(const QString &kind, const ServiceCredentials &credentials);

} // namespace pando::adapters::docker::detail
