#include "connectionstore.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
const QString Group = u"connections"_s;
}

ConnectionStore::ConnectionStore(QSettings &settings, QString tokenDir)
    : m_settings(settings), m_tokenDir(std::move(tokenDir))
{}

QString ConnectionStore::tokenPath(const QString &id) const
{
    return QDir(m_tokenDir).filePath(id + u".token"_s);
}

QList<RemoteInstall> ConnectionStore::installs() const
{
    QList<RemoteInstall> list;
    m_settings.beginGroup(Group);
    QStringList ids = m_settings.childGroups();
    // In the order they were added.
    std::sort(ids.begin(), ids.end(), [this](const QString &a, const QString &b) {
        return m_settings.value(a + u"/added"_s).toLongLong() < m_settings.value(b + u"/added"_s).toLongLong();
    });
    for (const QString &id : std::as_const(ids)) {
        m_settings.beginGroup(id);
        // No expiresMs: saved before the desktop kept it, so 0 (not known).
        list.append(RemoteInstall{id, m_settings.value(u"name"_s).toString(), m_settings.value(u"url"_s).toUrl(),
                                  m_settings.value(u"fingerprint"_s).toString(), m_settings.value(u"user"_s).toString(),
                                  m_settings.value(u"expiresMs"_s, 0).toLongLong()});
        m_settings.endGroup();
    }
    m_settings.endGroup();
    return list;
}

Result<RemoteInstall> ConnectionStore::add(RemoteInstall install, const QString &token)
{
    // After every saved one, even when added within the same millisecond: the list's order is
    // the order they were added in, never the order of their random ids.
    qint64 added = m_clock();
    m_settings.beginGroup(Group);
    for (const QString &id : m_settings.childGroups())
        added = std::max(added, m_settings.value(id + u"/added"_s).toLongLong() + 1);
    m_settings.endGroup();
    return save(std::move(install), token, added);
}

Result<RemoteInstall> ConnectionStore::replace(const QString &id, RemoteInstall install, const QString &token)
{
    m_settings.beginGroup(Group);
    const bool known = m_settings.childGroups().contains(id);
    // The old one's time keeps the list's order across starts.
    const qint64 added = m_settings.value(id + u"/added"_s, m_clock()).toLongLong();
    m_settings.endGroup();
    if (!known)
        return fail(ErrorCode::NotFound, u"no saved connection %1"_s.arg(id));
    auto saved = save(std::move(install), token, added);
    if (!saved)
        return saved;
    if (auto removed = remove(id); !removed)
        return std::unexpected(removed.error());
    return saved;
}

Result<RemoteInstall> ConnectionStore::save(RemoteInstall install, const QString &token, qint64 addedMs)
{
    install.id = u"r%1"_s.arg(QRandomGenerator::system()->generate64(), 16, 16, QLatin1Char('0'));
    if (!QDir().mkpath(m_tokenDir))
        return fail(ErrorCode::Internal, u"cannot create the directory %1"_s.arg(m_tokenDir));
    QFile::setPermissions(m_tokenDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QFile file(tokenPath(install.id));
    // Private from the first byte: the mode is set as the file is made.
    if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        file.write(token.toUtf8() + '\n') < 0 || !file.flush())
        return fail(ErrorCode::Internal, u"cannot write %1: %2"_s.arg(file.fileName(), file.errorString()));
    file.close();
    m_settings.beginGroup(Group);
    m_settings.beginGroup(install.id);
    m_settings.setValue(u"name"_s, install.name);
    m_settings.setValue(u"url"_s, install.url);
    m_settings.setValue(u"fingerprint"_s, install.fingerprint);
    m_settings.setValue(u"user"_s, install.user);
    if (install.expiresMs > 0)
        m_settings.setValue(u"expiresMs"_s, install.expiresMs);
    m_settings.setValue(u"added"_s, addedMs);
    m_settings.endGroup();
    m_settings.endGroup();
    m_settings.sync();
    return install;
}

Status ConnectionStore::remove(const QString &id)
{
    m_settings.beginGroup(Group);
    const bool known = m_settings.childGroups().contains(id);
    m_settings.remove(id);
    m_settings.endGroup();
    m_settings.sync();
    QFile::remove(tokenPath(id));
    if (!known)
        return fail(ErrorCode::NotFound, u"no saved connection %1"_s.arg(id));
    return {};
}

QString ConnectionStore::token(const QString &id) const
{
    QFile file(tokenPath(id));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll()).trimmed();
}

} // namespace pando::desktop
