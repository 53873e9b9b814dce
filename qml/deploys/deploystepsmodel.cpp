#include "qml/deploys/deploystepsmodel.h"
#include "app/desktop/logs/ansi.h"
#include "core/vocab/vocab.h"

#include <QDateTime>
#include <QJsonArray>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

namespace pando::desktop {

namespace {

QString stepTitle(const QString &name)
{
    if (name == u"fetch"_s)
        return DeployStepsModel::tr("Fetch the source");
    if (name == u"detect"_s)
        return DeployStepsModel::tr("Detect the build");
    if (name == u"plan"_s)
        return DeployStepsModel::tr("Plan");
    if (name == u"approval"_s)
        return DeployStepsModel::tr("Approval");
    if (name == u"build"_s)
        return DeployStepsModel::tr("Build the image");
    if (name == u"start"_s)
        return DeployStepsModel::tr("Start the container");
    if (name == u"health"_s)
        return DeployStepsModel::tr("Check health");
    if (name == u"switch"_s)
        return DeployStepsModel::tr("Switch traffic");
    if (name == u"retire"_s)
        return DeployStepsModel::tr("Retire the old version");
    return name;
}

} // namespace

DeployStepsModel::DeployStepsModel(QObject *parent)
    : SessionListModel(parent), m_now([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    // A second's resolution is what a duration label shows; four ticks keep the bar smooth.
    m_ticker.setInterval(250);
    connect(&m_ticker, &QTimer::timeout, this, &DeployStepsModel::tick);
    // A running step's output is asked for again each second (it is written every half second).
    m_logPoll.setInterval(1000);
    m_logPoll.setSingleShot(true);
    connect(&m_logPoll, &QTimer::timeout, this, [this] { loadLog(false); });
    connect(this, &DeployStepsModel::selectedChanged, this, [this] { loadLog(true); });
}

DeployStepsModel::~DeployStepsModel() = default;

void DeployStepsModel::setDeployId(const QString &id)
{
    if (id == m_deployId)
        return;
    m_deployId = id;
    ++m_generation;
    stopFollowingLog();
    m_logFollowFailed = false;
    m_stepLines.clear();
    beginResetModel();
    m_steps.clear();
    m_deploy = {};
    endResetModel();
    m_selected = -1;
    m_userSelected = false;
    updateTicker();
    Q_EMIT deployIdChanged();
    Q_EMIT countChanged();
    Q_EMIT selectedChanged();
    Q_EMIT deployChanged();
    Q_EMIT durationsChanged();
    refresh();
}

int DeployStepsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_steps.size());
}

QHash<int, QByteArray> DeployStepsModel::roleNames() const
{
    return {
        {NameRole, "name"},
        {TitleRole, "title"},
        {StatusRole, "status"},
        {StateRole, "state"},
        {StatusTextRole, "statusText"},
        {DetailRole, "detail"},
        {StartedMsRole, "startedMs"},
        {DurationMsRole, "durationMs"},
        {FractionRole, "fraction"},
        {ApprovalIdRole, "approvalId"},
    };
}

qint64 DeployStepsModel::durationOf(const QJsonObject &step) const
{
    const qint64 started = step.value(u"started_ms"_s).toInteger();
    if (started <= 0)
        return 0;
    qint64 finished = step.value(u"finished_ms"_s).toInteger();
    if (finished <= 0 &&
        core::parseDeployStepStatus(step.value(u"status"_s).toString()) == core::DeployStepStatus::Running)
        finished = m_now();
    return finished >= started ? finished - started : 0;
}

qint64 DeployStepsModel::longestMs() const
{
    qint64 longest = 0;
    for (const QJsonObject &step : m_steps)
        longest = std::max(longest, durationOf(step));
    return longest;
}

QVariant DeployStepsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const QJsonObject &step = m_steps.at(index.row());
    const QString status = step.value(u"status"_s).toString();
    switch (role) {
    case Qt::DisplayRole:
    case NameRole:
        return step.value(u"name"_s).toString();
    case TitleRole:
        return stepTitle(step.value(u"name"_s).toString());
    case StatusRole:
        return status;
    case StateRole:
        return int(DisplayState::ofDeployStep(status));
    case StatusTextRole:
        if (core::parseDeployStepStatus(status) == core::DeployStepStatus::Running)
            return tr("running");
        return deployStatusWord(status, DisplayState::ofDeployStep(status));
    case DetailRole:
        return step.value(u"detail"_s).toString();
    case StartedMsRole:
        return step.value(u"started_ms"_s).toInteger();
    case DurationMsRole:
        return durationOf(step);
    case FractionRole: {
        const qint64 longest = longestMs();
        return longest > 0 ? double(durationOf(step)) / double(longest) : 0.0;
    }
    case ApprovalIdRole: {
        if (core::parseDeployStepStatus(status) != core::DeployStepStatus::Waiting)
            return QString();
        // The engine writes "waiting for approval <id> (reasons); approve with ...".
        static const QRegularExpression id(u"waiting for approval (\\S+)"_s);
        const auto match = id.match(step.value(u"detail"_s).toString());
        return match.hasMatch() ? match.captured(1) : m_deploy.value(u"approval"_s).toString();
    }
    }
    return {};
}

QString DeployStepsModel::reason() const
{
    return splitHint(m_deploy.value(u"error"_s).toString()).first;
}

QString DeployStepsModel::hint() const
{
    return splitHint(m_deploy.value(u"error"_s).toString()).second;
}

QString DeployStepsModel::approvalId() const
{
    return m_deploy.value(u"approval"_s).toString();
}

int DeployStepsModel::rowOf(const QString &name) const
{
    for (int i = 0; i < m_steps.size(); ++i)
        if (m_steps.at(i).value(u"name"_s).toString() == name)
            return i;
    return -1;
}

void DeployStepsModel::setSelectedRow(int row)
{
    if (row < -1 || row >= rowCount())
        row = -1;
    m_userSelected = true;
    if (row == m_selected)
        return;
    m_selected = row;
    Q_EMIT selectedChanged();
}

void DeployStepsModel::selectFailing()
{
    if (m_userSelected)
        return;
    // The failing step (the last one recorded as failed), else the step that waits or runs.
    int row = -1;
    for (int i = int(m_steps.size()) - 1; i >= 0 && row < 0; --i)
        if (core::parseDeployStepStatus(m_steps.at(i).value(u"status"_s).toString()) == core::DeployStepStatus::Failed)
            row = i;
    for (int i = int(m_steps.size()) - 1; i >= 0 && row < 0; --i) {
        const auto status = core::parseDeployStepStatus(m_steps.at(i).value(u"status"_s).toString());
        if (status == core::DeployStepStatus::Waiting || status == core::DeployStepStatus::Running)
            row = i;
    }
    if (row != m_selected) {
        m_selected = row;
        Q_EMIT selectedChanged();
    }
}

void DeployStepsModel::refresh()
{
    if (!m_session || m_deployId.isEmpty())
        return;
    const quint64 generation = m_generation;
    QPointer<DeployStepsModel> self(this);
    m_session->deployDetail(m_deployId, [self, generation](const Result<QJsonObject> &detail) {
        if (!self || self->m_generation != generation)
            return;
        if (!detail)
            return self->setError(detail.error().text());
        self->setError({});
        self->m_deploy = *detail;
        self->m_deploy.remove(u"steps"_s);
        // Merged step by step, so rows that events already brought are updated, not reset.
        for (const QJsonValue step : detail->value(u"steps"_s).toArray())
            self->applyStep(step.toObject());
        Q_EMIT self->deployChanged();
        self->selectFailing();
    });
}

void DeployStepsModel::applyStep(const QJsonObject &step)
{
    const qint64 seq = step.value(u"seq"_s).toInteger(-1);
    int at = 0;
    while (at < m_steps.size() && m_steps.at(at).value(u"seq"_s).toInteger() < seq)
        ++at;
    if (at < m_steps.size() && m_steps.at(at).value(u"seq"_s).toInteger() == seq) {
        // A detail asked for before the step ended can answer after its end's event: an ended
        // step never goes back to running or waiting.
        const auto held = core::parseDeployStepStatus(m_steps.at(at).value(u"status"_s).toString());
        const auto incoming = core::parseDeployStepStatus(step.value(u"status"_s).toString());
        const auto open = [](std::optional<core::DeployStepStatus> s) {
            return s == core::DeployStepStatus::Running || s == core::DeployStepStatus::Waiting;
        };
        if (held && !open(held) && open(incoming))
            return;
        const bool ended = m_steps.at(at).value(u"status"_s) != step.value(u"status"_s);
        m_steps[at] = step;
        Q_EMIT dataChanged(index(at), index(at));
        // Its last lines were written before its end was recorded.
        if (ended && at == m_selected && !m_logPoll.isActive())
            QTimer::singleShot(0, this, [this] { loadLog(false); });
    } else {
        beginInsertRows({}, at, at);
        m_steps.insert(at, step);
        endInsertRows();
        if (m_selected >= at) {
            ++m_selected;
            Q_EMIT selectedChanged();
        }
        Q_EMIT countChanged();
    }
    // Every bar is relative to the longest step.
    if (m_steps.size() > 1)
        Q_EMIT dataChanged(index(0), index(int(m_steps.size()) - 1), {FractionRole});
    Q_EMIT durationsChanged();
    updateTicker();
}

void DeployStepsModel::onEvent(const QJsonObject &event)
{
    if (m_deployId.isEmpty() || event.value(u"deploy"_s).toString() != m_deployId)
        return;
    const std::optional<core::EventType> type = core::parseEventType(event.value(u"type"_s).toString());
    if (type == core::EventType::DeployStep) {
        applyStep(event.value(u"data"_s).toObject());
        selectFailing();
        return;
    }
    // succeeded, failed, awaiting-approval, started: the deploy's own fields changed.
    if ((type && core::isDeployEvent(*type)))
        refresh();
}

bool DeployStepsModel::selectedRunning() const
{
    return m_selected >= 0 && m_selected < m_steps.size() &&
           core::parseDeployStepStatus(m_steps.at(m_selected).value(u"status"_s).toString()) ==
               core::DeployStepStatus::Running;
}

void DeployStepsModel::loadLog(bool restart)
{
    const int seq =
        m_selected >= 0 && m_selected < m_steps.size() ? int(m_steps.at(m_selected).value(u"seq"_s).toInteger(-1)) : -1;
    if (restart || seq != m_logSeq) {
        m_logPoll.stop();
        ++m_logGeneration;
        m_logSeq = seq;
        // What the follow or an earlier read brought of this step.
        const StepLines kept = m_stepLines.value(seq);
        m_logAfter = kept.last;
        if (m_log != kept.text || !m_logError.isEmpty()) {
            m_log = kept.text;
            m_logError.clear();
            Q_EMIT selectedLogChanged();
        }
    }
    if (!m_session || m_deployId.isEmpty() || seq < 0)
        return;
    // The follow carries every step's lines to the deploy's end.
    if (m_logFollow)
        return;
    if (selectedRunning() && !m_logFollowFailed)
        return followLog();
    const quint64 generation = m_logGeneration;
    QPointer<DeployStepsModel> self(this);
    m_session->deployLog(m_deployId, seq, m_logAfter, [self, generation](const Result<QJsonArray> &lines) {
        if (!self || self->m_logGeneration != generation)
            return;
        const QString error = lines ? QString() : lines.error().message;
        if (error != self->m_logError) {
            self->m_logError = error;
            Q_EMIT self->selectedLogChanged();
        }
        if (lines)
            self->appendLines(*lines);
        if (self->selectedRunning())
            self->m_logPoll.start();
    });
}

void DeployStepsModel::appendLines(const QJsonArray &lines)
{
    bool added = false;
    for (const QJsonValue value : lines) {
        const QJsonObject line = value.toObject();
        // The follow and a last read after the step's end may both bring a line.
        const int seq = int(line.value(u"step"_s).toInteger(-1));
        const int number = int(line.value(u"line"_s).toInteger());
        StepLines &kept = m_stepLines[seq];
        if (number <= kept.last)
            continue;
        kept.text << QString::fromUtf8(ansi::strip(line.value(u"text"_s).toString().toUtf8()));
        kept.last = number;
        if (seq != m_logSeq)
            continue;
        m_log << kept.text.constLast();
        m_logAfter = number;
        added = true;
    }
    if (added)
        Q_EMIT selectedLogChanged();
}

void DeployStepsModel::stopFollowingLog()
{
    delete std::exchange(m_logFollow, nullptr);
}

void DeployStepsModel::followLog()
{
    if (m_logFollow)
        return; // it carries every step's lines: the one selected now is taken from it
    m_logFollow = m_session->followDeployLog(m_deployId, this);
    connect(m_logFollow, &Subscription::received, this, [this](const QJsonObject &message) {
        if (message.contains(u"text"_s))
            appendLines(QJsonArray{message});
    });
    connect(m_logFollow, &Subscription::ended, this, [this, follow = m_logFollow] {
        if (m_logFollow != follow)
            return;
        m_logFollow->deleteLater();
        m_logFollow = nullptr;
        // Cut before the deploy's end: read what is kept instead, as before there were follows.
        if (!follow->result()) {
            m_logFollowFailed = true;
            loadLog(false);
        }
    });
}

void DeployStepsModel::updateTicker()
{
    bool running = false;
    for (const QJsonObject &step : m_steps)
        running = running ||
                  core::parseDeployStepStatus(step.value(u"status"_s).toString()) == core::DeployStepStatus::Running;
    if (running && !m_ticker.isActive())
        m_ticker.start();
    else if (!running)
        m_ticker.stop();
}

void DeployStepsModel::tick()
{
    if (m_steps.isEmpty())
        return;
    Q_EMIT dataChanged(index(0), index(int(m_steps.size()) - 1), {DurationMsRole, FractionRole});
    Q_EMIT durationsChanged();
}

} // namespace pando::desktop
