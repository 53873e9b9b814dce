#pragma once
// DomainSettings (QML, Pando.Settings): the install's domain policy in the Settings view — the
// base domain every app without names of its own is served under, the names apps may use, and
// whether they may use wildcards (GET and PUT /api/v1/settings; docs/edge.md) — and the install
// CA's root certificate, to save where the user trusts certificates (GET /api/v1/edge/ca).
// Only administrators change the policy; the API has no "who am I", so the form asks for the
// user list, which only administrators may read, and shows the settings read-only when it is
// refused. A refused change keeps what the user typed and names the field the API blamed.
//
// Threading: GUI thread, like its Session; nothing here blocks.

#include "app/desktop/session/session.h"

#include <QObject>
#include <QPointer>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

class DomainSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    // The Session to show (a pando::desktop::Session; QObject so QML needs no session type).
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    // The settings, whether this account may change them and whether the CA exists are all known:
    // the view's controls stay as they are from here on.
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY changed)
    Q_PROPERTY(bool busy READ isBusy NOTIFY changed)
    Q_PROPERTY(bool canEdit READ canEdit NOTIFY changed)
    Q_PROPERTY(QString baseDomain READ baseDomain NOTIFY changed)
    // The allowed names as the field shows them: "a.example, b.example"; empty: any name.
    Q_PROPERTY(QString allowedDomains READ allowedDomains NOTIFY changed)
    Q_PROPERTY(bool wildcardDomains READ wildcardDomains NOTIFY changed)
    // Why the last read or save failed; errorField: the setting it names ("base_domain", ...).
    Q_PROPERTY(QString error READ error NOTIFY changed)
    Q_PROPERTY(QString errorField READ errorField NOTIFY changed)
    // "Saved" after a save the install accepted, until the next one.
    Q_PROPERTY(QString status READ status NOTIFY changed)
    // The install CA exists: saveCa() can write it.
    Q_PROPERTY(bool caAvailable READ isCaAvailable NOTIFY caChanged)
    // What the CA row says: that it does not exist yet, where it was saved, why saving failed.
    Q_PROPERTY(QString caText READ caText NOTIFY caChanged)
    Q_PROPERTY(bool caFailed READ isCaFailed NOTIFY caChanged)

public:
    explicit DomainSettings(QObject *parent = nullptr);
    ~DomainSettings() override;

    QObject *sessionObject() const { return m_session; }
    void setSessionObject(QObject *session);

    bool isLoaded() const { return m_loaded && m_canEditKnown && m_caKnown; }
    bool isBusy() const { return m_busy; }
    bool canEdit() const { return m_canEdit; }
    QString baseDomain() const { return m_baseDomain; }
    QString allowedDomains() const { return m_allowedDomains; }
    bool wildcardDomains() const { return m_wildcardDomains; }
    QString error() const { return m_error; }
    QString errorField() const { return m_errorField; }
    QString status() const { return m_status; }
    bool isCaAvailable() const { return !m_caPem.isEmpty(); }
    QString caText() const { return m_caText; }
    bool isCaFailed() const { return m_caFailed; }

    // Reads the settings, whether this account may change them, and whether the install CA exists.
    Q_INVOKABLE void refresh();
    // Sends the three settings; allowedDomains is comma-separated (empty: any name).
    Q_INVOKABLE void save(const QString &baseDomain, const QString &allowedDomains, bool wildcardDomains);
    // Writes the install CA's root (PEM) to file.
    Q_INVOKABLE void saveCa(const QUrl &file);

Q_SIGNALS:
    void sessionChanged();
    void changed();
    void caChanged();

private:
    // The settings as GET or PUT answered them; saved: a PUT.
    void answered(const Result<QJsonObject> &settings, bool saved);
    void apply(const QJsonObject &settings);
    void fail(const Error &error);
    void setCa(const QByteArray &pem, const QString &text, bool failed);

    QPointer<Session> m_session;
    quint64 m_generation = 0;
    quint64 m_readGeneration = 0;
    bool m_loaded = false;
    bool m_canEditKnown = false;
    bool m_caKnown = false;
    bool m_busy = false;
    bool m_canEdit = false;
    QString m_baseDomain;
    QString m_allowedDomains;
    bool m_wildcardDomains = false;
    QString m_error;
    QString m_errorField;
    QString m_status;
    QByteArray m_caPem;
    QString m_caText;
    bool m_caFailed = false;
};

} // namespace pando::desktop
