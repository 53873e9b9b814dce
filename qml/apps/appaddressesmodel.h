#pragma once
// The app detail's Addresses tab: the names the edge serves the app at (route.domains in its spec,
// or APP.BASE-DOMAIN), each with its TLS mode and its certificate's state as GET /api/v1/apps/NAME
// answers them — issued by whom and until when, not issued yet, or why the edge failed to get one
// — and the addresses it moved away from, which redirect. Read again when the app changes or a
// deploy of it succeeds (addresses follow the deployed spec).
//
// Threading: GUI-thread model, like its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class AppAddressesModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    // The stable loopback address every app has, besides its names.
    Q_PROPERTY(QString url READ url NOTIFY urlChanged)
    // Only people signed in to Pando reach the app (its spec's route.auth: pando).
    Q_PROPERTY(bool signInOnly READ signInOnly NOTIFY urlChanged)

public:
    enum Role {
        UrlRole = Qt::UserRole + 1,
        TlsRole,              // "auto", "internal", "off"
        TlsTextRole,          // the mode said for people
        MovedRole,            // it redirects to the app's current address
        CertificateTextRole,  // "certificate from ISSUER until DATE", "certificate not issued yet", the error
        CertificateStateRole, // DisplayState::Value: Healthy, Neutral (none yet, or no TLS), Failed
    };
    Q_ENUM(Role)

    explicit AppAddressesModel(QObject *parent = nullptr);
    ~AppAddressesModel() override;

    QString app() const { return m_app; }
    void setApp(const QString &app);
    QString url() const { return m_url; }
    bool signInOnly() const { return m_signInOnly; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Q_INVOKABLE void refresh() override;

    struct Entry {
        QString url;
        QString tls;
        bool moved = false;
        QString tlsText;
        QString certificateText;
        DisplayState::Value certificateState = DisplayState::Neutral;
    };
    // One address of the API's AppView as the tab says it.
    static Entry describe(const QJsonObject &address);

Q_SIGNALS:
    void appChanged();
    void urlChanged();

private:
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void setRows(const QList<Entry> &rows, const QString &url, bool signInOnly = false);

    QString m_app;
    QString m_url;
    bool m_signInOnly = false;
    QList<Entry> m_rows;
};

} // namespace pando::desktop
