#include "app/daemon/resetadmin.h"

#include "app/wiring/accountwiring.h"
#include "app/wiring/install.h"
#include "core/accounts/tokenkey.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <unistd.h>

using namespace Qt::StringLiterals;

namespace pando::daemon {

namespace {

const QString OneTimeFile = u"reset-admin-password"_s;

// The first line of the file ("-": standard input); the password never comes through argv.
Result<QString> readPassword(const QString &path)
{
    QFile file;
    const bool opened = path == u"-"_s ? file.open(stdin, QIODevice::ReadOnly)
                                       : (file.setFileName(path), file.open(QIODevice::ReadOnly));
    if (!opened)
        return fail(ErrorCode::Invalid, u"cannot read %1: %2"_s.arg(path, file.errorString()), u"--password-file"_s);
    QString line = QString::fromUtf8(file.readLine(4096));
    while (line.endsWith(u'\n') || line.endsWith(u'\r'))
        line.chop(1);
    if (line.isEmpty())
        return fail(ErrorCode::Invalid, u"%1 holds no password"_s.arg(path), u"--password-file"_s);
    return line;
}

QString oneTimePassword()
{
    QByteArray bytes(18, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), 18 / 4);
    bytes[16] = char(QRandomGenerator::system()->generate());
    bytes[17] = char(QRandomGenerator::system()->generate());
    return QString::fromLatin1(bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

int refuse(QTextStream &err, const Error &error)
{
    err << "pandod: cannot reset the administrator: " << error.text() << Qt::endl;
    if (!error.hint.isEmpty())
        err << "hint: " << error.hint << Qt::endl;
    return 1;
}

} // namespace

int resetAdmin(const DaemonOptions &options, QTextStream &out, QTextStream &err)
{
    const QString dataDir = options.engine.dataDir;
    // Offline only: a running engine holds this lock, and its caches would not see the change.
    auto lock = wiring::lockDataDirectory(dataDir);
    if (!lock)
        return refuse(err, lock.error());
    QString password;
    const QString oneTimePath = QDir(dataDir).filePath(OneTimeFile);
    if (!options.passwordFile.isEmpty()) {
        auto read = readPassword(options.passwordFile);
        if (!read)
            return refuse(err, read.error());
        password = *read;
    } else {
        password = oneTimePassword();
    }
    const core::Actor actor{u"system:reset-admin"_s, u"local:uid %1"_s.arg(::geteuid()), {}};
    auto user = wiring::resetAdministrator(dataDir, options.engine.database, options.resetAdmin, password, actor);
    if (!user)
        return refuse(err, user.error());
    if (options.passwordFile.isEmpty()) {
        if (auto written = core::detail::writePrivateFile(oneTimePath, password.toUtf8() + '\n'); !written)
            return refuse(err, written.error());
        out << "pandod: " << user->username << " is an enabled administrator; its new password is in " << oneTimePath
            << " (0600, shown nowhere else): log in with it and remove the file (to choose the password, run "
               "--reset-admin again with --password-file)"
            << Qt::endl;
    } else {
        out << "pandod: " << user->username << " is an enabled administrator with the new password" << Qt::endl;
    }
    out << "pandod: recorded in the audit log as user.reset_admin; its other sessions ended" << Qt::endl;
    return 0;
}

} // namespace pando::daemon
