#pragma once
// The app detail's Events tab: the app's history, newest first — its deploys started, succeeded
// and failed, approvals asked for and given, spec and secret changes, restarts, backups — with
// when, what and who. The history is the audit log's: the lines on app/NAME, on each recent
// deploy (deploy/ID, the ids from the app's deploy list) and its approval (approval/ID), and on
// the app's services (app/NAME/service/SLOT); the audit log names no app on the others, so they
// are asked for by object. Reading the audit log needs audit.read (administrators): where the
// install refuses, historyError says so plainly and the tab still shows what the live event
// stream brings while it is open, at the top. The recent deploys are the last Deploys at first;
// loadOlder() asks the deploy list for Deploys more (its limit grows, up to the API's 1000) and
// adds only the lines of the deploys not read yet, below those shown.
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
    // The app has deploys older than those read: loadOlder() reads them.
    Q_PROPERTY(bool hasOlder READ hasOlder NOTIFY hasOlderChanged)

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

    // Who did something, for people: "user:ana/token:t1" → "ana" (the person, not the token they
    // used); "system:reconciler" → "Pando (reconciler)". The Deploy on push tab says it alike.
    static QString actorText(const QString &actor);

    // Recent deploys whose lines are asked for (and how many more each loadOlder() adds), the
    // most the deploy list gives, and lines per object.
    static constexpr int Deploys = 20;
    static constexpr int MaxDeploys = 1000;
    static constexpr int LinesPerObject = 200;

    explicit AppEventsModel(QObject *parent = nullptr);
    ~AppEventsModel() override;

    QString app() const { return m_app; }
    void setApp(const QString &app);
    QString historyError() const { return m_historyError; }
    bool hasOlder() const { return m_hasOlder; }
    // How many of the app's deploys are read (Deploys, then Deploys more per loadOlder()).
    int deployLimit() const { return m_deployLimit; }

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Q_INVOKABLE void refresh() override;
    // Reads the lines of the next Deploys older deploys and adds them, keeping what is shown.
    Q_INVOKABLE void loadOlder();

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
    void hasOlderChanged();

private:
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void setHistoryError(const QString &error);
    void setHasOlder(bool hasOlder);
    // Asks for the history; older: only the deploys not read yet, added to the rows shown.
    void load(bool older);
    // Asks for object's lines as part of load generation; finish() runs when the last answers.
    void fetch(const QString &object, quint64 generation);
    void answered(quint64 generation);
    // Whether every entry of part is in whole, in the same order; inserts those of rows (which
    // holds m_rows as a subsequence) that m_rows lacks, where they go.
    static bool isSubsequence(const QList<Entry> &part, const QList<Entry> &whole);
    void insertMissing(const QList<Entry> &rows);

    QString m_app;
    QList<Entry> m_rows; // newest first
    QList<Entry> m_fetched;
    QSet<QString> m_asked;
    int m_pending = 0;
    QString m_historyError;
    int m_deployLimit = Deploys;
    int m_deploysRead = 0;      // how many the last deploy list answer held
    bool m_keepHistory = false; // the load under way adds to the rows (loadOlder)
    bool m_hasOlder = false;
};

} // namespace pando::desktop
