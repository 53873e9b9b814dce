#include "qml/runs/runtreemodel.h"
#include "app/desktop/logs/ansi.h"
#include "core/vocab/vocab.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLocale>
#include <QPointer>
#include <QRegularExpression>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

// What a terminal would show of a step's output: colours and other escape sequences are taken
// out (they showed as raw codes), line by line.
QString visibleText(const QString &raw)
{
    const QByteArray bytes = raw.toUtf8();
    if (!ansi::needsProcessing(bytes))
        return raw;
    QStringList lines;
    for (const QByteArray &line : bytes.split('\n'))
        lines << QString::fromUtf8(ansi::strip(line));
    return lines.join(u'\n');
}

QString explainStepError(const Error &e)
{
    return e.hint.isEmpty() ? e.text() : RunTreeModel::tr("%1 — %2").arg(e.text(), e.hint);
}

// How far a step has got: the run's detail and the replay of its events may cross, and an older
// state must not undo a newer one. A retried step starts again with a higher attempt.
int stepProgress(const QJsonObject &step)
{
    const QString status = step.value(u"status"_s).toString();
    int phase = 2;
    if (status.isEmpty() || core::parseRunStepStatus(status) == core::RunStepStatus::Pending)
        phase = 0;
    else if (core::parseRunStepStatus(status) == core::RunStepStatus::Running ||
             core::parseRunStepStatus(status) == core::RunStepStatus::Waiting)
        phase = 1;
    return step.value(u"attempt"_s).toInt() * 4 + phase;
}

bool isFailure(const QString &status)
{
    return core::parseRunStepStatus(status) == core::RunStepStatus::Failed ||
           core::parseRunStepStatus(status) == core::RunStepStatus::Errored;
}
} // namespace

// StepOutputModel

int StepOutputModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_lines.size());
}

QVariant StepOutputModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Line &line = m_lines.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case TextRole:
        return line.text;
    case StreamRole:
        return line.stream;
    case StepRole:
        return line.step;
    case RawTextRole:
        return line.raw;
    }
    return {};
}

QHash<int, QByteArray> StepOutputModel::roleNames() const
{
    return {{TextRole, "text"}, {StreamRole, "stream"}, {StepRole, "step"}, {RawTextRole, "rawText"}};
}

void StepOutputModel::reset(QList<Line> lines)
{
    beginResetModel();
    m_lines = std::move(lines);
    endResetModel();
    Q_EMIT countChanged();
}

void StepOutputModel::append(const Line &line)
{
    const int row = int(m_lines.size());
    beginInsertRows({}, row, row);
    m_lines.append(line);
    endInsertRows();
    Q_EMIT countChanged();
}

// RunTreeModel

RunTreeModel::RunTreeModel(QObject *parent)
    : QAbstractItemModel(parent), m_output(this), m_now([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    // A second's resolution is what a duration label shows.
    m_ticker.setInterval(1000);
    connect(&m_ticker, &QTimer::timeout, this, &RunTreeModel::tick);
}

RunTreeModel::~RunTreeModel() = default;

void RunTreeModel::setSessionObject(QObject *session)
{
    auto *typed = qobject_cast<Session *>(session);
    if (session && !typed)
        qWarning("RunTreeModel: %s is not a pando::desktop::Session", session->metaObject()->className());
    setSession(typed);
}

void RunTreeModel::setSession(Session *session)
{
    if (m_session == session)
        return;
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (m_session) {
        connect(m_session, &Session::eventReceived, this, &RunTreeModel::onEvent);
        connect(m_session, &Session::stateChanged, this, [this](Session::State state) {
            // After the link dropped, the follow ended: load again and follow from the start.
            if (state == Session::State::Connected && !m_runId.isEmpty() && !isFollowing() && isLive()) {
                m_followed = false;
                load(false);
            }
        });
    }
    Q_EMIT sessionChanged();
    clear();
    if (m_session && !m_runId.isEmpty() && m_session->state() == Session::State::Connected)
        load(true);
}

void RunTreeModel::setRunId(const QString &id)
{
    if (id == m_runId)
        return;
    m_runId = id;
    Q_EMIT runIdChanged();
    clear();
    if (m_session && !m_runId.isEmpty() && m_session->state() == Session::State::Connected)
        load(true);
}

void RunTreeModel::clear()
{
    ++m_generation;
    if (m_follow) {
        disconnect(m_follow, nullptr, this, nullptr);
        m_follow->deleteLater();
        m_follow = nullptr;
        Q_EMIT followingChanged();
    }
    beginResetModel();
    m_root.children.clear();
    m_byId.clear();
    endResetModel();
    m_run = {};
    m_lines.clear();
    m_lastSeq = 0;
    m_followed = false;
    m_output.reset({});
    m_selectedStep.clear();
    m_userSelected = false;
    m_loading = false;
    updateTicker();
    setError({});
    Q_EMIT loadingChanged();
    Q_EMIT runChanged();
    Q_EMIT selectedStepChanged();
}

void RunTreeModel::refresh()
{
    if (!m_session || m_runId.isEmpty())
        return;
    load(false);
}

void RunTreeModel::load(bool reset)
{
    m_loading = true;
    Q_EMIT loadingChanged();
    const quint64 generation = m_generation;
    QPointer<RunTreeModel> self(this);
    m_session->run(m_runId, [self, generation, reset](const Result<QJsonObject> &run) {
        if (!self || self->m_generation != generation)
            return;
        self->m_loading = false;
        Q_EMIT self->loadingChanged();
        if (!run) {
            self->setError(explainStepError(run.error()));
            return;
        }
        self->setError({});
        self->adopt(*run, reset);
        // From the first event on: what happened between the detail and now, then live. Steps
        // the detail already shows further along keep their newer state.
        if (!self->m_followed)
            self->follow();
    });
}

void RunTreeModel::adopt(const QJsonObject &run, bool reset)
{
    QJsonObject record = run;
    const QJsonArray steps = record.take(u"steps"_s).toArray();
    m_run = record;
    if (reset || m_byId.isEmpty()) {
        beginResetModel();
        m_root.children.clear();
        m_byId.clear();
        build(&m_root, steps);
        endResetModel();
    } else {
        merge({}, steps);
    }
    Q_EMIT runChanged();
    selectFailing();
    updateTicker();
}

void RunTreeModel::build(Node *parent, const QJsonArray &steps)
{
    for (const QJsonValue value : steps) {
        QJsonObject step = value.toObject();
        const QJsonArray children = step.take(u"children"_s).toArray();
        auto node = std::make_unique<Node>();
        node->step = step;
        node->parent = parent;
        Node *raw = node.get();
        m_byId.insert(step.value(u"id"_s).toString(), raw);
        parent->children.push_back(std::move(node));
        build(raw, children);
    }
}

void RunTreeModel::merge(const QString &parentId, const QJsonArray &steps)
{
    for (const QJsonValue value : steps) {
        QJsonObject step = value.toObject();
        const QJsonArray children = step.take(u"children"_s).toArray();
        upsert(step, parentId);
        merge(step.value(u"id"_s).toString(), children);
    }
}

void RunTreeModel::upsert(const QJsonObject &given, const QString &parentId)
{
    QJsonObject step = given;
    step.remove(u"parent"_s);
    step.remove(u"children"_s);
    const QString id = step.value(u"id"_s).toString();
    if (id.isEmpty())
        return;
    if (Node *node = m_byId.value(id)) {
        if (stepProgress(step) < stepProgress(node->step) || node->step == step)
            return;
        const bool hadFailed = isFailure(node->step.value(u"status"_s).toString());
        node->step = step;
        const QModelIndex at = indexFor(node);
        Q_EMIT dataChanged(at, at);
        if (id == m_selectedStep)
            Q_EMIT selectedStepChanged();
        if (hadFailed != isFailure(step.value(u"status"_s).toString())) {
            Q_EMIT runChanged(); // the failed count
            selectFailing();     // the run's end may have come first, on the event stream
        }
        updateTicker();
        return;
    }
    // A step whose parent is not known (yet) is shown at the top, as the API's tree does.
    Node *parent = m_byId.value(parentId, &m_root);
    const int row = int(parent->children.size());
    beginInsertRows(indexFor(parent), row, row);
    auto node = std::make_unique<Node>();
    node->step = step;
    node->parent = parent;
    m_byId.insert(id, node.get());
    parent->children.push_back(std::move(node));
    endInsertRows();
    Q_EMIT runChanged(); // the counts
    updateTicker();
}

void RunTreeModel::follow()
{
    if (!m_session || m_runId.isEmpty())
        return;
    m_followed = true;
    Subscription *subscription = m_session->followRun(m_runId, m_lastSeq, this);
    m_follow = subscription;
    connect(subscription, &Subscription::received, this, &RunTreeModel::onMessage);
    connect(subscription, &Subscription::opened, this, &RunTreeModel::followingChanged);
    const quint64 generation = m_generation;
    connect(subscription, &Subscription::ended, this, [this, subscription, generation] {
        if (generation != m_generation)
            return;
        const Status &result = subscription->result();
        Q_EMIT followingChanged();
        if (!result) {
            // Followed again when the session connects again (the link dropped), not in a loop.
            setError(explainStepError(result.error()));
            return;
        }
        // The stored record has the end's exact times (and steps the follow may have missed).
        load(false);
    });
    Q_EMIT followingChanged();
}

void RunTreeModel::onMessage(const QJsonObject &message)
{
    if (message.contains(u"finished"_s)) {
        setRunField(u"status"_s, message.value(u"finished"_s));
        return;
    }
    m_lastSeq = qMax(m_lastSeq, message.value(u"seq"_s).toInteger());
    const QString type = message.value(u"type"_s).toString();
    const QJsonObject data = message.value(u"data"_s).toObject();
    if (type == u"step"_s) {
        upsert(data, data.value(u"parent"_s).toString());
        if (core::parseRunStatus(status()) == core::RunStatus::Queued)
            setRunField(u"status"_s, core::toString(core::RunStatus::Running));
        return;
    }
    if (type != u"output"_s)
        return;
    const QString raw = data.value(u"text"_s).toString();
    const StepOutputModel::Line line{message.value(u"step"_s).toString(), data.value(u"stream"_s).toString(),
                                     visibleText(raw), raw};
    const bool first = std::none_of(m_lines.cbegin(), m_lines.cend(),
                                    [&line](const StepOutputModel::Line &l) { return l.step == line.step; });
    m_lines.append(line);
    if (m_selectedStep.isEmpty() || m_selectedStep == line.step)
        m_output.append(line);
    if (first) {
        if (Node *node = m_byId.value(line.step)) {
            const QModelIndex at = indexFor(node);
            Q_EMIT dataChanged(at, at, {HasOutputRole});
        }
    }
}

void RunTreeModel::onEvent(const QJsonObject &event)
{
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (m_run.isEmpty() || (type != core::EventType::RunStarted && type != core::EventType::RunFinished))
        return;
    const QJsonObject data = event.value(u"data"_s).toObject();
    if (data.value(u"run"_s).toString() != m_runId)
        return;
    if (type == core::EventType::RunStarted) {
        if (core::parseRunStatus(status()) == core::RunStatus::Queued)
            setRunField(u"status"_s, core::toString(core::RunStatus::Running));
        if (m_run.value(u"started_ms"_s).toInteger() <= 0)
            setRunField(u"started_ms"_s, event.value(u"time_ms"_s));
        return;
    }
    setRunField(u"error"_s, data.value(u"error"_s));
    setRunField(u"status"_s, data.value(u"status"_s));
}

void RunTreeModel::setRunField(const QString &key, const QJsonValue &value)
{
    if (m_run.value(key) == value)
        return;
    m_run.insert(key, value);
    Q_EMIT runChanged();
    if (key == u"status"_s) {
        selectFailing();
        updateTicker();
    }
}

void RunTreeModel::setError(const QString &error)
{
    if (error == m_error)
        return;
    m_error = error;
    Q_EMIT errorChanged();
}

void RunTreeModel::setSelectedStep(const QString &stepId)
{
    m_userSelected = !stepId.isEmpty();
    if (stepId == m_selectedStep)
        return;
    m_selectedStep = stepId;
    if (!m_decisionError.isEmpty()) {
        m_decisionError.clear();
        Q_EMIT decisionChanged();
    }
    QList<StepOutputModel::Line> lines;
    for (const StepOutputModel::Line &line : std::as_const(m_lines))
        if (stepId.isEmpty() || line.step == stepId)
            lines.append(line);
    m_output.reset(std::move(lines));
    Q_EMIT selectedStepChanged();
}

void RunTreeModel::selectFailing()
{
    // A failed run opens on its first failing step (the innermost one: where the reason is).
    if (m_userSelected || !isFailure(status()))
        return;
    std::function<const Node *(const Node *)> find = [&find](const Node *node) -> const Node * {
        for (const auto &child : node->children) {
            if (const Node *inner = find(child.get()))
                return inner;
            if (isFailure(child->step.value(u"status"_s).toString()))
                return child.get();
        }
        return nullptr;
    };
    if (const Node *failing = find(&m_root)) {
        setSelectedStep(failing->step.value(u"id"_s).toString());
        m_userSelected = false; // the user's own choice still wins later
    }
}

QVariantMap RunTreeModel::selected() const
{
    static const Node none;
    const Node *node = m_byId.value(m_selectedStep, nullptr);
    QVariantMap map;
    const auto names = roleNames();
    for (auto it = names.cbegin(); it != names.cend(); ++it)
        map.insert(QString::fromLatin1(it.value()), roleValue(node ? node : &none, it.key()));
    return map;
}

QModelIndex RunTreeModel::indexOf(const QString &stepId) const
{
    const Node *node = m_byId.value(stepId, nullptr);
    return node ? indexFor(node) : QModelIndex();
}

// The tree

RunTreeModel::Node *RunTreeModel::nodeOf(const QModelIndex &index) const
{
    return index.isValid() ? static_cast<Node *>(index.internalPointer()) : const_cast<Node *>(&m_root);
}

QModelIndex RunTreeModel::indexFor(const Node *node) const
{
    if (!node || node == &m_root || !node->parent)
        return {};
    const auto &siblings = node->parent->children;
    for (size_t i = 0; i < siblings.size(); ++i)
        if (siblings[i].get() == node)
            return createIndex(int(i), 0, const_cast<Node *>(node));
    return {};
}

QModelIndex RunTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (column != 0 || row < 0 || (parent.isValid() && parent.column() != 0))
        return {};
    const Node *p = nodeOf(parent);
    if (size_t(row) >= p->children.size())
        return {};
    return createIndex(row, 0, p->children[size_t(row)].get());
}

QModelIndex RunTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    return indexFor(nodeOf(child)->parent);
}

int RunTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return int(nodeOf(parent)->children.size());
}

int RunTreeModel::columnCount(const QModelIndex &) const
{
    return 1;
}

QHash<int, QByteArray> RunTreeModel::roleNames() const
{
    return {
        {IdRole, "stepId"},
        {NameRole, "name"},
        {KindRole, "kind"},
        {LabelRole, "label"},
        {StatusRole, "status"},
        {StateRole, "stepState"},
        {StatusTextRole, "statusText"},
        {CachedRole, "cached"},
        {DurationMsRole, "durationMs"},
        {DurationTextRole, "durationText"},
        {AttemptRole, "attempt"},
        {ExitCodeRole, "exitCode"},
        {ErrorRole, "error"},
        {HasOutputRole, "hasOutput"},
        {ApprovalIdRole, "approvalId"},
        {ApprovalStatusRole, "approvalStatus"},
    };
}

QVariant RunTreeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (role == Qt::DisplayRole)
        role = LabelRole;
    return roleValue(nodeOf(index), role);
}

qint64 RunTreeModel::durationOf(const QJsonObject &step) const
{
    const qint64 started = step.value(u"started_ms"_s).toInteger();
    const qint64 finished = step.value(u"finished_ms"_s).toInteger();
    if (started <= 0)
        return 0;
    if (finished >= started)
        return finished - started;
    const QString status = step.value(u"status"_s).toString();
    return core::parseRunStepStatus(status) == core::RunStepStatus::Running ||
                   core::parseRunStepStatus(status) == core::RunStepStatus::Waiting
               ? qMax<qint64>(0, m_now() - started)
               : 0;
}

QVariant RunTreeModel::roleValue(const Node *node, int role) const
{
    const QJsonObject &s = node->step;
    const QString status = s.value(u"status"_s).toString();
    const bool cached =
        s.value(u"cached"_s).toBool() || core::parseRunStepStatus(status) == core::RunStepStatus::Cached;
    switch (role) {
    case IdRole:
        return s.value(u"id"_s).toString();
    case NameRole:
        return s.value(u"name"_s).toString();
    case KindRole:
        return s.value(u"kind"_s).toString();
    case LabelRole: {
        const QString kind = s.value(u"kind"_s).toString();
        const QString name = s.value(u"name"_s).toString();
        if (name.isEmpty() || name == kind)
            return kind;
        return kind.isEmpty() ? name : kind + u' ' + name;
    }
    case StatusRole:
        return status;
    case StateRole:
        return int(DisplayState::ofRun(status));
    case StatusTextRole: {
        // An approve step that ended without an approval says how, not just "failed".
        const QString approval = s.value(u"approval"_s).toObject().value(u"status"_s).toString();
        if (approval == u"rejected"_s)
            return tr("rejected");
        if (approval == u"expired"_s)
            return tr("expired");
        if (approval == u"withdrawn"_s)
            return tr("withdrawn");
        return RunState::word(status);
    }
    case CachedRole:
        return cached;
    case DurationMsRole:
        return cached ? 0 : durationOf(s);
    case DurationTextRole:
        return RunState::durationText(cached ? 0 : durationOf(s));
    case AttemptRole:
        return s.value(u"attempt"_s).toInt();
    case ExitCodeRole:
        return s.contains(u"exit_code"_s) ? s.value(u"exit_code"_s).toInt() : -1;
    case ErrorRole:
        // A pending approval is signed off right here, not with the CLI command the step's text gives.
        if (s.value(u"approval"_s).toObject().value(u"status"_s).toString() == u"pending"_s)
            return QString();
        return s.value(u"error"_s).toString();
    case ApprovalIdRole:
        return s.value(u"approval"_s).toObject().value(u"id"_s).toString();
    case ApprovalStatusRole:
        return s.value(u"approval"_s).toObject().value(u"status"_s).toString();
    case HasOutputRole: {
        const QString id = s.value(u"id"_s).toString();
        return !id.isEmpty() && std::any_of(m_lines.cbegin(), m_lines.cend(),
                                            [&id](const StepOutputModel::Line &l) { return l.step == id; });
    }
    }
    return {};
}

void RunTreeModel::tick()
{
    for (Node *node : std::as_const(m_byId)) {
        const QString status = node->step.value(u"status"_s).toString();
        if (core::parseRunStepStatus(status) == core::RunStepStatus::Running ||
            core::parseRunStepStatus(status) == core::RunStepStatus::Waiting) {
            const QModelIndex at = indexFor(node);
            Q_EMIT dataChanged(at, at, {DurationMsRole, DurationTextRole});
        }
    }
    if (core::parseRunStatus(status()) == core::RunStatus::Running)
        Q_EMIT runChanged(); // the run's own duration
}

void RunTreeModel::updateTicker()
{
    const bool moving = core::parseRunStatus(status()) == core::RunStatus::Running;
    if (moving && !m_ticker.isActive())
        m_ticker.start();
    else if (!moving)
        m_ticker.stop();
}

void RunTreeModel::decide(bool approve, const QString &comment)
{
    const Node *node = m_byId.value(m_selectedStep, nullptr);
    const QString id = node ? roleValue(node, ApprovalIdRole).toString() : QString();
    if (!m_session || id.isEmpty() || m_deciding)
        return;
    m_deciding = true;
    m_decisionError.clear();
    Q_EMIT decisionChanged();
    QPointer<RunTreeModel> self(this);
    const QString runId = m_runId;
    m_session->decideApproval(id, approve, comment.trimmed(), [self, runId](const Result<QJsonObject> &decided) {
        if (!self)
            return;
        self->m_deciding = false;
        if (!decided)
            self->m_decisionError = explainStepError(decided.error());
        Q_EMIT self->decisionChanged();
        // The step moves on (or ends) through the run's follow; a reload makes sure of it.
        if (decided && self->m_runId == runId)
            self->refresh();
    });
}

// The run

QString RunTreeModel::title() const
{
    if (m_run.isEmpty())
        return {};
    return tr("%1/%2 #%3")
        .arg(m_run.value(u"pipeline"_s).toString(), m_run.value(u"job"_s).toString())
        .arg(m_run.value(u"number"_s).toInt());
}

QString RunTreeModel::status() const
{
    return m_run.value(u"status"_s).toString();
}

QString RunTreeModel::runError() const
{
    return m_run.value(u"error"_s).toString();
}

QString RunTreeModel::logNote() const
{
    const qint64 removed = m_run.value(u"log_removed_ms"_s).toInteger();
    if (removed <= 0)
        return {};
    return tr("The output of this run was removed on %1, as its job's build_log_retention says; its steps are kept.")
        .arg(QLocale().toString(QDateTime::fromMSecsSinceEpoch(removed), QLocale::ShortFormat));
}

QString RunTreeModel::durationText() const
{
    const qint64 started = m_run.value(u"started_ms"_s).toInteger();
    const qint64 finished = m_run.value(u"finished_ms"_s).toInteger();
    if (started <= 0)
        return RunState::durationText(0);
    if (finished >= started)
        return RunState::durationText(finished - started);
    return RunState::durationText(core::parseRunStatus(status()) == core::RunStatus::Running ? m_now() - started : 0);
}

QString RunTreeModel::triggerText() const
{
    if (m_run.isEmpty())
        return {};
    const QString trigger = m_run.value(u"trigger"_s).toString();
    const QString actor = m_run.value(u"actor"_s).toString();
    const QString who = actor.section(u'/', 0, 0).remove(QRegularExpression(u"^user:"_s));
    if (trigger == u"manual"_s)
        return who.isEmpty() ? tr("triggered by hand") : tr("triggered by %1").arg(who);
    QString what = trigger;
    if (trigger.startsWith(u"resource:"_s))
        what = tr("new version of %1").arg(trigger.mid(9));
    else if (trigger.startsWith(u"webhook:"_s))
        what = tr("webhook of %1").arg(trigger.mid(8));
    else if (trigger.startsWith(u"passed:"_s))
        what = tr("after job %1 passed").arg(trigger.mid(7));
    return who.isEmpty() ? what : tr("%1, by %2").arg(what, who);
}

int RunTreeModel::stepCount() const
{
    return int(m_byId.size());
}

int RunTreeModel::cachedCount() const
{
    return int(std::count_if(m_byId.cbegin(), m_byId.cend(), [](const Node *n) {
        return core::parseRunStepStatus(n->step.value(u"status"_s).toString()) == core::RunStepStatus::Cached;
    }));
}

int RunTreeModel::failedCount() const
{
    return int(std::count_if(m_byId.cbegin(), m_byId.cend(),
                             [](const Node *n) { return isFailure(n->step.value(u"status"_s).toString()); }));
}

QString RunTreeModel::summaryText() const
{
    if (m_run.isEmpty())
        return {};
    return tr("%n step(s)", nullptr, stepCount()) + u" · "_s + tr("%n unchanged", nullptr, cachedCount()) + u" · "_s +
           tr("%n failed", nullptr, failedCount());
}

} // namespace pando::desktop
