#pragma once
// SourcesModel: the install's source connections the user may use (GET
// /api/v1/source-connections; docs/user-guide.md, "Private repositories"), and what an
// administrator does with them from the Sources view: add one (a token, or a deploy key with the
// server's host keys, a GitHub App, or an OAuth application authorized in the browser), test one
// on a repository, remove one, authorize an OAuth one again. A credential goes to the session
// once and is not kept here; nothing shows it again. The list has no events of its own: it
// reloads after each change and when the view asks.
//
// Threading: GUI thread, with its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QPointer>
#include <QUrl>
#include <QtQml/qqmlregistration.h>
#include <functional>
#include <utility>

class QTimer;

namespace pando::client {
class OAuthLoopback;
}

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
    // An OAuth authorization waits for the forge to send the browser back: the page it opened,
    // shown for people whose browser did not come up. Empty when none waits.
    Q_PROPERTY(QString authorizeUrl READ authorizeUrl NOTIFY busyChanged)

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
    QString authorizeUrl() const { return m_authorizeUrl; }
    // What opens the forge's page (default: the desktop's browser, QDesktopServices); tests play
    // the browser.
    void setUrlOpener(std::function<void(const QUrl &)> open) { m_openUrl = std::move(open); }

    void refresh() override;
    // token empty: a deploy key (sshKey with knownHosts). Empty fields are left out.
    Q_INVOKABLE void add(const QString &name, const QString &kind, const QString &url, const QString &owner,
                         const QString &username, const QString &token, const QString &sshKey,
                         const QString &knownHosts);
    // A GitHub App installation: the app's id, the installation's, and the app's private key (PEM).
    Q_INVOKABLE void addGitHubApp(const QString &name, const QString &url, const QString &owner, const QString &appId,
                                  const QString &installationId, const QString &privateKey);
    // An OAuth application (GitHub, GitLab, Gitea, Bitbucket Cloud): its client id and secret. The
    // forge's page opens in the browser; once the user authorizes Pando there, the forge sends the
    // browser back to a loopback address this model listens on, and the connection is added.
    Q_INVOKABLE void addOAuthApp(const QString &name, const QString &kind, const QString &url, const QString &owner,
                                 const QString &clientId, const QString &clientSecret);
    // The same for an OAuth connection there is, whose renewal the forge refuses.
    Q_INVOKABLE void authorize(const QString &name);
    // Stops waiting for the forge.
    Q_INVOKABLE void cancelAuthorization();
    // The credential kind ("token", "ssh-key", "github-app", "oauth") of the connection called
    // name; empty for one not listed.
    Q_INVOKABLE QString authOf(const QString &name) const;
    // Its kind ("github", …, "registry"), as authOf.
    Q_INVOKABLE QString kindOf(const QString &name) const;
    // Reads repo through a forge's connection, or an image (empty: the login alone) through a
    // registry's.
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
    QString field(const QString &name, const QString &key) const;
    void setBusy(bool busy);
    void finish(const QString &outcome, const Error *failure = nullptr);
    // Adds the connection body describes, with each of optional's fields that is not empty.
    void send(QJsonObject body, const QList<std::pair<QString, QString>> &optional);
    // Listens for the forge's answer and has begin() ask the session for the page to open.
    using Begin = std::function<void(const QString &redirectUri, std::function<void(const Result<QJsonObject> &)>)>;
    void authorizeInBrowser(const Begin &begin, bool adding);
    void endAuthorization();

    QList<QJsonObject> m_rows;
    bool m_busy = false;
    QString m_outcome;
    bool m_failed = false;
    QString m_failedField;
    QPointer<client::OAuthLoopback> m_loopback;
    QString m_authorizeUrl;
    std::function<void(const QUrl &)> m_openUrl;
};

} // namespace pando::desktop
