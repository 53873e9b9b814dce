#include "app/daemon/secretskey.h"

#include "app/wiring/install.h"
#include "core/secrets/sealrotation.h"

#include <QDir>

namespace pando::daemon {

int rotateSecretsKey(const DaemonOptions &options, QTextStream &out, QTextStream &err)
{
    const QString dataDir = options.engine.dataDir;
    auto lock = wiring::lockDataDirectory(dataDir);
    if (!lock) {
        err << "pandod: cannot rotate the secrets key: " << lock.error().text() << Qt::endl;
        err << "hint: " << lock.error().hint << Qt::endl;
        return 1;
    }
    core::Database db(options.engine.database);
    if (auto opened = db.open(); !opened) {
        err << "pandod: cannot open the database: " << opened.error().text() << Qt::endl;
        return 1;
    }
    auto report = core::secrets::rotateSealKey(db, dataDir);
    if (!report) {
        err << "pandod: the secrets key rotation failed: " << report.error().text() << Qt::endl;
        if (!report.error().hint.isEmpty())
            err << "hint: " << report.error().hint << Qt::endl;
        return 1;
    }
    out << "pandod: " << (report->resumed ? "finished the interrupted rotation: " : "rotated the secrets key: ")
        << report->oldKeyId << " -> " << report->newKeyId << "; re-sealed " << report->pipelineSecrets
        << " pipeline secrets, " << report->appSecrets << " app secrets, " << report->serviceCredentials
        << " service credentials, " << report->connectionCredentials << " connection credentials and "
        << report->hookSecrets << " webhook secrets" << Qt::endl;
    for (const QString &left : std::as_const(report->unopenable))
        err << "pandod: warning: " << left
            << " was sealed by a key this install no longer has; it was left as it was (set it again)" << Qt::endl;
    out << "pandod: " << core::secrets::sealKeyPath(dataDir)
        << " now holds the new key; backups of the database taken before need the old one" << Qt::endl;
    return 0;
}

} // namespace pando::daemon
