#pragma once
// SourceRepositoriesModel: the repositories one source connection's token can see, as its forge's
// API lists them (GET /api/v1/source-connections/{name}/repositories), for the Sources view's
// "Repositories" list and its "Create app…" action. Loaded on demand, not on every selection: a
// listing is a round of requests to the forge. A connection without an API (a deploy key, a
// generic git host) or a forge that refuses says why in error, with the hint.
//
// Threading: GUI thread, with its Session.

#include "app/desktop/session/sessionlistmodel.h"

#include <QJsonObject>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class SourceRepositoriesModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // The connection whose repositories to list; changing it empties the list until load().
    Q_PROPERTY(QString connection READ connection WRITE setConnection NOTIFY connectionChanged)
    Q_PROPERTY(bool busy READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadedChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)

public:
    enum Role {
        FullNameRole = Qt::UserRole + 1, // "acme/api"
        CloneUrlRole,                    // the https address an app reads
        WebUrlRole,
        DefaultBranchRole, // "" when the forge's listing does not say
        PrivateRole,
        VisibilityTextRole, // "private" or "public", translated
        AppNameRole,        // what a new app from it is called: the repository's own name, as an app name
    };
    Q_ENUM(Role)

    explicit SourceRepositoriesModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString connection() const { return m_connection; }
    void setConnection(const QString &connection);

    // Lists the connection's repositories: what the view's button calls.
    Q_INVOKABLE void load();
    // Lists them again once they were listed (Ctrl+R); never the first time on its own.
    void refresh() override;

    // "acme/platform/API_v2" → "api-v2": lower case letters, digits and '-'.
    static QString appNameFor(const QString &fullName);

Q_SIGNALS:
    void connectionChanged();
    void loadedChanged();

protected:
    void onEvent(const QJsonObject &) override {}
    // Loaded on demand only: a session coming back does not list the forge on its own.
    void onSessionState(Session::State) override {}
    void sessionReplaced() override;

private:
    void apply(const QJsonArray &rows);
    void setLoaded(bool loaded);

    QString m_connection;
    QList<QJsonObject> m_rows;
};

} // namespace pando::desktop
