#pragma once
// The New app dialog's logic: an app from a repository URL and a few fields, or from a spec file
// (YAML or JSON). The fields become an AppSpec here (as JSON, so no value needs quoting); what is
// obviously wrong is refused before anything is sent, and the server's answer, which names the
// field ("run.port") or the file's line, is shown as is. Nothing is created when it fails.
//
// Threading: GUI-thread object; the session's answers arrive there.

#include "app/desktop/session/session.h"

#include <QObject>
#include <QPointer>
#include <QQmlEngine>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class AppCreator : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(bool busy READ isBusy NOTIFY stateChanged)
    // Why the last attempt failed, and which field or file it was about ("run.port", "hello.yaml").
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)
    Q_PROPERTY(QString errorField READ errorField NOTIFY stateChanged)
    // Empty when "Choose…" can open a file dialog; otherwise why not, and what to install.
    Q_PROPERTY(QString fileChooserProblem READ fileChooserProblem CONSTANT)
    // The branches of the repository the dialog was opened for through a source connection
    // (loadBranches), for the ref field's list; empty while loading, without a connection, or
    // when the forge would not list them (branchesError says why: the field still takes any ref).
    Q_PROPERTY(QStringList branches READ branches NOTIFY branchesChanged)
    Q_PROPERTY(QString branchesError READ branchesError NOTIFY branchesChanged)

public:
    using QObject::QObject;

    // Spec files larger than this are refused before they are read (the server's limit too).
    static constexpr qint64 MaxSpecBytes = 1 << 20;

    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);
    void setSession(Session *session);
    bool isBusy() const { return m_busy; }
    QString error() const { return m_error; }
    QString errorField() const { return m_errorField; }
    QString fileChooserProblem() const;
    // Empty when `import <module>` loads in engine; otherwise the engine's reason.
    static QString importProblem(QQmlEngine *engine, const QString &module);

    // deployNow: queue its first deploy once it exists. port 0: the one the built image exposes.
    Q_INVOKABLE void createFromRepository(const QString &name, const QString &repo, const QString &ref, int port,
                                          bool deployNow);
    // path: a file name, or a file: URL.
    // An app that deploys an image as it is (source.image, e.g. nginx:1.27): no repository, no build.
    Q_INVOKABLE void createFromImage(const QString &name, const QString &image, int port, bool deployNow);
    Q_INVOKABLE void createFromFile(const QString &path, bool deployNow);
    // A chosen file's URL as the path shown in the form.
    Q_INVOKABLE QString localPath(const QUrl &file) const;
    Q_INVOKABLE void clearError();
    // Lists repo's branches through connection (GET …/source-connections/{name}/branches);
    // an empty connection clears the list.
    Q_INVOKABLE void loadBranches(const QString &connection, const QString &repo);
    QStringList branches() const { return m_branches; }
    QString branchesError() const { return m_branchesError; }

Q_SIGNALS:
    void sessionChanged();
    void stateChanged();
    // The app exists; deployed says whether its first deploy was queued.
    void created(const QString &name, bool deployed);
    void branchesChanged();

private:
    void create(const QByteArray &specText, const QString &origin, bool deployNow);
    void setFailure(const QString &error, const QString &field);

    QPointer<Session> m_session;
    bool m_busy = false;
    QString m_error;
    QString m_errorField;
    QStringList m_branches;
    QString m_branchesError;
    int m_branchesGeneration = 0; // an answer for an older loadBranches() is dropped
};

} // namespace pando::desktop
