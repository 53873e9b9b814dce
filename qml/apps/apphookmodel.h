#pragma once
// The app detail's "Deploy on push" tab (docs/autodeploy.md): what the app follows and how (a
// forge's webhook, polling, or off), the webhook's address and whether it has a secret (who set it
// and when), a secret just made, shown this once, and the newest deliveries with what became of
// each (deployed, ignored and why, failed and why), as GET /api/v1/apps/NAME/hook answers them.
// Read again when the app changes and on its deploys' events (a delivery that deploys is followed
// by them); a delivery that deploys nothing raises no event, so the tab also reads on Refresh.
//
// Threading: GUI-thread model, like its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class AppHookModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadingChanged)
    // Why the last read or the last change of the secret failed, and the field it is about
    // ("secret"; empty when the failure names none).
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(QString errorField READ errorField NOTIFY errorChanged)
    // A new secret is being made or set.
    Q_PROPERTY(bool busy READ isBusy NOTIFY busyChanged)
    // "off", "push" or "poll" (source.autodeploy in the spec), and the same for people.
    Q_PROPERTY(QString mode READ mode NOTIFY hookChanged)
    Q_PROPERTY(QString modeText READ modeText NOTIFY hookChanged)
    // What pushes deploy: "branch main", "tags matching v*".
    Q_PROPERTY(QString follows READ follows NOTIFY hookChanged)
    // The webhook's path on the API ("/api/v1/hooks/NAME"), and the address to give the forge:
    // the remote install's base address with the path; for this computer's engine only the path,
    // which hookHint says how a forge reaches.
    Q_PROPERTY(QString hookPath READ hookPath NOTIFY hookChanged)
    Q_PROPERTY(QString hookUrl READ hookUrl NOTIFY hookChanged)
    Q_PROPERTY(QString hookHint READ hookHint NOTIFY hookChanged)
    Q_PROPERTY(bool secretSet READ isSecretSet NOTIFY hookChanged)
    // "set by alice at 10:42", "none yet".
    Q_PROPERTY(QString secretText READ secretText NOTIFY hookChanged)
    // For polling: how often, when it last looked and what it found or why it failed; empty
    // otherwise.
    Q_PROPERTY(QString pollText READ pollText NOTIFY hookChanged)
    Q_PROPERTY(bool pollFailed READ pollFailed NOTIFY hookChanged)
    // The secret makeSecret() just made, kept only until another is made or set, the app or the
    // session changes, or the model goes (the tab is left): the install never shows it again.
    Q_PROPERTY(QString newSecret READ newSecret NOTIFY newSecretChanged)
    // Registering the webhook on the forge through the app's source connection: the address
    // others reach this install at, when the session knows it (a remote one), to offer; and what
    // the last registration did ("Registered at URL (hook 42)"), empty before one.
    Q_PROPERTY(QString publicBase READ publicBase NOTIFY hookChanged)
    Q_PROPERTY(QString registered READ registered NOTIFY registeredChanged)

public:
    enum Role {
        ReceivedRole = Qt::UserRole + 1, // local time, as the lists show it
        ReceivedMsRole,
        DeliveryIdRole, // the forge's delivery id
        ForgeRole,      // "github", "gitlab", "gitea", ...
        EventRole,      // the forge's event name ("push", "ping", ...)
        RefRole,
        CommitRole, // its first 12 characters
        PusherRole,
        OutcomeRole,      // "accepted", "deployed", "removed" (a closed pull request's preview), "ignored", "failed"
        OutcomeTextRole,  // the same for people
        OutcomeStateRole, // DisplayState::Value: Healthy (deployed), Neutral (accepted, ignored), Failed
        DetailRole,       // why (ignored, failed) or what (accepted, deployed)
        DeployIdRole,     // the deploy it queued, if any
        SummaryRole,      // "deploy ID" when it queued one, else the detail
    };
    Q_ENUM(Role)

    // Deliveries read at a time (the install keeps up to 500 per app).
    static constexpr int Deliveries = 50;

    explicit AppHookModel(QObject *parent = nullptr);
    ~AppHookModel() override;

    QString app() const { return m_app; }
    void setApp(const QString &app);
    QString errorField() const { return m_errorField; }
    bool isBusy() const { return m_busy; }
    QString mode() const { return m_hook.mode; }
    QString modeText() const;
    QString follows() const;
    QString hookPath() const { return m_hook.path; }
    QString hookUrl() const;
    QString hookHint() const;
    bool isSecretSet() const { return m_hook.secretSet; }
    QString secretText() const;
    QString pollText() const;
    bool pollFailed() const { return m_hook.mode == u"poll" && !m_hook.pollError.isEmpty(); }
    QString newSecret() const { return m_newSecret; }
    QString publicBase() const;
    QString registered() const { return m_registered; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Q_INVOKABLE void refresh() override;
    // A new random secret, made by the install and shown once in newSecret; deliveries signed with
    // the old one are refused from then on.
    Q_INVOKABLE void makeSecret();
    // Sets a secret the user chose (16 to 256 visible ASCII characters: the install says so in
    // error, at "secret", when it is not); it is not shown back.
    Q_INVOKABLE void setSecret(const QString &secret);
    // Put the address and the new secret on the clipboard.
    Q_INVOKABLE void copyHookUrl() const;
    Q_INVOKABLE void copyNewSecret() const;
    // Drops the new secret before the tab is left (the user copied it).
    Q_INVOKABLE void forgetNewSecret();
    // Registers the webhook on the app's forge at publicUrl with a new secret (the install says
    // what was wrong in error, at "url" or "source.connection").
    Q_INVOKABLE void registerOnForge(const QString &publicUrl);

    struct Delivery {
        QString id;
        QString forge;
        QString event;
        QString ref;
        QString commit;
        QString pusher;
        QString outcome;
        QString detail;
        QString deployId;
        qint64 receivedMs = 0;
    };
    // The webhook as GET /api/v1/apps/NAME/hook answers it, without the deliveries.
    struct Hook {
        QString mode;
        QString branch;
        QString tags;
        QString path;
        bool secretSet = false;
        QString secretSetBy;
        qint64 secretSetMs = 0;
        qint64 pollEveryS = 0;
        qint64 polledMs = 0;
        QString pollCommit;
        QString pollError;
        bool operator==(const Hook &) const = default;
    };
    static Hook hookOf(const QJsonObject &json);
    static Delivery deliveryOf(const QJsonObject &json);
    static DisplayState::Value outcomeState(const QString &outcome);
    static QString outcomeText(const QString &outcome);

Q_SIGNALS:
    void appChanged();
    void hookChanged();
    void busyChanged();
    void newSecretChanged();
    void registeredChanged();

private:
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void show(const Hook &hook, const QList<Delivery> &rows);
    void changeSecret(const QString &chosen);
    // One change of the hook through send (a new secret, a registration on the forge): busy while
    // it is under way; when it is made, the secret shown before signs nothing any more and goes,
    // made(answer) says what came of it, and the hook is read again.
    void change(const std::function<void(Session::ObjectCallback)> &send,
                std::function<void(const QJsonObject &answer)> made);
    void forgetRegistered();
    void setBusy(bool busy);
    // secret: the failure is a change of the secret's, which a later read does not clear.
    void setFailure(const Error &error, bool secret);
    void clearFailure();

    QString m_app;
    Hook m_hook;
    QList<Delivery> m_rows;
    QString m_errorField;
    QString m_newSecret;
    QString m_registered;
    bool m_busy = false;
    bool m_secretFailed = false;
    quint64 m_changeGeneration = 0; // answers to a secret change for another app or session are dropped
};

} // namespace pando::desktop
