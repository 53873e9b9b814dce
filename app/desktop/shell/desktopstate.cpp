#include "app/desktop/shell/desktopstate.h"
#include "core/vocab/vocab.h"

#include "app/desktop/session/inprocesssession.h"

#include <QJSEngine>
#include <QLocale>
#include <QPointer>
#include <QSettings>
#include <QTimer>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
QPointer<DesktopState> s_instance;
}

DesktopState::DesktopState(Session *session, QObject *parent)
    : QObject(parent), m_session(nullptr), m_initial(session), m_settings(std::make_unique<QSettings>()),
      m_connections(std::make_unique<ConnectionsModel>()),
      m_embedded(std::make_unique<EmbeddedServer>(qobject_cast<InProcessSession *>(session), m_settings.get())),
      m_engineSettings(
          std::make_unique<EngineSettingsForm>(m_settings.get(), qobject_cast<InProcessSession *>(session) != nullptr))
{
    connect(&m_apps, &AppsModel::summaryChanged, this, &DesktopState::overallChanged);
    connect(&m_apps, &AppsModel::engineChanged, this, &DesktopState::connectionChanged);
    connect(&m_apps, &AppsModel::engineChanged, this, &DesktopState::overallChanged);
    // A pipeline's last run failing counts too (the rows change on run.* events).
    for (const auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(&m_pipelines, signal, this, &DesktopState::overallChanged);
    connect(&m_pipelines, &QAbstractItemModel::modelReset, this, &DesktopState::overallChanged);
    connect(&m_pipelines, &QAbstractItemModel::dataChanged, this, &DesktopState::overallChanged);
    connect(m_connections.get(), &ConnectionsModel::switchRequested, this, &DesktopState::switchTo);
    connect(m_embedded.get(), &EmbeddedServer::statusChanged, this, &DesktopState::serverChanged);
    connect(m_embedded->connected(), &ConnectedModel::countChanged, this, &DesktopState::serverChanged);
    if (auto *local = qobject_cast<InProcessSession *>(session)) {
        // Serving teammates is remembered: it comes back once this computer's engine is up.
        connect(local, &Session::stateChanged, m_embedded.get(), [this](Session::State state) {
            if (state == Session::State::Connected && m_embedded->isEnabled() && !m_embedded->isRunning())
                m_embedded->apply();
        });
    }
    setSession(session);
}

void DesktopState::setSession(Session *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    m_apps.setSession(session);
    m_approvals.setSession(session);
    m_pipelines.setSession(session);
    m_runs.setSession(session);
    m_runTree.setSession(session);
    m_activity.setSession(session);
    m_sources.setSession(session);
    m_runtimes.setSession(session);
    if (session) {
        connect(session, &Session::eventReceived, this, &DesktopState::onEvent);
        connect(session, &Session::stateChanged, this, [this](Session::State state) {
            if (state == Session::State::Connected)
                refreshApprovals();
        });
        if (session->state() == Session::State::Connected)
            refreshApprovals();
    }
    m_pendingApprovals = 0;
    Q_EMIT pendingApprovalsChanged();
    Q_EMIT connectionChanged();
    Q_EMIT overallChanged();
    Q_EMIT serverChanged();
}

void DesktopState::switchTo(int row)
{
    Session *next = nullptr;
    if (row == 0) {
        if (!qobject_cast<InProcessSession *>(m_initial)) {
            m_connections->setError(tr("This desktop was started with --server: start it without --server to use "
                                       "this computer's engine."));
            return;
        }
        next = m_initial;
    } else {
        const auto install = m_connections->installAt(row);
        const QString token = m_connections->tokenAt(row);
        if (!install)
            return;
        if (token.isEmpty()) {
            m_connections->setError(
                tr("The token for %1 is missing: remove this connection and pair again.").arg(install->name));
            return;
        }
        auto *remote = new RemoteSession(install->url, token, this);
        remote->setPinnedFingerprint(install->fingerprint);
        next = remote;
    }
    Session *previous = m_remote;
    m_remote = next == m_initial ? nullptr : next;
    setSession(next);
    m_connections->setCurrentRow(row);
    if (next != m_initial)
        next->open();
    if (previous && previous != next)
        previous->deleteLater();
}

DesktopState::~DesktopState() = default;

DesktopState *DesktopState::create(QQmlEngine *, QJSEngine *)
{
    Q_ASSERT_X(s_instance, "DesktopState::create", "setInstance() must come before QML asks for Desktop");
    QJSEngine::setObjectOwnership(s_instance, QJSEngine::CppOwnership);
    return s_instance;
}

void DesktopState::setInstance(DesktopState *state)
{
    s_instance = state;
}

void DesktopState::setCurrentView(View view)
{
    if (view == m_currentView)
        return;
    m_currentView = view;
    Q_EMIT currentViewChanged();
}

void DesktopState::showApproval(const QString &id)
{
    // The list may not have heard of a request that is seconds old: select it once it arrives.
    if (!m_approvals.selectId(id)) {
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = connect(&m_approvals, &ApprovalsModel::countChanged, this, [this, id, once] {
            if (m_approvals.selectId(id))
                disconnect(*once);
        });
        QTimer::singleShot(10000, this, [once] { disconnect(*once); });
    }
    Q_EMIT showApprovalsRequested();
}

QString DesktopState::connectionName() const
{
    return m_session ? m_session->displayName() : tr("No connection");
}

DisplayState::Value DesktopState::overall() const
{
    // The most pressing state wins the colour and the icon; the text names every one.
    if (!m_apps.isEngineReachable())
        return DisplayState::Stopped;
    if (m_apps.failingCount() > 0 || m_pipelines.failingCount() > 0)
        return DisplayState::Failed;
    if (m_pendingApprovals > 0)
        return DisplayState::Waiting;
    if (m_apps.busyCount() > 0)
        return DisplayState::Progress;
    return DisplayState::Healthy;
}

QString DesktopState::overallText() const
{
    if (!m_apps.isEngineReachable())
        return m_apps.engineText();
    QStringList parts;
    if (const int n = m_apps.failingCount(); n > 0)
        parts << tr("%n app(s) failing", nullptr, n);
    if (const int n = m_pipelines.failingCount(); n > 0)
        parts << tr("%n pipeline(s) failing", nullptr, n);
    if (m_pendingApprovals > 0)
        parts << tr("%n approval(s) waiting", nullptr, m_pendingApprovals);
    if (const int n = m_apps.busyCount(); n > 0)
        parts << tr("%n deploy(s) in progress", nullptr, n);
    if (!parts.isEmpty())
        return parts.join(u" · "_s);
    return m_apps.rowCount() == 0 ? tr("No apps yet") : tr("All apps healthy");
}

QString DesktopState::serverText() const
{
    // Only this computer's engine serves teammates from here; a remote install's server is its own.
    if (!m_session || m_session != m_initial || !m_embedded->isAvailable())
        return {};
    QStringList who;
    if (m_embedded->isRunning()) {
        ConnectedModel *connected = m_embedded->connected();
        for (int row = 0; row < connected->rowCount(); ++row)
            who << connected->index(row).data(ConnectedModel::AccountRole).toString();
    }
    return serverWords(m_embedded->isRunning(), who);
}

QString DesktopState::serverWords(bool serving, const QStringList &accounts)
{
    if (!serving)
        return tr("Not serving teammates");
    QStringList who;
    for (const QString &account : accounts) {
        const QString name = account.isEmpty() ? tr("the initial token") : account;
        if (!who.contains(name))
            who << name;
    }
    return who.isEmpty() ? tr("Serving teammates · nobody connected")
                         : tr("Serving teammates · %1 connected").arg(QLocale().createSeparatedList(who));
}

void DesktopState::refresh()
{
    m_apps.refresh();
    refreshApprovals();
    m_pipelines.refresh();
    m_runs.refresh();
    m_runTree.refresh();
    m_runtimes.refresh();
}

void DesktopState::refreshApprovals()
{
    if (!m_session)
        return;
    QPointer<DesktopState> self(this);
    m_session->approvals(u"pending"_s, [self](const Result<QJsonArray> &pending) {
        // An install without approvals answers with an error: nothing waits there.
        const int count = pending ? int(pending->size()) : 0;
        if (!self || count == self->m_pendingApprovals)
            return;
        self->m_pendingApprovals = count;
        Q_EMIT self->pendingApprovalsChanged();
        Q_EMIT self->overallChanged();
    });
}

void DesktopState::onEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if ((type && core::isApprovalEvent(*type)) || type == core::EventType::DeployFailed ||
        type == core::EventType::DeploySucceeded ||
        (type == core::EventType::DeployStep &&
         event.value(u"data"_s).toObject().value(u"name"_s).toString() == u"approval"_s))
        refreshApprovals();
}

} // namespace pando::desktop
