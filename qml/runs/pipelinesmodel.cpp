#include "qml/runs/pipelinesmodel.h"
#include "core/vocab/vocab.h"

#include <QJsonArray>
#include <QSet>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
// The install's words: what was wrong and, where it has one, what to do next.
QString explainPipelineError(const Error &e)
{
    return e.hint.isEmpty() ? e.text() : PipelinesModel::tr("%1 — %2").arg(e.text(), e.hint);
}

} // namespace

PipelinesModel::PipelinesModel(QObject *parent) : SessionListModel(parent)
{}

PipelinesModel::~PipelinesModel() = default;

void PipelinesModel::sessionReplaced()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_loaded = false;
    m_selected = -1;
    m_unavailable = false;
    Q_EMIT countChanged();
    Q_EMIT loadingChanged();
    Q_EMIT errorChanged();
    Q_EMIT selectedChanged();
}

int PipelinesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> PipelinesModel::roleNames() const
{
    return {
        {NameRole, "name"},
        {PausedRole, "paused"},
        {PausedReasonRole, "pausedReason"},
        {JobsRole, "jobs"},
        {ConfigVersionRole, "configVersion"},
        {LastRunIdRole, "lastRunId"},
        {LastRunJobRole, "lastRunJob"},
        {LastRunNumberRole, "lastRunNumber"},
        {LastRunStatusRole, "lastRunStatus"},
        {LastRunStateRole, "lastRunState"},
        {LastRunTextRole, "lastRunText"},
        {BusyRole, "busy"},
        {ActionErrorRole, "actionError"},
        {HostExecutionRole, "hostExecution"},
        {SetByRole, "setBy"},
        {InstanceGroupRole, "instanceGroup"},
        {InstanceVarsRole, "instanceVars"},
        {ArchivedRole, "archived"},
    };
}

QVariant PipelinesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    if (role == Qt::DisplayRole)
        role = NameRole;
    return roleValue(m_rows.at(index.row()), role);
}

QVariant PipelinesModel::roleValue(const Row &row, int role) const
{
    const QJsonObject &p = row.pipeline;
    const QJsonObject &run = row.lastRun;
    const QString status = run.value(u"status"_s).toString();
    switch (role) {
    case NameRole:
        return p.value(u"name"_s).toString();
    // A group's name never holds a '/': an instance's name is GROUP/KEY:VALUE[,...].
    case InstanceGroupRole:
        return p.value(u"name"_s).toString().contains(u'/') ? p.value(u"name"_s).toString().section(u'/', 0, 0)
                                                            : QString();
    case InstanceVarsRole:
        return p.value(u"name"_s).toString().section(u'/', 1);
    case PausedRole:
        return p.value(u"paused"_s).toBool();
    case PausedReasonRole:
        return p.value(u"paused_reason"_s).toString();
    case JobsRole:
        return p.value(u"jobs"_s).toVariant().toStringList();
    case ConfigVersionRole:
        return p.value(u"config_version"_s).toInt();
    case LastRunIdRole:
        return run.value(u"id"_s).toString();
    case LastRunJobRole:
        return run.value(u"job"_s).toString();
    case LastRunNumberRole:
        return run.value(u"number"_s).toInt();
    case LastRunStatusRole:
        return status;
    case LastRunStateRole:
        return int(run.isEmpty() ? DisplayState::Neutral
                                 : RunState::ofListedRun(status, run.value(u"waiting"_s).toBool()));
    case LastRunTextRole:
        if (run.isEmpty())
            return tr("never run");
        return tr("%1 #%2 · %3")
            .arg(run.value(u"job"_s).toString())
            .arg(run.value(u"number"_s).toInt())
            .arg(RunState::wordOfListedRun(status, run.value(u"waiting"_s).toBool()));
    case BusyRole:
        return row.busy;
    case ActionErrorRole:
        return row.actionError;
    case HostExecutionRole:
        return p.value(u"host_execution"_s).toBool();
    case SetByRole:
        return p.value(u"set_by"_s).toString();
    case ArchivedRole:
        return p.value(u"archived"_s).toBool();
    }
    return {};
}

QVariantMap PipelinesModel::selected() const
{
    // Every key is always there, so bindings never read undefined while the selection changes.
    static const Row none;
    const Row &row = m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected) : none;
    QVariantMap map;
    const auto names = roleNames();
    for (auto it = names.cbegin(); it != names.cend(); ++it)
        map.insert(QString::fromLatin1(it.value()), roleValue(row, it.key()));
    return map;
}

QString PipelinesModel::selectedName() const
{
    return m_selected >= 0 ? m_rows.at(m_selected).pipeline.value(u"name"_s).toString() : QString();
}

int PipelinesModel::rowOf(const QString &name) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).pipeline.value(u"name"_s).toString() == name)
            return i;
    return -1;
}

bool PipelinesModel::selectName(const QString &name)
{
    const int row = rowOf(name);
    setSelectedRow(row);
    return row >= 0;
}

void PipelinesModel::setError(const QString &error, bool unavailable)
{
    if (unavailable != m_unavailable) {
        m_unavailable = unavailable;
        Q_EMIT errorChanged(); // also the unavailable property's signal
    }
    SessionListModel::setError(error);
}

QString PipelinesModel::appAccessWords(const QJsonObject &settings)
{
    const auto onOff = [&settings](const QString &key) {
        return settings.value(key).toBool() ? tr("allowed") : tr("not allowed");
    };
    const QString ports = settings.value(u"member_ports"_s).toString();
    const int days = settings.value(u"deploy_log_days"_s).toInt();
    return tr("repositories on this computer (file://): %1; the ssh-agent: %2; addresses on this computer or its "
              "link: %3; stable ports: %4; previews of pull requests from forks: %5; a deploy's output kept: %6")
        .arg(onOff(u"local_repositories"_s), onOff(u"ssh_agent"_s), onOff(u"internal_hosts"_s),
             ports == u"none" ? tr("picked for them") : ports, onOff(u"preview_forks"_s),
             days == 0 ? tr("for ever") : tr("%n day(s) after it ends", "", days));
}

void PipelinesModel::refresh()
{
    if (!m_session)
        return;
    setLoading(true);
    const quint64 generation = m_generation;
    QPointer<PipelinesModel> self(this);
    m_session->settings([self, generation](const Result<QJsonObject> &settings) {
        if (!self || self->m_generation != generation)
            return;
        const QString text = !settings ? QString()
                             : settings->value(u"host_execution"_s).toBool()
                                 ? tr("on, for the pipelines an administrator allowed")
                                 : tr("off: every task runs in a container");
        const QString access = settings ? appAccessWords(*settings) : QString();
        if (text != self->m_hostExecutionText || access != self->m_appAccessText) {
            self->m_hostExecutionText = text;
            self->m_appAccessText = access;
            Q_EMIT self->hostExecutionChanged();
        }
    });
    m_session->pipelines(m_showArchived, [self, generation](const Result<QJsonArray> &pipelines) {
        if (!self || self->m_generation != generation)
            return;
        if (!pipelines) {
            const Error &e = pipelines.error();
            self->setError(explainPipelineError(e), e.code == ErrorCode::Unavailable);
            if (e.code == ErrorCode::Unavailable && !self->m_rows.isEmpty()) {
                self->beginResetModel();
                self->m_rows.clear();
                self->endResetModel();
                self->m_selected = -1;
                Q_EMIT self->countChanged();
                Q_EMIT self->selectedChanged();
            }
            self->m_loaded = true;
            self->setLoading(false);
            return;
        }
        self->setError({});
        self->m_loaded = true;
        QSet<QString> seen;
        for (const QJsonValue p : *pipelines) {
            seen.insert(p.toObject().value(u"name"_s).toString());
            self->apply(p.toObject());
        }
        for (int i = int(self->m_rows.size()) - 1; i >= 0; --i) {
            if (seen.contains(self->m_rows.at(i).pipeline.value(u"name"_s).toString()))
                continue;
            self->removeListRow(self->m_rows, i);
            Q_EMIT self->countChanged();
            Q_EMIT self->selectedChanged();
        }
        for (const QString &name : std::as_const(seen))
            self->fetchLastRun(name);
        // The first pipeline is in front until the user picks another.
        if (self->m_selected < 0 && !self->m_rows.isEmpty())
            self->setSelectedRow(0);
        self->setLoading(false);
    });
}

void PipelinesModel::apply(const QJsonObject &pipeline)
{
    const QString name = pipeline.value(u"name"_s).toString();
    if (name.isEmpty())
        return;
    const int row = rowOf(name);
    if (row >= 0) {
        m_rows[row].pipeline = pipeline;
        rowChanged(row);
        return;
    }
    int at = 0;
    while (at < m_rows.size() && m_rows.at(at).pipeline.value(u"name"_s).toString() < name)
        ++at;
    beginInsertRows({}, at, at);
    m_rows.insert(at, Row{pipeline, {}, false, {}});
    endInsertRows();
    if (m_selected >= at) {
        ++m_selected;
        Q_EMIT selectedChanged();
    }
    Q_EMIT countChanged();
}

void PipelinesModel::fetchLastRun(const QString &name)
{
    const quint64 generation = m_generation;
    QPointer<PipelinesModel> self(this);
    m_session->runs(name, 1, [self, generation, name](const Result<QJsonArray> &runs) {
        if (!self || self->m_generation != generation)
            return;
        const int row = self->rowOf(name);
        if (row < 0 || !runs)
            return; // the list shows "never run"; the runs list itself says why it failed
        if (runs->isEmpty())
            return;
        const QJsonObject fetched = RunState::summaryOf(runs->first().toObject());
        // An answer read before the run ended may arrive after its run.finished event.
        const QJsonObject &shown = self->m_rows.at(row).lastRun;
        if (shown.value(u"id"_s) == fetched.value(u"id"_s) &&
            RunState::progress(fetched.value(u"status"_s).toString()) <
                RunState::progress(shown.value(u"status"_s).toString()))
            return;
        self->setLastRun(row, fetched);
    });
}

void PipelinesModel::setLastRun(int row, const QJsonObject &run)
{
    if (m_rows.at(row).lastRun == run)
        return;
    m_rows[row].lastRun = run;
    rowChanged(row);
}

int PipelinesModel::failingCount() const
{
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(), [this](const Row &row) {
        return roleValue(row, LastRunStateRole).toInt() == DisplayState::Failed;
    }));
}

void PipelinesModel::rowChanged(int row)
{
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i);
    if (row == m_selected)
        Q_EMIT selectedChanged();
}

QString PipelinesModel::beginAction(int row)
{
    if (!m_session || row < 0 || row >= m_rows.size() || m_rows.at(row).busy)
        return {};
    m_rows[row].busy = true;
    m_rows[row].actionError.clear();
    rowChanged(row);
    return m_rows.at(row).pipeline.value(u"name"_s).toString();
}

void PipelinesModel::triggerJob(int row, const QString &job)
{
    const QString name = beginAction(row);
    if (name.isEmpty())
        return;
    const quint64 generation = m_generation;
    QPointer<PipelinesModel> self(this);
    m_session->triggerJob(name, job, false, [self, generation, name](const Result<QJsonObject> &run) {
        if (!self || self->m_generation != generation)
            return;
        if (!run) {
            self->actionDone(name, &run.error());
            return;
        }
        self->actionDone(name, nullptr);
        // The run.queued event says the same; the answer may come first (but not undo a later start).
        const QString id = run->value(u"id"_s).toString();
        if (const int at = self->rowOf(name); at >= 0 && self->m_rows.at(at).lastRun.value(u"id"_s).toString() != id)
            self->setLastRun(at, RunState::summaryOf(*run));
        Q_EMIT self->triggered(name, id);
    });
}

void PipelinesModel::setPaused(int row, bool paused)
{
    const QString name = beginAction(row);
    if (name.isEmpty())
        return;
    const quint64 generation = m_generation;
    QPointer<PipelinesModel> self(this);
    m_session->setPipelinePaused(name, paused, [self, generation, name](const Result<QJsonObject> &pipeline) {
        if (!self || self->m_generation != generation)
            return;
        self->actionDone(name, pipeline ? nullptr : &pipeline.error());
        // Pausing is not on the event stream: the answer is the pipeline as it is now.
        if (pipeline && pipeline->contains(u"jobs"_s))
            self->apply(*pipeline);
        else if (pipeline)
            self->refresh();
    });
}

void PipelinesModel::rename(int row, const QString &to)
{
    const QString name = beginAction(row);
    if (name.isEmpty())
        return;
    const quint64 generation = m_generation;
    QPointer<PipelinesModel> self(this);
    m_session->renamePipeline(name, to.trimmed(), [self, generation, name](const Result<QJsonObject> &pipeline) {
        if (!self || self->m_generation != generation)
            return;
        if (!pipeline)
            return self->actionDone(name, &pipeline.error());
        // The row under its old name goes, the one under its new name takes its place in the
        // order, with its last run; the selection follows it.
        const int old = self->rowOf(name);
        const bool selected = old >= 0 && old == self->m_selected;
        const QJsonObject lastRun = old >= 0 ? self->m_rows.at(old).lastRun : QJsonObject{};
        if (old >= 0)
            self->removeListRow(self->m_rows, old);
        self->apply(*pipeline);
        const QString renamed = pipeline->value(u"name"_s).toString();
        if (const int at = self->rowOf(renamed); at >= 0 && !lastRun.isEmpty())
            self->setLastRun(at, lastRun);
        Q_EMIT self->countChanged();
        if (selected)
            self->selectName(renamed);
        else
            Q_EMIT self->selectedChanged();
    });
}

QStringList PipelinesModel::instancesOf(const QString &group) const
{
    QStringList names;
    if (group.isEmpty())
        return names;
    for (const Row &row : m_rows) {
        const QString name = row.pipeline.value(u"name"_s).toString();
        if (name.section(u'/', 0, 0) == group && name.contains(u'/') && !row.pipeline.value(u"archived"_s).toBool())
            names << name;
    }
    return names;
}

void PipelinesModel::setGroupPaused(const QString &group, bool paused)
{
    for (const QString &name : instancesOf(group))
        setPaused(rowOf(name), paused);
}

void PipelinesModel::archiveGroup(const QString &group)
{
    // Rows go only when the answers come: the rows named now are the ones asked about.
    for (const QString &name : instancesOf(group))
        archive(rowOf(name));
}

void PipelinesModel::archive(int row)
{
    const QString name = beginAction(row);
    if (name.isEmpty())
        return;
    const quint64 generation = m_generation;
    QPointer<PipelinesModel> self(this);
    m_session->archivePipeline(name, [self, generation, name](const Result<QJsonObject> &pipeline) {
        if (!self || self->m_generation != generation)
            return;
        self->actionDone(name, pipeline ? nullptr : &pipeline.error());
        if (!pipeline)
            return;
        if (self->m_showArchived) {
            self->apply(*pipeline);
            return;
        }
        if (const int at = self->rowOf(name); at >= 0) {
            const bool selected = at == self->m_selected;
            self->removeListRow(self->m_rows, at);
            Q_EMIT self->countChanged();
            // The row after it takes the selection (the one before, for the last).
            if (selected && !self->m_rows.isEmpty())
                self->setSelectedRow(std::min(at, int(self->m_rows.size()) - 1));
            else
                Q_EMIT self->selectedChanged();
        }
    });
}

void PipelinesModel::setShowArchived(bool show)
{
    if (show == m_showArchived)
        return;
    m_showArchived = show;
    Q_EMIT showArchivedChanged();
    ++m_generation; // an answer to the list asked for before is not this list
    refresh();
}

void PipelinesModel::actionDone(const QString &name, const Error *error)
{
    const int row = rowOf(name);
    if (row < 0) {
        if (error)
            setError(explainPipelineError(*error));
        return;
    }
    m_rows[row].busy = false;
    m_rows[row].actionError = error ? explainPipelineError(*error) : QString();
    rowChanged(row);
}

void PipelinesModel::onEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    const QJsonObject data = event.value(u"data"_s).toObject();
    // The last run of a pipeline started or stopped waiting for an approval.
    if (type && core::isApprovalEvent(*type)) {
        const QString run = RunState::runOfApproval(data);
        for (const Row &row : std::as_const(m_rows))
            if (!run.isEmpty() && row.lastRun.value(u"id"_s).toString() == run)
                fetchLastRun(row.pipeline.value(u"name"_s).toString());
        return;
    }
    const QString name = data.value(u"pipeline"_s).toString();
    if (name.isEmpty() || (!(type && core::isRunEvent(*type)) && !(type && core::isPipelineEvent(*type))) ||
        type == core::EventType::RunEvent)
        return;
    const int row = rowOf(name);
    if (row < 0) {
        // A pipeline set since the list was loaded (setting one is not on the event stream).
        if (m_loaded && !isLoading() && type == core::EventType::RunQueued)
            refresh();
        return;
    }
    if (type == core::EventType::PipelinePaused) {
        QJsonObject p = m_rows.at(row).pipeline;
        p.insert(u"paused"_s, true);
        p.insert(u"paused_reason"_s, data.value(u"reason"_s));
        apply(p);
        return;
    }
    const QString status = RunState::statusOfRunEvent(event);
    if (status.isEmpty())
        return;
    const QJsonObject &last = m_rows.at(row).lastRun;
    const QString id = data.value(u"run"_s).toString();
    // A queued run is the newest; a start or end only moves the run shown (or an older list's gap).
    if (type != core::EventType::RunQueued && !last.isEmpty() && last.value(u"id"_s).toString() != id)
        return;
    setLastRun(row, QJsonObject{{u"id"_s, id},
                                {u"job"_s, data.value(u"job"_s)},
                                {u"number"_s, data.value(u"number"_s)},
                                {u"status"_s, status}});
}

} // namespace pando::desktop
