// AppSettings: the app's services and volumes, and their backups and restores into and from
// files (the Settings tab's lower half).
#include "qml/apps/appsettings.h"
#include "qml/apps/appsettingstext.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QPointer>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace pando::desktop {

using namespace settingstext;

void AppSettings::loadServices()
{
    QPointer<AppSettings> self(this);
    m_session->appServices(m_app, [self, generation = m_generation](const Result<QJsonArray> &answer) {
        if (!self || generation != self->m_generation)
            return;
        self->m_services.clear();
        self->m_servicesError.clear();
        if (!answer) {
            // An app without services answers NotFound: that is no failure, just none.
            if (answer.error().code != ErrorCode::NotFound)
                self->m_servicesError = failureText(answer.error());
        } else {
            for (const QJsonValue v : *answer) {
                const QJsonObject s = v.toObject();
                QStringList variables;
                for (const QJsonValue name : s.value(u"env"_s).toArray())
                    variables << name.toString();
                self->m_services.append(QVariantMap{
                    {u"slot"_s, s.value(u"slot"_s).toString()},
                    {u"kind"_s, s.value(u"kind"_s).toString()},
                    {u"version"_s, s.value(u"version"_s).toString()},
                    {u"status"_s, s.value(u"status"_s).toString()},
                    {u"user"_s, s.value(u"user"_s).toString()},
                    {u"database"_s, s.value(u"database"_s).toString()},
                    {u"volume"_s, s.value(u"volume"_s).toString()},
                    {u"variables"_s, variables.join(u", "_s)},
                });
            }
        }
        Q_EMIT self->servicesChanged();
    });
}

QString AppSettings::suggestedBackupPath(const QString &slot) const
{
    QString dir = QStandardPaths::writableLocation(QStandardPaths::DownloadLocation);
    if (dir.isEmpty())
        dir = QDir::homePath();
    QString kind;
    for (const QVariant &v : m_services)
        if (v.toMap().value(u"slot"_s).toString() == slot)
            kind = v.toMap().value(u"kind"_s).toString();
    const QString stamp = QDateTime::currentDateTimeUtc().toString(u"yyyyMMdd-HHmmss"_s);
    return QDir(dir).filePath(u"%1-%2-%3.%4"_s.arg(m_app, slot, stamp, kind == u"redis"_s ? u"rdb"_s : u"sql"_s));
}

void AppSettings::backup(const QString &slot, const QString &file)
{
    startBackup(slot, slot, file, [this, slot](QIODevice *out, auto progress, auto done) {
        m_session->backupService(m_app, slot, out, std::move(progress), std::move(done));
    });
}

QVariantList AppSettings::volumes() const
{
    QVariantList out;
    const QJsonArray declared = valueAt(m_view.value(u"spec"_s).toObject(), u"run.volumes"_s).toArray();
    for (const QJsonValue v : declared) {
        const QJsonObject volume = v.toObject();
        out.append(QVariantMap{{u"name"_s, volume.value(u"name"_s).toString()},
                               {u"path"_s, volume.value(u"path"_s).toString()},
                               {u"size"_s, textOf(volume.value(u"size"_s))}});
    }
    return out;
}

QString AppSettings::suggestedVolumeBackupPath(const QString &name) const
{
    QString dir = QStandardPaths::writableLocation(QStandardPaths::DownloadLocation);
    if (dir.isEmpty())
        dir = QDir::homePath();
    const QString stamp = QDateTime::currentDateTimeUtc().toString(u"yyyyMMdd-HHmmss"_s);
    return QDir(dir).filePath(u"%1-%2-%3.tar"_s.arg(m_app, name, stamp));
}

void AppSettings::backupVolume(const QString &name, const QString &file)
{
    startBackup(u"volume/"_s + name, name, file, [this, name](QIODevice *out, auto progress, auto done) {
        m_session->backupVolume(m_app, name, out, std::move(progress), std::move(done));
    });
}

void AppSettings::restoreVolume(const QString &name, const QString &file)
{
    if (!m_session || isBackupBusy())
        return;
    const QString trimmed = file.trimmed();
    const QString path = trimmed.startsWith(u"file:"_s) ? QUrl(trimmed).toLocalFile() : trimmed;
    m_backupSlot = u"volume/"_s + name;
    m_backupFailed = true;
    // Owned by the call until it ends, whatever becomes of this object: the upload reads it.
    auto *archive = new QFile(path);
    if (path.isEmpty()) {
        m_backupText = tr("Say which archive to restore from");
    } else if (!archive->open(QIODevice::ReadOnly)) {
        m_backupText = tr("Cannot read %1: %2").arg(path, archive->errorString());
    } else if (archive->size() == 0) {
        m_backupText = tr("%1 is empty").arg(path);
    } else {
        m_backupFailed = false;
    }
    if (m_backupFailed) {
        delete archive;
        Q_EMIT backupChanged();
        return;
    }
    const qint64 size = archive->size();
    m_restoring = true;
    m_backupText = tr("Restoring %1 from %2…").arg(name, path);
    Q_EMIT backupChanged();
    QPointer<AppSettings> self(this);
    m_session->restoreVolume(
        m_app, name, archive, size,
        [self, size](qint64 sent) {
            if (!self)
                return;
            self->m_backupText = sent < size
                                     ? tr("%1 of %2 sent").arg(bytesText(sent), bytesText(size))
                                     : tr("%1 sent; the app stops while its volume is restored…").arg(bytesText(size));
            Q_EMIT self->backupChanged();
        },
        [self, archive, name, size, generation = m_generation](const Result<QJsonObject> &view) {
            delete archive;
            if (!self)
                return;
            self->m_restoring = false;
            self->m_backupFailed = !view;
            self->m_backupText = view ? tr("Volume %1 restored from %2").arg(name, bytesText(size))
                                      : tr("The restore failed: %1").arg(failureText(view.error()));
            Q_EMIT self->backupChanged();
            if (view && generation == self->m_generation)
                self->applyView(*view);
        });
}

void AppSettings::startBackup(const QString &key, const QString &what, const QString &file, const BackupStart &start)
{
    if (!m_session || isBackupBusy())
        return;
    const QString trimmed = file.trimmed();
    const QString path = trimmed.startsWith(u"file:"_s) ? QUrl(trimmed).toLocalFile() : trimmed;
    m_backupSlot = key;
    m_backupFailed = false;
    if (path.isEmpty()) {
        m_backupFailed = true;
        m_backupText = tr("Say which file the backup goes to");
        Q_EMIT backupChanged();
        return;
    }
    auto *out = new QSaveFile(path);
    if (!out->open(QIODevice::WriteOnly)) {
        m_backupFailed = true;
        m_backupText = tr("Cannot write %1: %2").arg(path, out->errorString());
        delete out;
        Q_EMIT backupChanged();
        return;
    }
    m_backupFile = out;
    m_backupText = tr("Backing up %1…").arg(what);
    Q_EMIT backupChanged();
    QPointer<AppSettings> self(this);
    start(
        out,
        [self, what](qint64 bytes) {
            if (!self)
                return;
            self->m_backupText = tr("%1 received from %2").arg(bytesText(bytes), what);
            Q_EMIT self->backupChanged();
        },
        [self, out, path](const Status &done) {
            // out lives until here: this object deletes it only while no backup runs.
            if (!self)
                return;
            self->m_backupFile = nullptr;
            const qint64 size = out->size();
            if (done && out->commit()) {
                self->m_backupText = tr("%1 written to %2").arg(bytesText(size), path);
            } else {
                self->m_backupFailed = true;
                if (!done) {
                    out->cancelWriting();
                    self->m_backupText = tr("The backup failed: %1").arg(failureText(done.error()));
                } else {
                    self->m_backupText = tr("Cannot write %1: %2").arg(path, out->errorString());
                }
            }
            delete out;
            Q_EMIT self->backupChanged();
        });
}

} // namespace pando::desktop
