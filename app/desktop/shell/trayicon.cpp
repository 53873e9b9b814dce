#include "app/desktop/shell/trayicon.h"
#include "core/vocab/vocab.h"

#include "app/desktop/shell/desktopstate.h"
#include "qml/states/statemarks.h"

#include <QIcon>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::desktop {

TrayIcon::TrayIcon(DesktopState *state, QObject *parent) : QObject(parent), m_state(state)
{
    m_icon.setContextMenu(&m_menu);
    connect(&m_icon, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason reason) {
        if (reason == QSystemTrayIcon::Trigger || reason == QSystemTrayIcon::DoubleClick)
            Q_EMIT openRequested();
    });
    connect(m_state, &DesktopState::overallChanged, this, &TrayIcon::updateIcon);
    connect(m_state, &DesktopState::pendingApprovalsChanged, this, &TrayIcon::rebuildMenu);
    AppsModel *apps = m_state->apps();
    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(apps, signal, this, &TrayIcon::rebuildMenu);
    connect(apps, &QAbstractItemModel::dataChanged, this, &TrayIcon::rebuildMenu);
    connect(apps, &QAbstractItemModel::modelReset, this, &TrayIcon::rebuildMenu);
    ApprovalsModel *approvals = m_state->approvals();
    for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(approvals, signal, this, &TrayIcon::rebuildMenu);
    connect(approvals, &QAbstractItemModel::modelReset, this, &TrayIcon::rebuildMenu);
    if (Session *session = m_state->session())
        connect(session, &Session::eventReceived, this, &TrayIcon::onEvent);
    // QSystemTrayIcon::showMessage has no action buttons: clicking the message is its "Open".
    connect(&m_icon, &QSystemTrayIcon::messageClicked, this, [this] {
        if (!m_last.approval.isEmpty())
            Q_EMIT approvalRequested(m_last.approval);
        else if (!m_last.app.isEmpty())
            Q_EMIT appRequested(m_last.app);
        else
            Q_EMIT openRequested();
    });
    updateIcon();
    rebuildMenu();
}

void TrayIcon::updateIcon()
{
    m_icon.setIcon(marks::trayIcon(m_state->overall()));
    m_icon.setToolTip(tr("Pando — %1").arg(m_state->overallText()));
}

QStringList TrayIcon::recentApps() const
{
    const AppsModel *apps = m_state->apps();
    QList<std::pair<qint64, QString>> rows; // (last deploy time, name)
    for (int i = 0; i < apps->rowCount(); ++i) {
        const QModelIndex index = apps->index(i);
        rows.append(
            {index.data(AppsModel::LastDeployTimeRole).toLongLong(), index.data(AppsModel::NameRole).toString()});
    }
    std::ranges::stable_sort(rows, [](const auto &a, const auto &b) { return a.first > b.first; });
    QStringList names;
    for (const auto &row : rows) {
        if (names.size() == RecentApps)
            break;
        names.append(row.second);
    }
    return names;
}

void TrayIcon::rebuildMenu()
{
    m_menu.clear();
    m_menu.addAction(tr("Open Pando"), this, &TrayIcon::openRequested);
    m_menu.addSeparator();
    const QStringList recent = recentApps();
    if (recent.isEmpty()) {
        m_menu.addAction(tr("No apps yet"))->setEnabled(false);
    }
    const AppsModel *apps = m_state->apps();
    for (const QString &name : recent) {
        const QModelIndex index = apps->index(apps->rowOf(name));
        const QString label = tr("%1 — %2").arg(name, index.data(AppsModel::StatusTextRole).toString());
        m_menu.addAction(label, this, [this, name] { Q_EMIT appRequested(name); });
    }
    if (const int waiting = m_state->pendingApprovals(); waiting > 0) {
        m_menu.addSeparator();
        m_menu.addAction(tr("%n approval(s) waiting", nullptr, waiting), this, &TrayIcon::openRequested);
        // "Approve…" opens the request in the window rather than approving from here: signing off
        // without seeing the plan (what will run, what changed) would defeat the approval.
        const ApprovalsModel *approvals = m_state->approvals();
        for (int i = 0; i < approvals->rowCount() && i < RecentApps; ++i) {
            const QModelIndex index = approvals->index(i);
            const QString id = index.data(ApprovalsModel::IdRole).toString();
            m_menu.addAction(tr("Approve… %1").arg(index.data(ApprovalsModel::TitleRole).toString()), this,
                             [this, id] { Q_EMIT approvalRequested(id); });
        }
    }
    m_menu.addSeparator();
    m_menu.addAction(tr("Quit"), this, &TrayIcon::quitRequested);
}

TrayIcon::Notification TrayIcon::notificationFor(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    const QJsonObject data = event.value(u"data"_s).toObject();
    const QString app = event.value(u"app"_s).toString();
    Notification n;
    if (type == core::EventType::ApprovalRequested) {
        n.title = tr("Approval requested: %1").arg(data.value(u"summary"_s).toString());
        n.body =
            tr("%1 asked. Click to see what will change and decide.")
                .arg(data.value(u"requester"_s).toString().section(u'/', 0, 0).remove(QRegularExpression(u"^user:"_s)));
        n.approval = data.value(u"id"_s).toString();
    } else if (type == core::EventType::DeploySucceeded) {
        n.title = tr("%1 deployed").arg(app);
        n.body = data.value(u"url"_s).toString();
        n.app = app;
    } else if (type == core::EventType::DeployFailed) {
        const QString step = data.value(u"step"_s).toString();
        n.title = tr("Deploy of %1 failed").arg(app);
        n.body = step.isEmpty() ? data.value(u"error"_s).toString()
                                : tr("%1: %2").arg(step, data.value(u"error"_s).toString());
        n.app = app;
        n.failure = true;
    } else if (type == core::EventType::RunFinished) {
        const QString status = data.value(u"status"_s).toString();
        if (core::parseRunStatus(status) != core::RunStatus::Failed &&
            core::parseRunStatus(status) != core::RunStatus::Errored)
            return {};
        n.title = tr("Run #%1 of %2/%3 %4")
                      .arg(data.value(u"number"_s).toInteger())
                      .arg(data.value(u"pipeline"_s).toString(), data.value(u"job"_s).toString(), status);
        n.body = data.value(u"error"_s).toString();
        n.failure = true;
    }
    return n;
}

bool TrayIcon::isShowing(const Notification &n) const
{
    if (!m_window || !m_window->isVisible() || !m_window->isActive())
        return false;
    const DesktopState::View view = m_state->currentView();
    if (!n.approval.isEmpty())
        return view == DesktopState::View::Approvals; // the new row is in front of the user
    if (!n.app.isEmpty())
        return view == DesktopState::View::Apps && m_state->apps()->selected().value(u"name"_s).toString() == n.app;
    return view == DesktopState::View::Pipelines;
}

void TrayIcon::onEvent(const QJsonObject &event)
{
    const Notification n = notificationFor(event);
    if (n.title.isEmpty() || isShowing(n))
        return;
    m_last = n;
    if (m_icon.isVisible())
        m_icon.showMessage(n.title, n.body, n.failure ? QSystemTrayIcon::Warning : QSystemTrayIcon::Information);
    Q_EMIT notified(n.title, n.body);
}

} // namespace pando::desktop
