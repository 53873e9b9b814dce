#pragma once
// Package approvals (QML module Pando.Approvals): the Approvals view — deploys and pipeline steps
// that wait for sign-off, what each will change (the deploy's plan, the step's message and
// inputs), who asked and when it expires, and Approve/Reject with an optional comment.
// ApprovalsModel holds every decision and formats every fact; the QML only binds.
//
// Threading: the model lives on the GUI thread with its Session and applies the session's answers
// and events there; it never blocks.

#include "app/desktop/session/sessionlistmodel.h"

#include <QTimer>
#include <QVariantList>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

namespace pando::desktop {

// The base named in full: QML tooling (qmltyperegistrar) matches base classes by their full name.
class ApprovalsModel : public pando::desktop::SessionListModel {
    Q_OBJECT
    QML_ELEMENT
    // SessionListModel's, declared again: its type is in no QML module, so QML tooling cannot see it.
    Q_PROPERTY(QObject *session READ sessionObject WRITE setSessionObject NOTIFY sessionChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool loading READ isLoading NOTIFY loadingChanged)
    Q_PROPERTY(bool loaded READ isLoaded NOTIFY loadingChanged)
    // Why the last refresh failed, or why a decision on a request that has since gone failed.
    Q_PROPERTY(QString error READ error NOTIFY errorChanged)
    Q_PROPERTY(int selectedRow READ selectedRow WRITE setSelectedRow NOTIFY selectedChanged)
    // The selected row's roles by name (id empty when nothing is selected); follows live changes.
    Q_PROPERTY(QVariantMap selected READ selected NOTIFY selectedChanged)
    // What the selected request will change, as [{label, value}] lines ready to show; empty until
    // the request's plan has arrived.
    Q_PROPERTY(QVariantList planLines READ planLines NOTIFY selectedChanged)
    // The selected request's plan is being fetched; why fetching it failed.
    Q_PROPERTY(bool planLoading READ isPlanLoading NOTIFY selectedChanged)
    Q_PROPERTY(QString planError READ planError NOTIFY selectedChanged)

public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        KindRole,          // deploy, pipeline-step
        ObjectRole,        // deploy/<id> or run/<id>/step/<name>
        RequesterRole,     // "user:alice", "token:ci", ...
        SummaryRole,       // why sign-off is needed
        StatusRole,        // pending (rows leave the model once decided)
        CreatedMsRole,     // ms since the epoch
        ExpiresMsRole,     // ms since the epoch; 0: never
        ApproversRole,     // who may decide: usernames and role:<role>; empty: any other person
        DecidedByRole,     // empty while pending
        ReasonRole,        // the decision's comment
        TitleRole,         // one line for the list: "Deploy of web" / "Step deploy-prod of release #4"
        KindTextRole,      // "deploy", "pipeline step", translated
        RequesterTextRole, // the requester without its "user:" prefix
        ExpiresTextRole,   // "expires in 2 hours", "never expires", translated; follows the clock
        CreatedTextRole,   // "asked 5 minutes ago"
        BusyRole,          // a decision on this row is on its way
        ActionErrorRole,   // why the last decision was refused (the requester, someone else first, expired)
    };
    Q_ENUM(Role)

    explicit ApprovalsModel(QObject *parent = nullptr);
    ~ApprovalsModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QVariantMap selected() const;
    QVariantList planLines() const;
    bool isPlanLoading() const;
    QString planError() const;
    // The row of the request with this id; -1 when there is none.
    int rowOf(const QString &id) const;
    // Selects the request with this id (false when it is not pending here).
    Q_INVOKABLE bool selectId(const QString &id);

    // Reloads what waits from the session.
    Q_INVOKABLE void refresh() override;
    // Decides the request in this row; the row leaves when the install says it is decided, or
    // shows in actionError why the install refused.
    Q_INVOKABLE void approve(int row, const QString &reason);
    Q_INVOKABLE void reject(int row, const QString &reason);

    // The clock the relative times read (ms since the epoch); tests set it.
    void setNow(std::function<qint64()> now) { m_now = std::move(now); }

Q_SIGNALS:

private:
    struct Row {
        QJsonObject approval; // the API's Approval, with its plan once fetched
        bool planLoaded = false;
        bool planLoading = false;
        QString planError;
        bool busy = false;
        QString actionError;
    };
    QVariant roleValue(const Row &row, int role) const;
    QString relative(qint64 ms) const;
    void onEvent(const QJsonObject &event) override;
    void sessionReplaced() override;
    void selectionMoved() override;
    void apply(const QJsonObject &approval);
    void remove(const QString &id);
    void rowChanged(int row);
    void fetchPlan(int row);
    void decide(int row, bool approve, const QString &reason);

    QList<Row> m_rows;
    QTimer m_tick; // the relative times ("expires in 5 minutes") move on
    std::function<qint64()> m_now;
};

} // namespace pando::desktop
