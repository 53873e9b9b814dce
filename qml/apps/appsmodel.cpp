#include "qml/apps/appsmodel.h"
#include "core/vocab/vocab.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>
#include <QSet>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

QString deployWord(const QString &status)
{
    const auto parsed = core::parseDeployStatus(status);
    if (!parsed)
        return status;
    switch (*parsed) {
    case core::DeployStatus::Queued:
        return AppsModel::tr("queued");
    case core::DeployStatus::Running:
        return AppsModel::tr("deploying");
    case core::DeployStatus::AwaitingApproval:
        return AppsModel::tr("waiting for approval");
    case core::DeployStatus::Succeeded:
        return AppsModel::tr("succeeded");
    case core::DeployStatus::Failed:
        return AppsModel::tr("failed");
    case core::DeployStatus::Cancelled:
        return AppsModel::tr("cancelled");
    case core::DeployStatus::Rejected:
        return AppsModel::tr("rejected");
    }
    return status;
}

QString stepWord(const QString &name)
{
    if (name == u"fetch"_s)
        return AppsModel::tr("fetching the source");
    if (name == u"detect"_s)
        return AppsModel::tr("detecting the build");
    if (name == u"plan"_s)
        return AppsModel::tr("planning");
    if (name == u"approval"_s)
        return AppsModel::tr("waiting for approval");
    if (name == u"build"_s)
        return AppsModel::tr("building the image");
    if (name == u"start"_s)
        return AppsModel::tr("starting the container");
    if (name == u"health"_s)
        return AppsModel::tr("checking health");
    if (name == u"switch"_s)
        return AppsModel::tr("switching traffic");
    if (name == u"retire"_s)
        return AppsModel::tr("retiring the old version");
    return name;
}

} // namespace

AppsModel::AppsModel(QObject *parent) : SessionListModel(parent)
{}

AppsModel::~AppsModel() = default;

void AppsModel::sessionReplaced()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_removedAt.clear();
    m_loaded = false;
    m_selected = -1;
    Q_EMIT countChanged();
    Q_EMIT loadingChanged();
    Q_EMIT selectedChanged();
    Q_EMIT summaryChanged();
    Q_EMIT engineChanged();
}

int AppsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> AppsModel::roleNames() const
{
    return {
        {NameRole, "name"},
        {StatusRole, "status"},
        {StateRole, "state"},
        {StatusTextRole, "statusText"},
        {UrlRole, "url"},
        {LastDeployIdRole, "lastDeployId"},
        {LastDeployStatusRole, "lastDeployStatus"},
        {LastDeployTextRole, "lastDeployText"},
        {LastDeployTimeRole, "lastDeployTime"},
        {LastDeployErrorRole, "lastDeployError"},
        {RefRole, "ref"},
        {BusyRole, "busy"},
        {ProgressRole, "progress"},
        {ActionErrorRole, "actionError"},
        {StatusReasonRole, "statusReason"},
        {CanStopRole, "canStop"},
        {CanStartRole, "canStart"},
    };
}

QVariant AppsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    if (role == Qt::DisplayRole)
        role = NameRole;
    return roleValue(row, role);
}

QVariant AppsModel::roleValue(const Row &row, int role) const
{
    const QJsonObject last = row.app.value(u"last_deploy"_s).toObject();
    switch (role) {
    case NameRole:
        return row.app.value(u"name"_s).toString();
    case StatusRole:
        return row.app.value(u"status"_s).toString();
    case StateRole:
        return QVariant::fromValue(int(stateOf(row)));
    case StatusTextRole: {
        const DisplayState::Value state = stateOf(row);
        // "new" and "removing" have no state of their own in the shared vocabulary.
        if (core::parseAppStatus(row.app.value(u"status"_s).toString()) == core::AppStatus::New &&
            state == DisplayState::Neutral)
            return tr("not deployed");
        if (core::parseAppStatus(row.app.value(u"status"_s).toString()) == core::AppStatus::Removing)
            return tr("removing");
        if (state == DisplayState::Failed &&
            core::parseAppStatus(row.app.value(u"status"_s).toString()) == core::AppStatus::Unhealthy)
            return tr("unhealthy");
        return stateWord(state);
    }
    case UrlRole:
        return row.app.value(u"url"_s).toString();
    case LastDeployIdRole:
        return last.value(u"id"_s).toString();
    case LastDeployStatusRole:
        return last.value(u"status"_s).toString();
    case LastDeployTextRole: {
        if (last.isEmpty())
            return tr("never deployed");
        const qint64 ms = last.value(u"finished_ms"_s).toInteger(last.value(u"created_ms"_s).toInteger());
        const QString when =
            ms > 0 ? QLocale().toString(QDateTime::fromMSecsSinceEpoch(ms), QLocale::ShortFormat) : QString();
        const QString ref = last.value(u"ref"_s).toString();
        const QString word = deployWord(last.value(u"status"_s).toString());
        if (when.isEmpty())
            return tr("%1 (%2)").arg(word, ref);
        return tr("%1 at %2 (%3)").arg(word, when, ref);
    }
    case LastDeployTimeRole:
        return last.value(u"finished_ms"_s).toInteger(last.value(u"created_ms"_s).toInteger());
    case LastDeployErrorRole: {
        if (core::parseDeployStatus(last.value(u"status"_s).toString()) != core::DeployStatus::Failed)
            return QString();
        const QString step = last.value(u"failed_step"_s).toString();
        const QString error = last.value(u"error"_s).toString();
        return step.isEmpty() ? error : tr("%1 failed: %2").arg(step, error);
    }
    case RefRole:
        return row.app.value(u"spec"_s).toObject().value(u"source"_s).toObject().value(u"ref"_s).toString();
    case BusyRole:
        return row.busy || DisplayState::isDeployInFlight(last.value(u"status"_s).toString());
    case ProgressRole:
        if (!row.progress.isEmpty())
            return row.progress;
        return DisplayState::isDeployInFlight(last.value(u"status"_s).toString())
                   ? deployWord(last.value(u"status"_s).toString())
                   : QString();
    case ActionErrorRole:
        return row.actionError;
    case StatusReasonRole:
        return row.app.value(u"status_reason"_s).toString();
    case CanStopRole: {
        const auto status = core::parseAppStatus(row.app.value(u"status"_s).toString());
        return !row.busy && (status == core::AppStatus::Running || status == core::AppStatus::Unhealthy);
    }
    case CanStartRole:
        return !row.busy && core::parseAppStatus(row.app.value(u"status"_s).toString()) == core::AppStatus::Stopped;
    }
    return {};
}

DisplayState::Value AppsModel::stateOf(const Row &row) const
{
    return DisplayState::ofApp(row.app.value(u"status"_s).toString(),
                               row.app.value(u"last_deploy"_s).toObject().value(u"status"_s).toString(), row.busy);
}

QString AppsModel::stateWord(DisplayState::Value state)
{
    switch (state) {
    case DisplayState::Healthy:
        return tr("running");
    case DisplayState::Progress:
        return tr("in progress");
    case DisplayState::Waiting:
        return tr("waiting for approval");
    case DisplayState::Failed:
        return tr("failed");
    case DisplayState::Stopped:
        return tr("stopped");
    case DisplayState::Cached: // an app is never skipped
    case DisplayState::Neutral:
        break;
    }
    return tr("not deployed");
}

bool AppsModel::isEngineReachable() const
{
    return m_session && m_session->state() == Session::State::Connected;
}

QString AppsModel::engineText() const
{
    if (!m_session)
        return tr("No connection");
    const QString name = m_session->displayName();
    switch (m_session->state()) {
    case Session::State::Disconnected:
        return tr("Not connected to %1").arg(name);
    case Session::State::Connecting:
        if (!m_session->failure().message.isEmpty())
            return tr("Reconnecting to %1: %2").arg(name, m_session->failure().text());
        return tr("Connecting to %1…").arg(name);
    case Session::State::Connected:
        return tr("The engine on %1 is reachable").arg(name);
    case Session::State::Failed:
        return tr("Cannot reach the engine on %1: %2").arg(name, m_session->failure().text());
    }
    return {};
}

QString AppsModel::engineHint() const
{
    if (!m_session || m_session->state() == Session::State::Connected)
        return {};
    return m_session->failure().hint;
}

void AppsModel::selectApp(const QString &name)
{
    const int row = rowOf(name);
    m_selectNext = row < 0 ? name : QString();
    if (row >= 0)
        setSelectedRow(row);
}

QVariantMap AppsModel::selected() const
{
    // Every key is always there (an empty row's values when nothing is selected), so bindings
    // never read undefined while the selection changes.
    static const Row none;
    const Row &row = m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected) : none;
    QVariantMap map;
    const auto names = roleNames();
    for (auto it = names.cbegin(); it != names.cend(); ++it)
        map.insert(QString::fromLatin1(it.value()), roleValue(row, it.key()));
    return map;
}

int AppsModel::failingCount() const
{
    int n = 0;
    for (const Row &row : m_rows) {
        const QString last = row.app.value(u"last_deploy"_s).toObject().value(u"status"_s).toString();
        if (stateOf(row) == DisplayState::Failed ||
            (core::parseDeployStatus(last) == core::DeployStatus::Failed && !row.busy))
            ++n;
    }
    return n;
}

int AppsModel::busyCount() const
{
    int n = 0;
    for (const Row &row : m_rows)
        n += stateOf(row) == DisplayState::Progress ? 1 : 0;
    return n;
}

int AppsModel::rowOf(const QString &name) const
{
    // Rows are sorted by name, as the API lists them.
    const auto it = std::lower_bound(m_rows.cbegin(), m_rows.cend(), name,
                                     [](const Row &row, const QString &n) { return row.name < n; });
    return it != m_rows.cend() && it->name == name ? int(it - m_rows.cbegin()) : -1;
}

void AppsModel::refresh()
{
    if (!m_session)
        return;
    setLoading(true);
    const quint64 generation = m_generation;
    const quint64 mark = m_removals;
    QPointer<AppsModel> self(this);
    m_session->apps([self, generation, mark](const Result<QJsonArray> &apps) {
        if (!self || self->m_generation != generation)
            return;
        if (!apps) {
            self->setError(apps.error().text());
            self->setLoading(false);
            return;
        }
        self->setError({});
        self->m_loaded = true;
        if (self->m_rows.isEmpty()) {
            // The first load: every row at once, not a thousand insertions.
            self->beginResetModel();
            for (const QJsonValue app : *apps) {
                const QJsonObject o = app.toObject();
                const QString name = o.value(u"name"_s).toString();
                if (!name.isEmpty() && !self->removedSince(name, mark))
                    self->m_rows.append(Row{name, o});
            }
            std::sort(self->m_rows.begin(), self->m_rows.end(),
                      [](const Row &a, const Row &b) { return a.name < b.name; });
            self->endResetModel();
            if (const int at = self->rowOf(self->m_selectNext); at >= 0) {
                self->m_selectNext.clear();
                self->m_selected = at;
            }
        } else {
            // Rows are kept in place and updated, so a refresh does not lose the selection; the
            // summary is told once, after all of them.
            self->m_batch = true;
            QSet<QString> seen;
            for (const QJsonValue app : *apps) {
                const QString name = app.toObject().value(u"name"_s).toString();
                if (self->removedSince(name, mark))
                    continue;
                seen.insert(name);
                self->applyApp(app.toObject());
            }
            for (int i = int(self->m_rows.size()) - 1; i >= 0; --i)
                if (!seen.contains(self->m_rows.at(i).name))
                    self->removeApp(self->m_rows.at(i).name);
            self->m_batch = false;
        }
        Q_EMIT self->countChanged();
        Q_EMIT self->selectedChanged();
        Q_EMIT self->summaryChanged();
        self->setLoading(false);
    });
}

void AppsModel::applyApp(const QJsonObject &app)
{
    const QString name = app.value(u"name"_s).toString();
    if (name.isEmpty())
        return;
    const int row = rowOf(name);
    if (row >= 0) {
        Row &r = m_rows[row];
        r.app = app;
        if (!DisplayState::isDeployInFlight(app.value(u"last_deploy"_s).toObject().value(u"status"_s).toString())) {
            r.busy = false;
            r.progress.clear();
        }
        rowChanged(row);
        return;
    }
    // Sorted by name, as the API lists them.
    const int at = int(std::lower_bound(m_rows.cbegin(), m_rows.cend(), name,
                                        [](const Row &row, const QString &n) { return row.name < n; }) -
                       m_rows.cbegin());
    beginInsertRows({}, at, at);
    m_rows.insert(at, Row{name, app});
    endInsertRows();
    if (name == m_selectNext) {
        m_selectNext.clear();
        m_selected = at;
        Q_EMIT selectedChanged();
    } else if (m_selected >= at) {
        ++m_selected;
        Q_EMIT selectedChanged();
    }
    if (m_batch)
        return;
    Q_EMIT countChanged();
    Q_EMIT summaryChanged();
}

void AppsModel::removeApp(const QString &name)
{
    const int row = rowOf(name);
    if (row < 0)
        return;
    removeListRow(m_rows, row);
    if (m_batch)
        return;
    Q_EMIT selectedChanged();
    Q_EMIT countChanged();
    Q_EMIT summaryChanged();
}

void AppsModel::rowChanged(int row)
{
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i);
    if (row == m_selected)
        Q_EMIT selectedChanged();
    if (!m_batch)
        Q_EMIT summaryChanged();
}

void AppsModel::reloadApp(const QString &name)
{
    if (!m_session || name.isEmpty())
        return;
    const quint64 generation = m_generation;
    const quint64 mark = m_removals;
    QPointer<AppsModel> self(this);
    m_session->app(name, [self, generation, mark, name](const Result<QJsonObject> &app) {
        if (!self || self->m_generation != generation || self->removedSince(name, mark))
            return;
        if (app)
            self->applyApp(*app);
        else if (app.error().code == ErrorCode::NotFound)
            self->removeApp(name);
        else
            self->setError(app.error().text());
    });
}

void AppsModel::deploy(int row)
{
    if (!m_session || row < 0 || row >= m_rows.size())
        return;
    const QString name = m_rows.at(row).name;
    Row &r = m_rows[row];
    r.busy = true;
    r.progress = tr("starting a deploy");
    r.actionError.clear();
    rowChanged(row);
    const quint64 generation = m_generation;
    QPointer<AppsModel> self(this);
    m_session->deploy(name, {}, [self, generation, name](const Result<QJsonObject> &queued) {
        if (!self || self->m_generation != generation)
            return;
        const int at = self->rowOf(name);
        if (at < 0)
            return;
        if (!queued)
            return self->actionFailed(at, queued.error());
        Row &r = self->m_rows[at];
        if (r.progress == tr("starting a deploy"))
            r.progress = deployWord(queued->value(u"status"_s).toString());
        self->rowChanged(at);
        self->reloadApp(name);
    });
}

void AppsModel::remove(int row)
{
    if (!m_session || row < 0 || row >= m_rows.size())
        return;
    const QString name = m_rows.at(row).name;
    Row &r = m_rows[row];
    r.busy = true;
    r.progress = tr("removing");
    r.actionError.clear();
    rowChanged(row);
    const quint64 generation = m_generation;
    QPointer<AppsModel> self(this);
    // The row goes when app.removed arrives: the teardown is queued, not done, when this answers.
    m_session->removeApp(name, [self, generation, name](const Status &queued) {
        if (!self || self->m_generation != generation || queued)
            return;
        if (const int at = self->rowOf(name); at >= 0)
            self->actionFailed(at, queued.error());
    });
}

void AppsModel::start(int row)
{
    changeRunning(row, Session::AppAction::Start);
}

void AppsModel::stop(int row)
{
    changeRunning(row, Session::AppAction::Stop);
}

void AppsModel::restart(int row)
{
    changeRunning(row, Session::AppAction::Restart);
}

void AppsModel::changeRunning(int row, Session::AppAction action)
{
    if (!m_session || row < 0 || row >= m_rows.size())
        return;
    const QString name = m_rows.at(row).name;
    Row &r = m_rows[row];
    r.busy = true;
    r.progress = action == Session::AppAction::Start  ? tr("starting")
                 : action == Session::AppAction::Stop ? tr("stopping")
                                                      : tr("restarting");
    r.actionError.clear();
    rowChanged(row);
    const quint64 generation = m_generation;
    QPointer<AppsModel> self(this);
    m_session->appAction(name, action, [self, generation, name](const Result<QJsonObject> &app) {
        if (!self || self->m_generation != generation)
            return;
        const int at = self->rowOf(name);
        if (at < 0)
            return;
        if (!app)
            return self->actionFailed(at, app.error());
        self->m_rows[at].busy = false;
        self->m_rows[at].progress.clear();
        self->applyApp(*app);
    });
}

void AppsModel::actionFailed(int row, const Error &error)
{
    Row &r = m_rows[row];
    r.busy = false;
    r.progress.clear();
    r.actionError = error.hint.isEmpty() ? error.text() : tr("%1 — %2").arg(error.text(), error.hint);
    rowChanged(row);
}

void AppsModel::onEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    const QString app = event.value(u"app"_s).toString();
    if (app.isEmpty())
        return;
    if (type == core::EventType::AppRemoved) {
        m_removedAt.insert(app, ++m_removals);
        removeApp(app);
        return;
    }
    const int row = rowOf(app);
    if (type == core::EventType::DeployStep && row >= 0) {
        const QJsonObject step = event.value(u"data"_s).toObject();
        const QString name = step.value(u"name"_s).toString();
        const auto status = core::parseDeployStepStatus(step.value(u"status"_s).toString());
        const bool waiting = status == core::DeployStepStatus::Waiting;
        Row &r = m_rows[row];
        if (waiting || status == core::DeployStepStatus::Running) {
            // The deploy succeeded at the switch; retiring the old version after it keeps the app
            // neither busy nor its Deploy and Remove disabled, it is only said.
            if (name != u"retire"_s)
                r.busy = true;
            r.progress = waiting ? tr("waiting for approval") : stepWord(name);
        } else if (!r.busy) {
            r.progress.clear(); // a step after the deploy's end (retire) is over
        }
        rowChanged(row);
        // The step that waits changes the app's state (awaiting approval): fetch it.
        if (waiting)
            reloadApp(app);
        return;
    }
    if (type == core::EventType::DeployQueued && row >= 0) {
        m_rows[row].busy = true;
        m_rows[row].progress = deployWord(core::toString(core::DeployStatus::Queued));
        rowChanged(row);
    }
    if (type == core::EventType::DeploySucceeded || type == core::EventType::DeployFailed) {
        if (row >= 0) {
            m_rows[row].busy = false;
            m_rows[row].progress.clear();
            rowChanged(row);
        }
    }
    // app.created, app.restarted, app.unhealthy, app.healthy, deploy.*, approval.*, container.removed:
    // the row's truth is the API's.
    reloadApp(app);
}

void AppsModel::onSessionState(Session::State state)
{
    Q_EMIT engineChanged();
    SessionListModel::onSessionState(state);
}

} // namespace pando::desktop
