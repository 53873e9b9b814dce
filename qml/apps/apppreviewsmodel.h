#pragma once
// The previews part of the app detail's "Deploy on push" tab (docs/autodeploy.md, "Preview
// deployments"): one row per pull request that has a preview app, with its branch and commit,
// the preview app's state and address, when it goes without a push, and a way to remove it now,
// as GET /api/v1/apps/NAME/previews answers them. Read again on the app's webhook deliveries and
// on its previews' deploy and removal events.
//
// Threading: GUI-thread model, like its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class AppPreviewsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)

public:
    enum Role {
        NumberRole = Qt::UserRole + 1, // the pull request's number
        TitleRole,
        PreviewAppRole,  // "NAME-pr-N"
        BranchRole,      // the head branch, "(fork)" added for a fork's
        CommitRole,      // its first 12 characters
        StateRole,       // DisplayState::Value of the preview app
        StatusTextRole,  // the same for people
        UrlRole,         // where the preview app is reached; empty before its route
        ExpiresTextRole, // "goes on 8 Dec 14:02 without a push"
        WebUrlRole,      // the pull request's page
        AuthorRole,
    };
    Q_ENUM(Role)

    explicit AppPreviewsModel(QObject *parent = nullptr);

    QString app() const { return m_app; }
    void setApp(const QString &app);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Q_INVOKABLE void refresh() override;
    // Removes the preview of pull request `number` now (its row goes once the install says so);
    // a refusal is said in error.
    Q_INVOKABLE void remove(int number);

Q_SIGNALS:
    void appChanged();

protected:
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;

private:
    void show(const QList<QJsonObject> &rows);

    QString m_app;
    QList<QJsonObject> m_rows;
};

} // namespace pando::desktop
