#pragma once
// The app detail's Events tab: the app's history, newest first — its deploys started, succeeded
// and failed, approvals asked for and given, spec and secret changes, restarts, backups — with
// when, what and who. The history is the audit log's: the lines on app/NAME, on each recent
// deploy (deploy/ID, the ids from the app's deploy list) and its approval (approval/ID), and on
// the app's services (app/NAME/service/SLOT); the audit log names no app on the others, so they
// are asked for by object. Reading the audit log needs audit.read (administrators): where the
// install refuses, historyError says so plainly and the tab still shows what the live event
// stream brings while it is open, at the top.
//
// Threading: GUI-thread model, like its Session.

#include "app/desktop/session/sessionlistmodel.h"
#include "qml/states/displaystate.h"

#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class AppEventsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString app READ app WRITE setApp NOTIFY appChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    // Why the history could not be read (the audit log refused, say); the live events still come.
    Q_PROPERTY(QString historyError READ historyError NOTIFY historyErrorChanged)

public:
    enum Role {
        TimeMsRole = Qt::UserRole + 1,
        TimeTextRole,
        TitleRole,  // "Deploy succeeded", translated
        DetailRole, // the reason, the ref, the secret's name
        ActorRole,  // who did it: "admin", "Pando (reconciler)"
        StateRole,  // DisplayState::Value
        LiveRole,   // true: from the event stream, not (yet) read from the audit log
        ObjectRole, // the audit object ("deploy/ID"); empty for live events
    };
    Q_ENUM(Role)

    // Recent deploys whose lines are asked for, and lines per object.
    static constexpr int Deploys = 20;
    static constexpr int LinesPerObject = 200;

    explicit AppEventsModel(QObject *parent = nullptr);
    ~AppEventsModel() override;

    QString app() const { return m_app; }
    void setApp(const QString &app);
    QString historyError() const { return m_historyError; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Q_INVOKABLE void refresh() override;

    struct Entry {
        qint64 seq = 0; // the audit line's; 0 for a live event
        qint64 timeMs = 0;
        QString title;
        QString detail;
        QString actor;
        DisplayState::Value state = DisplayState::Neutral;
        QString object;
    };
    // One audit line, one live event, as the tab says them; nullopt for what it leaves out.
    static Entry describeLine(const QJsonObject &line);
    static std::optional<Entry> describeEvent(const QJsonObject &event);

Q_SIGNALS:
    void appChanged();
    void historyErrorChanged();

private:
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void setHistoryError(const QString &error);
    // Asks for object's lines as part of load generation; finish() runs when the last answers.
    void fetch(const QString &object, quint64 generation);
    void answered(quint64 generation);

    QString m_app;
    QList<Entry> m_rows; // newest first
    QList<Entry> m_fetched;
    QSet<QString> m_asked;
    int m_pending = 0;
    QString m_historyError;
};

} // namespace pando::desktop
