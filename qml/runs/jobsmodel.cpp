#include "qml/runs/jobsmodel.h"
#include "core/vocab/vocab.h"

#include <QJsonArray>
#include <QSet>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
// Every get step of a job's plan, however deep it is nested (in_parallel, do, try, hooks): the
// steps are JSON objects whose "get" names the step; nothing else in a plan has that key.
void collectGets(const QJsonValue &value, QList<QJsonObject> &gets)
{
    if (value.isArray()) {
        for (const QJsonValue child : value.toArray())
            collectGets(child, gets);
        return;
    }
    if (!value.isObject())
        return;
    const QJsonObject object = value.toObject();
    if (object.value(u"get"_s).isString() && object.contains(u"resource"_s))
        gets.append(object);
    for (auto it = object.begin(); it != object.end(); ++it)
        if (it.key() != u"config"_s && it.key() != u"params"_s)
            collectGets(it.value(), gets);
}

} // namespace

JobsModel::JobsModel(QObject *parent) : SessionListModel(parent)
{}

JobsModel::~JobsModel() = default;

void JobsModel::sessionReplaced()
{
    m_loaded = false;
    clear();
}

void JobsModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_selected = -1;
    m_configVersion = 0;
    m_configYaml.clear();
    m_configDiff.clear();
    Q_EMIT countChanged();
    Q_EMIT configChanged();
    Q_EMIT selectedChanged();
}

int JobsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> JobsModel::roleNames() const
{
    return {
        {NameRole, "name"},
        {StageRole, "stage"},
        {UpstreamRole, "upstream"},
        {UpstreamTextRole, "upstreamText"},
        {InputsTextRole, "inputsText"},
        {LastRunIdRole, "lastRunId"},
        {LastRunStateRole, "lastRunState"},
        {LastRunStatusRole, "lastRunStatus"},
        {LastRunTextRole, "lastRunText"},
        {BusyRole, "busy"},
        {ActionErrorRole, "actionError"},
        {ManualTriggerRole, "manualTrigger"},
        {PausedRole, "paused"},
        {PausedReasonRole, "pausedReason"},
        {SlotRole, "slot"},
    };
}

QVariant JobsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    const QString status = row.lastRun.value(u"status"_s).toString();
    const bool waiting = row.lastRun.value(u"waiting"_s).toBool();
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return row.name;
    case StageRole:
        return row.stage;
    case UpstreamRole:
        return row.upstream;
    case UpstreamTextRole:
        return row.upstream.isEmpty() ? tr("first: no job feeds it") : tr("after %1").arg(row.upstream.join(tr(", ")));
    case InputsTextRole:
        return row.inputs.isEmpty() ? tr("no inputs") : row.inputs.join(u" · "_s);
    case LastRunIdRole:
        return row.lastRun.value(u"id"_s).toString();
    case LastRunStateRole:
        return int(row.lastRun.isEmpty() ? DisplayState::Neutral : RunState::ofListedRun(status, waiting));
    case LastRunStatusRole:
        return status;
    case LastRunTextRole:
        if (row.lastRun.isEmpty())
            return tr("never run");
        return tr("#%1 · %2")
            .arg(row.lastRun.value(u"number"_s).toInt())
            .arg(RunState::wordOfListedRun(status, waiting));
    case BusyRole:
        return row.busy;
    case ActionErrorRole:
        return row.actionError;
    case SlotRole:
        return row.slot;
    case ManualTriggerRole:
        return row.manualTrigger;
    case PausedRole:
        return row.paused;
    case PausedReasonRole:
        return row.pausedReason;
    }
    return {};
}

int JobsModel::stageCount() const
{
    int stages = 0;
    for (const Row &row : m_rows)
        stages = std::max(stages, row.stage + 1);
    return stages;
}

int JobsModel::tallestStage() const
{
    int tallest = 0;
    for (const Row &row : m_rows)
        tallest = std::max(tallest, row.slot + 1);
    return tallest;
}

QVariantList JobsModel::edges() const
{
    QVariantList edges;
    for (int to = 0; to < m_rows.size(); ++to)
        for (const QString &upstream : m_rows.at(to).upstream)
            // A passed: naming no job of the pipeline is refused when it is set; none is drawn.
            if (const int from = rowOf(upstream); from >= 0)
                edges << QVariantMap{{u"from"_s, from},
                                     {u"to"_s, to},
                                     {u"fromName"_s, upstream},
                                     {u"toName"_s, m_rows.at(to).name},
                                     {u"span"_s, m_rows.at(to).stage - m_rows.at(from).stage}};
    return edges;
}

int JobsModel::rowOf(const QString &job) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).name == job)
            return i;
    return -1;
}

void JobsModel::setPipeline(const QString &pipeline)
{
    if (pipeline == m_pipeline)
        return;
    m_pipeline = pipeline;
    ++m_generation; // answers about the previous pipeline are dropped
    clear();
    Q_EMIT pipelineChanged();
    refresh();
}

void JobsModel::setConfigVersion(int version)
{
    // The pipeline was set again since the list was read: read it again.
    if (version > m_configVersion && m_loaded && !isLoading())
        refresh();
}

void JobsModel::refresh()
{
    if (!m_session || m_pipeline.isEmpty())
        return;
    setLoading(true);
    const quint64 generation = ++m_generation;
    QPointer<JobsModel> self(this);
    m_session->pipeline(m_pipeline, [self, generation](const Result<QJsonObject> &pipeline) {
        if (!self || self->m_generation != generation)
            return;
        self->m_loaded = true;
        if (!pipeline) {
            self->setError(pipeline.error().text());
            self->setLoading(false);
            return;
        }
        self->setError({});
        self->apply(*pipeline);
        self->fetchRuns();
        self->setLoading(false);
    });
}

void JobsModel::apply(const QJsonObject &pipeline)
{
    // Each job's upstream jobs and inputs, from the parsed config's get steps.
    QList<Row> rows;
    for (const QJsonValue value : pipeline.value(u"config"_s).toObject().value(u"jobs"_s).toArray()) {
        const QJsonObject job = value.toObject();
        Row row;
        row.name = job.value(u"name"_s).toString();
        row.manualTrigger = !job.value(u"disable_manual_trigger"_s).toBool();
        const QJsonValue pause = pipeline.value(u"paused_jobs"_s).toObject().value(row.name);
        row.paused = pause.isObject();
        row.pausedReason = pause.toObject().value(u"reason"_s).toString();
        QList<QJsonObject> gets;
        collectGets(job.value(u"plan"_s), gets);
        for (const QJsonObject &get : std::as_const(gets)) {
            const QStringList passed = get.value(u"passed"_s).toVariant().toStringList();
            for (const QString &upstream : passed)
                if (!row.upstream.contains(upstream))
                    row.upstream << upstream;
            QString input = get.value(u"resource"_s).toString();
            if (get.value(u"trigger"_s).toBool())
                input = tr("%1 (triggers)").arg(input);
            if (!passed.isEmpty())
                input = tr("%1, passed %2").arg(input, passed.join(tr(", ")));
            row.inputs << input;
        }
        for (const Row &old : std::as_const(m_rows))
            if (old.name == row.name)
                row.lastRun = old.lastRun;
        rows << row;
    }
    // Stages: a job comes one after the latest of its upstream jobs. A config whose passed:
    // loops (refused when it is set) cannot make this go on for ever: at most one pass per job.
    for (qsizetype pass = 0; pass < rows.size(); ++pass) {
        bool moved = false;
        for (Row &row : rows) {
            int stage = 0;
            for (const QString &upstream : std::as_const(row.upstream))
                for (const Row &other : std::as_const(rows))
                    if (other.name == upstream)
                        stage = std::max(stage, other.stage + 1);
            moved = moved || stage != row.stage;
            row.stage = stage;
        }
        if (!moved)
            break;
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.stage < b.stage; });
    for (qsizetype i = 0; i < rows.size(); ++i)
        rows[i].slot = i > 0 && rows.at(i - 1).stage == rows.at(i).stage ? rows.at(i - 1).slot + 1 : 0;
    const QString selected = m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected).name : QString();
    beginResetModel();
    m_rows = rows;
    endResetModel();
    m_selected = rowOf(selected);
    m_configVersion = pipeline.value(u"config_version"_s).toInt();
    m_configYaml = pipeline.value(u"config_yaml"_s).toString();
    m_configDiff = pipeline.value(u"config_diff"_s).toVariant().toStringList();
    Q_EMIT countChanged();
    Q_EMIT configChanged();
    Q_EMIT selectedChanged();
}

void JobsModel::fetchRuns()
{
    const quint64 generation = m_generation;
    QPointer<JobsModel> self(this);
    // The newest runs of the pipeline: each job's first one is its last run.
    m_session->runs(m_pipeline, 200, [self, generation](const Result<QJsonArray> &runs) {
        if (!self || self->m_generation != generation || !runs)
            return; // the runs list says why it failed
        QSet<QString> seen;
        for (const QJsonValue value : *runs) {
            const QJsonObject run = value.toObject();
            const QString job = run.value(u"job"_s).toString();
            if (seen.contains(job))
                continue;
            seen.insert(job);
            if (const int row = self->rowOf(job); row >= 0)
                self->setLastRun(row, RunState::summaryOf(run));
        }
    });
}

void JobsModel::setLastRun(int row, const QJsonObject &run)
{
    if (m_rows.at(row).lastRun == run)
        return;
    m_rows[row].lastRun = run;
    rowChanged(row);
}

void JobsModel::rowChanged(int row)
{
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i);
    if (row == m_selected)
        Q_EMIT selectedChanged();
}

void JobsModel::act(int row, const std::function<void(Session &, const QString &job, Session::ObjectCallback)> &call,
                    const std::function<void(int row, const QJsonObject &answer)> &done)
{
    if (!m_session || row < 0 || row >= m_rows.size() || m_rows.at(row).busy)
        return;
    const QString job = m_rows.at(row).name;
    m_rows[row].busy = true;
    m_rows[row].actionError.clear();
    rowChanged(row);
    const quint64 generation = m_generation;
    QPointer<JobsModel> self(this);
    call(*m_session, job, [self, generation, job, done](const Result<QJsonObject> &answer) {
        if (!self || self->m_generation != generation)
            return;
        const int at = self->rowOf(job);
        if (at < 0)
            return;
        self->m_rows[at].busy = false;
        self->m_rows[at].actionError =
            answer ? QString()
                   : (answer.error().hint.isEmpty() ? answer.error().text()
                                                    : tr("%1 — %2").arg(answer.error().text(), answer.error().hint));
        self->rowChanged(at);
        if (answer)
            done(at, *answer);
    });
}

void JobsModel::trigger(int row, bool force)
{
    act(
        row,
        [this, force](Session &session, const QString &job, Session::ObjectCallback answered) {
            session.triggerJob(m_pipeline, job, force, std::move(answered));
        },
        [this](int at, const QJsonObject &run) {
            // The run.queued event says the same; the answer may come first.
            if (m_rows.at(at).lastRun.value(u"id"_s).toString() != run.value(u"id"_s).toString())
                setLastRun(at, RunState::summaryOf(run));
            Q_EMIT triggered(m_pipeline, run.value(u"id"_s).toString());
        });
}

void JobsModel::setPaused(int row, bool paused)
{
    act(
        row,
        [this, paused](Session &session, const QString &job, Session::ObjectCallback answered) {
            session.setJobPaused(m_pipeline, job, paused, std::move(answered));
        },
        [this](int at, const QJsonObject &job) {
            m_rows[at].paused = job.value(u"paused"_s).toBool();
            m_rows[at].pausedReason = job.value(u"paused_reason"_s).toString();
            rowChanged(at);
        });
}

void JobsModel::onEvent(const QJsonObject &event)
{
    const QJsonObject data = event.value(u"data"_s).toObject();
    const QString status = RunState::statusOfRunEvent(event);
    if (status.isEmpty() || m_pipeline.isEmpty() || data.value(u"pipeline"_s).toString() != m_pipeline)
        return;
    const bool queued = status == core::toString(core::RunStatus::Queued);
    const int row = rowOf(data.value(u"job"_s).toString());
    if (row < 0)
        return;
    const QString id = data.value(u"run"_s).toString();
    const QJsonObject &last = m_rows.at(row).lastRun;
    // A queued run is the newest; a start or end only moves the run shown.
    if (!queued && !last.isEmpty() && last.value(u"id"_s).toString() != id)
        return;
    setLastRun(row, QJsonObject{{u"id"_s, id},
                                {u"job"_s, data.value(u"job"_s)},
                                {u"number"_s, data.value(u"number"_s)},
                                {u"status"_s, status}});
}

} // namespace pando::desktop
