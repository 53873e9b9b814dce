#pragma once
// The app detail's Settings tab: everything the API tells about one app and lets change, in one
// place. The spec's fields (environment, resources, health check, route, source ref, port,
// restart, egress) are edited as a draft; preview() shows the line diff of the spec text the
// engine has against the text Save would send, and save() sends exactly that text through the
// spec revision path (PUT /api/v1/apps/{name}); a change of the environment alone goes as the
// variables changed (PATCH /api/v1/apps/{name}/env), so that the spec's own text keeps its
// comments and layout. A refusal is shown as the engine words it: its message, the field
// ("where") and what to do next. Secrets are listed by name only and set, rotated or removed
// through their own routes; a value goes out once and is never kept here.
// Beside them: the app's services with what the app reaches them by and a backup into a file,
// its disk limit and state (with Start again for an app Pando stopped for its disk), and the
// install's capacity.
//
// Threading: GUI-thread object; the session's answers arrive there. Answers meant for another
// app, or an older load, are dropped.

#include "app/desktop/session/session.h"
#include "qml/apps/spectext.h"

#include <QObject>
#include <QPointer>
#include <QUrl>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

class QSaveFile;

namespace pando::desktop {

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadedChanged)
    // Why the app could not be read; empty when it was.
    Q_PROPERTY(QString error READ error NOTIFY loadedChanged)
    // The spec the engine has, as the diff shows it, and when it last changed (its revision).
    Q_PROPERTY(QString specText READ specText NOTIFY loadedChanged)
    Q_PROPERTY(QString revisionText READ revisionText NOTIFY loadedChanged)
    Q_PROPERTY(QString url READ url NOTIFY loadedChanged)
    Q_PROPERTY(int routePort READ routePort NOTIFY loadedChanged)
    // The disk limit and what happens past it, and what Pando did about it ("stopped: wrote …").
    Q_PROPERTY(QString diskText READ diskText NOTIFY loadedChanged)
    Q_PROPERTY(QString diskState READ diskState NOTIFY loadedChanged)
    Q_PROPERTY(bool diskStopped READ isDiskStopped NOTIFY loadedChanged)

    // The draft: field path ("health.path", "run.resources.memory") → text, and the environment.
    Q_PROPERTY(QVariantMap draft READ draft NOTIFY draftChanged)
    Q_PROPERTY(QVariantList env READ env NOTIFY envChanged)
    Q_PROPERTY(bool modified READ isModified NOTIFY draftChanged)
    // The last preview: [{kind: " ", "-" or "+", text}]; empty before one.
    Q_PROPERTY(QVariantList diff READ diff NOTIFY diffChanged)
    Q_PROPERTY(bool saving READ isSaving NOTIFY saveChanged)
    // Why the last save was refused, the field it names and the engine's hint; empty when it was not.
    Q_PROPERTY(QString saveError READ saveError NOTIFY saveChanged)
    Q_PROPERTY(QString saveWhere READ saveWhere NOTIFY saveChanged)
    Q_PROPERTY(QString saveHint READ saveHint NOTIFY saveChanged)

    // [{name, injectedAs, file, updatedText}], and the names the spec asks for that are not set
    // ("A, B"; empty when none).
    Q_PROPERTY(QVariantList secrets READ secrets NOTIFY secretsChanged)
    Q_PROPERTY(QString missingSecrets READ missingSecretsText NOTIFY secretsChanged)
    Q_PROPERTY(bool secretBusy READ isSecretBusy NOTIFY secretsChanged)
    Q_PROPERTY(QString secretError READ secretError NOTIFY secretsChanged)

    // [{slot, kind, version, status, user, database, volume, variables}]; servicesError says why
    // they could not be read (an install without services).
    Q_PROPERTY(QVariantList services READ services NOTIFY servicesChanged)
    Q_PROPERTY(QString servicesError READ servicesError NOTIFY servicesChanged)
    // The spec's volumes (run.volumes): [{name, path, size}], each backed up with backupVolume()
    // and restored with restoreVolume().
    Q_PROPERTY(QVariantList volumes READ volumes NOTIFY loadedChanged)
    // The backup (or a volume's restore) under way or last made: its slot (a volume's:
    // "volume/NAME"), what happened ("12 MB written to …"), and whether it failed.
    Q_PROPERTY(QString backupSlot READ backupSlot NOTIFY backupChanged)
    Q_PROPERTY(QString backupText READ backupText NOTIFY backupChanged)
    Q_PROPERTY(bool backupFailed READ backupFailed NOTIFY backupChanged)
    Q_PROPERTY(bool backupBusy READ isBackupBusy NOTIFY backupChanged)

    // The install's runtimes: [{kind, isDefault, reachable, cpus, memory, disk, note}], as text.
    Q_PROPERTY(QVariantList capacity READ capacity NOTIFY capacityChanged)
    Q_PROPERTY(QString capacityError READ capacityError NOTIFY capacityChanged)

    Q_PROPERTY(QString actionError READ actionError NOTIFY actionChanged)

public:
    explicit AppSettings(QObject *parent = nullptr);
    ~AppSettings() override;

    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    void setSession(Session *session);
    QString app() const { return m_app; }
    void setApp(const QString &app);

    bool isLoading() const { return m_loading; }
    QString error() const { return m_error; }
    QString specText() const;
    QString revisionText() const;
    QString url() const { return m_view.value(QStringLiteral("url")).toString(); }
    int routePort() const { return m_view.value(QStringLiteral("route_port")).toInt(); }
    QString diskText() const;
    QString diskState() const;
    bool isDiskStopped() const;

    QVariantMap draft() const { return m_draft; }
    QVariantList env() const;
    bool isModified() const;
    QVariantList diff() const;
    bool isSaving() const { return m_saving; }
    QString saveError() const { return m_saveError.message; }
    QString saveWhere() const { return m_saveError.where; }
    QString saveHint() const { return m_saveError.hint; }

    QVariantList secrets() const { return m_secrets; }
    QStringList missingSecrets() const { return m_missingSecrets; }
    QString missingSecretsText() const { return m_missingSecrets.join(QStringLiteral(", ")); }
    bool isSecretBusy() const { return m_secretBusy; }
    QString secretError() const { return m_secretError; }

    QVariantList services() const { return m_services; }
    QString servicesError() const { return m_servicesError; }
    QVariantList volumes() const;
    QString backupSlot() const { return m_backupSlot; }
    QString backupText() const { return m_backupText; }
    bool backupFailed() const { return m_backupFailed; }
    bool isBackupBusy() const { return m_backupFile != nullptr || m_restoring; }

    QVariantList capacity() const { return m_capacity; }
    QString capacityError() const { return m_capacityError; }
    QString actionError() const { return m_actionError; }

    // The spec as the draft makes it, and its text (what save() sends).
    QJsonObject draftSpec() const;

    // Reads the app, its secrets, services and the install's capacity again; the draft starts
    // over from the spec read.
    Q_INVOKABLE void refresh();
    Q_INVOKABLE void setField(const QString &path, const QString &value);
    Q_INVOKABLE void setEnv(int row, const QString &name, const QString &value);
    Q_INVOKABLE void addEnv();
    Q_INVOKABLE void removeEnv(int row);
    // Forgets the draft's changes.
    Q_INVOKABLE void discard();
    // Computes the diff of the spec against the draft; false when they are the same, or the draft
    // is refused before sending (saveError says why).
    Q_INVOKABLE bool preview();
    // Sends the previewed text; on success the spec is read again and saved() follows.
    Q_INVOKABLE void save();
    // Sets (or rotates) one secret; the value is dropped here once sent.
    Q_INVOKABLE void setSecret(const QString &name, const QString &value);
    Q_INVOKABLE void removeSecret(const QString &name);
    // Writes a dump of the service in slot into file (a path or a file: URL); an existing file is
    // replaced only once the whole dump arrived.
    Q_INVOKABLE void backup(const QString &slot, const QString &file);
    // Where a backup of slot goes unless the user says otherwise.
    Q_INVOKABLE QString suggestedBackupPath(const QString &slot) const;
    // Writes an archive of the app's volume name into file, as backup() does a dump.
    Q_INVOKABLE void backupVolume(const QString &name, const QString &file);
    Q_INVOKABLE QString suggestedVolumeBackupPath(const QString &name) const;
    // Replaces the files of the app's volume name with those of the archive in file (a path or a
    // file: URL), as backupVolume() wrote it; the app stops while it is restored. Ask first.
    Q_INVOKABLE void restoreVolume(const QString &name, const QString &file);
    // Starts the serving version again (after Pando stopped it for its disk use).
    Q_INVOKABLE void startApp();

Q_SIGNALS:
    void sessionChanged();
    void appChanged();
    void loadedChanged();
    void draftChanged();
    // Rows of the environment were added, removed or read again (not emitted while one is typed in).
    void envChanged();
    void diffChanged();
    void saveChanged();
    void secretsChanged();
    void servicesChanged();
    void backupChanged();
    void capacityChanged();
    void actionChanged();
    // The spec was replaced: the next deploy runs it.
    void saved();
    // A secret was set (name) or removed.
    void secretSet(const QString &name);
    void secretRemoved(const QString &name);

private:
    void clear();
    void loadApp();
    // Starts a backup of key ("db", "volume/data") into file, shown as what; start asks the
    // session for it, given where it goes and the progress and end callbacks.
    using BackupStart = std::function<void(QIODevice *out, std::function<void(qint64)> progress,
                                           std::function<void(const Status &)> done)>;
    void startBackup(const QString &key, const QString &what, const QString &file, const BackupStart &start);
    void loadSecrets();
    // A secret's change was answered (refusal null: done): the list is read again, or the
    // refusal shown. True when it was done.
    bool secretAnswered(const Error *refusal);
    void loadServices();
    void loadCapacity();
    void applyView(const QJsonObject &view);
    void resetDraft();
    void setSaveError(const Error &error);
    void onEvent(const QJsonObject &event);
    // The spec without the fields the engine derives (memoryBytes, diskBytes), as both sides of
    // the diff show it.
    static QJsonObject shown(QJsonObject spec);
    // The spec without run.env: equal for two specs that differ in their environment alone.
    static QJsonObject withoutEnv(QJsonObject spec);

    QPointer<Session> m_session;
    QString m_app;
    quint64 m_generation = 0;
    bool m_loading = false;
    QString m_error;
    QJsonObject m_view; // the app as the API answered it
    QVariantMap m_draft;
    QList<std::pair<QString, QString>> m_env;
    QList<DiffLine> m_diff;
    QString m_previewed; // the text the diff showed, which save() sends
    bool m_saving = false;
    Error m_saveError;
    QVariantList m_secrets;
    QStringList m_missingSecrets;
    bool m_secretBusy = false;
    QString m_secretError;
    QVariantList m_services;
    QString m_servicesError;
    QString m_backupSlot;
    QString m_backupText;
    bool m_backupFailed = false;
    QSaveFile *m_backupFile = nullptr;
    bool m_restoring = false; // its archive is the session call's until it ends
    QVariantList m_capacity;
    QString m_capacityError;
    QString m_actionError;
};

} // namespace pando::desktop
