#include "qml/runs/runsmodel.h"
#include "core/vocab/vocab.h"

#include <QDateTime>
#include <QLocale>
#include <QSet>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {
QString explainRunError(const Error &e)
{
    return e.hint.isEmpty() ? e.text() : RunsModel::tr("%1 — %2").arg(e.text(), e.hint);
}

} // namespace

RunsModel::RunsModel(QObject *parent)
    : SessionListModel(parent), m_now([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    // A second's resolution is what a duration label shows.
    m_ticker.setInterval(1000);
    connect(&m_ticker, &QTimer::timeout, this, [this] {
        for (int i = 0; i < m_rows.size(); ++i)
            if (core::parseRunStatus(m_rows.at(i).run.value(u"status"_s).toString()) == core::RunStatus::Running)
                Q_EMIT dataChanged(index(i), index(i), {DurationMsRole, DurationTextRole});
    });
}

RunsModel::~RunsModel() = default;

void RunsModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
    m_selected = -1;
    m_pendingSelect.clear();
    updateTicker();
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
}

void RunsModel::sessionReplaced()
{
    clear();
    setError({});
}

void RunsModel::setPipeline(const QString &pipeline)
{
    if (pipeline == m_pipeline)
        return;
    m_pipeline = pipeline;
    ++m_generation; // answers for the other pipeline are dropped
    clear();
    Q_EMIT pipelineChanged();
    if (m_session && m_session->state() == Session::State::Connected)
        refresh();
}

void RunsModel::setLimit(int limit)
{
    limit = qBound(1, limit, 1000);
    if (limit == m_limit)
        return;
    m_limit = limit;
    Q_EMIT limitChanged();
    if (m_session && m_session->state() == Session::State::Connected)
        refresh();
}

int RunsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QHash<int, QByteArray> RunsModel::roleNames() const
{
    return {
        {IdRole, "id"},
        {PipelineRole, "pipeline"},
        {JobRole, "job"},
        {NumberRole, "number"},
        {StatusRole, "status"},
        {StateRole, "runState"},
        {StatusTextRole, "statusText"},
        {TriggerRole, "trigger"},
        {ActorRole, "actor"},
        {ErrorRole, "error"},
        {CreatedMsRole, "createdMs"},
        {StartedMsRole, "startedMs"},
        {FinishedMsRole, "finishedMs"},
        {DurationMsRole, "durationMs"},
        {DurationTextRole, "durationText"},
        {TitleRole, "title"},
        {CreatedTextRole, "createdText"},
        {LiveRole, "live"},
        {BusyRole, "busy"},
        {ActionErrorRole, "actionError"},
    };
}

QVariant RunsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    if (role == Qt::DisplayRole)
        role = TitleRole;
    return roleValue(m_rows.at(index.row()), role);
}

qint64 RunsModel::durationOf(const QJsonObject &run) const
{
    const qint64 started = run.value(u"started_ms"_s).toInteger();
    const qint64 finished = run.value(u"finished_ms"_s).toInteger();
    if (started <= 0)
        return 0;
    if (finished >= started)
        return finished - started;
    return core::parseRunStatus(run.value(u"status"_s).toString()) == core::RunStatus::Running
               ? qMax<qint64>(0, m_now() - started)
               : 0;
}

QVariant RunsModel::roleValue(const Row &row, int role) const
{
    const QJsonObject &r = row.run;
    const QString status = r.value(u"status"_s).toString();
    switch (role) {
    case IdRole:
        return r.value(u"id"_s).toString();
    case PipelineRole:
        return r.value(u"pipeline"_s).toString();
    case JobRole:
        return r.value(u"job"_s).toString();
    case NumberRole:
        return r.value(u"number"_s).toInt();
    case StatusRole:
        return status;
    case StateRole:
        return int(RunState::ofListedRun(status, r.value(u"waiting"_s).toBool()));
    case StatusTextRole:
        return RunState::wordOfListedRun(status, r.value(u"waiting"_s).toBool());
    case TriggerRole:
        return r.value(u"trigger"_s).toString();
    case ActorRole:
        return r.value(u"actor"_s).toString();
    case ErrorRole:
        return r.value(u"error"_s).toString();
    case CreatedMsRole:
        return r.value(u"created_ms"_s).toInteger();
    case StartedMsRole:
        return r.value(u"started_ms"_s).toInteger();
    case FinishedMsRole:
        return r.value(u"finished_ms"_s).toInteger();
    case DurationMsRole:
        return durationOf(r);
    case DurationTextRole:
        return RunState::durationText(durationOf(r));
    case TitleRole:
        if (r.isEmpty())
            return QString();
        return m_pipeline.isEmpty() ? tr("%1/%2 #%3")
                                          .arg(r.value(u"pipeline"_s).toString(), r.value(u"job"_s).toString())
                                          .arg(r.value(u"number"_s).toInt())
                                    : tr("%1 #%2").arg(r.value(u"job"_s).toString()).arg(r.value(u"number"_s).toInt());
    case CreatedTextRole: {
        const qint64 created = r.value(u"created_ms"_s).toInteger();
        return created > 0 ? QLocale().toString(QDateTime::fromMSecsSinceEpoch(created), QLocale::ShortFormat)
                           : QString();
    }
    case LiveRole:
        return core::parseRunStatus(status) == core::RunStatus::Queued ||
               core::parseRunStatus(status) == core::RunStatus::Running;
    case BusyRole:
        return row.busy;
    case ActionErrorRole:
        return row.actionError;
    }
    return {};
}

void RunsModel::setSelectedRow(int row)
{
    if (row >= 0)
        m_pendingSelect.clear();
    SessionListModel::setSelectedRow(row);
}

QString RunsModel::selectedId() const
{
    return m_selected >= 0 ? m_rows.at(m_selected).run.value(u"id"_s).toString() : QString();
}

QVariantMap RunsModel::selected() const
{
    static const Row none;
    const Row &row = m_selected >= 0 && m_selected < m_rows.size() ? m_rows.at(m_selected) : none;
    QVariantMap map;
    const auto names = roleNames();
    for (auto it = names.cbegin(); it != names.cend(); ++it)
        map.insert(QString::fromLatin1(it.value()), roleValue(row, it.key()));
    return map;
}

int RunsModel::rowOf(const QString &id) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).run.value(u"id"_s).toString() == id)
            return i;
    return -1;
}

bool RunsModel::selectId(const QString &id)
{
    const int row = rowOf(id);
    // A run just triggered may not be listed yet: it is selected when it comes.
    m_pendingSelect = row < 0 ? id : QString();
    setSelectedRow(row);
    return row >= 0;
}

void RunsModel::refresh()
{
    if (!m_session)
        return;
    setLoading(true);
    const quint64 generation = m_generation;
    QPointer<RunsModel> self(this);
    m_session->runs(m_pipeline, m_limit, [self, generation](const Result<QJsonArray> &runs) {
        if (!self || self->m_generation != generation)
            return;
        if (!runs) {
            self->setError(explainRunError(runs.error()));
            self->setLoading(false);
            return;
        }
        self->setError({});
        QSet<QString> seen;
        for (const QJsonValue run : *runs) {
            seen.insert(run.toObject().value(u"id"_s).toString());
            self->apply(run.toObject());
        }
        // Runs that fell off the newest `limit`, or of a pipeline since removed.
        for (int i = int(self->m_rows.size()) - 1; i >= 0; --i) {
            if (seen.contains(self->m_rows.at(i).run.value(u"id"_s).toString()))
                continue;
            self->removeListRow(self->m_rows, i);
            Q_EMIT self->countChanged();
            Q_EMIT self->selectedChanged();
        }
        // The newest run is in front until the user picks another.
        if (self->m_selected < 0 && !self->m_rows.isEmpty() && self->m_pendingSelect.isEmpty())
            self->setSelectedRow(0);
        self->updateTicker();
        self->setLoading(false);
    });
}

void RunsModel::apply(const QJsonObject &given)
{
    QJsonObject run = given;
    run.remove(u"steps"_s); // a run's detail carries its tree; the list needs the record
    const QString id = run.value(u"id"_s).toString();
    if (id.isEmpty())
        return;
    const int row = rowOf(id);
    if (row >= 0) {
        const QJsonObject &was = m_rows.at(row).run;
        if (RunState::progress(run.value(u"status"_s).toString()) <
            RunState::progress(was.value(u"status"_s).toString()))
            return;
        QJsonObject merged = was;
        for (auto it = run.begin(); it != run.end(); ++it)
            merged.insert(it.key(), it.value());
        if (merged != m_rows.at(row).run) {
            m_rows[row].run = merged;
            rowChanged(row);
        }
        updateTicker();
        return;
    }
    // Newest first, as the API lists them.
    const qint64 created = run.value(u"created_ms"_s).toInteger();
    int at = 0;
    while (at < m_rows.size() && m_rows.at(at).run.value(u"created_ms"_s).toInteger() >= created)
        ++at;
    if (at >= m_limit)
        return;
    beginInsertRows({}, at, at);
    m_rows.insert(at, Row{run, false, {}});
    endInsertRows();
    if (m_selected >= at)
        ++m_selected;
    if (!m_pendingSelect.isEmpty() && m_pendingSelect == id) {
        m_pendingSelect.clear();
        m_selected = at;
    }
    if (m_rows.size() > m_limit)
        removeListRow(m_rows, int(m_rows.size()) - 1);
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
    updateTicker();
}

void RunsModel::fetch(const QString &id)
{
    const quint64 generation = m_generation;
    QPointer<RunsModel> self(this);
    m_session->run(id, [self, generation](const Result<QJsonObject> &run) {
        if (!self || self->m_generation != generation || !run)
            return;
        self->apply(*run);
    });
}

void RunsModel::rowChanged(int row)
{
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i);
    if (row == m_selected)
        Q_EMIT selectedChanged();
}

void RunsModel::updateTicker()
{
    const bool running = std::any_of(m_rows.cbegin(), m_rows.cend(), [](const Row &r) {
        return core::parseRunStatus(r.run.value(u"status"_s).toString()) == core::RunStatus::Running;
    });
    if (running && !m_ticker.isActive())
        m_ticker.start();
    else if (!running)
        m_ticker.stop();
}

void RunsModel::abort(int row)
{
    if (!m_session || row < 0 || row >= m_rows.size() || m_rows.at(row).busy)
        return;
    Row &r = m_rows[row];
    r.busy = true;
    r.actionError.clear();
    rowChanged(row);
    const QString id = r.run.value(u"id"_s).toString();
    const quint64 generation = m_generation;
    QPointer<RunsModel> self(this);
    m_session->abortRun(id, [self, generation, id](const Status &done) {
        if (!self || self->m_generation != generation)
            return;
        const int at = self->rowOf(id);
        if (at < 0) {
            if (!done)
                self->setError(explainRunError(done.error()));
            return;
        }
        Row &r = self->m_rows[at];
        r.busy = false;
        r.actionError = done ? QString() : explainRunError(done.error());
        self->rowChanged(at);
    });
}

void RunsModel::onEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    // A step of a listed run asked for approval, or got its answer: the run's "waiting" changed.
    if (type && core::isApprovalEvent(*type)) {
        if (const QString run = RunState::runOfApproval(event.value(u"data"_s).toObject()); rowOf(run) >= 0)
            fetch(run);
        return;
    }
    if (type != core::EventType::RunQueued && type != core::EventType::RunStarted &&
        type != core::EventType::RunFinished)
        return;
    const QJsonObject data = event.value(u"data"_s).toObject();
    if (!m_pipeline.isEmpty() && data.value(u"pipeline"_s).toString() != m_pipeline)
        return;
    const QString id = data.value(u"run"_s).toString();
    const qint64 at = event.value(u"time_ms"_s).toInteger();
    QJsonObject run{{u"id"_s, id},
                    {u"pipeline"_s, data.value(u"pipeline"_s)},
                    {u"job"_s, data.value(u"job"_s)},
                    {u"number"_s, data.value(u"number"_s)}};
    if (type == core::EventType::RunQueued) {
        run.insert(u"status"_s, core::toString(core::RunStatus::Queued));
        run.insert(u"created_ms"_s, at);
        if (rowOf(id) >= 0)
            run.remove(u"status"_s); // the list (or a start) was here first
        apply(run);
        fetch(id); // trigger, actor and the exact times
        return;
    }
    if (rowOf(id) < 0)
        return fetch(id); // queued before the list loaded
    if (type == core::EventType::RunStarted) {
        run.insert(u"status"_s, core::toString(core::RunStatus::Running));
        run.insert(u"started_ms"_s, at);
    } else {
        run.insert(u"status"_s, data.value(u"status"_s));
        run.insert(u"error"_s, data.value(u"error"_s));
        run.insert(u"finished_ms"_s, at);
    }
    apply(run);
    if (type == core::EventType::RunFinished)
        fetch(id); // the stored record's times
}

} // namespace pando::desktop
