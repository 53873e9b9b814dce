#pragma once
// What the Qt Quick Tests of the desktop views drive the views against: for each tst_<view>.qml a
// fresh install (a real API server over fake adapters, with the real pipeline runner and an
// approval policy for apps named gated-*), the administrator's RemoteSession to it behind the
// Desktop singleton the window uses, and a few calls the QML tests use to set the scene the way
// another user or the CLI would (create and deploy an app, set a pipeline). QML reaches it as the
// singleton Fixture of module Pando.Test.
//
// Threading: GUI thread. The Q_INVOKABLE calls wait for the install's answer (spinning the event
// loop, as the session harness does) so that a test reads top to bottom.

#include "app/desktop/session/inprocesssession.h"
#include "app/desktop/session/remotesession.h"
#include "app/desktop/shell/desktopstate.h"
#include "qml/settings/embeddedserver.h"
#include "qml/settings/enginesettingsform.h"
#include "tests/app/server/fakes.h"

#include <QHash>
#include <QObject>
#include <QSettings>
#include <QStringList>
#include <QTemporaryDir>
#include <QVariantMap>
#include <memory>

class QQmlEngine;
class QQuickItem;

namespace pando::test {

class QuickFixture : public QObject {
    Q_OBJECT
    // The administrator's session: the one Desktop shows, and the one to hand views that take one.
    Q_PROPERTY(QObject *session READ session NOTIFY restarted)

public:
    explicit QuickFixture(QObject *parent = nullptr);
    ~QuickFixture() override;

    // Starts a fresh install, session and Desktop for the next QML file's engine (and collects
    // that engine's warnings); false, with why, when the install does not start or answer.
    bool restart(QQmlEngine *engine, QString *why);
    // Stops everything (after the last file).
    void stop();

    QObject *session() const;

    // Creates the app (as the user "admin", "operator", ...; empty: the administrator). Returns the
    // app's JSON, or {error: "..."}.
    Q_INVOKABLE QVariantMap createApp(const QString &name, const QString &as = QString());
    // Queues a deploy of the app's spec (at ref, when given); returns the deploy's JSON (its id),
    // or {error: "..."}.
    Q_INVOKABLE QVariantMap deploy(const QString &app, const QString &as = QString(), const QString &ref = QString());
    // Changes the app's spec so that its health probe asks for a page nobody serves and gives up
    // after a second: its next deploy fails at the health check. Returns the app's JSON, or
    // {error: "..."}.
    Q_INVOKABLE QVariantMap breakHealth(const QString &app);
    // Changes the app's spec to ask for these names (a comma-separated list) with this TLS mode
    // and route.auth (empty: the defaults); its next deploy serves them. Returns the app's JSON,
    // or {error: "..."}.
    Q_INVOKABLE QVariantMap setDomains(const QString &app, const QString &domains, const QString &tls = QString(),
                                       const QString &auth = QString());
    // The edge now says it holds a certificate for host from issuer until notAfterMs (0: none
    // issued yet), or failed to get one with error.
    Q_INVOKABLE void setCertificate(const QString &host, const QString &issuer, qint64 notAfterMs,
                                    const QString &error = QString());
    // The edge now says it made the install CA with this root certificate (PEM).
    Q_INVOKABLE void setInstallCa(const QString &pem);
    // A path in this install's temporary folder, and a file's text (or why it cannot be read).
    Q_INVOKABLE QString temporaryPath(const QString &name) const;
    Q_INVOKABLE QString readFile(const QString &path) const;
    // The session of another user ("member", "viewer", ...; empty: the administrator's).
    Q_INVOKABLE QObject *sessionFor(const QString &user);
    // The deploy's status now ("queued", "succeeded", "awaiting-approval", ...), or the error text.
    Q_INVOKABLE QString deployStatus(const QString &id);
    // Sets a pipeline whose jobs run host tasks (sh): "build" (compile, then unit and lint side
    // by side). Returns the pipeline's JSON, or {error: "..."}.
    Q_INVOKABLE QVariantMap setBuildPipeline(const QString &name);
    // Sets a pipeline from this YAML (again, for a change), its host tasks and resource types
    // allowed. Returns the set's answer ({pipeline, diff, ...}), or {error: "..."}.
    Q_INVOKABLE QVariantMap setPipeline(const QString &name, const QString &yaml);
    // This computer's own engine (in process, fake adapters, fresh settings) and its embedded
    // server for teammates, made on first use; it listens on 127.0.0.1 and a free port when on.
    Q_INVOKABLE QObject *localServer();
    // This computer's engine's settings form, over settings of its own in a temporary file.
    Q_INVOKABLE QObject *engineSettings();
    // The QML engine's warnings since the last call, one a line ("" when there were none).
    Q_INVOKABLE QString takeWarnings();
    // What a screen reader reads of the item: its accessible name and role (a QAccessible::Role).
    // The name is Accessible.name; a button without one is named after its text, as Qt Quick
    // Controls name it once a screen reader turns accessibility on (the offscreen platform has no
    // accessibility bridge to turn it on, so this applies the same rule).
    Q_INVOKABLE QString accessibleName(QObject *item) const;
    Q_INVOKABLE int accessibleRole(QObject *item) const;
    // The item as its window draws it now: the window's picture cut to the item's place in the
    // window (Qt 6.4's grabImage() cuts at the item's place in its parent, which is wrong for any
    // nested item). An image to hand to sameImage() and pixel().
    Q_INVOKABLE QVariant grabItem(QQuickItem *item) const;
    Q_INVOKABLE bool sameImage(const QVariant &a, const QVariant &b) const;
    // The pixel's colour as "#rrggbb" (in device pixels).
    Q_INVOKABLE QString pixel(const QVariant &image, int x, int y) const;

Q_SIGNALS:
    void restarted();

private:
    desktop::RemoteSession *sessionAs(const QString &user);
    QByteArray appSpec(const QString &name, const QString &healthPath = QStringLiteral("/api/v1/health"),
                       int healthTimeoutSeconds = 60) const;

    std::unique_ptr<TestInstall> m_install;
    std::unique_ptr<desktop::RemoteSession> m_session; // the administrator's
    QHash<QString, desktop::RemoteSession *> m_others; // other users' sessions, children of this
    std::unique_ptr<desktop::DesktopState> m_state;
    QStringList m_warnings;

    std::unique_ptr<QTemporaryDir> m_localDir;
    std::unique_ptr<desktop::InProcessSession> m_local;
    std::unique_ptr<QSettings> m_localSettings;
    std::unique_ptr<desktop::EmbeddedServer> m_server;
    std::unique_ptr<QSettings> m_engineSettingsStore;
    std::unique_ptr<desktop::EngineSettingsForm> m_engineSettings;
};

} // namespace pando::test
