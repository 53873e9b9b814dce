#include "app/desktop/shell/trayicon.h"

#include "app/desktop/shell/desktopstate.h"

#include <QIcon>

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
    updateIcon();
    rebuildMenu();
}

void TrayIcon::updateIcon()
{
    m_icon.setIcon(QIcon(DesktopState::iconFor(m_state->overall())));
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
    }
    m_menu.addSeparator();
    m_menu.addAction(tr("Quit"), this, &TrayIcon::quitRequested);
}

} // namespace pando::desktop
