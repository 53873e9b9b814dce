#pragma once
// SourcesModel: the install's source connections the user may use (GET
// /api/v1/source-connections; docs/user-guide.md, "Private repositories"), and what an
// administrator does with them from the Sources view: add one (a token, or a deploy key with the
// server's host keys), test one on a repository, remove one. A credential goes to the session
// once and is not kept here; nothing shows it again. The list has no events of its own: it
// reloads after each change and when the view asks.
//
// Threading: GUI thread, with its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QtQml/qqmlregistration.h>
#include <utility>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class SourcesModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Desktop.sources is the one list")
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    // No connection the user may use (SessionListModel's count, seen by qmllint through this type).
    Q_PROPERTY(bool empty READ isEmpty NOTIFY countChanged)
    // An add, test or remove is under way.
    Q_PROPERTY(bool busy READ isBusy NOTIFY busyChanged)
    // What the last add, test or remove came to, for people; failed says whether it failed.
    Q_PROPERTY(QString outcome READ outcome NOTIFY outcomeChanged)
    Q_PROPERTY(bool failed READ hasFailed NOTIFY outcomeChanged)
    // Where the last failure was found ("url", "token", "known_hosts", …): the form marks it.
    Q_PROPERTY(QString failedField READ failedField NOTIFY outcomeChanged)
    // The kinds of forge, as the API names them.
    Q_PROPERTY(QStringList kinds READ kinds CONSTANT)

public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        KindRole,      // "github", …
        UrlRole,       // the forge's base address
        OwnerRole,     // "" for every owner
        AuthTextRole,  // "token as x-access-token", "deploy key SHA256:…"
        CheckTextRole, // "never tested", or what the last test said
        StateRole,     // DisplayState: Healthy (last test read), Failed, Neutral (never tested)
    };
    Q_ENUM(Role)

    explicit SourcesModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool isEmpty() const { return m_rows.isEmpty(); }
    bool isBusy() const { return m_busy; }
    QString outcome() const { return m_outcome; }
    bool hasFailed() const { return m_failed; }
    QString failedField() const { return m_failedField; }
    static QStringList kinds();

    void refresh() override;
    // token empty: a deploy key (sshKey with knownHosts). Empty fields are left out.
    Q_INVOKABLE void add(const QString &name, const QString &kind, const QString &url, const QString &owner,
                         const QString &username, const QString &token, const QString &sshKey,
                         const QString &knownHosts);
    // A GitHub App installation: the app's id, the installation's, and the app's private key (PEM).
    Q_INVOKABLE void addGitHubApp(const QString &name, const QString &url, const QString &owner, const QString &appId,
                                  const QString &installationId, const QString &privateKey);
    Q_INVOKABLE void test(const QString &name, const QString &repo);
    Q_INVOKABLE void remove(const QString &name);

Q_SIGNALS:
    void busyChanged();
    void outcomeChanged();
    // An add succeeded: the form may clear itself.
    void added(const QString &name);

protected:
    void onEvent(const QJsonObject &) override {}
    void sessionReplaced() override;

private:
    void apply(const QJsonArray &rows);
    void setBusy(bool busy);
    void finish(const QString &outcome, const Error *failure = nullptr);
    // Adds the connection body describes, with each of optional's fields that is not empty.
    void send(QJsonObject body, const QList<std::pair<QString, QString>> &optional);

    QList<QJsonObject> m_rows;
    bool m_busy = false;
    QString m_outcome;
    bool m_failed = false;
    QString m_failedField;
};

} // namespace pando::desktop
